"""What the assistant remembers between runs: the user's nodes and the log files opened.

Why it exists: a user who comes back tomorrow should not retype `gpu[01-04]` or hunt for
yesterday's log path. The file is `$XDG_DATA_HOME/dlperf-help/state.json` (else
`~/.local/share/dlperf-help/state.json`), written atomically (a crash leaves the old file).

What it never holds: secrets or log text. Nodes are host names as `[user@]name[:port]`
(validated as a host on reading and writing); logs are absolute paths of files the user
opened. A pasted log is not remembered at all, not even its first line: that line is log
text (it can carry a token, a host or a user's name) and could not be opened again anyway.

A missing file is a first run; a corrupt, oversized, odd or hostile one is ignored with one
line that says so (the assistant starts fresh and overwrites it on the next change), never a
traceback. Every entry is checked again when read: the file may have been edited by hand.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kb.runners.hosts import parse_host
from kb.util.atomicfile import write_atomic
from kb.util.errors import UserError
from kb.util.textsafe import safe_line

VERSION = 1
MAX_BYTES = 64 * 1024  # a few hundred entries at most; anything larger is not ours
MAX_NODES = 64
MAX_LOGS = 5
MAX_PATH = 4096
MAX_NODE = 255


def state_file() -> Path:
    """Where the state lives: under the user's data directory (XDG base directory spec)."""
    base = os.environ.get("XDG_DATA_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "dlperf-help" / "state.json"


@dataclass
class State:
    """Nodes in the order added; logs most recent first."""

    nodes: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"schema": f"dlperf-help/state/{VERSION}", "nodes": self.nodes, "logs": self.logs}


def _plain(text: str) -> bool:
    """No terminal controls, no line breaks: the text is shown as it is."""
    return safe_line(text) == text and "\n" not in text and "\r" not in text


def valid_node(text: str) -> bool:
    """A host as the hosts panel takes it, one host (a range was expanded when added)."""
    if not text or len(text) > MAX_NODE or not _plain(text):
        return False
    try:
        return [s.label for s in parse_host(text, "host")] == [text]
    except UserError:
        return False


def valid_log(text: str) -> bool:
    return 0 < len(text) <= MAX_PATH and os.path.isabs(text) and _plain(text) and "\0" not in text


def _parse(raw: bytes) -> State:
    """The state in `raw`; ValueError says what is wrong with it."""
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not JSON ({type(exc).__name__})") from None
    if not isinstance(doc, dict) or doc.get("schema") != f"dlperf-help/state/{VERSION}":
        raise ValueError("not a dlperf-help state file of this version")
    nodes, logs = doc.get("nodes", []), doc.get("logs", [])
    if not isinstance(nodes, list) or not isinstance(logs, list):
        raise ValueError("nodes and logs must be lists")
    if not all(isinstance(x, str) for x in nodes + logs):
        raise ValueError("nodes and logs must be strings")
    # an entry that is no longer valid is dropped, the rest kept
    return State(
        nodes=list(dict.fromkeys(n for n in nodes if valid_node(n)))[:MAX_NODES],
        logs=list(dict.fromkeys(p for p in logs if valid_log(p)))[:MAX_LOGS],
    )


def load(path: Path | None = None) -> tuple[State, str | None]:
    """The remembered state and, when the file had to be ignored, one line saying why."""
    path = path or state_file()
    try:
        info = path.lstat()
    except FileNotFoundError:
        return State(), None
    except OSError as exc:
        return State(), f"{path}: cannot read ({exc.strerror}); starting fresh"
    if not stat.S_ISREG(info.st_mode):
        return State(), f"{path}: not a regular file, ignored; starting fresh"
    if info.st_size > MAX_BYTES:
        return State(), f"{path}: larger than {MAX_BYTES // 1024} KiB, ignored; starting fresh"
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:  # it grew after lstat
            raise ValueError(f"larger than {MAX_BYTES // 1024} KiB")
        return _parse(raw), None
    except OSError as exc:
        return State(), f"{path}: cannot read ({exc.strerror}); starting fresh"
    except ValueError as exc:
        return State(), f"{path}: {exc}, ignored; starting fresh"


def save(state: State, path: Path | None = None) -> str | None:
    """Write the state atomically; one line when it could not be written, else None."""
    path = path or state_file()
    data = json.dumps(state.to_json(), indent=1).encode() + b"\n"
    try:
        write_atomic(path, data)
    except OSError as exc:
        return f"{path}: cannot remember nodes and logs ({exc.strerror or exc})"
    return None


def _update(change: Callable[[State], None], path: Path | None) -> str | None:
    state, _notice = load(path)  # a bad file was reported when it was first read
    change(state)
    return save(state, path)


def remember_log(log: Path, path: Path | None = None) -> str | None:
    """Put a log file first among the recent ones (a path only, never its text)."""
    text = str(log.expanduser().absolute())
    if not valid_log(text):
        return None  # a path with controls in it is opened but not remembered

    def change(state: State) -> None:
        state.logs = [text, *(p for p in state.logs if p != text)][:MAX_LOGS]

    return _update(change, path)


def remember_nodes(labels: list[str], path: Path | None = None) -> str | None:
    """Add the nodes the user added (their labels, one host each) to those remembered."""
    fresh = [n for n in labels if valid_node(n)]
    if not fresh:
        return None

    def change(state: State) -> None:
        state.nodes = list(dict.fromkeys([*state.nodes, *fresh]))[:MAX_NODES]

    return _update(change, path)


def forget_node(label: str, path: Path | None = None) -> str | None:
    """The user removed a node: it is not offered again."""

    def change(state: State) -> None:
        state.nodes = [n for n in state.nodes if n != label]

    return _update(change, path)
