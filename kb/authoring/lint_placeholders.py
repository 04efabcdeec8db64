"""Lint: every `{placeholder}` of a command sits where a shell-quoted value stays one word.

Why it exists: the command builder (`kb.rules.placeholders`) validates a value by its kind and
shell-quotes it; that is safe only when the placeholder is a shell word (or part of one)
outside any quotes, and when a value that may start with `-` cannot land as an option.
A rule that breaks this runs another command than the one the user was shown, so the
linter refuses it where the rule is written, with the file and line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from kb.authoring.lintkit import issue
from kb.rules.knowledge import Issue, KnowledgeBase, Source
from kb.rules.placeholder_context import PLAIN, Spot, spots
from kb.rules.schema.models import Check, ParamDoc
from kb.rules.valuekinds import kind_of, validate_value

_QUOTING_HINT = (
    "make it a shell word of its own, outside quotes (echo not found: {x}); "
    'build a JSON or sed text from a variable (v={x}; ... "$v")'
)


def _command_issues(
    src: Source, line: int, rule: str, template: str, declared: Mapping[str, ParamDoc]
) -> Iterator[Issue]:
    seen: set[tuple[str, str, bool]] = set()
    for spot in spots(template):
        name = "{" + spot.name + "}"
        key = (spot.name, spot.where, spot.starts_word and not spot.after_dashdash)
        if key in seen:
            continue
        seen.add(key)
        if spot.where != PLAIN:
            yield issue(
                src,
                line,
                rule,
                "placeholder-quoting",
                f"placeholder {name} is inside {spot.where}: its quoted value would "
                "re-open them and run as shell code",
                _QUOTING_HINT.replace("{x}", name),
            )
        elif _may_be_option(spot) and kind_of(spot.name, declared) == "text":
            yield issue(
                src,
                line,
                rule,
                "placeholder-option",
                f"placeholder {name} (free text) starts a word: a value such as "
                "'-oProxyCommand=...' would be read as an option",
                f"declare its kind under params (e.g. {spot.name}: {{kind: path}}), "
                "or put -- before it",
            )


def _may_be_option(spot: Spot) -> bool:
    """A value that starts a word can be read as an option, unless a `--` ended the
    options, or the program takes none there (echo prints it, printf after its format)."""
    if not spot.starts_word or spot.after_dashdash:
        return False
    return not (spot.command == "echo" or (spot.command == "printf" and spot.position > 1))


def _example_issues(
    src: Source, path: tuple[object, ...], rule: str, declared: Mapping[str, ParamDoc]
) -> Iterator[Issue]:
    for name, doc in declared.items():
        if doc.example is None:
            continue
        try:
            validate_value(name, doc.example, kind_of(name, declared))
        except ValueError as exc:
            yield issue(
                src,
                src.line(*path, name, "example"),
                rule,
                "param-example",
                f"the example does not fit its kind: {exc}",
                "give a real value, or declare another kind",
            )


def check_placeholder_quoting(kb: KnowledgeBase) -> Iterator[Issue]:
    """Placeholders inside quotes, backticks, `${...}`, here-documents or in option position;
    and examples that the value's own kind refuses."""
    for cid, cause in kb.causes.items():
        src = kb.sources[cid]
        for ci, chk in enumerate(cause.checks):
            if isinstance(chk, Check):
                line = src.line("checks", ci, "run")
                yield from _command_issues(src, line, cid, chk.run, chk.params)
                yield from _example_issues(src, ("checks", ci, "params"), cid, chk.params)
    for fid, fix in kb.fixes.items():
        src = kb.sources[fid]
        for i, cmd in enumerate(fix.commands):
            line = src.line("commands", i, "run")
            yield from _command_issues(src, line, fid, cmd.run, fix.params)
        yield from _example_issues(src, ("params",), fid, fix.params)
