"""Where the walk ended: the cause and why, the fix with values filled in and commands to
copy, the checks that verify it; or, honestly, "not in the knowledge base yet"."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Markdown, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from dlperf_tui.messages import AskExport, CopyFix
from dlperf_tui.plain import plain, plain_line
from dlperf_tui.screens.base import AppFooter, SessionScreen, TitleBar
from dlperf_tui.screens.check_run import CheckRunScreen
from kb.markdown.blocks import fix_block, fix_commands
from kb.rules.schema.models import text_of
from kb.util.textsafe import markdown_text
from kb.walk.engine import Belief, Conclusion, Walk
from kb.walk.session import missing_params

if TYPE_CHECKING:
    from dlperf_tui.hosts import Hosts
    from kb.checks.model import CheckResult
    from kb.rules.schema.models import Check
    from kb.walk.session import Session

HEADLINES = {
    "settled": "Found it",
    "chosen": "Your choice",
    "likely": "Most likely (not confirmed: no step was left)",
    "unknown": "Not in the knowledge base yet",
}


def _beliefs_md(beliefs: list[Belief]) -> str:
    return (
        "\n".join(
            f"- **{markdown_text(b.title)}**: "
            + (markdown_text("; ".join(b.reasons)) or "no evidence either way")
            for b in beliefs
        )
        or "- none"
    )


class ConclusionScreen(SessionScreen):
    CSS_PATH = "conclusion.tcss"
    HELP = (
        "The end of the walk. `c` copies the whole fix, ready to paste (a value it still needs "
        "is asked for first); Enter copies one command. `n` switches to the next "
        "fix when the cause has several. After applying the fix, `v` runs the checks that "
        "verify it here and `p` reads their output if you ran them yourself. `e` exports "
        "the runbook; `u` goes back one step of the walk."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "copy", "Copy fix"),
        Binding("v", "verify", "Verify"),
        Binding("e", "export", "Export"),
        Binding("u", "undo", "Undo"),
        # the rest are in `?`: at 80 columns the footer holds no more
        Binding("p", "paste_verify", "Paste verify output", show=False),
        Binding("n", "next_fix", "Next fix", show=False),
        Binding("h", "hosts", "Hosts", show=False),
    ]

    def __init__(self, session: Session, hosts: Hosts) -> None:
        super().__init__(session)
        self.hosts = hosts

    def compose(self) -> ComposeResult:
        yield TitleBar("the fix")
        yield Static(id="end-title")
        with VerticalScroll(id="end-body"):
            yield Static(id="fix-title")
            yield OptionList(id="commands")
            yield Static(id="verify-status")
            yield Markdown(id="end-fix")
            yield Markdown(id="end-why")
        yield AppFooter()

    @property
    def walk(self) -> Walk:
        walk = self.session.walk
        assert walk is not None
        return walk

    @property
    def end(self) -> Conclusion | None:
        return self.walk.conclusion()

    def on_mount(self) -> None:
        end = self.end
        if end is not None and end.fixes and self.session.fix_id not in end.fixes:
            self.session.choose_fix(end.fixes[0])
        self.draw()

    def draw(self) -> None:
        end = self.end
        if end is None:  # undone past the end
            return
        cause = self.kb.causes[end.cause] if end.cause else None
        skipped = sum(1 for e in self.walk.events if e.kind == "skip")
        undecided = cause is None and skipped > 0 and bool(end.remaining)
        title = f"{HEADLINES[end.kind]}: {text_of(cause.title)}" if cause else HEADLINES[end.kind]
        if undecided:  # the rules were not exhausted, the user skipped what would decide
            title = f"Undecided: {skipped} step{'s' if skipped != 1 else ''} skipped"
        self.query_one("#end-title", Static).update(plain_line(title))
        why = self.query_one("#end-why", Markdown)
        commands = self.query_one("#commands", OptionList)
        commands.clear_options()
        if cause is None:
            lead = (
                "The steps that would tell the causes apart were skipped, so the cause is "
                "undecided (not unknown to the rules). `u` undoes a skip to take that step; "
                "`Esc` goes back to the walk, where `f` takes the fix of the most likely cause."
                if undecided
                else "Every cause the rules know for this symptom was ruled out, or none could "
                "be confirmed."
            )
            why.update(
                lead
                + "\n\n**Ruled out**\n\n"
                + _beliefs_md(end.ruled_out)
                + "\n\n**Still possible, unconfirmed**\n\n"
                + _beliefs_md(end.remaining)
                + "\n\nExport the runbook (`e`) and share it with whoever maintains the rules: "
                "a new rule is a YAML file (see docs/rule-authoring.md)."
            )
            self.query_one("#end-fix", Markdown).update("")
            self.query_one("#verify-status", Static).update("")
            self.query_one("#fix-title", Static).update("")
            return
        belief = self.walk.belief(cause.id)
        others = [b for b in end.ruled_out]
        why.update(
            "**Why**\n\n"
            + ("\n".join(f"- {markdown_text(r)}" for r in belief.reasons) or "- you chose it")
            + (f"\n\n**Ruled out on the way**\n\n{_beliefs_md(others)}" if others else "")
        )
        fix = self.session.fix
        if fix is None:
            self.query_one("#end-fix", Markdown).update("This cause has no fix in the rules.")
            return
        n = len(end.fixes)
        label = f"Fix {end.fixes.index(fix.id) + 1} of {n} (n: next)" if n > 1 else "Fix"
        self.query_one("#fix-title", Static).update(
            plain_line(
                f"{label}: {text_of(fix.title)}" + (" · c copies it all" if fix.commands else "")
            )
        )
        self.query_one("#end-fix", Markdown).update(
            fix_block(fix, self.session.params, heading="", commands=False)
        )
        shown = fix_commands(fix, self.session.params)
        for i, (command, cmd) in enumerate(zip(shown, fix.commands, strict=True)):
            where = [cmd.where] if cmd.where else []
            where += ["changes the machine"] if cmd.changes_machine else []
            suffix = f"   ({', '.join(where)})" if where else ""
            commands.add_option(Option(plain_line(f"⧉ {command}{suffix}"), id=str(i)))
        if commands.option_count:
            commands.highlighted = 0
            commands.focus()
        self._draw_verify()

    def _draw_verify(self) -> None:
        checks = self.session.verify_checks()
        status = self.query_one("#verify-status", Static)
        if not checks:
            status.update("No check verifies this fix; rerun the job to see it work.")
            return
        done = {r.id: r for r in self.session.verifications}
        lines = [
            f"After applying the fix, verify it (v: run {self.hosts.where()}, "
            "p: paste output, h: hosts):"
        ]
        for chk in checks:
            r = done.get(chk.id)
            state = (
                {"pass": "✔ passed", "fail": "✘ still failing"}.get(r.status, r.status)
                if r
                else "not run yet"
            )
            lines.append(
                f"  {text_of(chk.title)}: {state}" + (f" ({r.finding})" if r and r.finding else "")
            )
        if self.session.verified:
            lines.append("Verified: the fix works.")
        status.update(plain("\n".join(lines)))  # findings: what a node printed

    # ------------------------------------------------------------ actions

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a command copies that one (its values filled in, or asked for)."""
        event.stop()
        fix = self.session.fix
        if fix is not None and event.option.id is not None:
            command = fix.commands[int(event.option.id)]
            self.post_message(CopyFix(fix, self.session.params, [command]))

    def action_copy(self) -> None:
        """`c`: the whole fix, every command, ready to paste."""
        fix = self.session.fix
        if fix is None or not fix.commands:
            self.notify("No command to copy here.")
            return
        self.post_message(CopyFix(fix, self.session.params))

    def action_next_fix(self) -> None:
        end = self.end
        fix = self.session.fix
        if end is None or fix is None or len(end.fixes) < 2:
            return
        self.session.choose_fix(end.fixes[(end.fixes.index(fix.id) + 1) % len(end.fixes)])
        self.draw()

    def action_undo(self) -> None:
        self.walk.undo()
        self.app.pop_screen()

    def action_hosts(self) -> None:
        from dlperf_tui.screens.hosts import HostsScreen

        self.app.push_screen(HostsScreen(self.hosts), lambda _: self._draw_verify())

    def action_export(self) -> None:
        self.post_message(AskExport())

    def _pending(self) -> list[Check]:
        passed = {r.id for r in self.session.verifications if r.status == "pass"}
        return [c for c in self.session.verify_checks() if c.id not in passed]

    def action_verify(self) -> None:
        pending = self._pending() or self.session.verify_checks()
        if not pending:
            self.notify("No check verifies this fix.")
            return
        chk = pending[0]
        if chk.read_only and not missing_params(chk, self.session.params):
            self.query_one("#verify-status", Static).update(plain_line(f"Running {chk.id}…"))
            self._verify(chk)
        else:
            self.app.push_screen(
                CheckRunScreen(chk, self.session.params, "run", self.hosts), self._verified
            )

    def action_paste_verify(self) -> None:
        pending = self._pending() or self.session.verify_checks()
        if pending:
            self.app.push_screen(
                CheckRunScreen(pending[0], self.session.params, "paste", self.hosts),
                self._verified,
            )

    @work(thread=True, exclusive=True, group="verify")
    def _verify(self, chk: Check) -> None:
        """The verifying check through kb's engine (`run_check_on`): read-only, so unasked."""
        from kb.walk.session import run_check_on

        worker = get_current_worker()
        hosts = self.hosts
        record = run_check_on(chk, hosts.for_job(), hosts.make_runner, self.session.params)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._verified, record)

    def _verified(self, record: CheckResult | None) -> None:
        if record is not None and record.status != "skipped":
            self.session.verifications.append(record)
        self._draw_verify()

    def action_back(self) -> None:
        self.workers.cancel_group(self, "verify")
        super().action_back()
