"""What every lint check shares: an issue at a file's line, and the walk over the nodes
and signatures of the knowledge base (causes and symptoms both carry signatures)."""

from __future__ import annotations

from collections.abc import Iterator

from kb.rules.knowledge import Issue, KnowledgeBase, Source
from kb.rules.schema.models import Cause, Signature, Symptom


def issue(
    src: Source, line: int, rule: str, check: str, msg: str, hint: str = "", severity: str = "error"
) -> Issue:
    return Issue(src.display, line, rule, check, msg, hint, severity)


def nodes(kb: KnowledgeBase) -> Iterator[tuple[str, Source, Cause | Symptom]]:
    """Every cause and symptom, with its source file."""
    for nid, src in kb.sources.items():
        node = kb.causes.get(nid) or kb.symptoms.get(nid)
        if node is not None:
            yield nid, src, node


def signatures(kb: KnowledgeBase) -> Iterator[tuple[str, Source, int, Signature]]:
    """Every signature of every cause and symptom, with its index in the node."""
    for nid, src, node in nodes(kb):
        for si, sig in enumerate(node.signatures):
            yield nid, src, si, sig
