"""A session written down as a Markdown runbook: what was seen, asked, run, ruled out, fixed.

Why it exists: after an incident the team needs the record, for the ticket, the wiki
or the next person on call. The runbook quotes the evidence (a long log is excerpted
around it), every question and answer, every check with its command, host and output,
the causes ruled in and out with the reason, and the fix with its values filled in (as
every document shows a fix: `kb.markdown.blocks`).
Everything passes through `kb.util.secrets.mask` last, since runbooks are made to be shared.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from kb import __version__
from kb.checks.model import CheckResult
from kb.diagnosis.percent import LIKELIHOOD, confidence_text, percent
from kb.markdown.blocks import fence, fix_block, literal
from kb.rules.schema.models import text_of
from kb.util.secrets import mask
from kb.util.textsafe import safe
from kb.walk.engine import Belief, Event
from kb.walk.session import PASTED, Session

MAX_OUTPUT_LINES = 40
NOTABLE = 0.05  # causes below this with no evidence are listed by id only
Add = Callable[..., None]  # appends Markdown blocks
STATUS_WORDS = {
    "pass": "passed (healthy on this point)",
    "fail": "failed (the problem is present)",
    "unavailable": "unavailable (the tool is not installed there)",
    "error": "could not run",
    "skipped": "skipped",
}


def render(session: Session) -> str:
    """The Markdown runbook of `session`, secrets masked."""
    parts: list[str] = []

    def add(*blocks: str) -> None:
        parts.extend(blocks)

    add(f"# Troubleshooting runbook: {literal(session.title())}")
    when = session.started.strftime("%Y-%m-%d %H:%M %Z").strip()
    add(f"*Written by dlperf-help {__version__} on {when}.*")
    _outcome(session, add)
    _symptoms(session, add)
    _log(session, add)
    _diagnosis(session, add)
    _steps(session, add)
    _causes(session, add)
    _fix(session, add)
    if session.cluster_markdown:
        add(session.cluster_markdown.strip())
    return mask("\n\n".join(p for p in parts if p).rstrip() + "\n")


def _outcome(s: Session, add: Add) -> None:
    add("## Outcome")
    end = s.walk.conclusion() if s.walk is not None else None
    fix = s.fix
    if end is not None and end.cause is not None:
        cause = s.kb.causes[end.cause]
        how = {
            "settled": "confirmed by the steps below",
            "likely": "the most likely cause once no step was left (not confirmed)",
            "chosen": "chosen by the user",
        }[end.kind]
        add(f"- **Cause:** {literal(text_of(cause.title, s.lang))} (`{cause.id}`), {how}.")
    elif end is not None:
        add(
            "- **Not in the knowledge base yet.** Every known cause of this symptom was "
            "ruled out or left unconfirmed; see *Causes* for what was checked."
        )
    elif s.diagnosis is not None and s.diagnosis.causes:
        top = s.diagnosis.causes[0]
        add(
            f"- **Most likely cause (from the log):** {literal(top.title)} (`{top.id}`), "
            f"{confidence_text(top.confidence)}; the walk was not finished."
        )
    else:
        add("- The session ended before a cause was found.")
    if fix is not None:
        verified = {
            True: "verified: its checks pass",
            False: "its checks still fail",
            None: "not verified yet",
        }[s.verified]
        add(f"- **Fix:** {literal(text_of(fix.title, s.lang))} (`{fix.id}`), {verified}.")


def _symptoms(s: Session, add: Add) -> None:
    ids = s.symptom_ids
    if not ids:
        return
    add("## Symptom")
    lines = []
    for sid in ids:
        sym = s.kb.symptoms[sid]
        lines.append(
            f"- **{literal(text_of(sym.title, s.lang))}** (`{sid}`): "
            + " ".join(text_of(sym.description, s.lang).split())
        )
    add("\n".join(lines))


def _log(s: Session, add: Add) -> None:
    if s.log_name is None:
        return
    excerpt, total = s.excerpt()
    add("## Log")
    kind = "excerpt around the evidence" if any(e is None for e in excerpt) else "whole"
    add(f"`{s.log_name}`, {total} lines ({kind}):")
    width = len(str(total or 1))
    body = []
    evidence = s.evidence_lines()
    shown = iter(_masked_lines([item[1] for item in excerpt if item is not None]))
    for item in excerpt:
        if item is None:
            body.append("…")
            continue
        n, text = item[0], next(shown)
        mark = ">" if n in evidence else " "
        body.append(f"{n:>{width}}{mark} {text}")
    add(fence("\n".join(body) or "(empty)", "text"))


def _masked_lines(lines: list[str]) -> list[str]:
    """The excerpt's lines masked together, before they are numbered: a key's body is
    known by lines that hold nothing else (the final `mask` sees them behind numbers)."""
    masked = mask("\n".join(lines)).split("\n")
    return masked if len(masked) == len(lines) else [mask(line) for line in lines]


def _diagnosis(s: Session, add: Add) -> None:
    d = s.diagnosis
    if d is None:
        return
    add("## Diagnosis")
    if not d.causes:
        add(f"No known problem found in {d.stats.lines} lines.")
    for c in d.causes:
        lines = [f"- **{literal(c.title)}** (`{c.id}`), {confidence_text(c.confidence)}"]
        for e in c.evidence:
            lines.append(f"  - line {e.line}: `{_code(e.text)}`")
        if c.params:
            lines.append("  - values: " + ", ".join(f"`{k}` = `{v}`" for k, v in c.params.items()))
        add("\n".join(lines))
    if d.notes:
        add("Notes:\n" + "\n".join(f"- {n.text}" for n in d.notes))


def _code(text: str) -> str:
    return text.strip().replace("`", "'")[:300]


def _steps(s: Session, add: Add) -> None:
    if s.walk is None or not s.walk.events:
        return
    add("## Steps taken")
    for i, ev in enumerate(s.walk.events, start=1):
        add(*_event(i, ev, s))


def _effect(ev: Event) -> str:
    bits = []
    if ev.confirms:
        bits.append("points to " + ", ".join(f"`{c}`" for c in ev.confirms))
    if ev.rules_out:
        bits.append("rules out " + ", ".join(f"`{c}`" for c in ev.rules_out))
    return f" ({'; '.join(bits)})" if bits else ""


def _event(i: int, ev: Event, s: Session) -> list[str]:
    title = " ".join(ev.step_title.split())
    if ev.kind == "answer":
        return [f"{i}. **Question:** {title}\n   **Answer:** {ev.outcome_text}{_effect(ev)}"]
    if ev.kind == "skip":
        return [f"{i}. **Skipped:** {title}"]
    if ev.kind == "choose":
        return [f"{i}. **Chose the cause:** {literal(ev.outcome_text)} (`{ev.outcome}`)"]
    assert ev.record is not None
    return [f"{i}. **Check:** {literal(title)} (`{ev.step_id}`){_effect(ev)}", *_record(ev.record)]


def _record(r: CheckResult) -> list[str]:
    """A check's command and output, indented to stay inside its list item."""
    where = "pasted by the user" if r.host == PASTED else f"ran on `{r.host}`"
    verdict = STATUS_WORDS.get(r.status, r.status)
    extra = f": {r.finding}" if r.finding else (f": {r.reason}" if r.reason else "")
    code = "" if r.exit_code is None else f", exit status {r.exit_code}"
    lines = r.output.rstrip("\n").splitlines()
    shown = lines[:MAX_OUTPUT_LINES]
    if len(lines) > MAX_OUTPUT_LINES:
        shown.append(f"… ({len(lines) - MAX_OUTPUT_LINES} more lines)")
    return [
        f"   Command ({where}{code}), {verdict}{extra}:",
        _indent(fence(safe(r.command), "bash")),
        "   Output:",
        _indent(fence(safe("\n".join(shown)) or "(no output)", "text")),
    ]


def _indent(block: str) -> str:
    return textwrap.indent(block, "   ", lambda line: True)


def _causes(s: Session, add: Add) -> None:
    if s.walk is None or not s.walk.candidates:
        return
    add("## Causes")
    beliefs = s.walk.beliefs()
    ruled_out = [b for b in beliefs if b.status == "ruled_out"]
    standing = [b for b in beliefs if b.status != "ruled_out"]
    telling = [b for b in standing if b.reasons or b.p >= NOTABLE]
    quiet = [b for b in standing if b not in telling]
    if telling:
        add("Ruled in or still possible:\n" + "\n".join(_belief(b) for b in telling))
    if ruled_out:
        add("Ruled out:\n" + "\n".join(_belief(b) for b in ruled_out))
    if quiet:
        add(
            f"Not examined (no evidence either way, each under {NOTABLE:.0%}): "
            + ", ".join(f"`{b.id}`" for b in quiet)
            + "."
        )
    add(f"Something the knowledge base does not know: {percent(s.walk.p_other)}.")


def _belief(b: Belief) -> str:
    status = {"confirmed": "confirmed", "open": "possible", "ruled_out": "ruled out"}[b.status]
    why = "; ".join(b.reasons) or "no evidence either way"
    prob = "" if b.status == "ruled_out" else f" ({LIKELIHOOD} {percent(b.p)})"
    return f"- **{literal(b.title)}** (`{b.id}`), {status}{prob}: {why}."


def _fix(s: Session, add: Add) -> None:
    fix = s.fix
    if fix is None:
        return
    add(fix_block(fix, s.params, s.lang, heading="##", title="Fix: "))
    if s.verify_checks():
        add("### Verification")
        if not s.verifications:
            checks = ", ".join(f"`{c.id}`" for c in s.verify_checks())
            add(f"Not run yet. After applying the fix, run {checks}: each should pass.")
        for r in s.verifications:
            add(f"- **{literal(r.title)}** (`{r.id}`)\n" + "\n\n".join(_record(r)))
