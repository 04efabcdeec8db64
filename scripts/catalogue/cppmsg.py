"""C++ messages the way PyTorch (c10d) and TensorFlow print them, which are not printf:
`TORCH_CHECK(cond, "a ", x, " b")` and `TORCH_WARN(...)` concatenate their arguments,
`C10D_ERROR("fmt {}", x)` and `fmt::format("...")` use libfmt's `{}`, `LOG(ERROR) << "a" << x`
streams, and an error text is often built first (`std::string err = c10::str(...)` or
`"NCCL error in: " + ...`) and thrown later. Every form becomes a printf-style template (a
value is `%s`, a literal `%` is `%%`), as catalogue/*.yaml keeps C sources."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from cprintf import _skip_arg, _skip_space, _string_at


@dataclass(frozen=True)
class CppMessage:
    level: str
    template: str
    line: int


# macro -> (level, index of the first message argument, how its arguments are joined)
CONCAT = {
    "TORCH_CHECK": ("error", 1), "TORCH_CHECK_WITH": ("error", 2), "C10D_CHECK_WITH": ("error", 2),
    "TORCH_CHECK_MSG": ("error", 1), "TORCH_INTERNAL_ASSERT": ("error", 1),
    "TORCH_WARN": ("warn", 0), "TORCH_WARN_ONCE": ("warn", 0),
    "C10_THROW_ERROR": ("error", 1), "C10D_THROW_ERROR": ("error", 1),
    "TORCH_CHECK_VALUE": ("error", 1), "TORCH_CHECK_TYPE": ("error", 1),
    "c10::str": ("error", 0), "errors::Internal": ("error", 0),
    "errors::InvalidArgument": ("error", 0), "errors::NotFound": ("error", 0),
    "errors::Unavailable": ("error", 0), "errors::FailedPrecondition": ("error", 0),
    "errors::Unimplemented": ("error", 0), "errors::DeadlineExceeded": ("error", 0),
    "errors::Aborted": ("error", 0), "errors::Unknown": ("error", 0),
    "absl::InternalError": ("error", 0), "absl::UnavailableError": ("error", 0),
    "absl::NotFoundError": ("error", 0), "absl::FailedPreconditionError": ("error", 0),
    "absl::InvalidArgumentError": ("error", 0), "absl::StrCat": ("error", 0),
    "strings::StrCat": ("error", 0),
}  # fmt: skip
FMT = {
    "C10D_ERROR": "error", "C10D_WARNING": "warn", "C10D_INFO": "info",
    "fmt::format": "error", "absl::StrFormat": "error",
    "recordError": "warn",  # c10d socket.cpp: logged with C10D_WARNING, then thrown
}  # fmt: skip
STREAM_LEVELS = {
    "ERROR": "error", "WARNING": "warn", "FATAL": "fatal", "INFO": "info", "QFATAL": "fatal",
}  # fmt: skip
_STREAM = re.compile(
    r"\b(?:LOG|LOG_FIRST_N|LOG_EVERY_N)\s*\(\s*(ERROR|WARNING|FATAL|INFO|QFATAL)\b"
    r"|\bVLOG\s*\(\s*(0)\s*\)"  # glog's VLOG(0) prints at INFO whatever the verbosity
)
# glog/dmlc's `CHECK(cond) << "text"`, `CHECK_EQ(a, b) << ...`: a failed check aborts
_CHECK = re.compile(r"\bCHECK(?:_(?:EQ|NE|LT|LE|GT|GE|NOTNULL))?\s*\(")
# Paddle's `platform::errors::Unavailable("%s addr=%s timeout", ...)`: a printf format
_PRINTF_ERRORS = re.compile(r"\b(?:platform|common|phi)::errors::\w+\s*\(")
_BUILT = re.compile(
    r"(?:constexpr\s+)?(?:std::string|auto\s*\*?|const\s+char\s*\*)\s*(\w*(?:err|Err|msg|Msg|reason|Reason|message)\w*)\s*=\s*"
    r"(?=[\"(]|c10::str\s*\(|fmt::format\s*\(|absl::StrCat\s*\(|strings::StrCat\s*\()"
)


def _fmt_to_printf(text: str) -> str:
    """libfmt's `{}`/`{:x}` as `%s`, `{{`/`}}` as braces, `%` escaped."""

    def one(m: re.Match[str]) -> str:
        return m.group(0)[0] if m.group(0) in ("{{", "}}") else "%s"

    return re.sub(r"\{\{|\}\}|\{[^{}]*\}", one, text.replace("%", "%%"))


def _concat(text: str, i: int, stop: str) -> tuple[str, int]:
    """Pieces joined by `stop` (`,` for arguments, `<<` or `+` for streams) from `i` to
    the end of the expression: a literal is text, anything else `%s`."""
    parts: list[str] = []
    while i < len(text):
        i = _skip_space(text, i)
        if i >= len(text) or text[i] in ");":
            break
        lit = _literal_run(text, i)
        if lit is not None:
            parts.append(lit[0].replace("%", "%%"))
            end = lit[1]
        else:
            end = _skip_piece(text, i, stop)
            piece = text[i:end].strip()
            inner = _nested(piece)
            parts.append(inner if inner is not None else "%s")
        i = _skip_space(text, end)
        if text.startswith(stop, i):
            i += len(stop)
            continue
        break
    return "".join(parts), i


def _literal_run(text: str, i: int) -> tuple[str, int] | None:
    """Adjacent string literals at `i`, when nothing but the separator follows them."""
    got, j = [], i
    while True:
        j = _skip_space(text, j)
        lit = _string_at(text, j)
        if lit is None:
            break
        got.append(lit[0])
        j = lit[1]
    if not got:
        return None
    k = _skip_space(text, j)
    if k < len(text) and (text[k] in ",);" or text.startswith(("<<", "+"), k)):
        return "".join(got), j
    return None


def _skip_piece(text: str, i: int, stop: str) -> int:
    if stop == ",":
        return _skip_arg(text, i)
    depth, j = 0, i
    while j < len(text):
        ch = text[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return j
            depth -= 1
        elif depth == 0 and (ch == ";" or text.startswith(stop, j)):
            return j
        elif ch in "\"'":
            k = j + 1
            while k < len(text) and text[k] != ch:
                k += 2 if text[k] == "\\" else 1
            j = k
        j += 1
    return j


def _nested(piece: str) -> str | None:
    """The text of `fmt::format("...")`, `c10::str(...)` and the like used as one piece."""
    for name in sorted({*CONCAT, *FMT}, key=len, reverse=True):
        if piece.startswith(name):
            m = re.match(rf"{re.escape(name)}\s*\(", piece)
            if m:
                got = _call_text(piece, m.end(), name)
                if got:
                    return got
    return None


def _call_text(text: str, i: int, name: str) -> str | None:
    if name in FMT:
        i = _skip_space(text, i)
        lit = _literal_run(text, i)
        if lit and name == "absl::StrFormat":
            return lit[0]  # printf-style already, unlike libfmt's `{}`
        return _fmt_to_printf(lit[0]) if lit else None
    _, first = CONCAT[name]
    for _ in range(first):
        i = _skip_arg(text, _skip_space(text, i))
        if i >= len(text) or text[i] != ",":
            return None
        i += 1
    got, _ = _concat(text, i, ",")
    return got


def _used_as_format(after: str, name: str) -> bool:
    """Whether a built message is later the format of a printf-style call (Paddle's
    `errors::PreconditionNotMet(error_msg, dso_name, errorno)`, `Sprintf(error_msg, ...)`)."""
    return bool(
        re.search(
            rf"(?:errors::\w+|Sprintf|StrFormat|snprintf)\s*\(\s*{re.escape(name)}\s*,", after
        )
    )


def _useful(template: str) -> bool:
    return bool(template.replace("%s", "").replace("%%", "").strip())


def messages(text: str) -> Iterator[CppMessage]:
    """Every message of one C++ source file, in order."""
    names = "|".join(re.escape(n) for n in sorted({*CONCAT, *FMT}, key=len, reverse=True))
    head = re.compile(rf"(?<![\w.>:])({names})\s*\(")
    nested: set[int] = set()
    for m in _BUILT.finditer(text):
        i = m.end()
        got, _ = _concat(text, i, "+")
        if got and _useful(got) and got != "%s":
            nested.add(i)
            # the level of the `LOG(LEVEL) << name` that prints it, if one does
            logged = re.search(
                rf"\bLOG\s*\(\s*(\w+)\s*\)\s*<<\s*(?:\w+\(\)\s*<<\s*)?{m.group(1)}\b",
                text[i : i + 1500],
            )
            level = STREAM_LEVELS.get(logged.group(1), "error") if logged else "error"
            if _used_as_format(text[i : i + 1500], m.group(1)):
                got = got.replace("%%", "%")  # its literal text is a printf format itself
            yield CppMessage(level, got, text.count("\n", 0, m.start()) + 1)
    for m in head.finditer(text):
        if m.start() in nested:
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        if re.match(r"\s*#\s*define\s+" + re.escape(m.group(1)) + r"\b", text[start:]):
            continue
        name = m.group(1)
        called = _call_text(text, m.end(), name)
        if called and _useful(called):
            level = FMT.get(name) or CONCAT[name][0]
            yield CppMessage(level, called, text.count("\n", 0, m.start()) + 1)
    for m in _CHECK.finditer(text):
        i = m.end()
        while i < len(text) and text[i] != ")":
            i = _skip_arg(text, _skip_space(text, i))
            if i < len(text) and text[i] == ",":
                i += 1
            elif i < len(text) and text[i] != ")":
                break  # unbalanced (a `CHECK(...` in a comment): `]` or `}` ends it
        j = _skip_space(text, i + 1)
        if text.startswith("<<", j):
            got, _ = _concat(text, j + 2, "<<")
            if got and _useful(got):
                yield CppMessage("fatal", got, text.count("\n", 0, m.start()) + 1)
    for m in _PRINTF_ERRORS.finditer(text):
        lit = _literal_run(text, _skip_space(text, m.end()))
        if lit and _useful(lit[0]):
            yield CppMessage("error", lit[0], text.count("\n", 0, m.start()) + 1)
    for m in _STREAM.finditer(text):
        i = text.find("<<", m.end())
        if i < 0 or text[m.end() : i].strip(" \t\n),0123456789"):
            continue  # not `LOG(LEVEL) << ...` (nor `LOG_EVERY_N(LEVEL, n) << ...`)
        got, _ = _concat(text, i + 2, "<<")
        if got and _useful(got):
            level = STREAM_LEVELS[m.group(1)] if m.group(1) else "info"
            yield CppMessage(level, got, text.count("\n", 0, m.start()) + 1)
