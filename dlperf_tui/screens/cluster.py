"""The cluster view: survey every connected host and show where the nodes differ.

Built on the cluster doctor's plain-data helpers (`kb.cluster.survey.collect_many`,
`kb.cluster.report.build_report`, `kb.cluster.report.table`); this screen only lays them out.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from dlperf_tui.messages import AskExport
from dlperf_tui.plain import plain, plain_line
from dlperf_tui.screens.base import AppFooter, SessionScreen, TitleBar
from kb.diagnosis.percent import confidence_text
from kb.runners.base import Runner
from kb.util.textsafe import safe_line

if TYPE_CHECKING:
    from dlperf_tui.hosts import Hosts
    from kb.walk.session import Session

MAX_CELL = 40


def _cut(text: str, width: int = MAX_CELL) -> str:
    width = min(width, MAX_CELL)
    return text if len(text) <= width else text[: width - 1] + "…"


def short_headers(names: list[str]) -> tuple[list[str], str]:
    """Node columns without the login they all share (`root@127.0.0.1:2222` is cut at 80
    columns; `127.0.0.1:2222` is not), and that login, said once ("" when they differ)."""
    users = {n.split("@", 1)[0] for n in names if "@" in n}
    if len(users) != 1:
        return names, ""
    return [n.split("@", 1)[1] if "@" in n else n for n in names], users.pop()


class ClusterScreen(SessionScreen):
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

    def __init__(self, session: Session, hosts: Hosts) -> None:
        super().__init__(session)
        self.hosts = hosts
        self.report: Any = None
        self.only_differences = False
        self.login = ""  # the login every node column shares, left out of the headers
        self._runners: list[Runner] = []

    def compose(self) -> ComposeResult:
        yield TitleBar("cluster consistency")
        yield Static("Surveying…", id="cluster-status")
        yield DataTable(id="facts", zebra_stripes=True, cursor_type="row")
        with VerticalScroll(id="cluster-notes"):
            yield Static(id="cluster-findings")
        yield AppFooter()

    def on_mount(self) -> None:
        hosts = self.hosts  # runners of this survey's own, made by kb's factory
        self._runners = [hosts.make_runner(t) for t in hosts.targets.values()]
        names = ", ".join(r.name for r in self._runners)
        self.query_one("#cluster-status", Static).update(
            plain_line(f"Surveying {names}… (Esc cancels; add nodes with h in the walk)")
        )
        self._survey(self._runners)

    @work(thread=True, exclusive=True)
    def _survey(self, runners: list[Runner]) -> None:
        from kb.cluster.report import CauseBook, build_report, load_text
        from kb.cluster.survey import collect_many

        worker = get_current_worker()
        done: list[int] = []

        def one_done(_i: int, _doc: dict[str, Any]) -> None:
            done.append(1)
            self.app.call_from_thread(self._progress, len(done), len(runners))

        try:
            docs = collect_many(runners, on_done=one_done)
        finally:
            for runner in runners:
                with contextlib.suppress(Exception):  # a dead link is already closed
                    runner.close()
        if worker.is_cancelled:
            return
        report = build_report(load_text(json.dumps(docs), "survey"), CauseBook(self.kb))
        self.app.call_from_thread(self._show, report)

    def _progress(self, done: int, total: int) -> None:
        self.query_one("#cluster-status", Static).update(
            f"Surveyed {done} of {total} host(s)… (Esc cancels)"
        )

    def _show(self, report: Any) -> None:
        from kb.cluster.report import to_markdown

        self.report = report
        self.session.cluster_markdown = to_markdown(report)
        diffs = len(report.differences)
        self.query_one("#cluster-status", Static).update(
            f"{len(report.nodes)} node(s), {diffs} difference(s)"
            + (" (marked !; d: only those)" if diffs else "")
        )
        self._fill()
        if self.login:
            status = self.query_one("#cluster-status", Static)
            status.update(plain_line(f"{status.content} · as {self.login}"))
        lines: list[str] = []
        for u in report.unreachable:
            lines.append(f"✘ unreachable: {u['node']}: {u['error']}")
        for c in report.causes:
            lines.append(f"• {c['title']} ({c['id']}, {confidence_text(c['confidence'])})")
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
        from kb.cluster.report import table

        columns, rows = table(self.report, self.only_differences)
        grid = self.query_one("#facts", DataTable)
        grid.clear(columns=True)
        facts = [safe_line(r["fact"]) for r in rows]
        columns, self.login = short_headers([safe_line(name) for name in columns])
        # each node's column gets its share of the screen: a long value is cut ("…"), its
        # header never is (a DataTable pads each cell by one each side)
        fact_width = max([len(columns[0]), *map(len, facts)]) if columns else 0
        nodes = max(len(columns) - 1, 1)
        share = max(12, (self.size.width - 3 - (fact_width + 2) - 2 * nodes) // nodes)
        body = [  # what nodes printed, as plain text: a `str` cell would be read as markup
            [
                fact,
                *(
                    _cut(safe_line(c), max(share, len(columns[i + 1])))
                    for i, c in enumerate(r["cells"])
                ),
            ]
            for fact, r in zip(facts, rows, strict=True)
        ]
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
        self.post_message(AskExport())

    def action_back(self) -> None:
        for runner in self._runners:
            runner.cancel()
        self.workers.cancel_all()
        super().action_back()
