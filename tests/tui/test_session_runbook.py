"""The session runbook: structure parsed back with markdown-it, values filled, secrets masked."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from kb.diagnosis.engine import diagnose_text
from kb.markdown import session_runbook
from kb.rules.knowledge import KnowledgeBase
from kb.walk.session import Session, check_from_paste
from tests.tui.common import IP_ADDR_PHYSICAL_ONLY, IP_ADDR_WITH_DOCKER, LOG

TOKEN = "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"
PLACEHOLDER = re.compile(r"(?<!\$)\{[a-z_][a-z0-9_]*\}")


def tokens(md: str) -> list:
    return MarkdownIt("commonmark").parse(md)


def headings(md: str) -> list[str]:
    toks = tokens(md)
    return [toks[i + 1].content for i, t in enumerate(toks) if t.type == "heading_open"]


def fences(md: str, info: str) -> list[str]:
    return [t.content for t in tokens(md) if t.type == "fence" and t.info == info]


def finished_session(kb: KnowledgeBase) -> Session:
    lines = LOG.read_text().splitlines()
    padding = [f"step {i} loss 0.5" for i in range(300)]
    lines = [*padding, *lines[:6], f"export HF_TOKEN={TOKEN}", *lines[6:], *padding]
    s = Session(kb)
    s.set_log("pasted log", text="\n".join(lines))
    s.diagnosis = diagnose_text(kb, s.log_text or "", "pasted log")
    walk = s.start_walk()
    step = walk.next_step()
    while step is not None and step.check is None:  # the walk asks its questions first
        walk.skip(step.id)
        step = walk.next_step()
    assert step is not None and step.check is not None
    chk = step.check
    walk.record_check(check_from_paste(chk, IP_ADDR_WITH_DOCKER, 0, walk.params))
    end = walk.conclusion()
    assert end is not None and end.kind == "settled"
    s.choose_fix(end.fixes[0])
    s.verifications.append(check_from_paste(chk, IP_ADDR_PHYSICAL_ONLY, 0, walk.params))
    return s


def test_the_runbook_has_a_section_for_each_part_of_the_session(kb: KnowledgeBase):
    md = session_runbook.render(finished_session(kb))
    assert headings(md) == [
        "Troubleshooting runbook: NCCL uses a virtual or unreachable network interface",
        "Outcome",
        "Symptom",
        "Log",
        "Diagnosis",
        "Steps taken",
        "Causes",
        "Fix: Tell NCCL which network interface to use",
        "Verification",
    ]
    assert "verified: its checks pass" in md


def test_each_check_shows_its_command_where_it_ran_and_its_output(kb: KnowledgeBase):
    md = session_runbook.render(finished_session(kb))
    assert fences(md, "bash").count("ip -o addr show\n") == 2  # the step and the verification
    outputs = fences(md, "text")
    assert any("docker0" in o for o in outputs)
    assert (
        "pasted by the user, exit status 0), failed (the problem is present): physical NIC enp3s0"
        in md
    )


def test_the_fix_has_its_values_filled_and_no_placeholder_left(kb: KnowledgeBase):
    md = session_runbook.render(finished_session(kb))
    assert "export NCCL_SOCKET_IFNAME=enp3s0\n" in fences(md, "bash")
    assert not PLACEHOLDER.search(md)


def test_a_long_pasted_log_is_excerpted_around_the_evidence_and_secrets_masked(kb: KnowledgeBase):
    md = session_runbook.render(finished_session(kb))
    log = fences(md, "text")[0]
    assert "309> [2026-11-29 19:54:45]" in log  # the evidence line, marked
    assert "step 0 loss" not in log  # the padding before is left out
    assert log.startswith("…") and log.rstrip().endswith("…")
    assert TOKEN not in md and "export HF_TOKEN=****" in log


def test_the_causes_ruled_in_and_out_say_why(kb: KnowledgeBase):
    s = Session(kb)
    walk = s.start_walk("multi-node-hang")
    walk.answer("nccl-debug-shows-interface", "physical")
    md = session_runbook.render(s)
    assert "**Question:** Run again with `NCCL_DEBUG=INFO`." in md
    assert (
        "**Answer:** a physical NIC the nodes use to reach each other (eth*, en*, ib*) "
        "(rules out `nccl-wrong-interface`)" in md
    )
    ruled_out = md.split("Ruled out:\n", 1)[1]
    assert ruled_out.startswith(
        "- **NCCL uses a virtual or unreachable network interface** "
        "(`nccl-wrong-interface`), ruled out: ruled out because you answered"
    )
    # the causes nobody looked at are listed by id, not as a wall of "possible"
    assert "- **A collective timed out" in md  # 47%: still a contender, shown in full


def test_a_session_that_ends_unknown_says_so(kb: KnowledgeBase):
    s = Session(kb)
    s.start_walk("mpi-launch-fails").answer("ssh-without-password", "yes")
    md = session_runbook.render(s)
    assert "**Not in the knowledge base yet.**" in md
    assert headings(md)[:3] == [
        "Troubleshooting runbook: mpirun cannot start the ranks",
        "Outcome",
        "Symptom",
    ]


def test_causes_nobody_looked_at_are_listed_by_id_only(kb: KnowledgeBase):
    md = session_runbook.render(finished_session(kb))
    causes = md.split("## Causes", 1)[1].split("##", 1)[0]
    assert (
        "Not examined (no evidence either way, each under 5%): `nccl-timeout-hang`, "
        "`nccl-ib-missing`."
        in causes
        or "Not examined (no evidence either way, each under 5%): `nccl-ib-missing`, "
        "`nccl-timeout-hang`."
        in causes
    )
    assert causes.count("- **") == 1  # only the confirmed cause in full


def test_titles_with_markdown_characters_stay_literal(kb: KnowledgeBase):
    from dataclasses import replace

    cause = kb.causes["nccl-wrong-interface"]
    causes = {
        **kb.causes,
        cause.id: cause.model_copy(update={"title": "NCCL picks veth* or docker_* NICs"}),
    }
    s = Session(replace(kb, causes=causes))
    s.start_walk("multi-node-hang").choose(cause.id)
    html = MarkdownIt("commonmark").render(session_runbook.render(s))
    assert html.count("NCCL picks veth* or docker_* NICs") == 4
    assert html.count("<em>") == 1  # the byline only: no title turned into emphasis
