"""Keys that come before the knowledge base has loaded: held, then replayed in order.

Why: the first frame comes long before the rules (a second or more on a loaded machine);
what is typed at the first frame is acted on once they load, never dropped. Typing into
a text box and quitting go on at once.
"""

from __future__ import annotations

from textual import events

from dlperf_tui.app_part import AppPart

QUIT_KEYS = frozenset({"ctrl+q", "ctrl+c"})  # never held back while the rules load
EDIT_KEYS = frozenset(  # typing in a text box needs no rules: never held back
    {"enter", "backspace", "delete", "left", "right", "up", "down", "home", "end", "tab"}
)


class HeldKeys(AppPart):
    """The app's part that holds early input (`_held`) and replays it (`_replay_held`)."""

    async def on_event(self, event: events.Event) -> None:
        """Hold a key (and a paste after held keys) while the rules load."""
        if self.kb is None and self._holds(event):
            self._held.append(event)  # type: ignore[arg-type]  # a Key or a Paste
            return
        await super().on_event(event)

    def _holds(self, event: events.Event) -> bool:
        if isinstance(event, events.Paste):
            return bool(self._held)  # after held keys: in its turn
        if not isinstance(event, events.Key) or event.is_forwarded or event.key in QUIT_KEYS:
            return False
        if self._held:
            return True
        from textual.widgets import Input, TextArea

        typing = event.is_printable or event.key in EDIT_KEYS
        return not (typing and isinstance(self.focused, (Input, TextArea)))

    def _replay_held(self) -> None:
        held, self._held = self._held, []
        for event in held:
            if isinstance(event, events.Key):
                self.post_message(events.Key(event.key, event.character))
            else:
                self.post_message(events.Paste(event.text))
