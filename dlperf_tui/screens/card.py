"""A cause or a fix on its own, as found from the command palette."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from dlperf_tui.messages import CopyFix, StartWalk
from dlperf_tui.screens.base import AppFooter, SessionScreen, TitleBar
from kb.markdown.blocks import cause_block, fix_block
from kb.rules.schema.models import text_of

if TYPE_CHECKING:
    from kb.walk.session import Session


class CardScreen(SessionScreen):
    CSS_PATH = "card.tcss"
    HELP = (
        "One cause (or fix) of the knowledge base: how it shows in a log, the checks that "
        "confirm it and the fixes. `w` walks the decision tree from its symptom, `f` takes its "
        "fix now, `c` copies its fix whole, ready to paste."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("w", "walk", "Walk from symptom"),
        Binding("f", "fix", "Take this fix"),
        Binding("c", "copy", "Copy fix"),
    ]

    def __init__(self, session: Session, kind: str, node_id: str) -> None:
        super().__init__(session)
        self.kind = kind
        self.node_id = node_id

    def compose(self) -> ComposeResult:
        yield TitleBar(f"{self.kind} {self.node_id}")
        with VerticalScroll(id="card-body"):
            yield Markdown(id="card-md")
        yield AppFooter()

    def _cause_id(self) -> str | None:
        if self.kind == "cause":
            return self.node_id
        return next((c.id for c in self.kb.causes.values() if self.node_id in c.fixes), None)

    def on_mount(self) -> None:
        if self.kind == "cause":
            md = cause_block(self.kb, self.node_id, examples=True)
        else:
            users = [c for c in self.kb.causes.values() if self.node_id in c.fixes]
            md = fix_block(self.kb.fixes[self.node_id], {}, heading="##") + (
                "\n\n### Fixes these causes\n\n"
                + "\n".join(f"- {text_of(c.title)} (`{c.id}`)" for c in users)
            )
        self.query_one("#card-md", Markdown).update(md)
        self.query_one("#card-body").focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("walk", "fix"):
            return self._cause_id() is not None
        return super().check_action(action, parameters)

    def action_walk(self) -> None:
        cid = self._cause_id()
        if cid is not None:
            self.post_message(StartWalk(self.kb.causes[cid].symptoms[0]))

    def action_fix(self) -> None:
        cid = self._cause_id()
        if cid is None:
            return
        fix = self.node_id if self.kind == "fix" else None
        self.post_message(StartWalk(self.kb.causes[cid].symptoms[0], cause=cid, fix=fix))

    def action_copy(self) -> None:
        """`c`: the fix (the cause's first with commands), whole; its values are asked for."""
        ids = [self.node_id] if self.kind == "fix" else self.kb.causes[self.node_id].fixes
        fix = next(
            (self.kb.fixes[f] for f in ids if f in self.kb.fixes and self.kb.fixes[f].commands),
            None,
        )
        if fix is None:
            self.notify("No command to copy; read the steps.")
            return
        self.post_message(CopyFix(fix, {}))
