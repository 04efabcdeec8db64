"""When the logs show a failure but no line names its cause: the symptom's probable causes.

A bare `RuntimeError: NCCL error ..., unhandled system error` proves that NCCL failed
(the symptom `nccl-init-fails`) without saying why. Answering "no known problem" would
be wrong, so the causes of each symptom the logs show are ranked by how probable they
are *here*: each cause's prior (or, when some of its signatures fired without making it
likely, the confidence they give it), times what the logs tell about the job. How much
each thing the logs show weighs a cause is data: the cause's `traits` (where
it can occur: between nodes, in a container, when NCCL returns a system error ...)
and, in rules/vocabulary/traits.yaml, the factor each observation gives each trait
(several nodes: x2 for causes between nodes, x0.6 for causes within a node; an NCCL
error of another kind than the cause's: x0.6; a framework the logs do not show: x0.2).

A failure symptom (`failure:` in rules/symptoms, `kb.diagnosis.failure`) also names
causes of its own (`failure.causes`: the OOM killer behind a rank killed by signal 9),
weighed alike, each place further down its list a little less (`LISTED_LOWER`: the
section lists them likeliest first); a generic cause (a timeout) is a candidate only
where a failure section names it. The frameworks the logs show are those whose paths or modules they print
(`kb.diagnosis.analyzers.setting`) and those whose catalogued messages the symptom's
lines are (the vocabulary's `frameworks.libraries`: a c10d store message is PyTorch's).
Equal weights break by the cause's own weak evidence, then its prior, then its id.
The shares of these weights are the candidates' confidences, capped at
`SYMPTOM_MAX` (below the "likely" threshold): the first `TOP` are reported, marked `basis: symptom`,
with the symptom's lines as evidence and its cheapest question as the next step. A
cause without traits is only weighed by its prior (and its framework).
"""

from __future__ import annotations

from typing import Any

from kb.diagnosis.compiled import CompiledRules, VocabularySpec
from kb.diagnosis.model import BASIS_SYMPTOM, CauseResult, Evidence
from kb.util.record import field, record

SYMPTOM_MAX = 0.45
TOP = 3
MIN_SHARE = 0.1
SEVERAL_SYMPTOMS = 0.5  # extra weight per further observed symptom a cause explains
ON_FAILING_LINE = 4.0  # a cause whose own (weak) signature matches the failing line
# a failure section lists its causes likeliest first (the author's knowledge of that
# failure): each place further down weighs a cause this much less
LISTED_LOWER = 0.93


@record()
class JobContext:
    """What the logs tell about where the job runs, with the reasons."""

    container: list[str] = field(default_factory=list)
    multi_node: list[str] = field(default_factory=list)
    single_node: list[str] = field(default_factory=list)
    ib_present: list[str] = field(default_factory=list)
    ib_absent: list[str] = field(default_factory=list)
    nccl_error: str = ""
    frameworks: set[str] = field(default_factory=set)

    def __init__(
        self,
        container: list[str] | None = None,
        multi_node: list[str] | None = None,
        single_node: list[str] | None = None,
        ib_present: list[str] | None = None,
        ib_absent: list[str] | None = None,
        nccl_error: str = "",
        frameworks: set[str] | None = None,
    ) -> None:
        self.container = [] if container is None else container
        self.multi_node = [] if multi_node is None else multi_node
        self.single_node = [] if single_node is None else single_node
        self.ib_present = [] if ib_present is None else ib_present
        self.ib_absent = [] if ib_absent is None else ib_absent
        self.nccl_error = nccl_error
        self.frameworks = set() if frameworks is None else frameworks

    @classmethod
    def from_facts(cls, facts: dict[str, Any]) -> JobContext:
        multi, single = list(facts.get("multi_node", [])), list(facts.get("single_node", []))
        if multi and single:  # the logs disagree (several jobs): trust neither
            multi, single = [], []
        present, absent = list(facts.get("ib_present", [])), list(facts.get("ib_absent", []))
        if present and absent:
            present, absent = [], []
        return cls(
            container=list(facts.get("container", [])),
            multi_node=multi,
            single_node=single,
            ib_present=present,
            ib_absent=absent,
            nccl_error=str(facts.get("nccl_error", "")),
            frameworks=set(facts.get("frameworks", set())),
        )

    def observations(self) -> list[tuple[str, str, list[str]]]:
        """(observation in rules/vocabulary/traits.yaml, said as, the reasons) for each thing
        the logs show about the job, in the order the explanation gives them."""
        rows = [
            ("container", "in a container", self.container),
            ("multi-node", "several nodes", self.multi_node),
            ("single-node", "one node", self.single_node),
            ("ib-present", "InfiniBand in use", self.ib_present),
            ("ib-absent", "no InfiniBand", self.ib_absent),
        ]
        out = [(name, f"{said} ({reasons[0]})", reasons) for name, said, reasons in rows if reasons]
        if self.nccl_error:
            said = f"NCCL returned a {self.nccl_error} error"
            out.append((f"nccl-error-{self.nccl_error}", said, [self.nccl_error]))
        return out

    def factors(
        self, traits: list[str], area: str, vocab: VocabularySpec
    ) -> list[tuple[float, str]]:
        """(factor, why) for each thing in the context that makes a cause with these traits
        (in this rule folder) more or less probable."""
        out: list[tuple[float, str]] = []
        for name, said, _ in self.observations():
            factor = _factor(name, traits, vocab)
            if factor is not None:
                out.append((factor, said))
        if area in vocab.framework_areas and self.frameworks:
            seen = area in self.frameworks
            factor = vocab.framework_shown if seen else vocab.framework_not_shown
            out.append((factor, f"the logs {'' if seen else 'do not '}show {area}"))
        return out


def _factor(observation: str, traits: list[str], vocab: VocabularySpec) -> float | None:
    """The weight of the first of the cause's traits (in the vocabulary's order) that weighs
    the observation, else the observation's `otherwise` (None: not weighed by it)."""
    for trait, weights in vocab.traits.items():
        if trait in traits and observation in weights:
            return weights[observation]
    return vocab.observations.get(observation)


def _libraries_shown(shown: dict[str, list[Evidence]], vocab: VocabularySpec) -> set[str]:
    """The frameworks whose catalogued messages the symptoms' lines are (a c10d store
    message is PyTorch's even where no `torch.` path is printed): the catalogue's library
    of each line, as the vocabulary's `frameworks.libraries` maps it to a rule folder."""
    out: set[str] = set()
    for lines in shown.values():
        for e in lines:
            kind, _, library = e.signature.partition("/")
            area = vocab.framework_libraries.get(library) if kind == "catalogue" else None
            if area:
                out.add(area)
    return out


def symptom_candidates(
    rules: CompiledRules,
    shown: dict[str, list[Evidence]],
    partial: dict[str, tuple[float, list[Evidence], dict[str, str]]],
    facts: dict[str, Any],
    noted: dict[str, list[Evidence]] | None = None,
) -> list[CauseResult]:
    """The most probable causes of the failure symptoms `shown` (id -> their lines),
    as symptom-level candidates (confidence below the "likely" threshold).

    `partial` holds, for causes some of whose signatures fired without making them
    likely, (their confidence, evidence, values); `noted`, the lines of those of their
    signatures that carry a note (a specific observation, never a generic word)."""
    ctx = JobContext.from_facts(facts)
    named: dict[str, list[str]] = {}  # cause -> the failure symptoms shown that name it
    place: dict[str, int] = {}  # cause -> its best place in those sections' lists
    for sid in shown:
        spec = getattr(rules.symptoms.get(sid), "failure", None) or {}
        for i, cid in enumerate(spec.get("causes", [])):
            named.setdefault(cid, []).append(sid)
            place[cid] = min(i, place.get(cid, i))
    ctx.frameworks |= _libraries_shown(shown, rules.vocabulary)
    scored: list[tuple[float, int, float, str, str, str]] = []
    # (weight, lines of its own evidence, prior, cause, symptom, why)
    at_line = {(e.file, e.line): sid for sid, ev in shown.items() for e in ev}
    for cid, cause in rules.causes.items():
        explains = [s for s in cause.symptoms if s in shown]
        explains += [s for s in named.get(cid, []) if s not in explains]
        # its weak evidence is the failing line itself (Gloo's `connectFullMesh failed` as
        # the exception that ended the run): it explains that failure, whatever it lists
        weak = (noted or {}).get(cid, [])
        on_line = [at_line[(e.file, e.line)] for e in weak if (e.file, e.line) in at_line]
        explains += [s for s in dict.fromkeys(on_line) if s not in explains]
        if not explains or (cause.generic and cid not in named and not on_line):
            continue  # a generic cause only where a failure section names it
        base, basis = (
            (partial[cid][0], "its own weak evidence")
            if cid in partial
            else (
                cause.prior,
                "prior",
            )
        )
        weight = base * (1.0 + SEVERAL_SYMPTOMS * (len(explains) - 1))
        parts = [f"{basis} {base:.2f}"]
        if on_line:
            weight *= ON_FAILING_LINE
            parts.append(f"its evidence is the failing line: x{ON_FAILING_LINE:g}")
        if len(explains) > 1:
            parts.append(f"explains {len(explains)} of the symptoms shown")
        if place.get(cid):
            weight *= LISTED_LOWER ** place[cid]
            parts.append(
                f"listed {place[cid] + 1}. for the failure: x{LISTED_LOWER ** place[cid]:.2f}"
            )
        for factor, reason in ctx.factors(cause.traits, cause.area, rules.vocabulary):
            weight *= factor
            parts.append(f"{reason}: x{factor:g}")
        own_lines = len(partial[cid][1]) if cid in partial else 0
        scored.append((weight, own_lines, cause.prior, cid, explains[0], "; ".join(parts)))
    total = sum(t[0] for t in scored)
    if total <= 0:
        return []
    # equal weights (to rounding) break by the cause's own evidence, then its prior, then id
    scored.sort(key=lambda t: (-round(t[0], 9), -t[1], -t[2], t[3]))
    out: list[CauseResult] = []
    for weight, _, _, cid, sid, why in scored[:TOP]:
        share = weight / total
        if out and share < MIN_SHARE:
            break
        cause = rules.causes[cid]
        own = partial.get(cid, (0.0, [], {}))
        lines = {(e.file, e.line) for e in shown[sid][:3]}
        evidence = list(shown[sid][:3]) + [e for e in own[1] if (e.file, e.line) not in lines][:3]
        confidence = min(SYMPTOM_MAX, share)
        explanation = (
            f"only the symptom '{sid}' is visible; {why} -> {share:.0%} of the weight of "
            f"its causes (capped at {SYMPTOM_MAX})"
        )
        out.append(
            CauseResult(
                cid,
                cause.title,
                confidence,
                evidence,
                dict(own[2]),
                list(cause.fixes),
                explanation,
                basis=BASIS_SYMPTOM,
                symptom=sid,
            )
        )
    return out
