"""The command palette (ctrl+p): search symptoms, causes, fixes and error strings.

Why it exists: a user who remembers an error line, or a fix's name, should find it
from any screen without walking the tree. Each hit opens the matching view.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.message import Message

from dlperf_tui.messages import ExportRunbook, HasRules, ShowCard, StartWalk

if TYPE_CHECKING:
    from kb.rules.knowledge import KnowledgeBase

MAX_ERROR_TEXT = 90


def _entries(kb: KnowledgeBase) -> Iterator[tuple[str, str, str, str]]:
    """(kind, label, help, node id) for everything searchable."""
    from kb.rules.schema.models import LogExample, SubstringMatcher, text_of

    for sid, s in kb.symptoms.items():
        yield "symptom", f"Symptom: {text_of(s.title)}", "walk the decision tree from here", sid
    for cid, c in kb.causes.items():
        yield "cause", f"Cause: {text_of(c.title)}", f"{cid}: explanation, checks, fixes", cid
        seen: set[str] = set()
        texts = [e.log if isinstance(e, LogExample) else e for e in c.examples.match]
        texts += [
            m.text for sig in c.signatures for m in sig.matchers if isinstance(m, SubstringMatcher)
        ]
        for t in texts:
            line = " ".join(t.strip().splitlines()[0].split()) if t.strip() else ""
            if line and line not in seen:
                seen.add(line)
                short = line if len(line) <= MAX_ERROR_TEXT else line[: MAX_ERROR_TEXT - 1] + "…"
                yield "cause", f"Error: {short}", f"a log line of {cid}", cid
    for fid, f in kb.fixes.items():
        yield "fix", f"Fix: {text_of(f.title)}", fid, fid


class KnowledgeCommands(Provider):
    """Symptoms, causes, fixes and error strings of the loaded knowledge base. A hit posts
    its message to the app (or runs an app action by name): no import of the app here."""

    @property
    def _kb(self) -> KnowledgeBase | None:
        return cast(HasRules, self.app).kb

    def _action(self, kind: str, node_id: str) -> Callable[[], None]:
        if kind == "symptom":
            return lambda: self._post(StartWalk(node_id))
        return lambda: self._post(ShowCard(kind, node_id))

    def _post(self, message: Message) -> None:
        self.app.post_message(message)

    def _run(self, action: str) -> Callable[[], object]:
        return lambda: self.app.run_action(action)

    def _actions(self) -> list[tuple[str, Callable[[], object], str]]:
        return [
            (
                "Export the session runbook",
                lambda: self._post(ExportRunbook()),
                "write what happened so far as Markdown (secrets masked)",
            ),
            (
                "Cluster: survey every host and compare them",
                self._run("cluster"),
                "versions, GPUs, NICs and limits side by side (ctrl+k)",
            ),
            ("Toggle the light and dark theme", self._run("toggle_theme"), "ctrl+t"),
        ]

    async def discover(self) -> Hits:
        kb = self._kb
        if kb is None:
            return
        for label, action, help_text in self._actions():
            yield DiscoveryHit(label, action, help=help_text)
        for kind, label, help_text, node_id in _entries(kb):
            if kind == "symptom":
                yield DiscoveryHit(label, self._action(kind, node_id), help=help_text)

    async def search(self, query: str) -> Hits:
        kb = self._kb
        if kb is None:
            return
        matcher = self.matcher(query)
        for label, action, help_text in self._actions():
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), action, text=label, help=help_text)
        for kind, label, help_text, node_id in _entries(kb):
            score = matcher.match(label)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(label),
                    self._action(kind, node_id),
                    text=label,
                    help=help_text,
                )
