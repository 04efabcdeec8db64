"""YAML loading that remembers where every value came from, so lint can say `file:line`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

try:  # the C loader is several times faster; fall back where libyaml is missing
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

Path_ = tuple[Any, ...]


@dataclass
class Located:
    """A parsed YAML document plus the 1-based line of every key and list item."""

    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)
    duplicate_keys: list[tuple[str, int]] = field(default_factory=list)

    def line_of(self, loc: Path_) -> int:
        """The line of the deepest known prefix of `loc` (pydantic error locations fit)."""
        best = self.lines.get((), 1)
        path: Path_ = ()
        for part in loc:
            candidate = path + (part,)
            if candidate in self.lines:
                path = candidate
                best = self.lines[path]
        return best


class YamlSyntaxError(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def load_located(text: str) -> Located:
    """Parse one YAML document; raise YamlSyntaxError with the line of the problem."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = exc.problem or str(exc)
        raise YamlSyntaxError(f"YAML syntax error: {problem}", line) from None
    except yaml.YAMLError as exc:  # pragma: no cover - other reader errors
        raise YamlSyntaxError(f"YAML error: {exc}", 1) from None
    out = Located(data=None)
    if node is None:
        return out
    out.data = _convert(node, (), out)
    return out


def _convert(node: yaml.Node, path: Path_, out: Located) -> Any:
    out.lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node)
            if key in result:
                out.duplicate_keys.append((str(key), key_node.start_mark.line + 1))
            out.lines[path + (key,)] = key_node.start_mark.line + 1
            result[key] = _convert(value_node, path + (key,), out)
        return result
    if isinstance(node, yaml.SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            out.lines[path + (i,)] = item.start_mark.line + 1
            items.append(_convert(item, path + (i,), out))
        return items
    return _scalar(node)


_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def _scalar(node: yaml.Node) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        return str(node.value)
    return _CONSTRUCTOR.construct_object(node, deep=True)
