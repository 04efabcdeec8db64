"""The extractors read printf macros, show_help files and error tables as a compiler
or the library would, on small fixed source snippets; the classification table is
applied in order and never leaves a message unknown."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import classify  # noqa: E402
import cprintf  # noqa: E402
import errstrings  # noqa: E402
import showhelp  # noqa: E402
from merge import Merger  # noqa: E402

NCCL = {"WARN": 0, "INFO": 1}

SNIPPET = r"""
#define WARN(...) ncclDebugLog(NCCL_LOG_WARN, NCCL_ALL, __FILE__, __LINE__, __VA_ARGS__)
#define SYSCHECKVAL(call, name, retval) do { \
    if (retval == -1) { \
      WARN("Call to " name " failed : %s", strerror(errno)); \
    } } while (0)
  WARN("Connect to %s failed : %s", ncclSocketToString(addr, line), strerror(errno));
  INFO(NCCL_INIT|NCCL_NET, "NET/IB : Using%s %s; OOB %s:%s", line, gdr ? "GDR" : "",
       ifName, addrline);  // a comment, (with a paren
  WARN("NET/IB : Got completion from peer %s with error %d, opcode %d, len %d, "
       "vendor err %d", peer, wc->status, wc->opcode, wc->byte_len, wc->vendor_err);
  WARN("size %" PRIu64 " too big for %" PRIx32, s, t);
  WARN(fmt, x);
  myWARN("not a NCCL macro");
  /* WARN("in a comment"); is still text: NCCL never does this */
"""


def test_printf_macros_are_read_as_the_compiler_would() -> None:
    got = [(c.macro, c.template) for c in cprintf.calls(SNIPPET, NCCL)]
    assert ("WARN", "Call to %s failed : %s") in got  # a macro parameter in the format
    assert ("WARN", "Connect to %s failed : %s") in got
    assert ("INFO", "NET/IB : Using%s %s; OOB %s:%s") in got  # the format is argument 1
    assert (
        "WARN",
        "NET/IB : Got completion from peer %s with error %d, opcode %d, len %d, vendor err %d",
    ) in got  # adjacent literals joined
    assert ("WARN", "size %llu too big for %x") in got  # PRIu64 / PRIx32
    assert all(t != "not a NCCL macro" for _, t in got)  # another macro's name
    assert not any(t == "%s" for _, t in got)  # `WARN(fmt, x)`: no literal format


def test_escapes_are_decoded() -> None:
    (call,) = cprintf.calls(r'WARN("tab\there \"quoted\" %d%%\n", 3);', NCCL)
    assert call.template == 'tab\there "quoted" %d%%\n'
    assert call.line == 1


HELP = """# -*- text -*-
# comment lines are not text
[agent-not-found]
The value of the MCA parameter "plm_rsh_agent" was set to a path
that could not be found:

  plm_rsh_agent: %s
#
[first-name]
[second-name]
Two topics share this text: %d
"""


def test_show_help_sections() -> None:
    got = dict(showhelp.sections(HELP))
    assert got["agent-not-found"].startswith('The value of the MCA parameter "plm_rsh_agent"')
    assert got["agent-not-found"].endswith("plm_rsh_agent: %s")
    assert got["first-name"] == got["second-name"] == "Two topics share this text: %d"


def test_error_string_tables() -> None:
    src = """
const char* ihipGetErrorName(hipError_t e) { switch (e) { case hipErrorAssert: return "hipErrorAssert"; } }
const char* ihipGetErrorString(hipError_t e) {
  switch (e) {
    case hipErrorIllegalAddress:
      return "an illegal memory access was encountered";
    case hipErrorGraphExecUpdateFailure:
      return "the graph update was not performed because "
             "it violated constraints";
    default:
      return "unknown error";
  }
}
"""
    got = dict(errstrings.strings(src))
    assert got == {
        "hipErrorIllegalAddress": "an illegal memory access was encountered",
        "hipErrorGraphExecUpdateFailure": (
            "the graph update was not performed because it violated constraints"
        ),
    }  # the name table is not read, `default:` has no code


def test_merge_keeps_first_and_last_release_and_newest_file() -> None:
    m = Merger()
    m.add("2.4.8", "warn", "Connect to %s failed", "src/transport/net_socket.cc")
    m.add("2.5.6", "warn", "Connect to %s failed", "src/misc/socket.cc")
    m.add("2.5.6", "warn", "Gone later", "src/init.cc")
    (a, b) = sorted(m.entries(), key=lambda s: s.template)
    assert (a.first, a.last, a.file) == ("2.4.8", "2.5.6", "src/misc/socket.cc")
    assert (b.first, b.last) == ("2.5.6", "2.5.6")


def test_classification_table_order_overrides_and_no_unknown(tmp_path: Path) -> None:
    table = tmp_path / "classify.yaml"
    table.write_text(
        """
overrides:
  - {library: nccl, template: "NET/IB : No device found.", class: cause, cause: nccl-ib-missing}
rules:
  - {library: ^nccl$, template: "shared memory", class: cause, cause: nccl-shm-too-small}
  - {library: ^nccl$, level: ^warn$, template: ".", class: symptom, symptom: internal-error}
  - {library: ^nccl$, level: ^info$, template: ".", class: benign}
""",
        encoding="utf-8",
    )
    t = classify.Table(table)
    assert t.classify("nccl", "info", "f", "NET/IB : No device found.")["cause"] == (
        "nccl-ib-missing"
    )
    assert t.classify("nccl", "warn", "f", "Error in shared memory %s")["class"] == "cause"
    assert t.classify("nccl", "warn", "f", "Other")["symptom"] == "internal-error"
    assert t.classify("nccl", "info", "f", "Other") == {"class": "benign"}
    with pytest.raises(LookupError, match="no classification for openssh"):
        t.classify("openssh", "error", "ssh.c", "whatever")


def test_a_classification_without_its_id_is_refused(tmp_path: Path) -> None:
    table = tmp_path / "classify.yaml"
    table.write_text("rules:\n  - {template: x, class: cause}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs a cause id"):
        classify.Table(table)


PY = """
import logging, warnings
log = logging.getLogger(__name__)

def f(host, port, n):
    if n < 0:
        raise ValueError(f"nnodes={n} is not in \\"MIN:MAX\\" format ({{n}})")
    if not host:
        raise RuntimeError("could not connect to %s:%d" % (host, port))
    log.warning("Timed out after {} seconds".format(n))
    log.debug("debug lines are left out")
    warnings.warn("shuffle_buffer_size is deprecated")
    raise SystemExit(msg)  # no literal text
"""


def test_python_messages() -> None:
    import pyextract

    got = {(m.level, m.template) for m in pyextract.messages(PY)}
    assert got == {
        ("error", 'ValueError: nnodes={} is not in "MIN:MAX" format ({{n}})'),
        ("error", "RuntimeError: could not connect to %s:%d"),
        ("warn", "Timed out after {} seconds"),
        ("warn", "shuffle_buffer_size is deprecated"),
    }
    assert list(pyextract.messages("def broken(:\n")) == []  # a file that does not parse


def test_concatenating_macros() -> None:
    src = """
      signalException(
          GLOO_ERROR_MSG("Connection closed by peer ", peer_.str()));
  GLOO_ENFORCE_EQ(a, b, "Expected " "x", 5, "% done");
      GLOO_THROW_IO_EXCEPTION(
          "Timed out waiting ",
          timeout.count(),
          "ms for recv operation to complete");
  GLOO_ENFORCE(ok);
"""
    macros = {"GLOO_ERROR_MSG": 0, "GLOO_ENFORCE_EQ": 2, "GLOO_THROW_IO_EXCEPTION": 0,
              "GLOO_ENFORCE": 1}  # fmt: skip
    got = [c.template for c in cprintf.concat_calls(src, macros)]
    assert got == [
        "Connection closed by peer %s",
        "Expected x%s%% done",  # a literal % is escaped for the printf-style matcher
        "Timed out waiting %sms for recv operation to complete",
    ]  # GLOO_ENFORCE(ok) has no message
