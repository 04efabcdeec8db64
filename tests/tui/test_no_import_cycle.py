"""The TUI has no file cycle: screens are handed what they show and post messages up.

Why: the app imports every screen; a screen that imported the app (for `self.dapp`, even
under TYPE_CHECKING) made the whole TUI one cycle, so no screen could be read, tested or
changed alone. grimp sees TYPE_CHECKING imports too, as for kb in tests/core.
"""

from __future__ import annotations


def test_dlperf_tui_has_no_file_cycle() -> None:
    import grimp

    graph = grimp.build_graph("dlperf_tui")
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            chain = graph.find_shortest_chain(importer=imported, imported=module)
            if chain:
                cycles.append(" -> ".join((module, *chain)))
    assert cycles == []


def test_no_screen_imports_the_app() -> None:
    import grimp

    graph = grimp.build_graph("dlperf_tui")
    importers = graph.find_modules_that_directly_import("dlperf_tui.app")
    assert importers == {"dlperf_tui.cli"}
