"""Templates compile mechanically to matchers that fit what a release prints."""

from __future__ import annotations

import re2

from kb.rules.catalogue import compile_template


def _matches(template: str, line: str, style: str = "printf") -> bool:
    comp = compile_template(template, style)
    return re2.search(comp.pattern, line) is not None


def test_printf_conversions_match_printed_values() -> None:
    assert _matches(
        "NET/IB : Got completion from peer %s with error %d, opcode %d, len %d, vendor err %d",
        "node1:123:456 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<34567> "
        "with error 12, opcode 0, len 0, vendor err 129",
    )
    assert _matches(
        "size=0x%lx limit %zu at %p (%.*s) %llx %g%%",
        "size=0x1f limit 42 at 0x7ffd12 (abc) deadbeef 1.5e-3%",
    )
    assert not _matches("received %d bytes instead of %d", "received many bytes instead of 4")


def test_literal_is_escaped_and_ends_trimmed() -> None:
    comp = compile_template("Connect to %s failed : %s")
    assert comp.pattern == r"Connect to (?:.*? )?failed \:"  # the string may be empty
    assert comp.literal == "Connect to"
    assert comp.usable
    assert _matches("Call (to) [x]* failed.", "Call (to) [x]* failed.")
    assert not _matches("Call (to) [x]* failed.", "Call to x failed!")


def test_too_little_literal_text_is_flagged() -> None:
    assert not compile_template("%s:%d -> %d").usable
    assert not compile_template("{}: {}", "python").usable
    assert compile_template("Timed out after {} seconds", "python").usable


def test_python_placeholders() -> None:
    assert _matches(
        "Timed out after {} seconds waiting for clients. {}/{} clients joined.",
        "RuntimeError: Timed out after 1801 seconds waiting for clients. 1/2 clients joined.",
        "python",
    )
    assert _matches(
        "Rank %(rank)s exited with {{code}} %d", "Rank 3 exited with {code} 9", "python"
    )


def test_multiline_template_matches_its_main_line() -> None:
    comp = compile_template("\nsome %s\nThe requested operation could not be completed: %s\n")
    assert "requested operation" in comp.pattern


def test_a_string_between_spaces_may_print_nothing() -> None:
    # NVIDIA/nccl#1052 as posted: the peer's `<address>` was eaten by the forum's Markdown
    template = (
        "NET/IB : Got completion from peer %s with error %d, opcode %d, len %d, vendor err %d"
    )
    posted = (
        "transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer with error 4, "
        "opcode 0, len 0, vendor err 81 (Send) localGid ::ffff: remoteGid ::ffff:"
    )
    assert _matches(template, posted)
    assert _matches(template, posted.replace("peer with", "peer 10.0.0.2<34567> with"))
    assert not _matches(template, posted.replace("peer with", "peerwith"))
    # the prefilter text still occurs verbatim in every match
    assert compile_template(template).literal in posted
