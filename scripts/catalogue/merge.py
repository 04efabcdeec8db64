"""Merging what each release prints into one entry per message, with the first and last
release that prints it and its file at the newest of them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Seen:
    template: str
    level: str
    first: str
    last: str
    file: str
    extra: dict[str, str] = field(default_factory=dict)


class Merger:
    """Feed it releases oldest first; `entries()` gives one `Seen` per (level, template)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], Seen] = {}

    def add(self, version: str, level: str, template: str, file: str, **extra: str) -> None:
        key = (level, template)
        got = self._seen.get(key)
        if got is None:
            self._seen[key] = Seen(template, level, version, version, file, dict(extra))
        else:
            got.last, got.file = version, file
            got.extra.update(extra)

    def entries(self) -> list[Seen]:
        return sorted(self._seen.values(), key=lambda s: (s.file, s.level, s.template))


def span(first: str, last: str) -> str:
    return first if first == last else f"{first}-{last}"
