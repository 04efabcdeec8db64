"""The human words for a failure whose cause no line names, for approximate matches, and
for causes only a description points at.

Kept apart from `kb.diagnosis.render` so that the plain output says, in one place and
plainly: "a failure is seen: ... — its cause is not named by the log; likely causes:
...; next: ...", and shows a typed line beside the known message it resembles.
"""

from __future__ import annotations

from typing import Any

from kb.diagnosis.model import (
    BASIS_APPROXIMATE,
    BASIS_DESCRIBED,
    BASIS_OBSERVATION,
    BASIS_SYMPTOM,
    CauseResult,
    Diagnosis,
)
from kb.util import recache

# how a cause was reached, in a few words, for every front end ("" for one a line names)
BASIS_KINDS = {
    BASIS_SYMPTOM: "from the symptom only",
    BASIS_OBSERVATION: "a sign seen: nothing failed",
    BASIS_APPROXIMATE: "approximate match",
    BASIS_DESCRIBED: "from the description",
}

_CONTROLS = recache.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _safe(text: str) -> str:
    """Log text as one printable line (`kb.util.textsafe` where present)."""
    try:
        from kb.util.textsafe import safe_line
    except ImportError:
        return _CONTROLS.sub(" ", text)
    return str(safe_line(text))


def failure_lines(diag: Diagnosis, rules: Any) -> list[str]:
    """What the output says of `diag.failure` (nothing when there is none)."""
    f = diag.failure
    if f is None:
        return []
    where = f"{f.evidence.file}:{f.evidence.line}"
    who = ", ".join(
        f"{k} {v}" for k, v in (("rank", f.rank), ("host", f.host)) if v not in (None, "")
    )
    if who:
        where += f", {who}" + (", the first to fail" if f.first else "")
    named = [c for c in diag.causes if c.basis not in ("symptom", BASIS_APPROXIMATE)]
    out = ["", f"A failure is seen: {_safe(f.what)} ({_safe(where)})"]
    if named:
        out.append(f"  Its cause is named by the log: {named[0].id} (below).")
        return out
    likely = ", ".join(c.id for c in diag.causes) or "none of the known causes fits"
    out.append(f"  Its cause is not named by the log; likely causes: {likely}.")
    if f.rerun_with:
        out.append("  Next: rerun with " + " ".join(f.rerun_with) + " and diagnose that log.")
    if f.next:
        out.append("  " + _safe(" ".join(f.next.split())))
    out.append(f"  Or walk it: {f.walk}")
    return out


def approximate_lines(c: CauseResult) -> list[str]:
    """The user's line beside the known message it resembles."""
    a = c.approximate
    if a is None:
        return []
    return [
        f"   You wrote:     {_safe(a.text)[:160]}",
        f"   Known message: {_safe(a.known)[:160]}  ({a.source}, {a.score:.0f}% alike)",
    ]


def _header(diag: Diagnosis, basis: str, text: str) -> list[str]:
    """The paragraph that says how the causes below were reached, when some were so."""
    return ["", text] if any(c.basis == basis for c in diag.causes) else []


def approximate_header(diag: Diagnosis) -> list[str]:
    return _header(
        diag,
        BASIS_APPROXIMATE,
        "No known message matches exactly; these are approximate matches (the closest "
        "known messages, with their causes). Paste the whole log for a real diagnosis.",
    )


def basis_kind(c: CauseResult) -> str:
    """How the cause was reached (`BASIS_KINDS`), '' when the log's lines name it."""
    return (
        BASIS_KINDS[BASIS_APPROXIMATE]
        if c.approximate is not None
        else BASIS_KINDS.get(c.basis, "")
    )


def described_header(diag: Diagnosis) -> list[str]:
    return _header(
        diag,
        BASIS_DESCRIBED,
        "No line of this text names a cause; from what it describes, these causes fit best "
        "(each with the words it shares with the cause's description). A place to start, "
        "not a proof: paste the job's whole log, or walk the questions.",
    )
