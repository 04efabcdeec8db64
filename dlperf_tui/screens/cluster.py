"""The cluster view: survey every connected host and show where the nodes differ.

Built on the cluster doctor's plain-data helpers (`kb.survey.collect_many`,
`kb.report.build_report`, `kb.report.table`); this screen only lays them out.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from dlperf_tui.plain import plain, plain_line
from dlperf_tui.screens.base import AppFooter, BaseScreen, TitleBar
from kb.runners.base import Runner
from kb.textsafe import safe_line

MAX_CELL = 40


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


class ClusterScreen(BaseScreen):
    CSS_PATH = "cluster.tcss"
    HELP = (
        "Every host of the hosts panel (`h` in the walk) is surveyed with read-only commands "
        "(versions, GPUs, NICs, limits) and compared: rows marked ! differ between nodes. "
        "`d` shows only the differences; `e` exports the runbook with this table in it."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "differences", "Only differences"),
        Binding("e", "export", "Export"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.report: Any = None
        self.only_differences = False
        self._runners: list[Runner] = []

    def compose(self) -> ComposeResult:
        yield TitleBar("cluster consistency")
        yield Static("Surveying…", id="cluster-status")
        yield DataTable(id="facts", zebra_stripes=True, cursor_type="row")
        with VerticalScroll(id="cluster-notes"):
            yield Static(id="cluster-findings")
        yield AppFooter()

    def on_mount(self) -> None:
        hosts = self.dapp.runners
        self._runners = [hosts.fresh(n) for n in hosts.names]
        names = ", ".join(r.name for r in self._runners)
        self.query_one("#cluster-status", Static).update(
            plain_line(f"Surveying {names}… (Esc cancels; add nodes with h in the walk)")
        )
        self._survey(self._runners)

    @work(thread=True, exclusive=True)
    def _survey(self, runners: list[Runner]) -> None:
        from kb.report import CauseBook, build_report, load_text
        from kb.survey import collect_many

        worker = get_current_worker()
        done: list[int] = []

        def one_done(_i: int, _doc: dict[str, Any]) -> None:
            done.append(1)
            self.app.call_from_thread(self._progress, len(done), len(runners))

        docs = collect_many(runners, on_done=one_done)
        if worker.is_cancelled:
            return
        report = build_report(load_text(json.dumps(docs), "survey"), CauseBook(self.dapp.kb))
        self.app.call_from_thread(self._show, report)

    def _progress(self, done: int, total: int) -> None:
        self.query_one("#cluster-status", Static).update(
            f"Surveyed {done} of {total} host(s)… (Esc cancels)"
        )

    def _show(self, report: Any) -> None:
        from kb.report import to_markdown

        self.report = report
        self.session.cluster_markdown = to_markdown(report)
        diffs = len(report.differences)
        self.query_one("#cluster-status", Static).update(
            f"{len(report.nodes)} node(s), {diffs} difference(s)"
            + (" (marked !; d: only those)" if diffs else "")
        )
        self._fill()
        lines: list[str] = []
        for u in report.unreachable:
            lines.append(f"✘ unreachable: {u['node']}: {u['error']}")
        for c in report.causes:
            lines.append(f"• {c['title']} ({c['id']}, {c['confidence']:.2f})")
        lines += [f"• {n['text']}" for n in report.notes]
        if report.advice is not None:
            lines += (
                [f"$ {cmd}" for cmd in report.advice.commands()]
                if report.advice.ok
                else [f"no interface works everywhere: {p}" for p in report.advice.problems]
            )
        self.query_one("#cluster-findings", Static).update(
            plain("\n".join(lines) or "No cause found in the survey.")  # nodes' errors in it
        )

    def _fill(self) -> None:
        from kb.report import table

        columns, rows = table(self.report, self.only_differences)
        grid = self.query_one("#facts", DataTable)
        grid.clear(columns=True)
        body = [  # what nodes printed, as plain text: a `str` cell would be read as markup
            [safe_line(r["fact"]), *(_cut(safe_line(c)) for c in r["cells"])] for r in rows
        ]
        columns = [safe_line(name) for name in columns]
        grid.add_column(" ", width=1)
        for i, name in enumerate(columns):
            grid.add_column(Text(name), width=max([len(name), *(len(row[i]) for row in body)]))
        for r, cells in zip(rows, body, strict=True):
            mark = Content.styled("!", "bold $error") if r["differs"] else ""
            grid.add_row(mark, *map(Text, cells))

    def action_differences(self) -> None:
        if self.report is not None:
            self.only_differences = not self.only_differences
            self._fill()

    def action_export(self) -> None:
        self.dapp.ask_export()

    def action_back(self) -> None:
        for runner in self._runners:
            runner.cancel()
        self.workers.cancel_all()
        super().action_back()
