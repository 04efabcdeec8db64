"""The diagnosis view: ranked causes, and for the selected one its evidence in context,
the values extracted, the explanation, checks and fixes with the values filled in."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Markdown, OptionList, Static
from textual.widgets.option_list import Option

from dlperf_tui.messages import AskExport, CopyFix, StartWalk
from dlperf_tui.plain import plain, plain_line
from dlperf_tui.screens.base import AppFooter, SessionScreen, TitleBar
from kb.diagnosis.model import BASIS_DESCRIBED, BASIS_EVIDENCE, CauseResult, Diagnosis, Evidence
from kb.diagnosis.percent import confidence_text, percent
from kb.diagnosis.render_failure import basis_kind
from kb.markdown.blocks import cause_block
from kb.rules.schema.models import text_of
from kb.util.textsafe import markdown_text, safe_line

BAR = 10
SUMMARY_SYMPTOMS = 1  # symptoms named in the summary line; the rest counted


def confidence_bar(p: float) -> str:
    full = round(p * BAR)
    return "█" * full + "░" * (BAR - full)


def evidence_line(e: Evidence, before: str | None, after: str | None) -> Content:
    """The evidence line numbered, its matching span highlighted, a line of context around
    (each piece of the log's text made safe on its own: the span's offsets stay right)."""
    parts: list[str | tuple[str, str]] = []
    if before is not None:
        parts += [(f"{e.line - 1:>6}  ", "dim"), (safe_line(before[:200]), "dim"), "\n"]
    text = e.text[:400]
    start, end = (e.start, e.end) if 0 <= e.start < e.end <= len(text) else (0, len(text))
    parts += [
        (f"{e.line:>6}▶ ", "bold"),
        safe_line(text[:start]),
        (safe_line(text[start:end]), "bold reverse"),
        safe_line(text[end:]),
    ]
    if after is not None:
        parts += ["\n", (f"{e.line + 1:>6}  ", "dim"), (safe_line(after[:200]), "dim")]
    return Content.assemble(*parts)


class Detail(VerticalScroll):
    """The selected cause's evidence, explanation and fixes: Tab focuses it, then PageDown,
    End and the arrows reach the fix text at its end (the lists inside take Tab next)."""


class DiagnosisScreen(SessionScreen):
    CSS_PATH = "diagnosis.tcss"
    HELP = (
        "The causes the log points to, most likely first, with the lines that show them. "
        "Select an evidence line (Enter) to see it in the whole log. `w` walks the decision "
        "tree from here to a verified fix; `c` copies the first fix whole, ready to paste; `e` exports the "
        "runbook of this session."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("w", "walk", "Walk to fix"),
        Binding("l", "open_log", "In log"),
        Binding("c", "copy_fix", "Copy fix"),
        Binding("e", "export", "Export"),
    ]

    def compose(self) -> ComposeResult:
        yield TitleBar(f"diagnosis of {self.session.log_name or 'the log'}")
        yield Static(id="diag-summary")
        with Horizontal(id="diag-body"):
            yield OptionList(id="causes")
            with Detail(id="cause-detail"):
                yield Static(
                    "Evidence (Enter: show it in the log)", classes="section-title evidence-part"
                )
                yield OptionList(id="evidence", classes="evidence-part")
                yield Static(id="values", classes="evidence-part")
                yield Markdown(id="cause-md")
        yield AppFooter()

    @property
    def diagnosis(self) -> Diagnosis:
        diag = self.session.diagnosis
        assert diag is not None
        return diag

    def on_mount(self) -> None:
        d = self.diagnosis
        name = self.session.log_name or "the log"
        n = len(d.causes)
        if not d.causes:
            found = "No known problem found"
        elif all(c.basis == BASIS_DESCRIBED for c in d.causes):
            found = f"No line names a cause; {n} fit{'' if n != 1 else 's'} the description"
        elif all(c.basis != BASIS_EVIDENCE for c in d.causes):
            found = f"A failure, but only its symptom: {n} possible cause{'s' if n != 1 else ''}"
        else:
            found = f"{n} likely cause{'s' if n != 1 else ''}"
        syms = [text_of(self.kb.symptoms[s].title) for s in d.symptoms if s in self.kb.symptoms]
        hint = " · w: walk to the fix" if (d.causes or syms) else " · Esc: back, pick a symptom"
        # at 80x24 the summary keeps to about two lines: the title has the whole path, and
        # the symptoms past the first are counted (the walk's path line names them all)
        shown = ", ".join(syms[:SUMMARY_SYMPTOMS]) + (
            f" and {len(syms) - SUMMARY_SYMPTOMS} more" if len(syms) > SUMMARY_SYMPTOMS else ""
        )
        self.query_one("#diag-summary", Static).update(
            plain_line(
                f"{found} in {Path(name).name or name} ({d.stats.lines:,} lines)"
                + (f" · symptom: {shown}" if syms else "")
                + hint
            )
        )
        causes = self.query_one("#causes", OptionList)
        for c in d.causes:
            guess = f" ({basis_kind(c)})" if basis_kind(c) else ""
            causes.add_option(
                Option(
                    plain_line(
                        f"{percent(c.confidence):>4} {confidence_bar(c.confidence)} {c.title}{guess}"
                    ),
                    id=c.id,
                )
            )
        if not d.causes:
            causes.add_option(Option("No known cause matched.", disabled=True))
            self._show_notes()
        else:
            causes.highlighted = 0
            self._show(d.causes[0])
        causes.focus()

    def _show_notes(self) -> None:
        for widget in self.query(".evidence-part"):
            widget.display = False
        notes = self.diagnosis.notes
        text = (
            "\n".join(f"- {markdown_text(n.text)}" for n in notes)
            or "- nothing worth noting either"
        )
        self.query_one("#cause-md", Markdown).update(
            "### Observations\n\n" + text + "\n\nIf the job still fails, go back (Esc) and "
            "pick the symptom you see: the walk asks what the log could not tell."
        )

    def _current(self) -> CauseResult | None:
        option = self.query_one("#causes", OptionList).highlighted_option
        if option is None or option.id is None:
            return None
        return next((c for c in self.diagnosis.causes if c.id == option.id), None)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "causes":
            cause = self._current()
            if cause is not None:
                self._show(cause)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_list.id == "causes":
            self.query_one("#evidence", OptionList).focus()
        elif event.option_list.id == "evidence":
            self.action_open_log()

    def _show(self, cause: CauseResult) -> None:
        numbers = {n for e in cause.evidence for n in (e.line - 1, e.line + 1)}
        context = self.session.lines_at(numbers)
        evidence = self.query_one("#evidence", OptionList)
        evidence.clear_options()
        marked = {e.line for e in cause.evidence}
        shown: set[int] = set()  # a context line is shown once, an evidence line never as one
        for i, e in sorted(enumerate(cause.evidence), key=lambda ie: (ie[1].file, ie[1].line)):
            before, after = e.line - 1, e.line + 1
            above = context.get(before) if before not in marked | shown else None
            below = context.get(after) if after not in marked else None
            shown.update((before, after))
            evidence.add_option(Option(evidence_line(e, above, below), id=str(i)))
        if cause.evidence:
            evidence.highlighted = 0
        values = ", ".join(f"{k} = {v}" for k, v in cause.params.items() if not k.startswith("__"))
        basis = (
            "only the symptom is visible: no line names this cause; rerun with more logging "
            "(e.g. NCCL_DEBUG=INFO) or walk the questions · "
            if cause.basis != BASIS_EVIDENCE
            else ""
        )
        if cause.basis == BASIS_DESCRIBED:  # the words it shares are its only proof
            basis = f"{cause.explanation} · walk the questions to check it · "
        self.query_one("#values", Static).update(
            plain(
                f"{confidence_text(cause.confidence).capitalize()} · {basis}"  # kb.diagnosis.percent
                + (f"values found: {values}" if values else "no values extracted")
            )
        )
        self.query_one("#cause-md", Markdown).update(
            cause_block(self.kb, cause.id, cause.params, title=False)
        )

    # ------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        diag = self.session.diagnosis  # None once a walk from a symptom replaced it
        if diag is None and action in ("walk", "open_log", "copy_fix"):
            return False
        if diag is None:
            return super().check_action(action, parameters)
        found = bool(diag.causes)
        if action == "walk":
            return found or bool(diag.symptoms)
        if action in ("open_log", "copy_fix"):
            return found
        return super().check_action(action, parameters)

    def action_walk(self) -> None:
        self.post_message(StartWalk(use_diagnosis=True))

    def action_open_log(self) -> None:
        from dlperf_tui.screens.log_view import LogScreen

        cause = self._current()
        if cause is None or not cause.evidence:
            return
        option = self.query_one("#evidence", OptionList).highlighted_option
        chosen = cause.evidence[int(option.id) if option is not None and option.id else 0]
        lines = sorted(cause.evidence, key=lambda e: (e.file, e.line))
        self.app.push_screen(LogScreen(self.session, lines, start=lines.index(chosen)))

    def action_copy_fix(self) -> None:
        """`c`: the cause's first fix with commands, whole, values filled in."""
        cause = self._current()
        if cause is None:
            return
        fixes = [self.kb.fixes[f] for f in cause.fixes if f in self.kb.fixes]
        fix = next((f for f in fixes if f.commands), None)
        if fix is None:
            self.notify("This cause's fixes have no command to copy; read the steps.")
            return
        self.post_message(CopyFix(fix, dict(cause.params)))

    def action_export(self) -> None:
        self.post_message(AskExport())
