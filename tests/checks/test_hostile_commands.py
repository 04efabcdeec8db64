"""Every check and every fix command of the shipped rules, filled with hostile values of
every kind and run for real by /bin/sh: no value ever gets to run a command.

How it proves it: each filled command runs in a sandbox whose PATH holds only stubs
(every command word of the rules exits 0 doing nothing, so nothing real happens and
`&&` chains go on) and one real `touch`.  Every hostile value tries to run
`touch MARKER` (command substitution, backticks, `;`, a closing quote, a newline...);
the marker must never appear.  A value its kind refuses is fine, if the ValueError
names the placeholder.  The sandbox runs as `nobody` when the tests run as root (so a
redirection in a fix cannot write to /etc), with HOME and the working directory in it.
A deliberately unsafe template shows the sandbox does catch an escape.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kb.rules.placeholders import fill_command, names_in
from kb.rules.schema.models import ParamDoc
from kb.rules.valuekinds import _CONTROL, KINDS, MAX_TEXT, kind_of
from tests.shipped_rules import knowledge

SETPRIV = shutil.which("setpriv")
NOBODY = 65534

# a valid value of each kind (a real-looking one: the command runs as far as it can)
BASELINE = {
    "host": "node-1",
    "hosts": "node-1:2,node-2:2",
    "port": "2222",
    "iface": "eth0",
    "hca": "mlx5_0:1",
    "user": "alice",
    "number": "4194999",  # above every pid_max: `kill {pid}` can hit no process
    "numbers": "0,1",
    "version": "1.2.3",
    "path": "",  # the sandbox's working directory, set when it is made
    "filename": "libfoo.so.1",
    "name": "demo-svc",
    "image": "demo/image:1",
    "package": "demo-pkg==1.0",
    "module": "demo_mod",
    "ref": "v1.0",
    "pci": "00:00.0",
    "env": "DEMO_VAR",
    "text": "some text",
}
assert set(BASELINE) == set(KINDS)


def hostile(marker: Path) -> list[str]:
    """Values that run `touch MARKER` if they ever escape their quoting."""
    m = str(marker)
    return [
        f"$(touch {m})",
        f"`touch {m}`",
        f";touch {m};",
        f"x; touch {m}",
        f"x && touch {m}",
        f"x | touch {m}",
        f'"; touch {m}; echo "',
        f"'; touch {m}; '",
        f"'\"$(touch {m})\"'",
        f"x\ntouch {m}",
        f"x\rtouch {m}",
        "x\\",
        f"\\'; touch {m}; #",
        "-Eevil",
        "--foo=bar",
        f"-oProxyCommand=touch {m}",
        f"ünïcödé $(touch {m})",
        f"x\u202e$(touch {m})",
        "A" * 5000 + f"$(touch {m})",
        f"}}$(touch {m}){{",
        f"${{IFS}}touch${{IFS}}{m}",
    ]


@dataclass(frozen=True)
class Command:
    where: str  # "check ID" or "fix ID #N"
    template: str
    declared: dict[str, ParamDoc]


def shipped_commands() -> Iterator[Command]:
    kb = knowledge()
    for cid, (_cause, chk) in sorted(kb.checks.items()):
        yield Command(f"check {cid}", chk.run, dict(chk.params))
    for fid, fix in sorted(kb.fixes.items()):
        for i, cmd in enumerate(fix.commands, start=1):
            yield Command(f"fix {fid} #{i}", cmd.run, dict(fix.params))


COMMANDS = list(shipped_commands())
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]*")


class Sandbox:
    """A PATH of stubs, a HOME and a working directory; runs one command under /bin/sh."""

    def __init__(self, root: Path, command_words: set[str]) -> None:
        self.root = root
        self.bin, self.home, self.work = root / "bin", root / "home", root / "work"
        self.marker = root / "markers" / "MARKER"
        for d in (self.bin, self.home, self.work, self.marker.parent):
            d.mkdir(parents=True)
        for word in command_words - {"touch"}:
            self._script(word, "exit 0\n")
        self._script("touch", f'exec {shutil.which("touch")} "$@"\n')
        os.chmod(root, 0o755)
        os.chmod(self.bin, 0o755)
        for d in (self.home, self.work, self.marker.parent):
            os.chmod(d, 0o777)

    def _script(self, name: str, body: str) -> None:
        path = self.bin / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        argv = ["/bin/sh", "-c", command]
        if os.geteuid() == 0:
            assert SETPRIV is not None
            argv = [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
        env = {"PATH": str(self.bin), "HOME": str(self.home), "LC_ALL": "C.UTF-8"}
        return subprocess.run(
            argv,
            cwd=self.work,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=20,
        )


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    if os.geteuid() == 0 and SETPRIV is None:
        pytest.skip("running as root without setpriv: fix commands could write to /etc")
    words = {w for c in COMMANDS for w in _WORD.findall(c.template)}
    words |= {"sh", "bash", "python", "python3", "sudo", "ssh", "rm", "kill"}
    classes_before = Path("/tmp/classes.txt").exists()
    root = Path(tempfile.mkdtemp(prefix="dlperf-hostile-"))
    try:
        yield Sandbox(root, words)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        # make-paddle-imagenet-list-files writes /tmp/classes.txt (as nobody, empty)
        if not classes_before:
            Path("/tmp/classes.txt").unlink(missing_ok=True)


def _values(cmd: Command, sandbox: Sandbox) -> dict[str, str]:
    out = {}
    for name in names_in(cmd.template):
        kind = kind_of(name, cmd.declared)
        out[name] = str(sandbox.work) if kind == "path" else BASELINE[kind]
    return out


def test_the_rules_have_commands_to_test_and_none_passes_a_value_to_a_shell() -> None:
    assert len(COMMANDS) > 150
    assert sum(bool(names_in(c.template)) for c in COMMANDS) > 70
    nested = re.compile(r"\b(eval|sh -c|bash -c|source)\b[^;|&]*\{[a-z_]+\}")
    assert [c.where for c in COMMANDS if nested.search(c.template)] == []
    assert not any(re.search(r"\btouch\b", c.template) for c in COMMANDS)


def test_the_sandbox_catches_a_value_that_escapes(sandbox: Sandbox) -> None:
    unsafe = 'echo "not found: {value}"'  # what find-cuda-library did
    sandbox.run(fill_command(unsafe, {"value": f'x"; touch {sandbox.marker}; echo "'}))
    assert sandbox.marker.exists(), "the sandbox must see an escaped value run touch"
    sandbox.marker.unlink()
    sandbox.run(fill_command(unsafe, {"value": f"$(touch {sandbox.marker})"}))
    assert sandbox.marker.exists()
    sandbox.marker.unlink()


@pytest.mark.slow
@pytest.mark.parametrize(
    "cmd", [c for c in COMMANDS if names_in(c.template)], ids=lambda c: c.where
)
def test_no_hostile_value_escapes_a_shipped_command(cmd: Command, sandbox: Sandbox) -> None:
    base = _values(cmd, sandbox)
    ran = sandbox.run(fill_command(cmd.template, base))  # the command as it is meant to run
    assert not sandbox.marker.exists()
    assert "Syntax error" not in ran.stderr, f"{cmd.where}: {ran.stderr}"
    for name in names_in(cmd.template):
        for value in hostile(sandbox.marker):
            try:
                filled = fill_command(cmd.template, {**base, name: value}, cmd.declared)
            except ValueError as exc:
                assert str(exc).startswith(f"{{{name}}}: "), exc
                assert "\n" not in str(exc)
                continue
            sandbox.run(filled)
            assert not sandbox.marker.exists(), f"{cmd.where}: {{{name}}}={value!r} ran: {filled}"


def test_every_kind_is_tried_in_a_free_text_slot_too(sandbox: Sandbox) -> None:
    """Free text takes every hostile value (nothing refuses it): each stays one word."""
    for kind in KINDS:
        declared = {"v": ParamDoc(description="-", kind=kind)}  # type: ignore[arg-type]
        for value in [BASELINE[kind] or str(sandbox.work), *hostile(sandbox.marker)]:
            try:
                filled = fill_command("printf '%s\\n' {v}", {"v": value}, declared)
            except ValueError as exc:
                assert kind != "text" or _CONTROL.search(value) or len(value) > MAX_TEXT
                assert str(exc).startswith("{v}: ")
                continue
            ran = sandbox.run(filled)
            assert ran.stdout == value + "\n"
            assert not sandbox.marker.exists()
