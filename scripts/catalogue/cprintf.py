"""printf-style logging macros in C/C++ source: `WARN("fmt %s", x)`, `INFO(FLAGS, "fmt")`.

The format argument is read as the compiler would: adjacent string literals joined,
escapes decoded, `PRIu64`-style macros turned into their conversion, `#arg`
stringification and any other macro in the concatenation turned into a `%s` (its text is
only known at compile time). A call whose format is not a string literal is skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

_PRI = re.compile(r"PRI([diouxX])(8|16|32|64|MAX|PTR|LEAST\d+|FAST\d+)")
_ESC = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "", "a": "", "e": ""}


@dataclass(frozen=True)
class Call:
    macro: str
    template: str
    line: int  # 1-based


def _decode(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt == "x":
                m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2 :])
                out.append(chr(int(m.group(0), 16)) if m else "x")
                i += 2 + (len(m.group(0)) if m else 0)
                continue
            out.append(_ESC.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _skip_space(text: str, i: int) -> int:
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = len(text) if j < 0 else j + 2
        elif text.startswith("\\\n", i):
            i += 2
        else:
            break
    return i


def _string_at(text: str, i: int) -> tuple[str, int] | None:
    """The decoded string literal at `i` (with an optional L/u8 prefix) and its end."""
    m = re.match(r'(?:u8|[LuU])?"', text[i:])
    if not m:
        return None
    j = i + m.end()
    while j < len(text) and text[j] != '"':
        j += 2 if text[j] == "\\" else 1
    return _decode(text[i + m.end() : j]), j + 1


def _skip_arg(text: str, i: int) -> int:
    """Past one macro argument (to the `,` or `)` that ends it at depth 0)."""
    depth = 0
    while i < len(text):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif ch == "," and depth == 0:
            return i
        elif ch == '"' or ch == "'":
            j = i + 1
            while j < len(text) and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            i = j
        i += 1
    return i


def _format_at(text: str, i: int) -> str | None:
    """The format argument starting at `i`: string literals and macros concatenated."""
    parts: list[str] = []
    saw_string = False
    while True:
        i = _skip_space(text, i)
        if i >= len(text) or text[i] in ",)":
            break
        lit = _string_at(text, i)
        if lit is not None:
            parts.append(lit[0])
            i = lit[1]
            saw_string = True
            continue
        m = re.match(r"#?\s*[A-Za-z_]\w*", text[i:])
        if not m:
            return None  # an expression (a ternary, a call): not a literal format
        word = m.group(0)
        pri = _PRI.fullmatch(word)
        if pri:
            parts.append(("ll" if pri.group(2) == "64" else "") + pri.group(1))
        else:
            # `#arg`, a macro, or a macro's parameter (`"Call to " name " failed"`):
            # text known only where the macro is expanded; a variable alone holding
            # the whole format has no string literal and is skipped below
            parts.append("%s")
        i += m.end()
    if not saw_string:
        return None
    return "".join(parts)


def calls(text: str, macros: Mapping[str, int]) -> Iterator[Call]:
    """Every call of one of `macros` (name -> index of its format argument) in `text`."""
    names = "|".join(re.escape(n) for n in sorted(macros, key=len, reverse=True))
    head = re.compile(rf"(?<![\w.>])({names})\s*\(")
    for m in head.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if re.fullmatch(r"\s*#\s*define\s+", text[start : m.start()]):
            continue  # the macro's own definition
        i = m.end()
        for _ in range(macros[m.group(1)]):
            i = _skip_arg(text, _skip_space(text, i))
            if i >= len(text) or text[i] != ",":
                break
            i += 1
        else:
            fmt = _format_at(text, i)
            if fmt is not None and fmt.strip():
                yield Call(m.group(1), fmt, text.count("\n", 0, m.start()) + 1)


def concat_calls(text: str, macros: Mapping[str, int]) -> Iterator[Call]:
    """Calls of macros that concatenate their arguments (`MakeString`-style, as Gloo's
    `GLOO_ERROR_MSG("Connection closed by peer ", peer_.str())`): from the argument at
    the macro's index on, a string literal is text, anything else a `%s`. A call with
    no literal text is skipped."""
    names = "|".join(re.escape(n) for n in sorted(macros, key=len, reverse=True))
    head = re.compile(rf"(?<![\w.>])({names})\s*\(")
    for m in head.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if re.fullmatch(r"\s*#\s*define\s+", text[start : m.start()]):
            continue
        i, index, parts = m.end(), 0, []
        while i < len(text):
            i = _skip_space(text, i)
            if i >= len(text) or text[i] == ")":
                break
            end = _skip_arg(text, i)
            if index >= macros[m.group(1)]:
                arg = text[i:end].strip()
                lits, j, only = [], 0, True
                while j < len(arg):
                    j = _skip_space(arg, j)
                    lit = _string_at(arg, j)
                    if lit is None:
                        only = False
                        break
                    lits.append(lit[0])
                    j = lit[1]
                parts.append("".join(lits) if only and lits else "%s")
            index += 1
            i = end + 1 if end < len(text) and text[end] == "," else end
        fmt = "".join(parts)
        if fmt.replace("%s", "").strip():
            yield Call(
                m.group(1),
                fmt.replace("%", "%%").replace("%%s", "%s"),
                text.count("\n", 0, m.start()) + 1,
            )
