"""A long log's diagnosis keeps what the judging reads, not a copy of every line: the
state held for a log made of the same job's lines many times over is the state of one
copy (objects counted, not time), and what is judged from it is the same. Also: the
bytes kept to rebuild wrapped lines are let go as soon as they are all there, and
looking for a RAS report in a log never holds its first 8 MB as one text."""

from __future__ import annotations

import io
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kb.diagnosis import hang_inputs, rawbytes, reader, unwrap
from kb.diagnosis.analyzers.nccl import NcclInfo
from kb.diagnosis.pipeline import Session
from kb.diagnosis.ranking import analyze

from .conftest import ROOT

RANKS = 16  # on two hosts


def _job(copies: int) -> str:
    """NCCL INFO of a 16-rank job on two nodes whose socket list holds docker0, as 64
    processes under `mpirun --tag-output` print it again and again."""
    one: list[str] = []
    for r in range(RANKS):
        host, pid, dev = f"node{r // 8}", 100 + r, r % 8
        at = f"{host}:{pid}:{pid + 1} [{dev}] NCCL INFO"
        one += [
            f"{at} NCCL version 2.21.5+cuda12.4",
            f"{at} NET/Socket : Using [0]eth0:10.0.{r // 8}.1<0> [1]docker0:172.17.0.1<0>",
            f"{at} comm 0x{4096 + r:x} rank {r} nranks {RANKS} cudaDev {dev} busId 1000 "
            "commId 0xabc - Init START",
        ]
        nxt = (r + 1) % RANKS
        via = "P2P/IPC" if nxt // 8 == r // 8 else "NET/Socket/0"
        one += [
            f"{at} Channel {c:02d}/0 : {r}[{dev}] -> {nxt}[{nxt % 8}] via {via}" for c in (0, 1)
        ]
    one.append("#  Avg bus bandwidth    : 5.25")
    lines = [f"[1,{k % 64}]<stdout>:{line}" for k in range(copies) for line in one]
    return "\n".join(lines) + "\n"


def _diagnosed(rules: Any, text: str) -> tuple[NcclInfo, list[Any]]:
    out = Session(rules).run([("job.log", lambda: reader.text_stream(text))])
    nccl = next(a for a in out.analyzers if isinstance(a, NcclInfo))
    reports, _facts = analyze(out.analyzers)
    return nccl, reports


def _judged(reports: list[Any]) -> list[tuple[object, ...]]:
    return [
        (f.name, f.id, f.text, tuple((e.line, e.text, e.start, e.end) for e in f.evidence))
        for r in reports
        for f in r.findings
    ] + [(n.id, n.text, tuple(e.line for e in n.evidence)) for r in reports for n in r.notes]


def _sizes(a: NcclInfo) -> tuple[int, ...]:
    s = a.s
    return len(s.channels), len(s.ifaces), len(s.lists), len(s.bandwidth), len(s.procs)


def test_the_nccl_map_of_a_long_log_is_the_map_of_one_copy(rules: Any) -> None:
    once, reports_once = _diagnosed(rules, _job(1))
    many, reports_many = _diagnosed(rules, _job(40))
    judged_once, judged_many = _judged(reports_once), _judged(reports_many)
    assert many.delivered["channel"] == 40 * once.delivered["channel"] == 40 * 2 * RANKS
    assert _sizes(many) == _sizes(once)
    # one channel per rank (channels 00 and 01 join it the same way), two addresses per host
    assert _sizes(once) == (RANKS, 2 * 2 * 3, 3, 1, RANKS)
    assert judged_many == judged_once
    names = {j[0] for j in judged_once}
    assert "socket-list-with-virtual-interfaces" in names  # docker0 beside eth0


def test_repeated_interfaces_keep_the_first_three_of_each(rules: Any) -> None:
    a = NcclInfo()
    a.start_file("job.log")
    for n in range(1, 50):
        a.deliver("iface", n, "h:1:2 [0] NCCL INFO NET/Socket : Using [0]docker0:172.17.0.1<0>")
    assert [e.line for _h, _i, _a, e in a.s.ifaces] == [1, 2, 3]
    assert len(a.s.lists) == 2  # the first list, and the last one (still open)
    for n, bw in enumerate((9.5, 3.0, 7.0, 3.0), start=100):
        a.deliver("busbw", n, f"#  Avg bus bandwidth    : {bw}")
    assert [(bw, e.line) for bw, e in a.s.bandwidth] == [(3.0, 101)]  # the lowest, first


def _unwrapped(data: bytes, chunk: int) -> tuple[unwrap.Unwrapper, list[bool]]:
    u = unwrap.Unwrapper()
    released = []
    for block in reader.blocks(io.BytesIO(data), "log", chunk=chunk):
        u.add(block)
        released.append(u.full and not u.parts)
    return u, released


def test_the_bytes_kept_for_wrapped_lines_go_once_they_are_all_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(unwrap, "UNWRAP_BYTES", 32 * 1024)
    message = (
        "RuntimeError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL"
        ".cpp:1269, unhandled system error, NCCL version 2.18.1 ncclSystemError: System call "
        "(e.g. socket, malloc) or external library call failed or device error. (errno 110)"
    )
    wrapped = [message[i : i + 80] for i in range(0, len(message), 80)]  # a terminal's cut
    wrapped.append("libtorch_cuda.so:%20undefined%20symbol:%20ncclCommRegister")
    filler = [f"step {i} loss 0.{i % 97:02d} lr 3e-4" for i in range(4000)]
    lines = wrapped + filler
    data = "".join(line + "\n" for line in lines).encode()
    u, released = _unwrapped(data, chunk=4096)
    assert released[-1] and not released[0]  # let go while the log was still being read
    got = u.messages()
    kept = unwrap.UNWRAP_BYTES
    first = data[: data.rfind(b"\n", 0, kept) + 1].decode().splitlines()
    assert got == unwrap.logical_lines(1, first)
    assert any(m.joins and m.text == message for m in got)
    assert any(m.original is not None and "undefined symbol" in m.text for m in got)
    short = data[: data.index(b"\n", 2000) + 1]
    small, _ = _unwrapped(short, chunk=512)  # a short log: rebuilt at its end
    assert small.messages() == unwrap.logical_lines(1, short.decode().splitlines())
    assert small.messages() == []  # and let go


def test_a_ras_report_is_found_across_the_pieces_it_is_read_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(rawbytes, "CHUNK", 4096)
    marker = "Job summary\n==========="
    noise = "x" * 60 + "\n"
    for cut in (1, 11, len(marker) - 1):  # the marker split between two reads
        head = noise * (4096 // len(noise))
        head += "y" * (4096 - len(head) - cut)
        log = tmp_path / f"ras-{cut}.log"
        log.write_text(head + marker + "\n\nNumber of processes: 4\n" + noise * 200)
        assert hang_inputs._has_marker(str(log))
        assert marker in hang_inputs._ras_text(str(log))
    plain = tmp_path / "plain.log"
    plain.write_text(noise * 5000)  # 300 KB, 75 reads
    assert not hang_inputs._has_marker(str(plain))
    assert hang_inputs._ras_text(str(plain)) == ""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_the_heap_threshold_is_fixed_once_on_glibc() -> None:
    code = (
        "import sys; from kb.diagnosis import heap; "
        "print(heap.release_big_buffers(), heap.release_big_buffers(), 'ctypes' in sys.modules)"
    )
    cold = "import sys, kb.diagnosis.engine; print('ctypes' in sys.modules)"

    def run(source: str) -> str:
        argv = [sys.executable, "-c", source]
        done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
        return done.stdout

    assert run(code).split() == ["True", "True", "True"]
    assert run(cold) == "False\n"  # a pasted log's process never loads ctypes for it
