"""Semantic checks across the knowledge base, after each file has passed its schema.

Each check is a small function yielding `Issue`s with the file and line to fix; the
list `CHECKS` is the whole linter, so adding a check is adding a function. Here are the
checks of the graph (references, reachability, ids, placeholders, completeness); those
of what a rule matches are in `kb.authoring.lint_matchers`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from kb.authoring.lint_catalogue import check_catalogue
from kb.authoring.lint_matchers import (
    check_fuzzy_anchors,
    check_matchers,
    check_regex_literals,
    check_regexes,
    check_signature_features,
)
from kb.authoring.lint_placeholders import check_placeholder_quoting
from kb.authoring.lintkit import issue, nodes
from kb.rules import loader, placeholders
from kb.rules.knowledge import Issue, KnowledgeBase
from kb.rules.schema.models import (
    Check,
    RegexMatcher,
    Symptom,
)
from kb.util import re2syntax


def lint(root: Path) -> tuple[KnowledgeBase, list[Issue]]:
    """Load `root` and run every check; issues are sorted by file and line.

    A rule file its schema refused is not in the graph, so every reference to it, its
    checks and its fixes would be reported again as undefined or unused: those follow-on
    issues are left out, one bad value gives one error (at the value)."""
    kb, issues = loader.load(root)
    refused = _names_of_refused_rules(root, kb)
    for check in CHECKS:
        issues.extend(i for i in check(kb) if not _follows_from(i, refused))
    issues.sort(key=lambda i: (i.file, i.line, i.check))
    return kb, issues


# the graph's checks whose issue is only a consequence of a refused rule being absent
FOLLOW_ON = frozenset(
    {"unresolved-ref", "unused-fix", "unreachable-cause", "empty-symptom", "unfilled-placeholder"}
)


def _follows_from(i: Issue, refused: set[str]) -> bool:
    """An issue about a name that a refused rule defines or uses."""
    if not refused or i.check not in FOLLOW_ON:
        return False
    return i.rule in refused or any(f"'{name}'" in i.message for name in refused)


def _names_of_refused_rules(root: Path, kb: KnowledgeBase) -> set[str]:
    """Ids of the rule files that did not load, and the checks, fixes and symptoms they
    name (read as plain YAML, as far as it reads)."""
    from kb.rules import vocabulary
    from kb.util.rulefiles import RuleFileError, read_rule_bytes
    from kb.util.yamlsrc import YamlSyntaxError, load_located

    names: set[str] = set()
    for path in loader.rule_files(root):
        if vocabulary.is_vocabulary_file(path, root) or path.stem in kb.sources:
            continue
        names.add(path.stem)
        try:  # read as the loader reads (no FIFO, no huge file, bounded YAML)
            data = load_located(read_rule_bytes(path, root).decode("utf-8")).data
        except (RuleFileError, UnicodeDecodeError, YamlSyntaxError):
            continue  # a file that does not read names nothing more
        if not isinstance(data, dict):
            continue
        for key in ("id",):
            if isinstance(data.get(key), str):
                names.add(data[key])
        for key in ("checks", "fixes", "symptoms"):
            for item in data.get(key) or [] if isinstance(data.get(key), list) else []:
                ref = item.get("id") if isinstance(item, dict) else item
                if isinstance(ref, str):
                    names.add(ref)
    return names


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
                    yield issue(
                        src,
                        src.line(field, i),
                        cid,
                        "unresolved-ref",
                        f"{kind} '{ref}' is not defined",
                        _near(ref, known) or f"add rules/{field}/{ref}.yaml",
                    )
        for i, chk in enumerate(cause.checks):
            if isinstance(chk, str) and chk not in checks:
                yield issue(
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
                                yield issue(
                                    src,
                                    src.line("checks", i, outcome_name, field, j),
                                    cid,
                                    "unresolved-ref",
                                    f"check '{chk.id}' refers to unknown cause '{ref}'",
                                    _near(ref, kb.causes),
                                )
    for sid, symptom in kb.symptoms.items():
        src = kb.sources[sid]
        for i, ref in enumerate(symptom.failure.causes if symptom.failure else ()):
            if ref not in kb.causes:
                yield issue(
                    src,
                    src.line("failure", "causes", i),
                    sid,
                    "unresolved-ref",
                    f"failure cause '{ref}' is not defined",
                    _near(ref, kb.causes),
                )
        for qi, q in enumerate(symptom.questions):
            for ai, ans in enumerate(q.answers):
                for field in ("confirms", "rules_out"):
                    for j, ref in enumerate(getattr(ans, field)):
                        if ref not in kb.causes:
                            yield issue(
                                src,
                                src.line("questions", qi, "answers", ai, field, j),
                                sid,
                                "unresolved-ref",
                                f"answer '{ans.id}' refers to unknown cause '{ref}'",
                                _near(ref, kb.causes),
                            )
                        elif sid not in kb.causes[ref].symptoms:
                            yield issue(
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
                yield issue(
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
    from kb.rules.graph import build_graph

    g = build_graph(kb)
    reached: set[tuple[str, str]] = set()
    for sid in kb.symptoms:
        reached.update(g.successors(("symptom", sid)))
    for cid, cause in kb.causes.items():
        if ("cause", cid) not in reached and all(s in kb.symptoms for s in cause.symptoms):
            src = kb.sources[cid]
            yield issue(
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
            yield issue(
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
            yield issue(
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
                    yield issue(
                        src,
                        src.line("checks", i, "id"),
                        cid,
                        "duplicate-id",
                        f"check id '{chk.id}' is already used by cause '{seen_checks[chk.id]}'",
                        "refer to it by id instead of redefining it",
                    )
                seen_checks.setdefault(chk.id, cid)
    for nid, src, node in nodes(kb):
        listed = [("signatures", "signature", [s.id for s in node.signatures], "rule")]
        if isinstance(node, Symptom):
            listed.append(("questions", "question", [q.id for q in node.questions], "symptom"))
        for key, what, ids, where in listed:
            for i, sub in enumerate(ids):
                if sub in ids[:i]:
                    yield issue(
                        src,
                        src.line(key, i, "id"),
                        nid,
                        "duplicate-id",
                        f"{what} id '{sub}' is used twice in this {where}",
                    )


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
                    yield issue(
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
                    yield issue(
                        src,
                        src.line(*loc),
                        fid,
                        "unfilled-placeholder",
                        f"placeholder {{{name}}} is filled by no extractor"
                        + (f" of {', '.join(missing)}" if missing else ""),
                        f"declare '{name}' under params (the user supplies it) or extract it",
                    )


def _get(obj: object, loc: tuple[object, ...]) -> str:
    from kb.rules.schema.models import text_of

    for part in loc:
        obj = obj[part] if isinstance(part, int) else getattr(obj, str(part))  # type: ignore[index]
    return text_of(obj) if not isinstance(obj, str) else obj  # type: ignore[arg-type]


# ---------------------------------------------------------------- completeness


def check_completeness(kb: KnowledgeBase) -> Iterator[Issue]:
    for cid, cause in kb.causes.items():
        src = kb.sources[cid]
        if cause.signatures and not cause.examples.match:
            yield issue(
                src,
                src.line("signatures"),
                cid,
                "no-examples",
                "cause has signatures but no 'match' examples",
                "add real log lines under examples.match",
                severity="warning",
            )
        if not cause.checks:
            yield issue(
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
    check_placeholder_quoting,
    check_reachability,
    check_completeness,
    check_catalogue,
]
