"""The whole-knowledge-base runbook is well-formed Markdown a team can print.

Parsed back with markdown-it-py: one heading per cause, every command fenced, no
unresolved placeholders, no raw HTML, and every table-of-contents link resolves.
"""

from __future__ import annotations

from functools import cache

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from kb.authoring.checked import load_kb
from kb.markdown import runbook
from kb.rules.placeholders import show_command


@cache
def whole() -> tuple[str, list[Token]]:
    kb = load_kb()
    text = runbook.render(kb)
    return text, MarkdownIt("commonmark").parse(text)


def _headings(tokens: list[Token]) -> list[tuple[int, str]]:
    out = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            out.append((int(tok.tag[1]), tokens[i + 1].content))
    return out


@pytest.mark.slow
def test_every_cause_has_exactly_one_heading() -> None:
    kb = load_kb()
    _, tokens = whole()
    cause_headings = [t for level, t in _headings(tokens) if t.startswith("Cause: ")]
    for cid in kb.causes:
        assert sum(h.endswith(f"({cid})") for h in cause_headings) == 1, cid
    assert len(cause_headings) == len(kb.causes)


@pytest.mark.slow
def test_every_check_and_fix_command_is_fenced() -> None:
    kb = load_kb()
    _, tokens = whole()
    fenced = "\n".join(t.content for t in tokens if t.type == "fence")
    for cid in kb.causes:
        for chk in kb.checks_of(cid):
            assert show_command(chk.run, {}).strip() in fenced, chk.id
    for fix in kb.fixes.values():
        for cmd in fix.commands:
            assert show_command(cmd.run, {}).strip() in fenced, fix.id


@pytest.mark.slow
def test_no_placeholder_is_left_unresolved_and_no_raw_html_leaks() -> None:
    text, tokens = whole()
    import re

    assert not re.search(r"(?<![\$\{])\{[a-z_][a-z0-9_]*\}(?!\})", text)
    inline_html = [
        c.content for t in tokens if t.children for c in t.children if c.type == "html_inline"
    ]
    assert inline_html == []
    assert not [t for t in tokens if t.type == "html_block"]


def test_every_contents_link_points_at_a_heading() -> None:
    _, tokens = whole()
    anchors = {runbook.slug(title) for _, title in _headings(tokens)}
    links = []
    for t in tokens:
        for c in t.children or []:
            href = str(c.attrs.get("href", ""))
            if c.type == "link_open" and href.startswith("#"):
                links.append(href[1:])
    assert links
    assert set(links) <= anchors


@pytest.mark.slow
def test_a_runbook_of_chosen_causes_holds_only_those() -> None:
    kb = load_kb()
    text = runbook.render(kb, ["nccl-wrong-interface", "cuda-lib-missing"])
    heads = [t for _, t in _headings(MarkdownIt().parse(text)) if t.startswith("Cause: ")]
    assert len(heads) == 2
    assert any("(nccl-wrong-interface)" in h for h in heads)


@pytest.mark.slow
def test_the_cli_writes_the_runbook_to_a_file(tmp_path) -> None:
    import subprocess
    import sys

    out = tmp_path / "runbook.md"
    proc = subprocess.run(
        [sys.executable, "-m", "kb.cli.main", "runbook", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8") == whole()[0]
