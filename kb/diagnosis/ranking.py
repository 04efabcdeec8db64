"""From fired signatures and analyzer findings to ranked causes with a confidence.

A cause is considered when its rule *fires* (`kb.diagnosis.firing`: one stand-alone
signature, or two signatures together; analyzer findings count as signatures). Its
confidence is a noisy-OR of its prior and its evidence:

    confidence = 1 - (1 - prior) * prod(1 - w_i)

where `w_i` is each signature's weight adjusted for where it fired: on a traceback's
final exception line `1 - (1 - w)/2` (stronger), on an error line `w`, a warning
`0.95 w`, an unmarked line `0.9 w`, an INFO/DEBUG line `0.8 w`; a signature whose
lines are all lines of a stronger one counts half (it is not independent). A generic
cause (`generic: true`) is scaled by 0.85 and, when a specific cause is also found,
kept below it. So is a cause that only explains slowness (all its symptoms in the
`slow` group: a PCIe topology) when the logs show a failure that another cause explains
and no slowness. A signature resting only on generic text (`error`, `timeout`, a short
word: `kb.diagnosis.firing.generic_only`) never makes a diagnosis alone. Causes under
`LIKELY` are not reported.

Evidence that only *describes the setup* (every line of it an INFO or warning line,
no measurement: NCCL finding no IB library, sockets between nodes, a libibverbs
warning; `kb.diagnosis.healthy`) is context, not a failure. Such a cause is never
ranked above a cause with an error or exception line (it is kept below it, at `LIKELY`
at least), and in a log that shows its run completed
(`kb.diagnosis.analyzers.completion`) and no slowness it is not a diagnosis at all: it
becomes a note.

When no cause is likely but a failure symptom is certainly there (its signatures fired
on lines other than INFO/DEBUG ones, or an analyzer saw it: an NCCL error code, a log
that ends at start-up), the symptom's
most probable causes are reported instead, below `LIKELY` and marked `basis: symptom`
(`kb.diagnosis.candidates`). A failure symptom's lines (a crash, a kill, an exception,
a hang) also give the diagnosis its `failure` (`kb.diagnosis.failure`), with or without
a likely cause.
"""

from __future__ import annotations

from typing import Any

from kb.diagnosis import failure
from kb.diagnosis.analyzers.base import Analyzer, Facts, Report
from kb.diagnosis.candidates import symptom_candidates
from kb.diagnosis.compiled import CompiledRules
from kb.diagnosis.firing import fires, stands_alone, weight_of
from kb.diagnosis.healthy import (
    completed_run_note,
    drop_setup_only,
    setup_only_evidence,
    shows_failure,
)
from kb.diagnosis.lines import LEVEL_FACTOR, host_of, level_of, rank_of, time_of
from kb.diagnosis.matching import SignatureResult
from kb.diagnosis.model import BASIS_OBSERVATION, CauseResult, Diagnosis, Evidence, Note
from kb.util.record import record

LIKELY = 0.5
GENERIC_SCALE = 0.85
GENERIC_BELOW = 0.95
EVIDENCE_PER_SIGNATURE = 3
EVIDENCE_PER_CAUSE = 10


@record()
class Piece:
    """One independent piece of evidence for a rule: a signature or a finding."""

    id: str
    weight: float
    alone: bool
    evidence: list[Evidence]
    params: dict[str, str]
    note: str | None = None
    rule: bool = True  # from a rule's signature (else from an analyzer)
    measured: bool = False  # an analyzer's measurement (times, bandwidth)
    at_end: bool = False  # the signature counts where the log ends, whatever the line's level
    asked: bool = False  # a few pasted lines holding it ask about its cause
    effective: float = 0.0
    why: str = ""

    def __init__(
        self,
        id: str,
        weight: float,
        alone: bool,
        evidence: list[Evidence],
        params: dict[str, str],
        note: str | None = None,
        rule: bool = True,
        measured: bool = False,
        at_end: bool = False,
        asked: bool = False,
        effective: float = 0.0,
        why: str = "",
    ) -> None:
        self.id = id
        self.weight = weight
        self.alone = alone
        self.evidence = evidence
        self.params = params
        self.note = note
        self.rule = rule
        self.measured = measured
        self.at_end = at_end
        self.asked = asked
        self.effective = effective
        self.why = why


def _piece(rid: str, r: SignatureResult) -> Piece:
    spec = r.signature
    ev = [Evidence(h.file, h.line_no, h.text, h.start, h.end, f"{rid}/{spec.id}") for h in r.hits]
    return Piece(
        spec.id,
        weight_of(spec),
        stands_alone(spec),
        ev,
        dict(r.params),
        spec.note,
        at_end=spec.at_end,
        asked=spec.asked,
    )


def analyze(analyzers: list[Analyzer]) -> tuple[list[Report], Facts]:
    facts: Facts = {}
    return [a.finish(facts) for a in analyzers], facts


def rank(
    rules: CompiledRules,
    results: dict[tuple[str, str], SignatureResult],
    reports: list[Report],
    facts: Facts,
    seen: dict[str, list[Evidence]] | None = None,
    pasted: set[tuple[str, int]] | None = None,
) -> Diagnosis:
    """Rank what fired; `seen` adds lines of failure symptoms found elsewhere (symptom id
    -> lines: the message catalogue's). `pasted` holds the (file, line) of an input that is
    only one to three lines: a lone `ValueError: ...` pasted there IS the failure, where a
    failure counted only on a traceback's final line (`in_traceback`) would drop it."""
    diag = Diagnosis()
    pasted = pasted or set()
    context = facts.get("context")
    pieces: dict[str, list[Piece]] = {}
    for (rid, _sid), r in results.items():
        pieces.setdefault(rid, []).append(_piece(rid, r))
    for sid, lines in (seen or {}).items():
        if sid in rules.symptoms:
            pieces.setdefault(sid, []).append(Piece("catalogue", 0.5, True, lines, {}, rule=False))
    for report in reports:
        for f in report.findings:  # evidence for the rules whose `named_by` lists it
            named = rules.rules_named_by(f.name)
            for rid in named:
                pieces.setdefault(rid, []).append(
                    Piece(
                        f.id,
                        f.weight,
                        f.alone,
                        f.evidence,
                        dict(f.params),
                        f.text,
                        rule=False,
                        measured=f.measured,
                    )
                )
            if not named and f.alone:
                diag.notes.append(Note(f.id, f.text, f.evidence[:3]))
        diag.notes.extend(report.notes)
        diag.symptoms.extend(s for name in report.shows for s in rules.symptoms_named_by(name))

    reported: dict[str, list[Piece]] = {}
    shown: dict[str, list[Evidence]] = {}  # failure symptoms seen, with their lines
    partial: dict[str, tuple[float, list[Evidence], dict[str, str]]] = {}
    for rid, ps in pieces.items():
        if rid in rules.symptoms:
            ps = [p for p in ps if not p.rule or _failure_lines(p)]
            spec = failure.spec_of(rules, rid)
            if spec is not None:  # only the lines that do show a failure
                for p in ps:
                    kept = [e for e in p.evidence if (e.file, e.line) in pasted]
                    rest = [e for e in p.evidence if (e.file, e.line) not in pasted]
                    p.evidence = kept + failure.vet(spec, rest, context, facts.get("completed"))
                ps = [p for p in ps if p.evidence]
            if fires(p.alone for p in ps):
                diag.symptoms.append(rid)
                if rules.symptoms[rid].group != "slow":
                    shown[rid] = _evidence(ps)
            continue
        cause = rules.causes[rid]
        conf, why = _confidence(cause.prior, ps, context)
        if not fires(p.alone for p in ps):
            _notes(diag, rid, ps)
            partial[rid] = (conf, _evidence(ps), _params(ps))
            continue
        if cause.generic:
            conf *= GENERIC_SCALE
            why += f"; generic cause: x{GENERIC_SCALE}"
        if conf < LIKELY:
            _notes(diag, rid, ps)
            partial[rid] = (conf, _evidence(ps), _params(ps))
            continue
        diag.causes.append(
            CauseResult(rid, cause.title, conf, _evidence(ps), _params(ps), list(cause.fixes), why)
        )
        reported[rid] = ps

    failure.defer_generic(rules, shown, seen)
    slow = bool(facts.get("slow")) or any(
        rules.symptoms[s].group == "slow" for s in diag.symptoms if s in rules.symptoms
    )
    setup_only = {cid for cid, ps in reported.items() if setup_only_evidence(ps)}
    for c in drop_setup_only(diag.causes, reported, setup_only, facts.get("completed"), slow):
        diag.causes.remove(c)
        diag.notes.append(completed_run_note(c, facts["completed"]))
        del reported[c.id]
    fatal = {cid for cid, ps in reported.items() if shows_failure(ps)}
    _order(diag, rules, slow=slow, context=setup_only, fatal=fatal)
    diag.failure = failure.choose(
        rules,
        {s: ev for s, ev in shown.items() if failure.spec_of(rules, s) is not None},
        context,
        first_failure,
    )
    if not diag.causes and shown:
        noted = {
            rid: [e for p in pieces[rid] if p.rule and p.note for e in p.evidence]
            for rid in partial
        }
        diag.causes = symptom_candidates(rules, shown, partial, facts, noted)
    diag.observed = _observed(rules, pieces, partial)
    for c in diag.causes:
        diag.symptoms.extend(rules.causes[c.id].symptoms if c.id in reported else [c.symptom])
    diag.symptoms = list(dict.fromkeys(s for s in diag.symptoms if s in rules.symptoms))
    first: dict[str, Note] = {}
    for n in diag.notes:
        first.setdefault(n.id, n)
    diag.notes = list(first.values())
    # a generic cause (timeouts everywhere) follows the failure; look at specific ones first
    specific = [c for c in diag.causes if c.id in reported and not rules.causes[c.id].generic]
    specific = specific or [c for c in diag.causes if c.id in reported]
    diag.first_failure = first_failure(
        [e for c in specific for p in reported[c.id] for e in p.evidence], context
    )
    return diag


OBSERVED_MAX = 0.45  # an observation is never "likely": nothing failed


def _observed(
    rules: CompiledRules,
    pieces: dict[str, list[Piece]],
    partial: dict[str, tuple[float, list[Evidence], dict[str, str]]],
) -> list[CauseResult]:
    """The causes whose evidence fired only as notes that a paste asks about (a note
    signature marked `asked`), strongest first, marked `basis: observation`."""
    out = []
    for rid, (conf, evidence, params) in partial.items():
        if not any(p.note and p.asked for p in pieces.get(rid, [])) or not evidence:
            continue
        cause = rules.causes[rid]
        out.append(
            CauseResult(
                rid,
                cause.title,
                min(conf, OBSERVED_MAX),
                evidence,
                params,
                list(cause.fixes),
                f"nothing failed; the lines show a sign of this cause (confidence {conf:.2f})",
                basis=BASIS_OBSERVATION,
            )
        )
    out.sort(key=lambda c: (-c.confidence, c.id))
    return out


def _failure_lines(p: Piece) -> list[Evidence]:
    """A symptom signature's lines that can show a failure: an INFO/DEBUG line (NCCL's
    `NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file`) is a probe,
    not a failure. (Analyzers judge their own lines: a log that ends at start-up.)"""
    if not p.at_end:  # a log that ends on an INFO line stopped there: that is a failure
        p.evidence = [e for e in p.evidence if level_of(e.text) != "info"]
    return p.evidence


def _notes(diag: Diagnosis, rid: str, ps: list[Piece]) -> None:
    for p in ps:
        if p.rule and p.note:
            diag.notes.append(Note(f"{rid}/{p.id}", p.note, p.evidence[:EVIDENCE_PER_SIGNATURE]))


def _confidence(prior: float, ps: list[Piece], context: Any) -> tuple[float, str]:
    for p in ps:
        best, where = 0.0, "plain"
        for e in p.evidence[:20]:
            level = level_of(e.text)
            if (
                level == "exception"
                and context is not None
                and context.in_traceback(e.file, e.line)
            ):
                w, lv = 1.0 - (1.0 - p.weight) / 2.0, "a traceback's final exception"
            else:
                w, lv = p.weight * LEVEL_FACTOR[level], f"{level} line"
            if w > best:
                best, where = w, lv
        p.effective, p.why = best, where
    ps.sort(key=lambda p: -p.effective)
    seen: set[tuple[str, int]] = set()
    miss = 1.0
    parts = [f"prior {prior:.2f}"]
    for p in ps:
        lines = {(e.file, e.line) for e in p.evidence}
        dependent = bool(lines) and lines <= seen
        seen |= lines
        w = p.effective * (0.5 if dependent else 1.0)
        miss *= 1.0 - w
        extra = ", same lines as stronger evidence: x0.5" if dependent else ""
        said = f" [{p.note}]" if not p.rule and p.note else ""  # an analyzer's finding
        parts.append(f"{p.id}{said} (weight {p.weight:g} on {p.why}{extra}: {w:.2f})")
    conf = 1.0 - (1.0 - prior) * miss
    return conf, "; ".join(parts) + f" -> {conf:.2f}"


def _evidence(ps: list[Piece]) -> list[Evidence]:
    out: list[Evidence] = []
    seen: set[tuple[str, int]] = set()
    for p in ps:
        for e in p.evidence[:EVIDENCE_PER_SIGNATURE]:
            if (e.file, e.line) not in seen:
                seen.add((e.file, e.line))
                out.append(e)
    return out[:EVIDENCE_PER_CAUSE]


def _params(ps: list[Piece]) -> dict[str, str]:
    params: dict[str, str] = {}
    for p in ps:
        for k, v in p.params.items():
            params.setdefault(k, v)
    top = ps[0].evidence[0] if ps and ps[0].evidence else None
    if top is not None:
        host, rank = host_of(top.text), rank_of(top.text, top.file)
        if host and "host" not in params:
            params["host"] = host
        if rank is not None and "rank" not in params:
            params["rank"] = str(rank)
    return params


def _performance_only(rules: CompiledRules, cause_id: str) -> bool:
    """True for a cause that only explains slowness (a topology, a setting)."""
    groups = {
        rules.symptoms[s].group for s in rules.causes[cause_id].symptoms if s in rules.symptoms
    }
    return groups == {"slow"}


def _order(
    diag: Diagnosis,
    rules: CompiledRules,
    slow: bool,
    context: set[str] = frozenset(),  # type: ignore[assignment]
    fatal: set[str] = frozenset(),  # type: ignore[assignment]
) -> None:
    """Generic causes below specific ones; causes that only explain slowness below
    those that explain a failure, unless the logs show the job is slow; causes resting
    only on context lines below causes shown by an error line."""
    shown = {c.id for c in diag.causes}
    below_fatal = context & shown if fatal & shown else set()
    generic = {c.id for c in diag.causes if rules.causes[c.id].generic} - below_fatal
    secondary = set(generic)
    failures = [c for c in diag.causes if c.id not in generic and c.id not in below_fatal]
    if not slow and any(not _performance_only(rules, c.id) for c in failures):
        secondary |= {c.id for c in failures if _performance_only(rules, c.id)}
    primary = [c.confidence for c in failures if c.id not in secondary]
    if primary:
        cap = GENERIC_BELOW * min(primary)
        kept = []
        for c in diag.causes:
            if c.id in secondary and c.confidence > cap:
                kind = "generic cause" if c.id in generic else "cause of slowness only"
                c.explanation += f"; {kind} below a specific failure: capped at {cap:.2f}"
                c.confidence = cap
            if c.confidence >= LIKELY:
                kept.append(c)
        diag.causes = kept
    errors = [c.confidence for c in diag.causes if c.id in fatal]
    if errors and below_fatal:
        cap = max(LIKELY, GENERIC_BELOW * min(errors))
        for c in diag.causes:
            if c.id in below_fatal and c.confidence > cap:
                c.explanation += (
                    f"; only INFO/warning lines, below a cause shown by an error line: "
                    f"capped at {cap:.2f}"
                )
                c.confidence = cap

    def tier(c: CauseResult) -> int:
        return 2 if c.id in below_fatal else 1 if c.id in secondary else 0

    diag.causes.sort(key=lambda c: (tier(c), -c.confidence, c.id))


def first_failure(evidence: list[Evidence], context: Any) -> dict[str, Any] | None:
    """The earliest failing line across the logs, when times (or the launcher) say so."""
    if context is not None and context.root_cause:
        rc = dict(context.root_cause)
        return {
            "file": rc.get("file"),
            "line": rc.get("line"),
            "host": rc.get("host"),
            "rank": rc.get("rank"),
            "time": rc.get("time"),
        }
    timed = []
    for e in evidence:
        stamp = time_of(e.text)
        if stamp is not None:
            timed.append((stamp.sort_key, e, stamp.text))
    if not timed:
        return None
    who = {(e.file, host_of(e.text), rank_of(e.text, e.file)) for _, e, _ in timed}
    if len(who) < 2:
        return None
    _, e, when = min(timed, key=lambda t: (t[0], t[1].file, t[1].line))
    return {
        "file": e.file,
        "line": e.line,
        "host": host_of(e.text),
        "rank": rank_of(e.text, e.file),
        "time": when,
    }
