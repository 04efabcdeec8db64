"""The remembered nodes and logs: where the file lives, what it holds, what it refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kb.walk import state
from kb.walk.state import State, forget_node, load, remember_log, remember_nodes, save


def test_the_file_is_under_xdg_data_home_else_local_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert state.state_file() == tmp_path / "data" / "dlperf-help" / "state.json"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")  # the spec says: ignore a relative one
    monkeypatch.setenv("HOME", str(tmp_path))
    assert state.state_file() == tmp_path / ".local" / "share" / "dlperf-help" / "state.json"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert state.state_file() == tmp_path / ".local" / "share" / "dlperf-help" / "state.json"


def test_nodes_and_logs_survive_a_round_trip_most_recent_log_first(tmp_path: Path):
    f = tmp_path / "s" / "state.json"
    assert load(f) == (State(), None)  # a first run: no file, no notice
    assert remember_nodes(["gpu01", "root@10.0.0.12:2222"], f) is None
    assert remember_nodes(["gpu01", "[fe80::1]:22"], f) is None  # no duplicate
    assert remember_log(tmp_path / "a.log", f) is None
    assert remember_log(tmp_path / "b.log", f) is None
    assert remember_log(tmp_path / "a.log", f) is None
    got, notice = load(f)
    assert notice is None
    assert got.nodes == ["gpu01", "root@10.0.0.12:2222", "[fe80::1]:22"]
    assert got.logs == [str(tmp_path / "a.log"), str(tmp_path / "b.log")]
    assert forget_node("gpu01", f) is None
    assert load(f)[0].nodes == ["root@10.0.0.12:2222", "[fe80::1]:22"]
    assert oct(f.stat().st_mode & 0o777) == "0o600"  # the user's own business


def test_only_the_last_few_logs_are_kept(tmp_path: Path):
    f = tmp_path / "state.json"
    for i in range(9):
        remember_log(tmp_path / f"{i}.log", f)
    assert load(f)[0].logs == [str(tmp_path / f"{i}.log") for i in (8, 7, 6, 5, 4)]


def test_a_relative_log_path_is_remembered_absolute(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "state.json"
    remember_log(Path("rank0.log"), f)
    assert load(f)[0].logs == [str(tmp_path / "rank0.log")]


def test_the_file_holds_names_and_paths_only(tmp_path: Path):
    f = tmp_path / "state.json"
    remember_nodes(["alice@gpu01"], f)
    remember_log(tmp_path / "job.log", f)
    doc = json.loads(f.read_text())
    assert doc == {
        "schema": "dlperf-help/state/1",
        "nodes": ["alice@gpu01"],
        "logs": [str(tmp_path / "job.log")],
    }


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"{not json", "not JSON"),
        (b"\xff\xfe\x00garbage", "not JSON"),
        (b"[1, 2]", "not a dlperf-help state file"),
        (b'{"schema": "dlperf-help/state/99", "nodes": []}', "not a dlperf-help state file"),
        (b'{"schema": "dlperf-help/state/1", "nodes": "gpu01"}', "must be lists"),
        (b'{"schema": "dlperf-help/state/1", "nodes": [1]}', "must be strings"),
        (b" " * (state.MAX_BYTES + 1), "larger than 64 KiB"),
    ],
)
def test_a_corrupt_file_is_one_line_and_a_fresh_start(tmp_path: Path, content: bytes, why: str):
    f = tmp_path / "state.json"
    f.write_bytes(content)
    got, notice = load(f)
    assert got == State()
    assert notice is not None and why in notice and "starting fresh" in notice
    assert "\n" not in notice
    assert remember_nodes(["gpu01"], f) is None  # the next change overwrites it
    assert load(f) == (State(nodes=["gpu01"]), None)


def test_hostile_entries_are_dropped_and_the_rest_kept(tmp_path: Path):
    f = tmp_path / "state.json"
    doc = {
        "schema": "dlperf-help/state/1",
        "nodes": [
            "gpu01",
            "gpu01; rm -rf ~",  # not a host
            "-oProxyCommand=touch /tmp/x",  # an ssh option, not a host
            "evil\x1b]0;title\x07",  # terminal controls
            "gpu[01-04]",  # a range is expanded when added, never stored as one
            "x" * 300,
        ],
        "logs": ["relative.log", "/ok/job.log", "/bad/\x1b[2Jclear.log", "/nul\x00.log"],
    }
    f.write_text(json.dumps(doc))
    assert load(f) == (State(nodes=["gpu01"], logs=["/ok/job.log"]), None)


def test_a_symlink_or_a_fifo_is_not_read(tmp_path: Path):
    target = tmp_path / "elsewhere.json"
    save(State(nodes=["gpu01"]), target)
    link = tmp_path / "state.json"
    link.symlink_to(target)
    assert load(link)[1] is not None and "not a regular file" in (load(link)[1] or "")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert "not a regular file" in (load(fifo)[1] or "")  # and it does not block


def test_an_unwritable_place_is_one_line_not_an_exception(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    notice = remember_nodes(["gpu01"], blocker / "dlperf-help" / "state.json")
    assert notice is not None and "cannot remember" in notice and "\n" not in notice
