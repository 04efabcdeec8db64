"""Flight Recorder dumps: the real captures, and synthetic dumps for the edge cases."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from kb.diagnosis.hangs import flightrec


def _statements(folder: Path) -> list[str]:
    dumps, errors = flightrec.read_all(sorted(str(p) for p in folder.glob("rank_*")))
    assert errors == []
    return flightrec.analyze(dumps)


def test_a_sleeping_rank_is_the_one_that_never_reached_the_collective(corpus: Path) -> None:
    for backend in ("nccl", "gloo"):
        lines = _statements(corpus / f"{backend}-sleep" / "fr_dumps")
        assert lines[0].startswith(
            "dlperf-hang: flight-recorder: rank 2 never reached collective #5 "
            "(all_reduce, sizes [[1024]], process group 0 default_pg)"
        ), lines
    nccl = _statements(corpus / "nccl-sleep" / "fr_dumps")[0]
    assert "ranks 0,1 wait in it" in nccl  # NCCL's dump keeps the pending state


def _call_lines(corpus: Path) -> tuple[int, int]:
    """The lines of the capture script's extra all_reduce and of the loop's all_reduce."""
    script = (corpus / "capture" / "hang_job.py").read_text().splitlines()
    calls = [i for i, x in enumerate(script, start=1) if "dist.all_reduce(" in x]
    assert len(calls) == 2
    return calls[0], calls[1]


def test_an_extra_all_reduce_is_found_by_its_call_site_and_stacks(corpus: Path) -> None:
    extra, loop = _call_lines(corpus)
    for backend in ("nccl", "gloo"):
        lines = _statements(corpus / f"{backend}-extra" / "fr_dumps")
        assert lines[0].startswith(
            "dlperf-hang: flight-recorder: rank 2 issued a different collective #5: called "
            f"from hang_job.py:{extra} (main), while ranks 0,1 called #5 from "
            f"hang_job.py:{loop} (main)"
        ), lines
        state = "waits in" if backend == "nccl" else "is at"  # Gloo retires the failed work
        assert f"rank 2 {state} #9 (all_reduce), ranks 0,1 reached #8" in lines[0]
        stacks = [x for x in lines if "stack of rank" in x]
        assert [x.split(" at ")[0][-6:] for x in stacks] == ["rank 2", "rank 0"]
        assert f"main (hang_job.py:{extra})" in stacks[0]
        assert f"main (hang_job.py:{loop})" in stacks[1]


def test_a_killed_rank_left_no_dump(corpus: Path) -> None:
    nccl = _statements(corpus / "nccl-kill" / "fr_dumps")
    assert nccl[0] == (
        "dlperf-hang: flight-recorder: rank 2 left no dump while ranks 0,1 wait in collective "
        "#5 (all_reduce, sizes [[1024]], process group 0 default_pg): it died or was killed "
        "before the others dumped"
    )
    gloo = _statements(corpus / "gloo-kill" / "fr_dumps")  # Gloo retires the failed work
    assert gloo[0].startswith("dlperf-hang: flight-recorder: rank 2 left no dump while ranks 0,1")


def _entry(
    seq: int, op: str = "nccl:all_reduce", sizes: Any = None, done: bool = True, line: int = 10
) -> dict[str, Any]:
    return {
        "collective_seq_id": seq,
        "p2p_seq_id": 0,
        "is_p2p": False,
        "process_group": ("0", "default_pg"),
        "profiling_name": op,
        "input_sizes": sizes or [[4]],
        "input_dtypes": ["Float"],
        "state": "completed" if done else "scheduled",
        "retired": done,
        "frames": [{"name": "train", "filename": "/job/train.py", "line": line}],
    }


def _dump(
    entries: list[dict[str, Any]], version: str = "2.10", ranks: str = "[0, 1]", lib: str = "2.21.5"
) -> dict[str, Any]:
    return {
        "version": version,
        "comm_lib_version": lib,
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": ranks}},
        "pg_status": {},
        "entries": entries,
    }


def _write(folder: Path, dumps: dict[int, Any], as_json: bool = False) -> list[str]:
    folder.mkdir(exist_ok=True)
    paths = []
    for rank, obj in dumps.items():
        p = folder / f"nccl_trace_rank_{rank}"
        p.write_bytes(json.dumps(obj).encode() if as_json else pickle.dumps(obj, protocol=4))
        paths.append(str(p))
    return paths


def test_json_dumps_and_different_sizes(tmp_path: Path) -> None:
    paths = _write(
        tmp_path / "d",
        {
            0: _dump([_entry(1), _entry(2, sizes=[[1024]], done=False)]),
            1: _dump([_entry(1), _entry(2, sizes=[[8]], done=False)]),
        },
        as_json=True,
    )
    assert all(flightrec.sniff(p) for p in paths)
    dumps, errors = flightrec.read_all(paths)
    assert errors == []
    first = flightrec.analyze(dumps)[0]
    assert first == (  # two ranks, two halves: neither is the odd one
        "dlperf-hang: flight-recorder: the ranks disagree on collective #2 (process group 0 "
        "default_pg): rank 0 issued all_reduce sizes [[1024]] [Float]; rank 1 issued "
        "all_reduce sizes [[8]] [Float]"
    )
    three = _write(
        tmp_path / "e",
        {
            r: _dump(
                [_entry(1), _entry(2, sizes=[[8]] if r == 2 else [[1024]], done=False)],
                ranks="[0, 1, 2]",
            )
            for r in range(3)
        },
    )
    assert flightrec.analyze(flightrec.read_all(three)[0])[0].startswith(
        "dlperf-hang: flight-recorder: rank 2 issued a different collective #2: all_reduce sizes "
        "[[8]] [Float], while ranks 0,1 issued all_reduce sizes [[1024]] [Float]"
    )


def test_mixed_versions_are_stated(tmp_path: Path) -> None:
    paths = _write(
        tmp_path / "d",
        {
            0: _dump([_entry(1)], version="2.10", lib="2.21.5"),
            1: _dump([_entry(1)], version="2.4", lib="2.18.1"),
        },
    )
    lines = flightrec.analyze(flightrec.read_all(paths)[0])
    assert (
        "different Flight Recorder versions: version 2.10 (rank 0); version 2.4 (rank 1)"
        in lines[0]
    )
    assert lines[1].endswith(
        "ranks run different NCCL versions: 2.21.5 on rank 0; 2.18.1 on rank 1"
    )


def test_an_unreadable_dump_is_an_error_and_its_rank_is_not_taken_for_dead(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    paths = _write(
        folder,
        {
            0: _dump([_entry(1), _entry(2, done=False)], ranks="[0, 1, 2]"),
            1: _dump([_entry(1), _entry(2, done=False)], ranks="[0, 1, 2]"),
        },
    )
    truncated = folder / "nccl_trace_rank_2"
    truncated.write_bytes(pickle.dumps(_dump([_entry(1)]))[:-20])
    dumps, errors = flightrec.read_all([*paths, str(truncated)])
    assert [e[1] for e in errors] == [f"{truncated}: the pickle ends early (truncated dump)"]
    lines = flightrec.analyze(dumps, unreadable={2})
    assert not any("left no dump" in x for x in lines)
    assert flightrec.analyze(dumps, unreadable=set())[0].startswith(
        "dlperf-hang: flight-recorder: rank 2 left no dump"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty Flight Recorder dump"),
        (b"{not json", "damaged JSON dump"),
        (pickle.dumps({"version": "2.10"}, protocol=4), "not a Flight Recorder dump"),
        (pickle.dumps([1, 2], protocol=4), "not a Flight Recorder dump"),
    ],
)
def test_bad_dumps_give_one_line_naming_the_file(
    tmp_path: Path, content: bytes, message: str
) -> None:
    p = tmp_path / "rank_0"
    p.write_bytes(content)
    with pytest.raises(flightrec.DumpError) as info:
        flightrec.read_dump(str(p))
    assert str(info.value).startswith(f"{p}: {message}")
    assert "\n" not in str(info.value)


def test_all_ranks_in_the_same_pending_collective(tmp_path: Path) -> None:
    paths = _write(tmp_path / "d", {r: _dump([_entry(1), _entry(2, done=False)]) for r in (0, 1)})
    lines = flightrec.analyze(flightrec.read_all(paths)[0])
    assert lines == [
        "dlperf-hang: flight-recorder: every dumped rank waits in collective #2 (all_reduce, "
        "sizes [[4]], process group 0 default_pg): none completed it"
    ]


def test_names_without_a_rank_are_not_dumps(tmp_path: Path) -> None:
    p = tmp_path / "trace.pkl"
    p.write_bytes(pickle.dumps(_dump([]), protocol=4))
    assert not flightrec.sniff(str(p))
