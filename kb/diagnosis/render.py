"""A diagnosis as text for people: ranked causes, the lines that prove them (the
matching part marked), the values found, and the fixes with those values filled in.
Everything that comes from a log (lines, file names, values) goes through
`kb.util.textsafe.safe` here, before this module adds its own colours.
"""

from __future__ import annotations

from kb.diagnosis.compiled import CompiledRules
from kb.diagnosis.model import (
    BASIS_DESCRIBED,
    BASIS_OBSERVATION,
    BASIS_SYMPTOM,
    CauseResult,
    Diagnosis,
    Evidence,
)
from kb.diagnosis.percent import confidence_text
from kb.diagnosis.ranking import LIKELY
from kb.diagnosis.render_failure import (
    approximate_header,
    approximate_lines,
    basis_kind,
    described_header,
    failure_lines,
)
from kb.rules import fixchoice
from kb.rules.placeholders import fill_text
from kb.util.textsafe import safe, safe_line

SHOWN_WIDTH = 160


class Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def mark(self, text: str) -> str:
        return self._wrap("1;31", text) if self.color else f">>{text}<<"


def _line(e: Evidence, style: Style) -> str:
    text, start, end = e.shown(SHOWN_WIDTH)
    if 0 <= start < end <= len(text) and (start, end) != (0, len(text)):
        pieces = [text[:start], text[start:end], text[end:]]
        text = safe_line(pieces[0]) + style.mark(safe_line(pieces[1])) + safe_line(pieces[2])
    else:
        text = safe_line(text)
    return f"{style.dim(f'{safe_line(e.file)}:{e.line}')}  {text}"


def _symptom_only(causes: list[CauseResult], rules: CompiledRules, st: Style) -> list[str]:
    """The words that say these causes are guesses from a symptom, and what to do next."""
    out = [""]
    for sid in dict.fromkeys(c.symptom for c in causes):
        spec = rules.symptoms.get(sid)
        title = spec.title if spec else sid
        out.append(
            st.bold(f"A failure is visible ({title}), but only the symptom:")
            + " no line names its cause. The likeliest causes, judged from how common they "
            "are and from what the logs show of the job, are listed below; none is certain."
        )
        step = spec.next_step if spec else ""
        if spec and spec.next:  # the symptom's own next step
            out.append(f"Next: {spec.next}")
        elif "NCCL" in step:  # its question asks for NCCL's own lines: rerun to get them
            out.append(
                "Next: rerun with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS=INIT,NET) and "
                "diagnose that log: NCCL then prints the line that names the cause."
            )
        elif step:
            out.append(f"Next, ask: {step}")
    return out


def render(
    diag: Diagnosis, rules: CompiledRules, *, explain: bool = False, color: bool = False
) -> str:
    st = Style(color)
    s = diag.stats
    out = [
        st.dim(
            f"{s.files} file(s), {s.lines:,} lines, {s.bytes / 1e6:,.1f} MB in {s.seconds:.2f} s"
        )
    ]
    if diag.cancelled:
        out.append("(stopped before the end: the result covers what was read)")
    if not diag.causes and diag.failure is None:
        out.append("")
        out.append("No known problem found in these logs.")
    out.extend(failure_lines(diag, rules))  # a failure is never "no known problem"
    out.extend(approximate_header(diag))
    out.extend(described_header(diag))
    from_symptom = [c for c in diag.causes if c.basis == BASIS_SYMPTOM]
    if from_symptom and diag.failure is None:
        out.extend(_symptom_only(from_symptom, rules, st))
    if diag.causes and all(c.basis == BASIS_OBSERVATION for c in diag.causes):
        out.append("")
        out.append(
            "Nothing in these lines failed; pasted alone, they are the known sign of the "
            "cause below (not a certainty: the line is also printed where all is well)."
        )
    for i, c in enumerate(diag.causes, start=1):
        out.append("")
        kind = f", {basis_kind(c)}" if basis_kind(c) else ""
        out.append(
            st.bold(f"{i}. {safe_line(c.title)}")
            + f"  [{c.id}, {confidence_text(c.confidence)}{kind}]"
        )
        out.extend(approximate_lines(c))
        if c.evidence and c.approximate is None:
            out.append("   From the text:" if c.basis == BASIS_DESCRIBED else "   Evidence:")
            out.extend("     " + _line(e, st) for e in c.evidence)
        if c.params:
            values = safe_line("  ".join(f"{k}={v}" for k, v in c.params.items()))
            out.append(f"   Values: {values}")
        for fid in fixchoice.order(c.fixes, rules.fixes, c.params):
            fix = rules.fixes.get(fid)
            if fix is None:
                out.append(f"   Fix: {fid}")
                continue
            out.append(f"   Fix: {safe_line(fill_text(fix.title, c.params))}  ({fid})")
            caution = fixchoice.caution_text(fix, c.params)
            if caution:
                out.append(f"     Caution: {safe_line(caution)}")
            for cmd in fixchoice.commands(fix, c.params):  # those for the values found
                where = f"   # {cmd.where}" if cmd.where else ""
                out.append(f"     $ {safe(cmd.run)}{st.dim(where)}")
        if c.explanation and (explain or c.basis == BASIS_DESCRIBED):  # its words: its only proof
            out.append(f"   Why: {safe(c.explanation)}")
    if diag.symptoms:
        out.append("")
        out.append("Symptoms: " + ", ".join(diag.symptoms))
    if diag.first_failure:
        ff = diag.first_failure
        who = ", ".join(f"{k} {ff[k]}" for k in ("host", "rank", "time") if ff.get(k) is not None)
        out.append(
            safe_line(
                f"First failure: {ff.get('file')}:{ff.get('line')}" + (f" ({who})" if who else "")
            )
        )
    if diag.notes:
        out.append("")
        out.append("Notes (observations, not failures):")
        for n in diag.notes:
            where = f" ({safe_line(n.evidence[0].file)}:{n.evidence[0].line})" if n.evidence else ""
            out.append(f"  - {safe(n.text)}{st.dim(where)}")
    if explain:
        out.append("")
        out.append(
            st.dim(
                f"Causes are listed when their confidence is at least {LIKELY}; when only a "
                "failure's symptom shows, its likeliest causes are listed below that."
            )
        )
    return "\n".join(out) + "\n"
