"""The message catalogue: every message the stack's libraries can print, from their
sources, as data (catalogue/<library>.yaml), each classified as a cause, a symptom or
benign, with a matcher compiled from its template.

    from kb.rules.catalogue import load_catalogue
    cat = load_catalogue()
    for msg in cat.match("NCCL WARN Connect to 10.0.0.2<43211> failed : Connection refused"):
        print(msg.library, msg.class_, msg.cause or msg.symptom, msg.template)
"""

from __future__ import annotations

from kb.rules.catalogue.catalogue import Catalogue, load_catalogue
from kb.rules.catalogue.loader import CatalogueError
from kb.rules.catalogue.model import CLASSES, LEVELS, Library, Message
from kb.rules.catalogue.templates import MIN_LITERAL, Compiled, compile_template

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
