"""Text from a log, a path, a node or a user as the assistant shows it: plain, never markup.

Why it exists: Textual reads a `str` given to `Static`, `Label`, `notify` or an option as
markup, so `[/b]` in a log line raised `MarkupError` (the assistant died) and
`[@click=app.quit]` became a live action; and it passes escape sequences to the terminal
as they are. Screens wrap such text in `plain` (a `Content`, which is never parsed) after
`kb.util.textsafe` has removed or shown every terminal control in it.
"""

from __future__ import annotations

from textual.content import Content

from kb.util.textsafe import safe, safe_line


def plain(text: str) -> Content:
    """`text` (lines kept) as literal content, terminal controls removed or shown."""
    return Content(safe(text))


def plain_line(text: str) -> Content:
    """`text` on one line (a title, a status, a cell), as literal content."""
    return Content(safe_line(text))
