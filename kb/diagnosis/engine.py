"""Baseline diagnosis: every signature on every line, simple ranking.

This is the reference the fast pipeline must agree with; it is fine for pasted
snippets and small logs.
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from kb.diagnosis.model import CauseResult, Diagnosis, Evidence, Note, Stats
from kb.knowledge import KnowledgeBase
from kb.matching import SignatureMatcher, SignatureResult, clean
from kb.ruletests import fires
from kb.schema.models import text_of

LIKELY = 0.35  # causes below this confidence are not reported


def _lines_of(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:  # type: ignore[operator]
        yield from fh


def diagnose_lines(kb: KnowledgeBase, sources: Iterable[tuple[str, Iterable[str]]]) -> Diagnosis:
    start = time.perf_counter()
    stats = Stats()
    per_rule: dict[str, list[SignatureResult]] = {}
    for name, lines in sources:
        stats.files += 1
        matchers = {
            node.id: [SignatureMatcher(s) for s in node.signatures]
            for node in [*kb.causes.values(), *kb.symptoms.values()]
            if node.signatures
        }
        for n, raw in enumerate(lines, start=1):
            stats.lines += 1
            stats.bytes += len(raw)
            line = clean(raw)
            for ms in matchers.values():
                for m in ms:
                    m.feed(n, line)
        for rid, ms in matchers.items():
            for m in ms:
                r = m.result()
                if r is not None:
                    for h in r.hits:
                        h.params.setdefault("__file__", name)
                    per_rule.setdefault(rid, []).append(r)
    diag = Diagnosis(stats=stats)
    for rid, results in per_rule.items():
        if rid in kb.symptoms:
            if fires(results):
                diag.symptoms.append(rid)
            continue
        cause = kb.causes[rid]
        if not fires(results):
            for r in results:
                if r.signature.note:
                    diag.notes.append(Note(f"{rid}/{r.signature.id}", text_of(r.signature.note),
                                           _evidence(rid, [r])))
            continue
        miss = 1.0
        for r in results:
            miss *= 1.0 - r.signature.weight
        confidence = 1.0 - (1.0 - cause.prior) * miss
        if cause.generic:
            confidence *= 0.8
        if confidence < LIKELY:
            continue
        params: dict[str, str] = {}
        for r in results:
            for k, v in r.params.items():
                params.setdefault(k, v)
        diag.causes.append(CauseResult(
            rid, text_of(cause.title), confidence, _evidence(rid, results), params, list(cause.fixes),
            "; ".join(f"{r.signature.id} (weight {r.signature.weight})" for r in results)))
        for s in cause.symptoms:
            if s not in diag.symptoms:
                diag.symptoms.append(s)
    diag.causes.sort(key=lambda c: -c.confidence)
    stats.seconds = time.perf_counter() - start
    return diag


def _evidence(rid: str, results: list[SignatureResult]) -> list[Evidence]:
    out = []
    for r in results:
        for h in r.hits[:3]:
            out.append(Evidence(h.params.get("__file__", "-"), h.line_no, h.text, h.start, h.end,
                                f"{rid}/{r.signature.id}"))
    return out


def diagnose_paths(kb: KnowledgeBase, paths: list[Path]) -> Diagnosis:
    return diagnose_lines(kb, [(str(p), _lines_of(p)) for p in paths])


def diagnose_text(kb: KnowledgeBase, text: str, name: str = "pasted") -> Diagnosis:
    return diagnose_lines(kb, [(name, text.splitlines())])
