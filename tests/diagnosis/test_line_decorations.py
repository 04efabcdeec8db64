"""Lines as people paste them: quoted, prefixed by launchers, wrapped by terminals.

A rule anchored at the line start (`^ORTE was unable ...`) fires on the line's content
after `> `, `[rank3]:`, `[1,0]<stdout>:`, Ray's `(pid=..)`, colour codes that lost their
escape byte, a viewer's line number or a CI timestamp; an analyzer's anchored tap reads
quoted command output; a message a terminal cut mid-word is matched whole. The fast and
the reference paths agree on all of it.
"""

from __future__ import annotations

import pytest

from kb.diagnosis.decorations import content_start
from kb.diagnosis.engine import diagnose_paths
from kb.diagnosis.unwrap import logical_lines

from .conftest import HELDOUT, agreed

ORTE = "ORTE was unable to reliably start one or more daemons."
PREFIXES = [
    "> ",
    "> > ",
    "[rank3]:",
    "[1,0]<stderr>:",
    "[default0]:",
    "(pid=909608) ",
    "(RayTrainWorker pid=12, ip=10.0.0.7) ",
    "[2m[36m(pid=12)[0m ",
    "[1824] ",
    "3: ",
    "2024-05-01T10:00:00.1234567Z ",
]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_an_anchored_rule_fires_past_quoting_and_launcher_prefixes(rules, prefix: str) -> None:
    out = agreed(rules, "starting\n" + prefix + ORTE + "\n")
    cause = out["causes"][0]
    assert cause["id"] == "mpi-launch-failure"
    assert cause["evidence"][0] == {"file": "pasted", "line": 2, "text": prefix + ORTE}
    assert cause["params"]["what"] == "daemons"
    assert content_start(prefix + ORTE) == len(prefix)


def test_an_anchor_still_means_the_start_of_the_message(rules) -> None:
    """The rule's anchored signature does not fire on a quoted message; the message
    catalogue's own (unanchored) templates of Open MPI may, and say so."""
    for cause in agreed(rules, "mpirun said: " + ORTE + "\n")["causes"]:
        fired = [p for p in cause["explanation"].split("; ")[1:] if "(weight" in p]
        assert fired and all(p.startswith("catalogued: ") for p in fired), cause["explanation"]


def test_quoted_command_output_reaches_the_analyzers(rules) -> None:
    topo = [
        "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity",
        "GPU0\t X \tPIX\tSYS\tSYS\t0-11",
        "GPU1\tPIX\t X \tSYS\tSYS\t0-11",
        "GPU2\tSYS\tSYS\t X \tPIX\t12-23",
        "GPU3\tSYS\tSYS\tPIX\t X \t12-23",
        "1 GPU: 1000 img/s",  # the job is slow: the matrix is then a cause
        "4 GPUs: 1200 img/s",
    ]
    out = agreed(rules, "\n".join("> " + line for line in topo) + "\n")
    assert [c["id"] for c in out["causes"]] == ["gpu-topology-slow"]
    assert out["causes"][0]["params"]["link"] == "SYS"


def test_a_message_the_terminal_wrapped_mid_word_is_matched_whole(rules) -> None:
    path = HELDOUT / "timeout-vlm-r1-257-heartbeat-wrapped.log"
    # "ProcessGroupNCCL'" ends line 1, "s watchdog got stuck for 480 seconds" starts line 2
    for fast in (True, False):
        diag = diagnose_paths(rules, [path], fast=fast)
        assert [c.id for c in diag.causes] == ["nccl-timeout-hang"]
        cause = diag.causes[0]
        assert cause.params["stuck_s"] == "480"
        ev = cause.evidence[0]
        assert ev.line == 1
        assert "ProcessGroupNCCL's watchdog got stuck for 480 seconds" in ev.text
        assert ev.text.startswith("[rank6]:[E429 13:55:49.384372190 ProcessGroupNCCL.cpp:1743]")


def test_a_line_matched_alone_and_inside_a_wrapped_message_counts_once(rules) -> None:
    width = 72
    text = ("x" * 40 + " " + ORTE + " and then the terminal wrapped this very long line")[:]
    wrapped = [text[i : i + width] for i in range(0, len(text), width)]
    orte_alone = ORTE.ljust(width, "y")[:width]
    lines = ["head", orte_alone, *wrapped, "tail"]
    out = agreed(rules, "\n".join(lines) + "\n")
    lines_hit = [e["line"] for c in out["causes"] for e in c["evidence"]]
    assert lines_hit == sorted(set(lines_hit))


def _joined(first: int, lines: list[str]) -> list[tuple[int, str]]:
    return [(m.line_no, m.text) for m in logical_lines(first, lines)]


def test_tables_and_short_lines_are_not_joined() -> None:
    rows = [
        f"GPU{i}   X   SYS  SYS  SYS  0-15,32-47   0    N/A    padding to width" for i in range(4)
    ]
    assert _joined(1, rows) == []
    short = ["a line that is short", "another short line"]
    assert _joined(1, short) == []
    cut = ["x" * 70 + "abc", "def and the rest of the message"]
    # two lines do not prove a fixed width: the word-boundary reading is offered too
    assert _joined(5, cut) == [
        (5, "x" * 70 + "abcdef and the rest of the message"),
        (5, "x" * 70 + "abc def and the rest of the message"),
    ]
    padded = ["y" * 71 + "ab", "cd" + " " * 71, "z" * 73, "next"]
    assert _joined(1, padded)[0] == (1, "y" * 71 + "abcd")
