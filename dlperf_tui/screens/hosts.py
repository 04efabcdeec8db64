"""The hosts panel: add the job's nodes over SSH, test them, pick where checks run."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static, Switch
from textual.widgets.option_list import Option

from dlperf_tui.hosts import ALL, LOCAL
from dlperf_tui.plain import plain, plain_line
from kb.util.errors import UserError

if TYPE_CHECKING:
    from dlperf_tui.hosts import Hosts


REACHABLE = "✔ reachable"


def _for_panel(problem: str) -> str:
    """SSH's reason as the panel says it: the switch below instead of the CLI's flag."""
    return problem.replace(
        "rerun with --accept-new-host-keys to record it",
        "turn on the trust switch below to record it",
    )


class HostsScreen(ModalScreen[None]):
    CSS_PATH = "hosts.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Done"),
        Binding("delete", "remove", "Remove host"),
    ]

    def __init__(self, hosts: Hosts) -> None:
        super().__init__()
        self.hosts = hosts
        self.state: dict[str, str] = {LOCAL: "this machine"}

    def compose(self) -> ComposeResult:
        with Vertical(classes="hosts-dialog"):
            yield Label("Where checks run (Enter picks; Del removes)", classes="dialog-title")
            yield OptionList(id="host-list")
            yield Input(
                placeholder="nodes: [user@]name[:port], e.g. gpu[01-04] or root@10.0.0.12:2222",
                id="host-add",
            )
            with Horizontal(classes="hosts-options"):
                yield Switch(value=self.hosts.accept_new_host_keys, id="accept-new")
                yield Label("Trust a node's host key the first time (ssh accept-new)")
            yield Static(
                "Keys or the SSH agent must let you in: no password is asked.",
                id="hosts-status",
                classes="dialog-detail",
            )
            yield Button("Done (Esc)", id="hosts-done")

    def on_mount(self) -> None:
        self._offer_remembered()
        self._draw()
        self.query_one("#host-add", Input).focus()

    def _offer_remembered(self) -> None:
        """The nodes added in earlier runs are listed again (not connected to until used);
        Del forgets one. kb.walk.state holds them, host names only."""
        from kb.walk.state import load

        remembered, notice = load()
        if notice is not None:
            self.app.notify(notice, severity="warning")
        for name in remembered.nodes:
            if name in self.hosts.targets:
                continue
            try:
                self.hosts.add(name)
            except UserError:  # ~/.ssh/config changed since: not offered
                continue
            self.state.setdefault(name, "remembered, not tried yet")

    def _remember(self, notice: str | None) -> None:
        if notice is not None:
            self.query_one("#hosts-status", Static).update(plain(notice))

    def _draw(self) -> None:
        hosts = self.hosts
        listing = self.query_one("#host-list", OptionList)
        listing.clear_options()
        for name in hosts.choices:
            mark = "●" if name == hosts.selected else " "
            state = self.state.get(name, "every host above" if name == ALL else "not tried yet")
            listing.add_option(Option(plain_line(f"{mark} {name}   {state}"), id=name))
        listing.highlighted = hosts.choices.index(hosts.selected)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.hosts.select(event.option.id)
            self._draw()

    def on_switch_changed(self, event: Switch.Changed) -> None:
        """Trust changed: the nodes that did not answer are tried again under it at once
        (each test is a fresh SSH session under the new setting)."""
        self.hosts.accept_new_host_keys = event.value
        again = [n for n in self.hosts.names if n != LOCAL and self.state.get(n, "") != REACHABLE]
        for name in again:
            self.state[name] = "connecting…"
        if again:
            self._draw()
            self._test(again)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            return
        try:
            added = self.hosts.add(text)
        except UserError as exc:
            self.query_one("#hosts-status", Static).update(plain(str(exc)))
            return
        event.input.value = ""
        from kb.walk.state import remember_nodes

        self._remember(remember_nodes(added))
        for name in added:
            self.state[name] = "connecting…"
        self._draw()
        self._test(added)

    @work(thread=True, group="hosts")
    def _test(self, names: list[str]) -> None:
        for name in names:
            problem = self.hosts.test(name)
            self.app.call_from_thread(self._tested, name, problem)

    def _tested(self, name: str, problem: str | None) -> None:
        self.state[name] = REACHABLE if problem is None else f"✘ {_for_panel(problem)}"
        if self.is_attached:
            self._draw()

    def action_remove(self) -> None:
        option = self.query_one("#host-list", OptionList).highlighted_option
        if option is not None and option.id not in (None, LOCAL, ALL):
            self.hosts.remove(option.id)
            from kb.walk.state import forget_node

            self._remember(forget_node(option.id))
            self._draw()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)
