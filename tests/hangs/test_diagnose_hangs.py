"""`diagnose` on what a user hands over after a hang: the log, the Flight Recorder dump
folder and the RAS report of the real captures; the cause first, with its rank (and
host, where RAS names it) and the collective as evidence."""

from __future__ import annotations

import json
import pickle
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kb.diagnosis.engine import diagnose_paths, diagnose_text


def _first(diag: dict[str, Any]) -> dict[str, Any]:
    assert diag["causes"], diag
    return diag["causes"][0]


def _shows_variant(cause: dict[str, Any], variant: str) -> bool:
    """The hang's variant (dead, stuck or desynchronised rank) is in the evidence lines."""
    return any(re.search(variant, e["text"]) for e in cause["evidence"])


@pytest.mark.slow
def test_the_cause_and_rank_come_first(
    cli: Any, label: dict[str, str], handed_over: Callable[[str], list[str]]
) -> None:
    proc = cli("diagnose", "--json", *handed_over(label["case"]))
    assert proc.returncode == 1, proc.stderr
    first = _first(json.loads(proc.stdout))
    assert first["id"] == label["expected_cause"]
    assert _shows_variant(first, label["expected_variant"])
    assert first["params"]["rank"] == label["expected_rank"]
    if label["expected_host"]:
        assert first["params"]["rank_host"] == label["expected_host"]
    assert first["params"]["seq"] and first["params"]["op"] == "all_reduce"
    collective = [e for e in first["evidence"] if "[flight-recorder, " in e["file"]]
    assert collective and f"collective #{first['params']['seq']}" in collective[0]["text"]


@pytest.mark.slow
def test_the_dumps_alone_name_the_rank(shipped: Any, label: dict[str, str], corpus: Path) -> None:
    diag = diagnose_paths(shipped, [corpus / label["case"] / "fr_dumps"]).to_json()
    first = _first(diag)
    assert (first["id"], first["params"]["rank"]) == (
        label["expected_cause"],
        label["expected_rank"],
    )
    assert _shows_variant(first, label["expected_variant"])


def test_dump_files_given_one_by_one_are_read_together(shipped: Any, corpus: Path) -> None:
    files = sorted((corpus / "nccl-sleep" / "fr_dumps").glob("rank_*"))
    first = _first(diagnose_paths(shipped, files).to_json())
    assert (first["id"], first["params"]["rank"]) == ("nccl-timeout-hang", "2")
    assert _shows_variant(first, "never reached")


@pytest.mark.slow
def test_a_pasted_ras_report_names_the_rank_and_host(shipped: Any, corpus: Path) -> None:
    """The TUI's paste goes through diagnose_text."""
    for case, variant in [
        ("nccl-sleep", "it is behind"),
        ("nccl-extra", "it is ahead"),
        ("nccl-kill", "is considered dead|does not answer"),
    ]:
        text = (corpus / case / "ras.txt").read_text()
        first = _first(diagnose_text(shipped, text).to_json())
        assert (first["id"], first["params"]["rank"], first["params"]["rank_host"]) == (
            "nccl-timeout-hang",
            "2",
            "127.0.0.1",
        ), case
        assert _shows_variant(first, variant), case


@pytest.mark.slow
def test_a_class_constructing_pickle_is_refused_with_one_line(
    cli: Any, tmp_path: Path, corpus: Path
) -> None:
    folder = tmp_path / "fr_dumps"
    folder.mkdir()
    for r in (0, 1):
        (folder / f"rank_{r}").write_bytes(
            (corpus / "nccl-sleep" / "fr_dumps" / f"rank_{r}").read_bytes()
        )
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            import os

            return (os.system, (f"touch {marker}",))

    (folder / "rank_2").write_bytes(pickle.dumps({"entries": [Evil()]}))
    proc = cli("diagnose", "--json", str(folder))
    assert proc.returncode == 2
    assert not marker.exists()
    assert "Traceback" not in proc.stderr
    err = [x for x in proc.stderr.splitlines() if x]
    assert err == [
        f"dlperf-help: {folder / 'rank_2'}: the pickle asks to construct posix.system: a Flight "
        "Recorder dump holds only plain data, so it is refused"
    ]
    diag = json.loads(proc.stdout)
    assert diag["errors"][0]["file"] == str(folder / "rank_2")
    # rank 2's dump exists: the others' state is still diagnosed, and rank 2 is not "dead"
    dead = "left no dump|is considered dead"
    assert not any(_shows_variant(c, dead) for c in diag["causes"])


@pytest.mark.slow
def test_a_folder_without_dumps_is_still_refused(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing here\n")
    proc = cli("diagnose", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"dlperf-help: {tmp_path}: is a directory (give the log files in it)"
    )


def test_a_case_folder_gives_its_log_report_and_dumps(shipped: Any, corpus: Path) -> None:
    diag = diagnose_paths(shipped, [corpus / "nccl-sleep"]).to_json()
    first = _first(diag)
    assert (first["id"], first["params"]["rank"], first["params"]["rank_host"]) == (
        "nccl-timeout-hang",
        "2",
        "127.0.0.1",
    )
    assert diag["stats"]["files"] == 6  # run.log, 2 RAS reports and their statements, the dumps'


def test_dumps_of_different_nccl_versions_name_the_mismatch(shipped: Any, tmp_path: Path) -> None:
    """Synthetic edge case: the same collectives, but each rank's dump reports its NCCL."""
    for rank, lib in ((0, "2.21.5"), (1, "2.18.1")):
        dump = {
            "version": "2.10",
            "comm_lib_version": lib,
            "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
            "entries": [
                {
                    "collective_seq_id": 1,
                    "process_group": ("0", "default_pg"),
                    "profiling_name": "nccl:all_reduce",
                    "input_sizes": [[4]],
                    "state": "scheduled",
                    "retired": False,
                }
            ],
        }
        (tmp_path / f"rank_{rank}").write_bytes(pickle.dumps(dump, protocol=4))
    diag = diagnose_paths(shipped, [tmp_path]).to_json()
    ids = [c["id"] for c in diag["causes"]]
    assert ids[0] == "nccl-missing-or-mismatch", ids
    assert diag["causes"][0]["params"]["nccl_versions"] == "2.21.5 on rank 0; 2.18.1 on rank 1"
