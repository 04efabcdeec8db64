"""The catalogues read file by file (torch.distributed, TensorFlow, Paddle, paramiko):
real log lines of the held-out corpora match the entry their source prints, the C++
extractor reads PyTorch's and TensorFlow's ways of building a message, and the folder
scanner refuses a bad listing with its file and line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kb.rules.catalogue import Catalogue
from tests import corpora_loader as corpora

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import cppmsg  # noqa: E402
import dirscan  # noqa: E402


def _corpus_lines(needle: str) -> list[str]:
    lines: set[str] = set()
    logs = [p for name in (*corpora.BATCHES_2026_11, "dev") for p in corpora.logs(name)]
    for path in sorted(logs):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if needle in line:
                lines.add(line.strip())
    return sorted(lines)


@pytest.mark.parametrize(
    ("needle", "library", "template_part", "label"),
    [
        (  # a line a terminal did not wrap: the matcher reads one line at a time
            "Watchdog caught collective operation timeout: WorkNCCL",
            "torch",
            "Watchdog caught collective operation timeout: %s ran for %s milliseconds",
            "cause/nccl-timeout-hang",
        ),
        (
            "Could not load dynamic library",
            "tensorflow",
            "Could not load dynamic library '%s'; dlerror: %s",
            "symptom/library-load-error",
        ),
        (
            "The server socket has failed to listen on any local network address",
            "torch",
            "The server socket has failed to listen on any local network address.",
            "symptom/bind-failure",
        ),
        (  # the libuv TCPStore backend (the default from 2.4) says more than socket.cpp
            "failed to listen on any local network address. port: ",
            "torch",
            "port: %s, useIpv6: %s, code: %s, name: %s, message: %s",
            "symptom/bind-failure",
        ),
        (
            "Some NCCL operations have failed or timed out. Due to the asynchronous nature",
            "torch",
            "Some NCCL operations have failed or timed out.",
            "symptom/abort",
        ),
        (
            "times with reason: Connection refused retry after",
            "paddle",
            "%s addr=%s failed %s times with reason: %s retry after %s seconds",
            "symptom/connection-failure",
        ),
    ],
)
def test_real_corpus_lines_match_their_entry(
    cat: Catalogue, needle: str, library: str, template_part: str, label: str
) -> None:
    lines = _corpus_lines(needle)
    assert lines, needle
    for line in lines:
        hits = [m for m in cat.match(line) if m.library == library]
        assert hits, line
        m = max(hits, key=lambda h: len(h.template))  # the most specific entry
        assert template_part in m.template, (line, m.template)
        got = f"{m.class_}/{m.cause or m.symptom}" if m.class_ != "benign" else "benign"
        assert got == label, (line, m.template, got)


def test_the_versions_say_what_was_read(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["paramiko"].versions == "2.4.3-3.5.1"
    assert libs["tensorflow"].versions == "1.13.2-2.22.0.dev"
    assert libs["torch"].versions == "1.x-2.13.0"
    assert libs["paddle"].versions == "1.8.5-3.x"  # wheels 1.8.5-3.3.1, .cc read (2.x, 3.x)
    assert libs["mxnet"].versions == "1.0.0-1.9.1"  # every release tag from 1.0.0 (mxnet_src.py)
    dist = [m for m in cat.by_library("mxnet") if "USE_DIST_KVSTORE" in m.template]
    assert [(m.level, m.class_, m.symptom) for m in dist] == [("fatal", "symptom", "unsupported")]
    dso = [m for m in cat.by_library("tensorflow") if "Could not load dynamic" in m.template]
    # TSL's loader (2.12 on) only VLOGs it and returns it as the error a caller prints:
    # the warning must not claim those releases
    assert {m.level: m.versions for m in dso} == {
        "warn": "1.15.0-2.4.0.dev",
        "error": "2.12.1-2.22.0.dev",
    }
    watchdog = [m for m in cat.by_library("torch") if "Watchdog caught" in m.template]
    assert {m.versions for m in watchdog} == {"1.x-2.early", "2.late"}


def test_paramiko_host_key_and_auth_messages_are_symptoms(cat: Catalogue) -> None:
    by_template = {m.template: m for m in cat.by_library("paramiko")}
    unknown = by_template["SSHException: Server {!r} not found in known_hosts"]
    assert (unknown.class_, unknown.symptom) == ("symptom", "host-key-failure")
    hit = cat.match("paramiko.ssh_exception.SSHException: Server 'node2' not found in known_hosts")
    assert any(m.library == "paramiko" and m.symptom == "host-key-failure" for m in hit)
    none = by_template["SSHException: No authentication methods available"]
    assert none.symptom == "authentication-failure"


def test_cpp_extractor_reads_each_way_pytorch_and_tensorflow_build_a_message() -> None:
    src = r"""
  TORCH_CHECK(ok, "Tensor list must be nonempty, got ", n, " tensors");
  TORCH_CHECK_WITH(DistBackendError, false, "Backend ", name, " failed");
  C10D_WARNING("The server socket on {} has timed out, will retry.", addr);
  C10D_THROW_ERROR(SocketError, fmt::format("getsockname failed for fd {}: {}", fd, e));
  C10D_THROW_ERROR(SocketError, msg);
  constexpr auto* msg = "The server socket has failed to listen on any address.";
  std::string exceptionMsg = c10::str("[Rank ", rank_, "] Watchdog caught timeout: 100%");
  LOG(ERROR) << exceptionMsg;
  LOG(INFO) << "[Rank " << rank_ << "] NCCL watchdog thread started!";
  auto message = absl::StrCat("Could not load dynamic library '", f, "'; dlerror: ", e);
  LOG(WARNING) << message;
  CHECK_EQ(a, f(b, c)) << "Asynchronous update is not supported in " << name;
  VLOG(0) << "Retry to connect to " << host << ":" << port << " while not yet listening.";
  VLOG(3) << "a verbose line nobody sees by default";
  PADDLE_ENFORCE_GT(fd, 0, common::errors::InvalidArgument("Bind network on %s:%s failed.", h, p));
#define TORCH_CHECK(cond, ...) do_not_read("definition text")
"""
    got = {(m.level, m.template) for m in cppmsg.messages(src)}
    assert got == {
        ("error", "Tensor list must be nonempty, got %s tensors"),
        ("error", "Backend %s failed"),
        ("warn", "The server socket on %s has timed out, will retry."),
        ("error", "getsockname failed for fd %s: %s"),
        ("error", "The server socket has failed to listen on any address."),
        ("error", "[Rank %s] Watchdog caught timeout: 100%%"),
        ("info", "[Rank %s] NCCL watchdog thread started!"),
        ("warn", "Could not load dynamic library '%s'; dlerror: %s"),
        ("info", "Retry to connect to %s:%s while not yet listening."),
        ("error", "Bind network on %s:%s failed."),
        ("fatal", "Asynchronous update is not supported in %s"),
    }


def test_folder_scan_needs_a_listing_whose_folders_exist(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="VERSIONS: missing"):
        dirscan.scan(tmp_path)
    (tmp_path / "VERSIONS").write_text("# oldest first\n1.0\n2.0  # newest\n")
    (tmp_path / "1.0").mkdir()
    with pytest.raises(ValueError, match=r"VERSIONS:3: no folder"):
        dirscan.scan(tmp_path)
    (tmp_path / "2.0" / "pkg").mkdir(parents=True)
    (tmp_path / "1.0" / "pkg").mkdir(parents=True)
    (tmp_path / "1.0" / "pkg" / "a.py").write_text('raise ValueError("the value is bad: %s" % x)\n')
    (tmp_path / "2.0" / "pkg" / "a.py").write_text('raise ValueError("the value is bad: %s" % x)\n')
    (tmp_path / "2.0" / "pkg" / "b.cc").write_text('TORCH_WARN("this is deprecated now", x);\n')
    versions, seen = dirscan.scan(tmp_path)
    assert versions == "1.0-2.0"
    spans = {(s.level, s.template, s.first, s.last) for s in seen}
    assert spans == {
        ("error", "ValueError: the value is bad: %s", "1.0", "2.0"),
        ("warn", "this is deprecated now%s", "2.0", "2.0"),
    }
