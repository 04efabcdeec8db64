"""YAML loading that remembers where every value came from, so lint can say `file:line`.

Rule files are plain data, so only plain YAML is accepted: anchors and aliases (a
400-byte "billion laughs" file expands to gigabytes), merge keys (`<<:`), tags other
than the core types (`!!python/name:`, `!!binary`, custom `!tags`), several documents,
and nesting deeper than `MAX_DEPTH` are refused with the line they are on. The document
is built from the parser's events in one loop (no recursion, no node graph), so the
time and memory it takes are linear in the size of the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

try:  # the C parser is several times faster; fall back where libyaml is missing
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

Path_ = tuple[Any, ...]
MAX_DEPTH = 64
_CORE = "tag:yaml.org,2002:"
# explicit tags a rule file may carry: the plain core types, nothing that builds objects
_SCALAR_TAGS = {_CORE + t for t in ("str", "int", "float", "bool", "null")}
_IMPLICIT_TAGS = _SCALAR_TAGS | {_CORE + "timestamp"}


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
        super().__init__(" ".join(message.split()))  # always one line
        self.line = line


def load_located(text: str) -> Located:
    """Parse one YAML document; raise YamlSyntaxError with the line of the problem."""
    out = Located(data=None)
    try:
        _build(yaml.parse(text, Loader=_Loader), out)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        raise YamlSyntaxError(f"YAML syntax error: {exc.problem or exc}", line) from None
    except yaml.reader.ReaderError as exc:  # a character YAML forbids (NUL, other controls)
        line = text.count("\n", 0, max(exc.position, 0)) + 1
        char = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or "\0")
        raise YamlSyntaxError(f"YAML error: {exc.reason} (character #x{char:04x})", line) from None
    except UnicodeEncodeError as exc:  # a lone surrogate: text that came from no file
        line = text.count("\n", 0, exc.start) + 1
        raise YamlSyntaxError("YAML error: text that is not valid Unicode", line) from None
    except yaml.YAMLError as exc:  # pragma: no cover - other reader errors
        raise YamlSyntaxError(f"YAML error: {exc}", 1) from None
    return out


@dataclass
class _Frame:
    path: Path_
    container: dict[Any, Any] | list[Any]
    key: Any = None
    want_key: bool = True


def _short(tag: str) -> str:
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag


def _build(events: Any, out: Located) -> None:
    """Fill `out` from the parser's events, refusing what plain data never needs."""
    stack: list[_Frame] = []
    documents = 0
    for ev in events:
        if isinstance(ev, yaml.StreamStartEvent | yaml.StreamEndEvent | yaml.DocumentEndEvent):
            continue
        line = ev.start_mark.line + 1
        if isinstance(ev, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise YamlSyntaxError("a rule file holds one YAML document (a second '---')", line)
            continue
        if isinstance(ev, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            stack.pop()
            continue
        if isinstance(ev, yaml.AliasEvent):
            raise YamlSyntaxError(
                f"YAML aliases (*{ev.anchor}) are not allowed in rule files", line
            )
        if ev.anchor is not None:
            raise YamlSyntaxError(
                f"YAML anchors (&{ev.anchor}) are not allowed in rule files", line
            )
        parent = stack[-1] if stack else None
        if isinstance(ev, yaml.ScalarEvent):
            value = _scalar(ev, line)
            if parent is not None and isinstance(parent.container, dict) and parent.want_key:
                _key(parent, value, line, out)
                continue
            _place(parent, value, line, out)
            continue
        # the start of a mapping or a sequence
        is_map = isinstance(ev, yaml.MappingStartEvent)
        if ev.tag not in (None, "!", _CORE + ("map" if is_map else "seq")):
            raise YamlSyntaxError(f"YAML tag '{_short(ev.tag)}' is not allowed in rule files", line)
        if parent is not None and isinstance(parent.container, dict) and parent.want_key:
            raise YamlSyntaxError(
                "a mapping key must be a plain value, not a list or mapping", line
            )
        if len(stack) >= MAX_DEPTH:
            raise YamlSyntaxError(f"nested more than {MAX_DEPTH} levels deep", line)
        container: dict[Any, Any] | list[Any] = {} if is_map else []
        path = _place(parent, container, line, out)
        stack.append(_Frame(path, container))


def _key(frame: _Frame, key: Any, line: int, out: Located) -> None:
    assert isinstance(frame.container, dict)
    if key in frame.container:
        out.duplicate_keys.append((str(key), line))
    out.lines[frame.path + (key,)] = line
    frame.key, frame.want_key = key, False


def _place(parent: _Frame | None, value: Any, line: int, out: Located) -> Path_:
    """Put `value` where the parser is (the root, a mapping's value, a list's next item)."""
    if parent is None:
        path: Path_ = ()
        out.data = value
    elif isinstance(parent.container, dict):
        path = parent.path + (parent.key,)
        parent.container[parent.key] = value
        parent.want_key = True
    else:
        path = parent.path + (len(parent.container),)
        out.lines[path] = line
        parent.container.append(value)
    out.lines.setdefault(path, line)
    return path


_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_RESOLVER = yaml.resolver.Resolver()


def _scalar(ev: Any, line: int) -> Any:
    """A scalar's value, by its core type; merge keys and object tags are refused."""
    tag = ev.tag
    if tag is None or tag == "!":
        tag = _RESOLVER.resolve(yaml.ScalarNode, ev.value, ev.implicit)
        if tag == _CORE + "merge":
            raise YamlSyntaxError("YAML merge keys (<<) are not allowed in rule files", line)
        if tag not in _IMPLICIT_TAGS:
            tag = _CORE + "str"  # e.g. '=' (the 'value' type): plain text
    elif tag not in _SCALAR_TAGS:
        raise YamlSyntaxError(f"YAML tag '{_short(tag)}' is not allowed in rule files", line)
    node = yaml.ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark, ev.style)
    try:
        return _CONSTRUCTOR.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        problem = getattr(exc, "problem", None) or exc
        raise YamlSyntaxError(
            f"not a valid {_short(tag)} value: {ev.value[:40]!r} ({problem})", line
        ) from None
