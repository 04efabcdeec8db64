"""The message catalogue: every message the stack's libraries can print, from their
sources, as data (catalogue/<library>.yaml), each classified as a cause, a symptom or
benign, with a matcher compiled from its template.

    from kb.rules.catalogue import load_catalogue
    cat = load_catalogue()
    for msg in cat.match("NCCL WARN Connect to 10.0.0.2<43211> failed : Connection refused"):
        print(msg.library, msg.class_, msg.cause or msg.symptom, msg.template)

The names are imported when first asked for (PEP 562): a warm diagnosis reads the cache
and never needs the template compiler (`templates`) or the YAML reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kb.rules.catalogue.catalogue import Catalogue, load_catalogue
    from kb.rules.catalogue.loader import CatalogueError
    from kb.rules.catalogue.model import CLASSES, LEVELS, Library, Message
    from kb.rules.catalogue.templates import MIN_LITERAL, Compiled, compile_template

_WHERE = {
    "CLASSES": "model",
    "LEVELS": "model",
    "MIN_LITERAL": "templates",
    "Catalogue": "catalogue",
    "CatalogueError": "loader",
    "Compiled": "templates",
    "Library": "model",
    "Message": "model",
    "compile_template": "templates",
    "load_catalogue": "catalogue",
}

__all__ = [
    "CLASSES",
    "LEVELS",
    "MIN_LITERAL",
    "Catalogue",
    "CatalogueError",
    "Compiled",
    "Library",
    "Message",
    "compile_template",
    "load_catalogue",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(f"{__name__}.{module}")  # not importlib: a warm run never imports it
    value = getattr(globals()[module], name)
    globals()[name] = value
    return value
