"""What surrounds a log line's message, and what a pattern's line anchors mean there.

The same message reaches us in many dressings: quoted in an e-mail or issue (`> `),
prefixed by the launcher (`[rank3]:`, `[1,0]<stdout>:`, `3: `, `[default0]:`, pdsh's
`gpu003: `, docker compose's `trainer-1  | `), by Ray (`(pid=123)`, `(RayTrainWorker pid=123,
ip=10.0.0.1)`), by a logger (vLLM's `ERROR 05-29 04:08:22 worker_base.py:145]`, glog's
`E0302 02:01:36.274989 31267 file.cc:83]`, Python logging's `ERROR:root:` and `.. - name -
ERROR - `, loguru's `.. | ERROR    | mod:func:12 - `, DeepSpeed's `[..] [INFO] [launch.py:12:
main]`), by a CI viewer (a line number `[1824]`, a timestamp) or with colour codes whose
escape byte was lost in a copy (`[0m`, `[31;1m`); several at once. A rule anchored with `^`
would miss all of them, so matching tries a line's *content* (the line after these
decorations) when the whole line does not match; `logged_as_error` and
`host_in_decoration` say what the prefix itself states (a logger's error level, the host).
People also quote a message inside a sentence (``I get `No IB devices found` on ib0``,
`the log says "Connection closed by 10.0.0.2 port 22"`): a rule anchored at a line's
start or end also tries each such quoted stretch (`quoted`).

Here also are the facts about a regex's text that the scanner needs: whether it
anchors at a line start, the same pattern without those anchors (the prefilter must
find the line whatever its decorations), and whether an automaton hit on raw bytes
proves that RE2 matches the decoded line (`line_exact`), which lets the scanner drop
vetoed lines without looking at them in Python.
"""

from __future__ import annotations

import functools
import re

from kb.util.lazyre import LazyPattern

_LEVEL = r"(?:TRACE|DEBUG|INFO|NOTICE|SUCCESS|WARNING|WARN|ERROR|CRITICAL|FATAL)"
_TIME = r"\d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
_DATE = r"(?:\d{4}-\d\d-\d\d|\d{4}/\d\d/\d\d|\d\d/\d\d/\d{4})"
_STAMP = _DATE + r"[T _]" + _TIME + r"(?:Z|[+-]\d\d:?\d\d)?"
_WHO = r"[\w.<>\-]++"  # a logger's name: `__main__`, `torch.distributed.run`, `<module>`
_SRC = r"[\w./\\\-]++:\d+"  # where a logger was called: `worker_base.py:145`, `api.py:900`

# Each piece is one real form (a source thread is cited for each in
# tests/diagnosis/test_prefix_forms.py); a line may carry several (`(pid=..) ERROR 05-29 ..`).
# They are grouped by the character they start with, so that a line is tried only
# against the pieces that can start where it is (a message's first word fails fast).
_PIECES: dict[str, tuple[str, ...]] = {
    ">": (r">+[ \t]?",),  # quoting in mail, Markdown, GitHub replies
    "*": (r"\*\*[ \t]?(?=\S)",),  # Markdown bold around a pasted line: `**KeyError: '2'**`
    "[": (
        r"\[[Rr]ank ?\d+\]:",  # PyTorch's [rank3]:
        r"\[rank: \d+\][ \t]",  # Lightning's rank_prefixed_message
        r"\[\d+,\d+\]<std(?:out|err)>:",  # mpirun --tag-output
        r"\[default\d+\]:",  # torchrun --tee
        r"\[pod/[\w.\-]+/[\w.\-]+\][ \t]",  # kubectl logs --prefix
        r"\[\d{1,3}(?:;\d{1,3})*m",  # colour codes that lost their escape byte
        r"\[\d{1,7}\](?=[ \t])",  # a viewer's line number
        r"\[ *\d+\.\d{6}\][ \t]",  # dmesg's seconds since boot
        # DeepSpeed's `[2024-01-01 12:00:00,123]`, SGLang's `[2025-03-11 15:02:53 TP0]`
        r"\[" + _STAMP + r"(?: [\w\-]{1,12}){0,3}\]",
        # DeepSpeed's `[INFO] [launch.py:12:main]`
        r"\[" + _LEVEL + r"\](?:[ \t]+\[" + _SRC + r":[\w<>.]+\])?",
        r"\[" + _SRC + r"\](?=[ \t])",  # vLLM >= 0.6 after its level and time `[core.py:946]`
        # c10's `[E1013 11:12:31.455734215 ProcessGroupNCCL.cpp:746]`, `[W socket.cpp:601]`
        r"\[[IWEF](?:\d{4}[ \t]+" + _TIME + r"(?:[ \t]+\d+)?)?[ \t]+" + _SRC + r"\]",
    ),
    "(": (
        # Ray and vLLM workers: `(pid=9)`, `(RayWorkerWrapper pid=9, ip=..)`, `(VllmWorker rank=0 pid=9)`
        r"\((?:[\w.=\-]+ ){0,3}pid=\d+(?:, ip=[\w.:]+)?\)",
        r"\((?:raylet|gcs_server|autoscaler|dashboard\w*)(?:, ip=[\w.:]+)?\)",  # Ray's own
    ),
    "0": (
        r"\d{1,5}: ",  # srun -l, torchrun's rank prefix
        _STAMP + r":?(?=[ \t])",  # ISO, Python logging, CI, TensorFlow (`..123456: `) timestamps
        r"\d\d-\d\d " + _TIME + r"(?=[ \t])",  # vLLM's month-day time
        r"\d{4}:\d\d:\d\d-"
        + _TIME
        + r":\(\d+\) \|CCL_[A-Z]+\|",  # oneCCL `..:(1980058) |CCL_WARN|`
    ),
    "-": (
        r"-[ \t]" + _WHO + r"[ \t]-[ \t]" + _LEVEL + r"[ \t]-(?=[ \t])",  # `- name - ERROR - `
        r"-[ \t]" + _LEVEL + r"[ \t]-[ \t]" + _WHO + r"[ \t]-(?=[ \t])",  # `- INFO - name - `
    ),
    # loguru's `| ERROR    | __main__:nested:10 -`
    "|": (
        r"\|[ \t]" + _LEVEL + r"[ \t]*\|(?:[ \t]+" + _WHO + ":" + _WHO + r":\d+[ \t]-)?(?=[ \t])",
    ),
    "a": (
        r"(?:localhost|(?=[\w\-]*\d)[a-z][\w.\-]*+): ",  # pdsh / DeepSpeed's host: prefix
        _LEVEL
        + r"(?:[ \t]+\d{1,8})?[ \t]+\["
        + _SRC
        + r"\]",  # `ERROR 200507 [worker_base.py:148]`
        _SRC + r"\](?=[ \t])",  # vLLM < 0.6 `worker_base.py:145]`
        _LEVEL + r":" + _WHO + r":",  # Python logging's default `ERROR:root:`
        _WHO
        + r": \["
        + _LEVEL
        + r"\]",  # torch elastic's `torch.distributed.elastic..api: [ERROR]`
        r"[IWEF]\d{4}[ \t]+" + _TIME + r"(?:[ \t]+\d+)?[ \t]+" + _SRC + r"\]",  # glog, c10, TF C++
        r"[IWEF][ \t]+" + _SRC + r"\]",  # TensorFlow's `2023-.. .110478: W tensorflow/...cc:64]`
        r"LAUNCH[ \t]+" + _LEVEL + r"(?=[ \t])",  # Paddle's launcher
        _LEVEL + r"(?=[ \t]+\d\d-\d\d " + _TIME + r")",  # vLLM `ERROR 05-29 04:08:22`
        r"(?<=[\d\])] )" + _LEVEL + r"(?=[ \t])",  # a level after a time: `10:56:59 ERROR    `
    ),
}
_GROUP = {kind: LazyPattern("|".join(pieces)) for kind, pieces in _PIECES.items()}
_KIND = {c: c for c in ">*[(-|"} | {c: "0" for c in "0123456789"}
# what a line's first decoration can start with: most lines a rule's prefilter finds
# have none, and this says so in a fraction of the time the pieces take to fail
_MAYBE = LazyPattern(
    r"[ \t]*+(?:[>\[(\d|]|\*\*|-[ \t]|"
    + _LEVEL
    + r"|LAUNCH|[IWEF]\d{4}|[IWEF][ \t]|localhost: |(?=[\w\-]*\d)[a-z][\w.\-]*+: "
    r"|[\w./\\<>\-]++(?::\d+\]|: \[)|[A-Za-z][\w.\-]*+[ \t]*+\|)"
)
# docker compose, pm2 and the like name the service once, at the line's very start
_SERVICE = LazyPattern(r"(?:\d+\|)?[A-Za-z][\w.\-]*+[ \t]*+\|[ \t]")
_CACHED = 512  # lines up to this long have their answer cached (one per signature asks)
_ERROR_WORD = LazyPattern(
    r"\b(?:ERROR|CRITICAL|FATAL)\b|\|CCL_ERROR\||(?:^|[\s\[\]:])[EF](?:\d{4})?[ \t]"
)


def content_start(line: str) -> int:
    """Where a line's message starts once quoting and launcher and logger prefixes are
    skipped (0 when it has none)."""
    return _content_start(line) if len(line) <= _CACHED else _decorated(line)


def _decorated(line: str) -> int:
    if not _MAYBE.match(line):
        return 0
    m = _SERVICE.match(line)
    end, n = (m.end() if m else 0), len(line)
    while True:
        at = end
        while at < n and line[at] in " \t":
            at += 1
        rx = _GROUP.get(_KIND.get(line[at], "a")) if at < n else None
        m = rx.match(line, at) if rx is not None else None
        if m is None or m.end() == at:
            break
        end = m.end()
    while 0 < end < n and line[end] in " \t":
        end += 1
    return end


_content_start = functools.lru_cache(maxsize=4096)(_decorated)


def logged_as_error(line: str) -> bool:
    """True when the line's decoration says a logger printed it at error level or worse
    (`ERROR 05-29 ..`, `- ERROR -`, `| ERROR |`, glog's `E0302 ..`, c10's `[E ..]`)."""
    at = content_start(line)
    return at > 0 and _ERROR_WORD.search(line, 0, at) is not None


_HOST = LazyPattern(
    r"\bip=([\w.:]+)\)|\[pod/([\w.\-]+)/|^(?:[ \t]*>+[ \t]?)*(localhost|[a-z][\w\-]*\d[\w.\-]*): "
)


def host_in_decoration(line: str) -> str | None:
    """The host (or pod) a line's prefix names: Ray's `(.. pid=1, ip=10.0.0.2)`, pdsh's
    and DeepSpeed's `gpu003: `, kubectl's `[pod/trainer-0/..]`; None when it names none."""
    at = content_start(line)
    m = _HOST.search(line, 0, at) if at else None
    return next((g for g in m.groups() if g), None) if m else None


_QUOTED = LazyPattern(r"`([^`]{6,})`|\"([^\"]{12,})\"|：\s*([^：]{12,})$")


def quoted(line: str) -> list[tuple[int, int]]:
    """(start, end) of each stretch of the line quoted in backticks (6 characters or
    more) or double quotes (12 or more), or following a full-width colon to the line's
    end (12 or more: `使用...时会报错：AttributeError: ...`): a message quoted in prose."""
    if "`" not in line and '"' not in line and "：" not in line:
        return []
    return [m.span(m.lastindex or 0) for m in _QUOTED.finditer(line)]


def _outside_classes(pattern: str) -> list[tuple[int, str]]:
    """(position, token) of the pattern's tokens outside character classes; an escape
    is one token (`\\d`), as is a character class (`[^a-z]`)."""
    out: list[tuple[int, str]] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            out.append((i, pattern[i : i + 2]))
            i += 2
        elif ch == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1  # a leading ] is a literal
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            out.append((i, pattern[i : j + 1]))
            i = j + 1
        else:
            out.append((i, ch))
            i += 1
    return out


def has_line_anchor(pattern: str) -> bool:
    """True when the regex anchors somewhere at a line's (or the text's) start."""
    if "^" not in pattern and "\\A" not in pattern:  # most patterns: no need to tokenize
        return False
    return any(t in ("^", "\\A") for _, t in _outside_classes(pattern))


def has_any_anchor(pattern: str) -> bool:
    """True when the regex anchors at a line's start or end (`^`, `$`, `\\A`, `\\z`)."""
    if "^" not in pattern and "$" not in pattern and "\\A" not in pattern and "\\z" not in pattern:
        return False
    return any(t in ("^", "\\A", "$", "\\z") for _, t in _outside_classes(pattern))


def without_line_anchors(pattern: str) -> str:
    """The regex with its start anchors removed: it matches every line the original
    matches, at the line's start or after any decoration."""
    return "".join(t for _, t in _outside_classes(pattern) if t not in ("^", "\\A"))


def without_anchors(pattern: str) -> str:
    """The regex with its start and end anchors removed: it matches every line the
    original matches, after any decoration and inside quotes."""
    return "".join(t for _, t in _outside_classes(pattern) if t not in ("^", "\\A", "$", "\\z"))


_SAFE_ESCAPES = {"\\d", "\\w", "\\b"}


def line_exact(pattern: str) -> bool:
    """True when a hyperscan/RE2 hit of `pattern` on a line's raw bytes proves that RE2
    finds it in the decoded line: the pattern is ASCII and nothing in it can match a
    newline or depend on how non-ASCII bytes decode (no `.`, negated classes, `\\s`,
    `\\D`, `\\W`, Unicode classes, or flags that change those)."""
    if not pattern.isascii():
        return False
    for _, tok in _outside_classes(pattern):
        if tok == ".":
            return False
        if tok.startswith("\\"):
            if tok[1].isalnum() and tok not in _SAFE_ESCAPES:
                return False
        elif tok.startswith("["):
            body = tok[1:-1]
            if body.startswith(("^", "[:^")) or "\n" in body:
                return False
            escapes = re.findall(r"\\(.)", body)
            if any(e.isalnum() and e not in "dw" for e in escapes):
                return False
    return not re.search(r"\(\?[a-zA-Z]*[sm]", pattern)
