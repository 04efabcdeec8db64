"""What screens ask of the app: messages up (the app moves between screens, copies, exports).

Why it exists: a screen that called the app's methods had to import the app, and the app
imports every screen: one import cycle through the whole TUI. A screen now posts one of
these; it bubbles to `DlperfHelpApp`, whose handler does the work. What a screen needs
to show (the rules, the session, the hosts) is handed to it when it is made.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from textual.message import Message

if TYPE_CHECKING:
    from kb.rules.knowledge import KnowledgeBase
    from kb.rules.schema.models import Fix, FixCommand


class HasRules(Protocol):
    """The one attribute the command palette reads from the app: the loaded rules."""

    kb: KnowledgeBase | None


class StartWalk(Message):
    """Walk the decision tree from a symptom, or from the session's diagnosis; `cause`
    (and `fix`) taken at once, as a card's `f` does."""

    def __init__(
        self,
        symptom: str | None = None,
        use_diagnosis: bool = False,
        cause: str | None = None,
        fix: str | None = None,
    ) -> None:
        super().__init__()
        self.symptom, self.use_diagnosis = symptom, use_diagnosis
        self.cause, self.fix = cause, fix


class ShowCard(Message):
    """Open a cause's or a fix's card (`kind` is cause or fix)."""

    def __init__(self, kind: str, node_id: str) -> None:
        super().__init__()
        self.kind, self.node_id = kind, node_id


class ShowConclusion(Message):
    """The walk has ended (or the user asked): open the conclusion."""


class Diagnose(Message):
    """Scan a pasted log or a file; the result opens the diagnosis view."""

    def __init__(self, text: str | None = None, path: Path | None = None) -> None:
        super().__init__()
        self.text, self.path = text, path


class CopyFix(Message):
    """Copy a fix's commands (all, or those given), values filled in by kb's builder."""

    def __init__(
        self, fix: Fix, params: dict[str, str], commands: list[FixCommand] | None = None
    ) -> None:
        super().__init__()
        self.fix, self.params, self.commands = fix, params, commands


class AskExport(Message):
    """`e`: ask where the session's runbook goes, then write it."""


class ExportRunbook(Message):
    """Write the session's runbook to the default place at once."""
