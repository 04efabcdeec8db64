"""The decision-tree walk: the best next step, the causes with why each stands or fell,
and the path taken. Answers and check results update everything at once."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from dlperf_tui.messages import AskExport, ShowConclusion
from dlperf_tui.plain import plain_line
from dlperf_tui.screens.base import AppFooter, SessionScreen, TitleBar
from dlperf_tui.screens.check_run import CheckRunScreen
from dlperf_tui.screens.dialogs import StepsScreen
from kb.diagnosis.percent import LIKELIHOOD, percent
from kb.rules.placeholders import refused, show_command
from kb.rules.schema.models import Check, text_of
from kb.util.textsafe import safe_line
from kb.walk.engine import Belief, Step, Walk
from kb.walk.session import missing_params

if TYPE_CHECKING:
    from dlperf_tui.hosts import Hosts
    from kb.checks.model import CheckResult
    from kb.runners.hosts import Target
    from kb.walk.session import Session


def _without(params: dict[str, str], check: Check) -> dict[str, str]:
    """The values of `params` the check's command accepts (a refused one is asked again)."""
    return {k: v for k, v in params.items() if not refused(check.run, {k: v}, check.params)}


ICONS = {"confirmed": "✔", "open": "?", "ruled_out": "✘"}
STYLES = {"confirmed": "bold $success", "open": "", "ruled_out": "dim strike"}


def belief_content(b: Belief) -> Content:
    bar = "█" * round(b.p * 8) + "░" * (8 - round(b.p * 8))
    head = Content.assemble(
        (f"{ICONS[b.status]} ", STYLES[b.status] or "bold"),
        (f"{percent(b.p):>4} {bar} " if b.status != "ruled_out" else "      ---- ", ""),
        (safe_line(b.title), STYLES[b.status]),
    )
    if b.reasons:  # a reason quotes what a check found on a node
        head = head + Content.styled(f"\n      {safe_line(b.reasons[-1])}", "italic $text-muted")
    return head


class WalkScreen(SessionScreen):
    CSS_PATH = "walk.tcss"
    HELP = (
        "The assistant proposes the step most likely to settle the matter per unit of "
        "effort (a quick read-only command before a test run). Answer with Enter or the "
        "number keys; for a check, `r` runs it here and `p` takes the output you ran "
        "yourself. `s` skips a step you cannot take, `u` undoes the last one, `o` lists "
        "every step still worth taking, `f` goes to the fix of the most likely cause now."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "run_check", "Run here"),
        Binding("p", "paste_output", "Paste"),
        Binding("s", "skip", "Skip"),
        Binding("u,backspace", "undo", "Undo"),
        Binding("f", "fix_now", "Fix now"),
        # the rest are in `?`: at 80 columns the footer holds no more
        Binding("o", "other_steps", "Other steps", show=False),
        Binding("h", "hosts", "Hosts", show=False),
        Binding("e", "export", "Export runbook", show=False),
        *[Binding(str(n), f"answer({n})", show=False) for n in range(1, 10)],
    ]

    def __init__(self, session: Session, hosts: Hosts) -> None:
        super().__init__(session)
        self.hosts = hosts
        self.step: Step | None = None
        self._cancel: threading.Event | None = None  # set while a check runs
        self._pinned: str | None = None  # the key of a step the user picked with `o`

    def compose(self) -> ComposeResult:
        titles = [text_of(self.kb.symptoms[s].title) for s in self.walk.symptoms]
        yield TitleBar("walk: " + (", ".join(titles) or "from the log"))
        yield Static(id="walk-path")
        with Horizontal(id="walk-body"):
            with Vertical(id="step-pane"):
                yield Static(id="step-why")
                with VerticalScroll(id="step-scroll"):  # a long command never hides the answers
                    yield Static(id="step-text")
                yield OptionList(id="answers")
            with VerticalScroll(id="cause-pane"):
                yield Static(f"Causes, {LIKELIHOOD} (✔ confirmed, ✘ ruled out)", id="cause-title")
                yield Static(id="beliefs")
        yield AppFooter()

    @property
    def walk(self) -> Walk:
        walk = self.session.walk
        assert walk is not None
        return walk

    def on_mount(self) -> None:
        self.refresh_walk()

    def on_screen_resume(self) -> None:
        self.refresh_walk(conclude=False)

    # ------------------------------------------------------------ drawing

    def refresh_walk(self, conclude: bool = True) -> None:
        walk = self.walk
        start = ", ".join(walk.symptoms) or "the log"
        if walk.diagnosis is not None:
            start = f"log ({start})"
        path = " › ".join([f"start: {start}", *(e.summary() for e in walk.events)])
        self.query_one("#walk-path", Static).update(
            Content.assemble(("Path ", "bold"), safe_line(path))
        )
        other = f"  {percent(walk.p_other):>4}  something the knowledge base does not know"
        lines = [*map(belief_content, walk.beliefs()), Content.styled(other, "dim")]
        self.query_one("#beliefs", Static).update(Content("\n").join(lines))
        end = walk.conclusion()
        steps = walk.steps() if end is None else []
        pinned = [s for s in steps if s.key == self._pinned]  # a step picked from the list
        self.step = pinned[0] if pinned else (steps[0] if steps else None)
        self._draw_step()
        self.refresh_bindings()
        if end is not None and conclude:
            self.post_message(ShowConclusion())

    def _draw_step(self) -> None:
        why = self.query_one("#step-why", Static)
        text = self.query_one("#step-text", Static)
        answers = self.query_one("#answers", OptionList)
        answers.clear_options()
        step = self.step
        if step is None:
            why.update("The walk has ended.")
            text.update("Press Enter to see the conclusion, or u to undo the last step.")
            answers.add_option(Option("See the conclusion", id="conclusion"))
            answers.highlighted = 0
            answers.focus()
            return
        kind = "Question" if step.kind == "question" else "Check"
        why.update(
            Content.assemble(
                (f"{kind} ", "bold $accent"),
                (
                    f"· settles it {percent(step.p_settle)} of the time, cost {step.cost:g}"
                    + (" · read-only" if step.check is not None and step.check.read_only else ""),
                    "$text-muted",
                ),
            )
        )
        if step.kind == "question":
            text.update(Content(" ".join(step.title.split())))
            for i, o in enumerate(step.outcomes, start=1):
                answers.add_option(Option(plain_line(f"{i}  {o.text}"), id=f"answer:{o.id}"))
        else:
            assert step.check is not None
            command = show_command(step.check.run, self.walk.params, step.check.params)
            text.update(
                Content.assemble(
                    (step.title, "bold"),
                    "\n$ ",
                    (safe_line(command), "bold $warning"),
                    "\n",
                    (" ".join(step.help.split()), "italic"),
                )
            )
            where = self.hosts.where()
            answers.add_option(Option(plain_line(f"r  Run it {where} (h: other hosts)"), id="run"))
            answers.add_option(Option("p  I ran it myself: paste the output", id="paste"))
        answers.add_option(Option("s  Skip: I can't take this step", id="skip"))
        answers.highlighted = 0
        answers.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        is_check = self.step is not None and self.step.kind == "check"
        if action in ("run_check", "paste_output"):
            return is_check
        if action == "skip":
            return self.step is not None
        if action == "undo":
            return True if self.session.walk and self.walk.events else None
        return super().check_action(action, parameters)

    # ------------------------------------------------------------ steps

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        choice = event.option.id or ""
        if choice == "conclusion":
            self.post_message(ShowConclusion())
        elif choice.startswith("answer:"):
            self._answer(choice.removeprefix("answer:"))
        elif choice == "run":
            self.action_run_check()
        elif choice == "paste":
            self.action_paste_output()
        elif choice == "skip":
            self.action_skip()

    def _answer(self, answer_id: str) -> None:
        if self.step is None or self.step.kind != "question":
            return
        self.walk.answer(self.step.id, answer_id)
        self.refresh_walk()

    def action_answer(self, n: int) -> None:
        if self.step is not None and self.step.kind == "question" and n <= len(self.step.outcomes):
            self._answer(self.step.outcomes[n - 1].id)

    def action_skip(self) -> None:
        if self.step is not None:
            self.walk.skip(self.step.key)
            self.refresh_walk()

    def action_undo(self) -> None:
        event = self.walk.undo()
        if event is not None:
            self.notify(f"Undone: {event.summary()}")
        self.refresh_walk(conclude=False)

    def action_fix_now(self) -> None:
        standing = [b for b in self.walk.beliefs() if b.status != "ruled_out"]
        if not standing:
            self.notify("Every known cause is ruled out.", severity="warning")
            return
        self.walk.choose(standing[0].id)
        self.refresh_walk()

    def action_other_steps(self) -> None:
        def chosen(step_id: str | None) -> None:
            if step_id is not None:
                self._pinned = step_id
                self.refresh_walk(conclude=False)

        steps = self.walk.steps()
        if steps:
            self.app.push_screen(StepsScreen(steps), chosen)

    def action_export(self) -> None:
        self.post_message(AskExport())

    # ------------------------------------------------------------ checks

    def action_run_check(self) -> None:
        step = self.step
        if step is None or step.check is None or self._cancel is not None:
            return
        params = self.walk.params
        bad = refused(step.check.run, params, step.check.params)
        if bad:  # a value from the log its kind refuses never runs: the user enters another
            self.notify(f"Refused value {bad[0]}", severity="error", markup=False)
            self.app.push_screen(
                CheckRunScreen(step.check, _without(params, step.check), "run", self.hosts),
                self._recorded,
            )
            return
        if step.check.read_only and not missing_params(step.check, params):
            self._cancel = threading.Event()
            self.query_one("#step-why", Static).update(
                plain_line(f"Running {self.hosts.where()}… (Esc cancels)")
            )
            self._run(step, self.hosts.for_job(), params, self._cancel)
        else:
            self.app.push_screen(
                CheckRunScreen(step.check, params, "run", self.hosts), self._recorded
            )

    def action_paste_output(self) -> None:
        if self.step is not None and self.step.check is not None:
            self.app.push_screen(
                CheckRunScreen(self.step.check, self.walk.params, "paste", self.hosts),
                self._recorded,
            )

    def action_hosts(self) -> None:
        from dlperf_tui.screens.hosts import HostsScreen

        self.app.push_screen(HostsScreen(self.hosts), lambda _: self.refresh_walk(conclude=False))

    @work(thread=True, exclusive=True, group="check")
    def _run(
        self, step: Step, targets: list[Target], params: dict[str, str], cancel: threading.Event
    ) -> None:
        """The check through kb's engine (`run_check_on`); this worker only waits for it."""
        from kb.walk.session import run_check_on

        assert step.check is not None
        worker = get_current_worker()
        record = run_check_on(step.check, targets, self.hosts.make_runner, params, cancel=cancel)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._recorded, record)

    def _recorded(self, record: CheckResult | None) -> None:
        self._cancel = None
        if record is None:
            self.refresh_walk(conclude=False)
            return
        if record.status == "skipped":
            self.notify("Check cancelled.")
            self.refresh_walk(conclude=False)
            return
        self.walk.record_check(record)
        verdict = {"pass": "passed", "fail": "failed: the problem is there"}.get(
            record.status, f"{record.status}: {record.reason}"
        )
        self.notify(
            f"{record.title}: {verdict}" + (f" ({record.finding})" if record.finding else "")
        )
        self.refresh_walk()

    def action_back(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
            self.workers.cancel_group(self, "check")
            self._cancel = None
            self.notify("Check cancelled.")
            self.refresh_walk(conclude=False)
            return
        super().action_back()
