"""The knowledge base as a networkx graph: symptom -> cause -> fix, checks and questions attached.

Nodes are `(kind, id)` pairs so ids of different kinds can never collide in the graph.
networkx is imported here only, and only when a command needs the graph (it costs
about 0.2 s to import), so `diagnose` on a small log stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kb.rules.knowledge import KnowledgeBase

if TYPE_CHECKING:
    import networkx as nx


def build_graph(kb: KnowledgeBase) -> nx.DiGraph:
    import networkx as nx

    g = nx.DiGraph()
    for sid, symptom in kb.symptoms.items():
        g.add_node(("symptom", sid), model=symptom)
        for q in symptom.questions:
            g.add_node(("question", f"{sid}/{q.id}"), model=q)
            g.add_edge(("symptom", sid), ("question", f"{sid}/{q.id}"), rel="asks")
            for ans in q.answers:
                for ref in ans.confirms:
                    g.add_edge(
                        ("question", f"{sid}/{q.id}"), ("cause", ref), rel="confirms", answer=ans.id
                    )
                for ref in ans.rules_out:
                    g.add_edge(
                        ("question", f"{sid}/{q.id}"),
                        ("cause", ref),
                        rel="rules_out",
                        answer=ans.id,
                    )
        for ref in symptom.failure.causes if symptom.failure else ():
            if ref in kb.causes:  # a failure symptom names its likely causes
                g.add_edge(("symptom", sid), ("cause", ref), rel="explained_by")
    for fid, fix in kb.fixes.items():
        g.add_node(("fix", fid), model=fix)
    checks = kb.checks
    for cid, cause in kb.causes.items():
        g.add_node(("cause", cid), model=cause)
        for sid in cause.symptoms:
            if sid in kb.symptoms:
                g.add_edge(("symptom", sid), ("cause", cid), rel="explained_by")
        for fid in cause.fixes:
            if fid in kb.fixes:
                g.add_edge(("cause", cid), ("fix", fid), rel="fixed_by")
        for chk in kb.checks_of(cid):
            g.add_node(("check", chk.id), model=chk, owner=checks.get(chk.id, (cid,))[0])
            g.add_edge(("cause", cid), ("check", chk.id), rel="verified_by")
            for name, outcome in (("problem", chk.on_problem), ("ok", chk.on_ok)):
                if outcome is None:
                    continue
                for ref in outcome.confirms:
                    g.add_edge(("check", chk.id), ("cause", ref), rel="confirms", outcome=name)
                for ref in outcome.rules_out:
                    g.add_edge(("check", chk.id), ("cause", ref), rel="rules_out", outcome=name)
    return g
