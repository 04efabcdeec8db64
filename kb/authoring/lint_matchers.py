"""Lint checks on what a rule matches: regexes (RE2 syntax, group names, extractors),
matchers (fuzzy thresholds and anchors, weak or text-less patterns, `where` bounds on
groups the regex has) and signature features. Most guard the diagnosis's speed as much as its meaning: a pattern that
requires no text, or a fuzzy text with no anchor word, hands the scanner every line."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from kb.authoring.lintkit import issue, nodes, signatures
from kb.diagnosis.firing import is_generic
from kb.rules.knowledge import Issue, KnowledgeBase, Source
from kb.rules.numeric import OPERATORS, parse_operand
from kb.rules.schema.models import (
    Check,
    Expect,
    FuzzyMatcher,
    RegexMatcher,
    Signature,
)
from kb.util import re2syntax


def _signature_regexes(sig: Signature) -> Iterator[tuple[tuple[object, ...], str]]:
    for i, m in enumerate(sig.matchers):
        if isinstance(m, RegexMatcher):
            yield ("matchers", i, "pattern"), m.pattern
    for i, m in enumerate(sig.unless):
        if isinstance(m, RegexMatcher):
            yield ("unless", i, "pattern"), m.pattern
    for name, rx in sig.extract.items():
        yield ("extract", name), rx


def _expect_regexes(
    exp: Expect, loc: tuple[object, ...]
) -> Iterator[tuple[tuple[object, ...], str]]:
    for field in ("any_line_matches", "no_line_matches"):
        value = getattr(exp, field)
        if value is not None:
            yield (*loc, field), value
    if exp.number is not None:
        yield (*loc, "number", "pattern"), exp.number.pattern
    for field in ("any", "all"):
        for i, sub in enumerate(getattr(exp, field) or []):
            yield from _expect_regexes(sub, (*loc, field, i))


def _all_regexes(kb: KnowledgeBase) -> Iterator[tuple[str, Source, tuple[object, ...], str]]:
    for nid, src, node in nodes(kb):
        for si, sig in enumerate(node.signatures):
            for loc, rx in _signature_regexes(sig):
                yield nid, src, ("signatures", si, *loc), rx
        for ci, chk in enumerate(getattr(node, "checks", [])):
            if not isinstance(chk, Check):
                continue
            for loc, rx in _expect_regexes(chk.problem_if, ("checks", ci, "problem_if")):
                yield nid, src, loc, rx
            if chk.ok_if is not None:
                for loc, rx in _expect_regexes(chk.ok_if, ("checks", ci, "ok_if")):
                    yield nid, src, loc, rx
            for name, rx in chk.extract.items():
                yield nid, src, ("checks", ci, "extract", name), rx


def check_regexes(kb: KnowledgeBase) -> Iterator[Issue]:
    for nid, src, loc, rx in _all_regexes(kb):
        problem = re2syntax.check(rx)
        if problem is not None:
            where = f" at position {problem.position}" if problem.position >= 0 else ""
            yield issue(
                src,
                src.line(*loc),
                nid,
                "regex-re2",
                f"regex is not valid RE2 syntax{where}: {problem.message}",
                "rules use RE2: no lookaround, no backreferences, no possessive or atomic groups",
            )
            continue
        names = re.findall(r"\(\?P?<(\w+)>", rx)
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            yield issue(
                src,
                src.line(*loc),
                nid,
                "regex-group-name",
                f"named group '{dupes[0]}' appears twice in one regex; only the first is extracted",
                "give each group its own name, or use a shared extractor under 'extract'",
            )
        if loc[-2] == "extract":
            rxc = re2syntax.compile_re2(rx)
            name = loc[-1]
            if rxc.groups < 1:
                yield issue(
                    src,
                    src.line(*loc),
                    nid,
                    "extractor-group",
                    f"extractor '{name}' has no capture group",
                    f"wrap the value in parentheses, e.g. (?P<{name}>\\S+)",
                )


def check_matchers(kb: KnowledgeBase) -> Iterator[Issue]:
    for nid, src, si, sig in signatures(kb):
        for mi, m in enumerate(sig.matchers):
            loc = ("signatures", si, "matchers", mi)
            if isinstance(m, FuzzyMatcher) and not 50 <= m.threshold <= 100:
                yield issue(
                    src,
                    src.line(*loc, "threshold"),
                    nid,
                    "fuzzy-threshold",
                    f"fuzzy threshold {m.threshold} is out of range",
                    "use 50-100; 85 suits most log lines",
                )
            # an `or` signature fires on any one matcher; an `and` one only on all together
            weak = (
                is_generic(m)
                if sig.condition == "or"
                else all(is_generic(other) for other in sig.matchers)
            )
            if sig.alone and weak and (sig.condition == "or" or mi == 0):
                yield issue(
                    src,
                    src.line(*loc),
                    nid,
                    "weak-signature",
                    f"signature '{sig.id}' rests on a short or generic text",
                    "match a longer, specific phrase, or set alone: false",
                    severity="warning",
                )


MAX_MIN_HITS = 20  # kb.diagnosis.matching.SignatureMatcher.MAX_HITS: hits kept per matcher


def check_signature_features(kb: KnowledgeBase) -> Iterator[Issue]:
    """`min_hits` beyond the hits a matcher keeps could never be reached; below 1 means
    nothing. `asked` speaks of a note: without one it means nothing."""
    for nid, src, si, sig in signatures(kb):
        if sig.asked and (sig.note is None or sig.alone):
            yield issue(
                src,
                src.line("signatures", si, "asked"),
                nid,
                "asked-without-note",
                f"signature '{sig.id}' is `asked` but is no note (it needs `note:` and "
                "`alone: false`)",
                "`asked` marks a note a few pasted lines ask about; drop it or add the note",
            )
        if not 1 <= sig.min_hits <= MAX_MIN_HITS:
            yield issue(
                src,
                src.line("signatures", si, "min_hits"),
                nid,
                "min-hits-range",
                f"min_hits {sig.min_hits} of signature '{sig.id}' is out of range",
                f"use 1-{MAX_MIN_HITS}: the lines a signature's matchers must hit",
            )
    yield from check_where(kb)


def _group_names(pattern: str) -> set[str]:
    return set(re.findall(r"\(\?P?<(\w+)>", pattern))


def check_where(kb: KnowledgeBase) -> Iterator[Issue]:
    """A `where` bound on a group its regex does not have (or that names such a group)
    could never hold: the matcher would never fire. A group without a bound says nothing."""
    for p in _every_matcher(kb):
        m = p.matcher
        if not isinstance(m, RegexMatcher) or not m.where:
            continue
        groups = _group_names(m.pattern)
        known = ", ".join(sorted(groups)) or "none"
        for name, bounds in m.where.items():
            line = p.src.line(*p.at, "where", name)
            if name not in groups:
                yield issue(
                    p.src,
                    line,
                    p.node,
                    "where-group",
                    f"'where' of signature '{p.sig.id}' bounds group '{name}', which its "
                    f"regex does not have (its groups: {known})",
                    f"name the value in the pattern: (?P<{name}>\\d+(?:\\.\\d+)?)",
                )
            given = [op for op in OPERATORS if getattr(bounds, op) is not None]
            if not given:
                yield issue(
                    p.src,
                    line,
                    p.node,
                    "where-bound",
                    f"'where' of signature '{p.sig.id}' gives group '{name}' no bound",
                    "give one of: " + ", ".join(OPERATORS),
                )
            for op in given:
                _, other = parse_operand(getattr(bounds, op))
                if other is not None and other not in groups:
                    yield issue(
                        p.src,
                        p.src.line(*p.at, "where", name, op),
                        p.node,
                        "where-group",
                        f"bound '{op}' of '{name}' in signature '{p.sig.id}' compares with "
                        f"group '{other}', which its regex does not have (its groups: {known})",
                        "compare with a named group of the same regex, or a number",
                    )


@dataclass(frozen=True)
class _Placed:
    """One matcher of a signature, with where it stands in its file."""

    node: str
    src: Source
    sig: Signature
    at: tuple[str | int, ...]  # the matcher's path in its file
    matcher: object

    def line(self, key: str) -> int:
        return self.src.line(*self.at, key)


def _every_matcher(kb: KnowledgeBase) -> Iterator[_Placed]:
    """Every matcher and veto of every signature, of causes and symptoms alike."""
    for nid, src, si, sig in signatures(kb):
        for group, matchers in (("matchers", sig.matchers), ("unless", sig.unless)):
            for mi, m in enumerate(matchers):
                yield _Placed(nid, src, sig, ("signatures", si, group, mi), m)


def check_fuzzy_anchors(kb: KnowledgeBase) -> Iterator[Issue]:
    """A fuzzy text with no anchor word (kb.diagnosis.matching.anchors_of) makes every line of a log
    a candidate: a gigabyte log then costs a fuzzy comparison per line."""
    from kb.diagnosis.matching import anchors_of

    for p in _every_matcher(kb):
        if isinstance(p.matcher, FuzzyMatcher) and not anchors_of(p.matcher.text):
            yield issue(
                p.src,
                p.line("text"),
                p.node,
                "fuzzy-no-anchor",
                f"fuzzy text of signature '{p.sig.id}' has no anchor word, so "
                "every line of a log would be compared with it",
                "include a distinctive word of 4+ letters (numbers, paths "
                "and addresses are masked), or use a regex",
                severity="warning",
            )


MIN_LITERAL = 2  # characters of plain text a regex must require (see required_literal)


def check_regex_literals(kb: KnowledgeBase) -> Iterator[Issue]:
    """A regex that requires no plain text makes most lines of a log candidates for the
    line-by-line matchers: a gigabyte log then takes minutes instead of seconds."""
    for p in _every_matcher(kb):
        if not isinstance(p.matcher, RegexMatcher):
            continue
        n = re2syntax.required_literal(p.matcher.pattern)
        if n is not None and n < MIN_LITERAL:
            yield issue(
                p.src,
                p.line("pattern"),
                p.node,
                "regex-no-literal",
                f"regex of signature '{p.sig.id}' requires no text of its own, so "
                "the scanner would hand it most lines of a log",
                "require a word of the message (anchors and classes alone do "
                "not narrow the search), or fold the line into another matcher",
            )
