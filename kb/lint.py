"""Semantic checks across the knowledge base, after each file has passed its schema.

Each check is a small function yielding `Issue`s with the file and line to fix; the
list `CHECKS` is the whole linter, so adding a check is adding a function.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from kb import loader, placeholders, re2syntax
from kb.diagnosis.shapes import GENERIC_WORDS
from kb.knowledge import Issue, KnowledgeBase, Source
from kb.schema.models import (
    Check,
    Expect,
    FuzzyMatcher,
    RegexMatcher,
    Signature,
    SubstringMatcher,
    Symptom,
)

MIN_SPECIFIC_CHARS = 12


def lint(root: Path) -> tuple[KnowledgeBase, list[Issue]]:
    """Load `root` and run every check; issues are sorted by file and line."""
    kb, issues = loader.load(root)
    for check in CHECKS:
        issues.extend(check(kb))
    issues.sort(key=lambda i: (i.file, i.line, i.check))
    return kb, issues


def _issue(
    src: Source, line: int, rule: str, check: str, msg: str, hint: str = "", severity: str = "error"
) -> Issue:
    return Issue(src.display, line, rule, check, msg, hint, severity)


# ---------------------------------------------------------------- references


def check_references(kb: KnowledgeBase) -> Iterator[Issue]:
    checks = kb.checks
    for cid, cause in kb.causes.items():
        src = kb.sources[cid]
        for field, kind, known in (
            ("symptoms", "symptom", kb.symptoms),
            ("fixes", "fix", kb.fixes),
        ):
            for i, ref in enumerate(getattr(cause, field)):
                if ref not in known:
                    yield _issue(
                        src,
                        src.line(field, i),
                        cid,
                        "unresolved-ref",
                        f"{kind} '{ref}' is not defined",
                        _near(ref, known) or f"add rules/{field}/{ref}.yaml",
                    )
        for i, chk in enumerate(cause.checks):
            if isinstance(chk, str) and chk not in checks:
                yield _issue(
                    src,
                    src.line("checks", i),
                    cid,
                    "unresolved-ref",
                    f"check '{chk}' is not defined in any cause",
                    _near(chk, checks),
                )
            if isinstance(chk, Check):
                for outcome_name in ("on_problem", "on_ok"):
                    outcome = getattr(chk, outcome_name)
                    if outcome is None:
                        continue
                    for field in ("confirms", "rules_out"):
                        for j, ref in enumerate(getattr(outcome, field)):
                            if ref not in kb.causes:
                                yield _issue(
                                    src,
                                    src.line("checks", i, outcome_name, field, j),
                                    cid,
                                    "unresolved-ref",
                                    f"check '{chk.id}' refers to unknown cause '{ref}'",
                                    _near(ref, kb.causes),
                                )
    for sid, symptom in kb.symptoms.items():
        src = kb.sources[sid]
        for qi, q in enumerate(symptom.questions):
            for ai, ans in enumerate(q.answers):
                for field in ("confirms", "rules_out"):
                    for j, ref in enumerate(getattr(ans, field)):
                        if ref not in kb.causes:
                            yield _issue(
                                src,
                                src.line("questions", qi, "answers", ai, field, j),
                                sid,
                                "unresolved-ref",
                                f"answer '{ans.id}' refers to unknown cause '{ref}'",
                                _near(ref, kb.causes),
                            )
                        elif sid not in kb.causes[ref].symptoms:
                            yield _issue(
                                src,
                                src.line("questions", qi, "answers", ai, field, j),
                                sid,
                                "unrelated-cause",
                                f"answer '{ans.id}' refers to '{ref}', which does not list "
                                f"symptom '{sid}'",
                                f"add '{sid}' to the symptoms of {ref}",
                            )
    for fid, fixnode in kb.fixes.items():
        src = kb.sources[fid]
        for i, ref in enumerate(fixnode.verify):
            if ref not in checks:
                yield _issue(
                    src,
                    src.line("verify", i),
                    fid,
                    "unresolved-ref",
                    f"verifying check '{ref}' is not defined",
                    _near(ref, checks),
                )


def _near(name: str, known: Mapping[str, object]) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else ""


# ---------------------------------------------------------------- graph shape


def check_reachability(kb: KnowledgeBase) -> Iterator[Issue]:
    from kb.graph import build_graph

    g = build_graph(kb)
    reached: set[str] = set()
    for sid in kb.symptoms:
        reached.update(g.successors(("symptom", sid)))
    for cid, cause in kb.causes.items():
        if ("cause", cid) not in reached and all(s in kb.symptoms for s in cause.symptoms):
            src = kb.sources[cid]
            yield _issue(
                src,
                src.line("symptoms"),
                cid,
                "unreachable-cause",
                f"no symptom reaches cause '{cid}'",
                "list at least one existing symptom under 'symptoms'",
            )
    used = {fix for c in kb.causes.values() for fix in c.fixes}
    for fid in kb.fixes:
        if fid not in used:
            src = kb.sources[fid]
            yield _issue(
                src,
                src.line("id"),
                fid,
                "unused-fix",
                f"fix '{fid}' is used by no cause",
                "add it to a cause's 'fixes' or delete it",
            )
    for sid in kb.symptoms:
        if not kb.causes_of(sid):
            src = kb.sources[sid]
            yield _issue(
                src,
                src.line("id"),
                sid,
                "empty-symptom",
                f"symptom '{sid}' leads to no cause",
                "list it under 'symptoms' of the causes it can come from",
            )


def check_unique_subids(kb: KnowledgeBase) -> Iterator[Issue]:
    seen_checks: dict[str, str] = {}
    for cid, cause in kb.causes.items():
        src = kb.sources[cid]
        for i, chk in enumerate(cause.checks):
            if isinstance(chk, Check):
                if chk.id in seen_checks:
                    yield _issue(
                        src,
                        src.line("checks", i, "id"),
                        cid,
                        "duplicate-id",
                        f"check id '{chk.id}' is already used by cause '{seen_checks[chk.id]}'",
                        "refer to it by id instead of redefining it",
                    )
                seen_checks.setdefault(chk.id, cid)
    for nid, src in kb.sources.items():
        node = kb.causes.get(nid) or kb.symptoms.get(nid)
        if node is None:
            continue
        sig_ids = [s.id for s in node.signatures]
        for i, sid in enumerate(sig_ids):
            if sid in sig_ids[:i]:
                yield _issue(
                    src,
                    src.line("signatures", i, "id"),
                    nid,
                    "duplicate-id",
                    f"signature id '{sid}' is used twice in this rule",
                )
        if isinstance(node, Symptom):
            q_ids = [q.id for q in node.questions]
            for i, qid in enumerate(q_ids):
                if qid in q_ids[:i]:
                    yield _issue(
                        src,
                        src.line("questions", i, "id"),
                        nid,
                        "duplicate-id",
                        f"question id '{qid}' is used twice in this symptom",
                    )


# ---------------------------------------------------------------- regexes and matchers


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
    for nid, src in kb.sources.items():
        node = kb.causes.get(nid) or kb.symptoms.get(nid)
        if node is None:
            continue
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
            yield _issue(
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
            yield _issue(
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
                yield _issue(
                    src,
                    src.line(*loc),
                    nid,
                    "extractor-group",
                    f"extractor '{name}' has no capture group",
                    f"wrap the value in parentheses, e.g. (?P<{name}>\\S+)",
                )


def check_matchers(kb: KnowledgeBase) -> Iterator[Issue]:
    for nid, src in kb.sources.items():
        node = kb.causes.get(nid) or kb.symptoms.get(nid)
        if node is None:
            continue
        for si, sig in enumerate(node.signatures):
            for mi, m in enumerate(sig.matchers):
                loc = ("signatures", si, "matchers", mi)
                if isinstance(m, FuzzyMatcher) and not 50 <= m.threshold <= 100:
                    yield _issue(
                        src,
                        src.line(*loc, "threshold"),
                        nid,
                        "fuzzy-threshold",
                        f"fuzzy threshold {m.threshold} is out of range",
                        "use 50-100; 85 suits most log lines",
                    )
                # an `or` signature fires on any one matcher; an `and` one only on all together
                weak = (
                    _is_generic(m)
                    if sig.condition == "or"
                    else all(_is_generic(other) for other in sig.matchers)
                )
                if sig.alone and weak and (sig.condition == "or" or mi == 0):
                    yield _issue(
                        src,
                        src.line(*loc),
                        nid,
                        "weak-signature",
                        f"signature '{sig.id}' rests on a short or generic text",
                        "match a longer, specific phrase, or set alone: false",
                        severity="warning",
                    )


MAX_MIN_HITS = 20  # kb.matching.SignatureMatcher.MAX_HITS: hits kept per matcher


def check_signature_features(kb: KnowledgeBase) -> Iterator[Issue]:
    """`min_hits` beyond the hits a matcher keeps could never be reached; below 1 means
    nothing."""
    for nid, src in kb.sources.items():
        node = kb.causes.get(nid) or kb.symptoms.get(nid)
        if node is None:
            continue
        for si, sig in enumerate(node.signatures):
            if not 1 <= sig.min_hits <= MAX_MIN_HITS:
                yield _issue(
                    src,
                    src.line("signatures", si, "min_hits"),
                    nid,
                    "min-hits-range",
                    f"min_hits {sig.min_hits} of signature '{sig.id}' is out of range",
                    f"use 1-{MAX_MIN_HITS}: the lines a signature's matchers must hit",
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
    for nid, src in kb.sources.items():
        node = kb.causes.get(nid) or kb.symptoms.get(nid)
        if node is None:
            continue
        for si, sig in enumerate(node.signatures):
            for group, matchers in (("matchers", sig.matchers), ("unless", sig.unless)):
                for mi, m in enumerate(matchers):
                    yield _Placed(nid, src, sig, ("signatures", si, group, mi), m)


def check_fuzzy_anchors(kb: KnowledgeBase) -> Iterator[Issue]:
    """A fuzzy text with no anchor word (kb.matching.anchors_of) makes every line of a log
    a candidate: a gigabyte log then costs a fuzzy comparison per line."""
    from kb.matching import anchors_of

    for p in _every_matcher(kb):
        if isinstance(p.matcher, FuzzyMatcher) and not anchors_of(p.matcher.text):
            yield _issue(
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
            yield _issue(
                p.src,
                p.line("pattern"),
                p.node,
                "regex-no-literal",
                f"regex of signature '{p.sig.id}' requires no text of its own, so "
                "the scanner would hand it most lines of a log",
                "require a word of the message (anchors and classes alone do "
                "not narrow the search), or fold the line into another matcher",
            )


def _is_generic(m: object) -> bool:
    if isinstance(m, SubstringMatcher | FuzzyMatcher):
        text = m.text.strip().lower()
    elif isinstance(m, RegexMatcher):
        # the literal characters of the pattern, roughly: drop escapes and classes
        text = re.sub(r"\\.|\[[^\]]*\]|\(\?P?<\w+>|[()?*+{}|^$.]|\d+,?\d*", "", m.pattern).strip()
        text = text.lower()
    else:  # pragma: no cover
        return False
    return text in GENERIC_WORDS or len(text) < MIN_SPECIFIC_CHARS


# ---------------------------------------------------------------- placeholders


def _extracted_names(kb: KnowledgeBase, cause_id: str) -> set[str]:
    cause = kb.causes[cause_id]
    names: set[str] = set()
    for sig in cause.signatures:
        names.update(sig.extract)
        for m in sig.matchers:
            if isinstance(m, RegexMatcher) and re2syntax.check(m.pattern) is None:
                names.update(re2syntax.compile_re2(m.pattern).groupindex)
    for chk in kb.checks_of(cause_id):
        names.update(chk.extract)
    return names


def check_placeholders(kb: KnowledgeBase) -> Iterator[Issue]:
    users: dict[str, list[str]] = {}
    for cid, cause in kb.causes.items():
        for fix in cause.fixes:
            users.setdefault(fix, []).append(cid)
        src = kb.sources[cid]
        extracted = _extracted_names(kb, cid)
        for ci, chk in enumerate(cause.checks):
            if not isinstance(chk, Check):
                continue
            builtin = {"peer", "port"} if chk.scope == "pair" else set()
            for name in placeholders.names_in(chk.run):
                if name not in chk.params and name not in extracted and name not in builtin:
                    yield _issue(
                        src,
                        src.line("checks", ci, "run"),
                        cid,
                        "unfilled-placeholder",
                        f"placeholder {{{name}}} in check '{chk.id}' is filled by no extractor",
                        f"declare it under the check's params, or extract '{name}' in a signature",
                    )
    for fid, fixnode in kb.fixes.items():
        src = kb.sources[fid]
        texts = [("steps",), *[("commands", i, "run") for i in range(len(fixnode.commands))]]
        for loc in texts:
            value = _get(fixnode, loc)
            for name in placeholders.names_in(value):
                if name in fixnode.params:
                    continue
                missing = [c for c in users.get(fid, []) if name not in _extracted_names(kb, c)]
                if missing or not users.get(fid):
                    yield _issue(
                        src,
                        src.line(*loc),
                        fid,
                        "unfilled-placeholder",
                        f"placeholder {{{name}}} is filled by no extractor"
                        + (f" of {', '.join(missing)}" if missing else ""),
                        f"declare '{name}' under params (the user supplies it) or extract it",
                    )


def _get(obj: object, loc: tuple[object, ...]) -> str:
    from kb.schema.models import text_of

    for part in loc:
        obj = obj[part] if isinstance(part, int) else getattr(obj, str(part))  # type: ignore[index]
    return text_of(obj) if not isinstance(obj, str) else obj  # type: ignore[arg-type]


# ---------------------------------------------------------------- completeness


def check_completeness(kb: KnowledgeBase) -> Iterator[Issue]:
    for cid, cause in kb.causes.items():
        src = kb.sources[cid]
        if cause.signatures and not cause.examples.match:
            yield _issue(
                src,
                src.line("signatures"),
                cid,
                "no-examples",
                "cause has signatures but no 'match' examples",
                "add real log lines under examples.match",
                severity="warning",
            )
        if not cause.checks:
            yield _issue(
                src,
                src.line("id"),
                cid,
                "no-checks",
                "cause has no verifying check",
                "add a read-only command under checks",
                severity="warning",
            )


CHECKS: list[Callable[[KnowledgeBase], Iterator[Issue]]] = [
    check_references,
    check_unique_subids,
    check_regexes,
    check_matchers,
    check_signature_features,
    check_fuzzy_anchors,
    check_regex_literals,
    check_placeholders,
    check_reachability,
    check_completeness,
]
