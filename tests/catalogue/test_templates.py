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


# google-research/pegasus#116, its title: the message cut after its first value
TFDS = (
    "ImportError: This version of TensorFlow Datasets requires TensorFlow version >= "
    "{required}; Detected an installation of version {present}. Please upgrade TensorFlow "
    "to proceed."
)
PEGASUS_TITLE = (
    "ImportError: This version of TensorFlow Datasets requires TensorFlow version >= 2.1.0"
)


def test_a_line_cut_after_a_value_matches() -> None:
    assert _matches(TFDS, PEGASUS_TITLE, "python")
    assert _matches(TFDS, PEGASUS_TITLE + "  \r", "python")  # white space, a CRLF's \r
    assert _matches(TFDS, "[rank0]: " + PEGASUS_TITLE, "python")
    # cut after the second value
    assert _matches(TFDS, PEGASUS_TITLE + "; Detected an installation of version 1.15.2", "python")
    # the whole message still matches, and the line may go on after it
    full = PEGASUS_TITLE + "; Detected an installation of version 1.15.2. Please upgrade "
    assert _matches(TFDS, full + "TensorFlow to proceed.", "python")
    assert _matches(TFDS, full + "TensorFlow to proceed. (see the docs)", "python")


def test_a_cut_must_end_the_line_right_after_one_value() -> None:
    # cut inside the literal text: no
    assert not _matches(TFDS, PEGASUS_TITLE[:-12], "python")
    assert not _matches(TFDS, PEGASUS_TITLE + "; Detected an inst", "python")
    # the prefix then other text: no (the value is one token, then the line ends)
    assert not _matches(TFDS, PEGASUS_TITLE + " is needed by t2t", "python")
    assert not _matches(TFDS, PEGASUS_TITLE + ", got 1.15", "python")
    # a number's conversion takes a number
    template = "Timed out waiting for the rendezvous of %d ranks after %d seconds, giving up"
    line = "[E] Timed out waiting for the rendezvous of "
    assert _matches(template, line + "8")
    assert _matches(template, line + "8...")
    assert not _matches(template, line + "eight")
    # a string between two spaces that may print nothing: cut after it
    template = "NET/IB : Got completion from peer %s with error %d, opcode %d, len %d"
    assert _matches(template, "NCCL WARN NET/IB : Got completion from peer 10.0.0.2<34567>")


def test_a_short_or_wordless_prefix_never_matches_alone() -> None:
    template = "Rank %d failed on host %s with code %d: %s"
    assert compile_template(template).cuts == ()
    assert not _matches(template, "Rank 3")
    assert not _matches(template, "Rank 3 failed on host node1")  # 18 characters of text
    # a string's gap takes any text: only the text since the last one counts
    assert not _matches(template, "Rank 3 failed on host node1 with code 9")
    ras = "RAS %s socket connection with %s closed by peer on receive; terminating it"
    assert compile_template(ras).cuts == ()
    # NCCL 2.24's RAS on a killed rank: another message, which the gap would have taken
    real = (
        "[rank1]:vm:468:651 [0] NCCL INFO RAS connect timeout warning (5s) on socket "
        "connection with 127.0.0.1<46703>"
    )
    assert not _matches(ras, real)
    wordless = "0x00000000/0xffffffff::0x00 %s state %d"  # long, but no words
    assert compile_template(wordless).cuts == ()
    assert not _matches(wordless, "0x00000000/0xffffffff::0x00 abc")
    # numbers' conversions do not reset the count: they take digits only
    template = "Got completion from peer with error %d, opcode %d, len %d, vendor err %d"
    assert len(compile_template(template).cuts) == 3
    assert _matches(template, "Got completion from peer with error 12, opcode 0, len 0")


def test_the_prefilter_text_is_in_every_cut_match() -> None:
    """`Catalogue.match` tests a message's literal as a substring first: for a cut line it
    must come from before the first cut, even where a longer run follows it."""
    from kb.rules.catalogue import Catalogue, Message

    template = (
        "Failed to create the communicator on device %d because the requested "
        "collective operation could not be completed: %s"
    )
    comp = compile_template(template)
    cut = "Failed to create the communicator on device 3"
    assert comp.literal == "Failed to create the communicator on device"
    msg = Message(
        "nccl",
        template,
        "warn",
        "init.cc",
        "2.18.1",
        "benign",
        pattern=comp.pattern,
        literal=comp.literal,
        usable=comp.usable,
    )
    assert Catalogue([], [msg]).match(cut) == [msg]
    assert Catalogue([], [msg]).match(cut + " (of 8)") == []


def test_cuts_share_one_regex_and_keep_it_small() -> None:
    """Each cut is one alternative at its value, nested: the program grows by a few
    states per cut, not by a copy of the prefix."""
    full = compile_template(TFDS, "python", keep_cut=lambda _prefix: False)
    cut = compile_template(TFDS, "python")
    assert len(cut.cuts) == 2 and full.cuts == ()
    assert not _matches_compiled(full.pattern, PEGASUS_TITLE)
    size_full = re2.compile(full.pattern).programsize
    size_cut = re2.compile(cut.pattern).programsize
    assert size_cut - size_full < 40, (size_full, size_cut)


def _matches_compiled(pattern: str, line: str) -> bool:
    return re2.search(pattern, line) is not None


def test_a_python_exception_matches_without_its_class_name() -> None:
    # hpcaitech/ColossalAI#3066: the launcher prints str(exc), not the traceback's line
    template = "SSHException: No authentication methods available"
    line = (
        "Error: failed to run torchrun --nproc_per_node=4 on gpu-1648, is localhost: False, "
        "exception: No authentication methods available"
    )
    assert _matches(template, line, "python")
    assert _matches(template, "paramiko.ssh_exception." + template, "python")
    # a class name and too little message: the class stays part of the matcher
    assert compile_template("KeyError: {}", "python").pattern.startswith("KeyError")
    assert not compile_template("KeyError: {}", "python").usable
    # C sources keep their text as printed
    assert compile_template("SSHException: No authentication methods available").pattern.startswith(
        "SSHException"
    )
