"""A failure is never healthy: what failed, where, and which rank first.

A crash no rule names (`Segmentation fault`, an illegal memory access, a rank killed by
signal 9, a Python exception, a watchdog timeout with nobody failing in view) used to
be answered "no known problem found". The symptoms in `rules/symptoms/` that carry a
`failure:` section (kind, what, likely causes, debug variables to rerun with) say what
such lines are; here their lines are vetted and the one failure to report is chosen:

- a line that counts only in a traceback (`in_traceback`) must be one's final line;
- a line in a log whose run completed *after* it is not a failure (a traceback printed
  in a warning the training survived);
- of what is left, the first failure by time or launcher (`ranking.first_failure`),
  else the most telling kind (a crash explains a kill, a kill explains a timeout), the
  earliest line.

Catalogue messages of class `symptom` are failures too: each failure symptom lists the
catalogue's symptom words it stands for (`catalogue:`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kb.diagnosis.decorations import content_start, host_in_decoration
from kb.diagnosis.lines import host_of, rank_of
from kb.diagnosis.model import Evidence
from kb.util.record import field, record

# the order in which one failure explains another: a crash explains the peers' kills
# and timeouts, a kill the others' exceptions, ...
KIND_ORDER = ("crash", "killed", "exception", "hang", "no-success")
WHAT_MAX = 200

FirstFailure = Callable[[list[Evidence], Any], "dict[str, Any] | None"]


@record()
class FailureSeen:
    """The failure a diagnosis reports (`diagnose --json`'s `failure`)."""

    kind: str
    what: str
    symptom: str
    evidence: Evidence
    rank: int | str | None = None
    host: str | None = None
    first: bool = False
    rerun_with: list[str] = field(default_factory=list)
    next: str = ""

    def __init__(
        self,
        kind: str,
        what: str,
        symptom: str,
        evidence: Evidence,
        rank: int | str | None = None,
        host: str | None = None,
        first: bool = False,
        rerun_with: list[str] | None = None,
        next: str = "",
    ) -> None:
        self.kind = kind
        self.what = what
        self.symptom = symptom
        self.evidence = evidence
        self.rank = rank
        self.host = host
        self.first = first
        self.rerun_with = [] if rerun_with is None else rerun_with
        self.next = next

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "what": self.what,
            "line": self.evidence.line,
            "file": self.evidence.file,
            "rank": self.rank,
            "host": self.host,
            "first": self.first,
            "symptom": self.symptom,
            "text": self.evidence.shown()[0],
            "rerun_with": list(self.rerun_with),
            "next": self.next,
            "walk": self.walk,
        }

    @property
    def walk(self) -> str:
        """The command that walks this failure's decision tree."""
        return f"dlperf-help walk --symptom {self.symptom} LOG"


def defer_generic(
    rules: Any, shown: dict[str, list[Evidence]], seen: Mapping[str, list[Evidence]] | None
) -> None:
    """Drops from `shown` the lines of a generic failure (`generic`: a Python exception's
    last line) that the catalogue knows as another failure (`seen`): the line says what
    failed (a connection, a store), so that failure is reported and ranks the causes."""
    taken = {(e.file, e.line) for lines in (seen or {}).values() for e in lines}
    if not taken:
        return
    for sid in [s for s in shown if s not in (seen or {})]:
        spec = spec_of(rules, sid)
        if not spec or not spec.get("generic"):
            continue
        rest = [e for e in shown[sid] if (e.file, e.line) not in taken]
        if rest:
            shown[sid] = rest
        else:
            del shown[sid]


def spec_of(rules: Any, symptom_id: str) -> dict[str, Any] | None:
    """The failure section of a symptom, or None for a symptom that is no failure."""
    s = rules.symptoms.get(symptom_id)
    return getattr(s, "failure", None) if s is not None else None


def vet(
    spec: Mapping[str, Any],
    evidence: list[Evidence],
    context: Any,
    completed: Mapping[str, Evidence] | None,
) -> list[Evidence]:
    """The lines of a failure symptom that do show a failure."""
    out = []
    for e in evidence:
        if spec.get("in_traceback") and not (
            context is not None and context.in_traceback(e.file, e.line)
        ):
            continue
        done = (completed or {}).get(e.file)
        if done is not None and done.line > e.line:
            continue  # the run went on and completed: it survived this line
        out.append(e)
    return out


def choose(
    rules: Any,
    shown: Mapping[str, list[Evidence]],
    context: Any,
    first_failure: FirstFailure,
) -> FailureSeen | None:
    """The failure to report among the failure symptoms `shown` (id -> their lines)."""
    lines: list[tuple[int, int, Evidence, str]] = []
    for order, (sid, evidence) in enumerate(shown.items()):
        spec = spec_of(rules, sid)
        if spec is None:
            continue
        kind = KIND_ORDER.index(spec["kind"]) if spec["kind"] in KIND_ORDER else len(KIND_ORDER)
        lines.extend((kind, order, e, sid) for e in evidence)
    if not lines:
        return None
    ff = first_failure([e for *_, e, _ in lines], context)
    chosen = None
    if ff is not None:  # the launcher or the times say which line failed first
        at = [t for t in lines if (t[2].file, t[2].line) == (ff.get("file"), ff.get("line"))]
        if at:
            chosen = min(at, key=lambda t: (t[0], t[1]))
    if chosen is None:
        chosen = min(lines, key=lambda t: (t[0], t[2].file, t[2].line, t[1]))
    _, _, e, sid = chosen
    spec = spec_of(rules, sid) or {}
    parties = {(x.file, _host(x.text), rank_of(x.text, x.file)) for *_, x, _ in lines}
    rank, host = rank_of(e.text, e.file), _host(e.text)
    first = len(parties) == 1
    if ff is not None:
        rank = ff.get("rank") if ff.get("rank") is not None else rank
        host = ff.get("host") or host
        first = True
    message = " ".join(e.text[content_start(e.text) :].split())  # the message, not its prefix
    if len(message) > WHAT_MAX:
        message = message[: WHAT_MAX - 1] + "…"
    return FailureSeen(
        kind=spec.get("kind", "crash"),
        what=f"{spec.get('what') or sid}: {message}",
        symptom=sid,
        evidence=e,
        rank=rank,
        host=host,
        first=first,
        rerun_with=list(spec.get("rerun_with", [])),
        next=str(spec.get("next") or ""),
    )


def _host(text: str) -> str | None:
    """The host a line comes from: NCCL's `host:pid:tid`, else its prefix (Ray's `ip=`,
    pdsh's `gpu003: `, kubectl's `[pod/NAME/..]`)."""
    return host_of(text) or host_in_decoration(text)


PASTED_LINES = 3  # kb.diagnosis.engine.PASTED_LINES: an input this short is a paste


def pasted_only(rules: Any, sid: str) -> bool:
    """Whether failure symptom `sid` counts its catalogue messages only in a paste."""
    return bool((getattr(rules.symptoms[sid], "failure", None) or {}).get("pasted_only"))


def catalogue_symptoms(rules: Any) -> dict[str, str]:
    """Catalogue symptom word -> the failure symptom that stands for it."""
    out: dict[str, str] = {}
    for sid, s in rules.symptoms.items():
        for word in (getattr(s, "failure", None) or {}).get("catalogue", []):
            out.setdefault(word, sid)
    return out


def load_catalogue() -> Any | None:
    """The message catalogue (`kb.rules.catalogue`), or None where it is missing or unreadable:
    the diagnosis works without it."""
    try:
        from kb.rules.catalogue import load_catalogue as load
    except ImportError:
        return None
    try:
        return load()
    except Exception:  # a broken catalogue must not break a diagnosis
        return None


def message_class(message: Any) -> str:
    """A catalogue message's class (`class_` in kb.rules.catalogue, `cls` in its first draft)."""
    return str(getattr(message, "class_", "") or getattr(message, "cls", "") or "")


def rule_failure_lines(
    rules: Any, results: Mapping[Any, Any], context: Any
) -> set[tuple[str, int]]:
    """(file, line) of the lines a failure symptom's own signatures fired on and that
    stand as failures: a line that counts only in a traceback (`in_traceback`) and is
    not in one says nothing, so the catalogue may still read it (a one-line paste of
    `RuntimeError: <a catalogued rendezvous message>`)."""
    out: set[tuple[str, int]] = set()
    for (rid, _), r in results.items():
        spec = spec_of(rules, rid)
        if spec is None:
            continue
        for h in r.hits:
            if spec.get("in_traceback") and not (
                context is not None and context.in_traceback(h.file, h.line_no)
            ):
                continue
            out.add((h.file, h.line_no))
    return out


def catalogue_failures(
    rules: Any,
    catalogue: Any,
    lines: list[tuple[str, int, str]],
    known: set[tuple[str, int]] = frozenset(),  # type: ignore[assignment]
) -> dict[str, list[Evidence]]:
    """Failure symptom id -> the lines (file, line number, text) that a catalogue
    message of class `symptom` matches, for the symptom words a failure stands for.
    Lines in `known` (a rule's failure signature matched them: it says more) are left."""
    words = catalogue_symptoms(rules)
    if len(lines) > PASTED_LINES:  # a longer input: only messages that end a run count
        words = {w: sid for w, sid in words.items() if not pasted_only(rules, sid)}
    out: dict[str, list[Evidence]] = {}
    if catalogue is None or not words:
        return out
    for file, line_no, text in lines:
        if (file, line_no) in known:
            continue
        try:
            found = catalogue.match(text)
        except Exception:  # as above
            return out
        for m in found:
            sid = words.get(str(getattr(m, "symptom", "")))
            if message_class(m) == "symptom" and sid is not None and m.level != "info":
                ev = Evidence(file, line_no, text, 0, len(text), f"catalogue/{m.library}")
                out.setdefault(sid, []).append(ev)
                break
    return out
