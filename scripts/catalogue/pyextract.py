"""Python sources: the messages of `raise SomeError("...")`, `logger.warning("...")`
(`debug` is left out), `warnings.warn("...")` and `print("...")`-free of noise, read with
`ast` as the interpreter would. f-string fields become `{}`, `"..." % x` keeps its `%s`,
`"...".format(x)` keeps its `{}`; a message with no literal text is skipped."""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from merge import Found, Seen, scan_releases

LOG_LEVELS = {
    "warning": "warn", "warn": "warn", "error": "error", "exception": "error",
    "critical": "fatal", "fatal": "fatal", "info": "info",
}  # fmt: skip


@dataclass(frozen=True)
class PyMessage:
    level: str
    template: str
    line: int


def _text(node: ast.AST) -> str | None:
    """The message a string expression prints, with its fields as placeholders."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value.replace("{", "{{").replace("}", "}}"))
            else:
                out.append("{}")
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _text(node.left)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
    ):
        return _text(node.func.value)
    return None


def _name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def parse(source: str) -> ast.AST | None:
    """The module's tree, or None for a file that does not parse (old syntax, a template);
    the warnings old sources raise while parsing are not ours to show."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(source)
        except (SyntaxError, ValueError):
            return None


def messages(source: str) -> Iterator[PyMessage]:
    """Every raised, logged or warned message of a Python module (nothing for a file
    that does not parse)."""
    tree = parse(source)
    if tree is None:
        return
    for node in ast.walk(tree):
        # `raise E("...")`, and `return E("...")` from a helper that builds the exception
        # its callers raise (torch.distributed's `_rendezvous_error(msg)`)
        raised = node.exc if isinstance(node, ast.Raise) else None
        value = node.value if isinstance(node, ast.Return) else None
        if isinstance(value, ast.Call) and _name(value.func).endswith(("Error", "Exception")):
            raised = value
        if isinstance(raised, ast.Call):
            assert isinstance(node, ast.stmt)  # the raise or the return
            call = raised
            if call.args and _name(call.func)[:1].isupper():
                text = _text(call.args[0])
                if text and text.strip():
                    yield PyMessage("error", f"{_name(call.func)}: {text}", node.lineno)
        elif isinstance(node, ast.Call) and node.args:
            name = _name(node.func)
            level = LOG_LEVELS.get(name)
            if name == "warn" and isinstance(node.func, ast.Attribute):
                base = node.func.value
                level = "warn" if isinstance(base, ast.Name) and base.id == "warnings" else level
            if level is None or not isinstance(node.func, ast.Attribute):
                continue
            text = _text(node.args[0])
            if text and text.strip():
                yield PyMessage(level, text, node.lineno)


def scan(
    git_dir: Path, tag_pattern: str, minimum: str, paths: tuple[str, ...]
) -> tuple[str, list[Seen]]:
    """Every message of the `.py` files under `paths` at every release tag."""

    def keep(path: str) -> bool:
        return path.endswith(".py") and not ("/test" in path or path.startswith("test"))

    def read(text: str) -> list[Found]:
        found = dict.fromkeys((m.level, m.template) for m in messages(text))
        return [(level, template, {}) for level, template in found]

    return scan_releases(git_dir, tag_pattern, minimum, keep, read, paths)
