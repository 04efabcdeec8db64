"""The JSON Schema files stay in sync with the models, and the engine stays headless."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kb.rules.schema.export import schemas
from kb.util.paths import rules_dir


def test_committed_json_schemas_match_the_models() -> None:
    for name, text in schemas().items():
        committed = (rules_dir() / "schema" / name).read_text(encoding="utf-8")
        assert committed == text, (
            f"rules/schema/{name} is stale: run python -m kb.rules.schema.export"
        )


@pytest.mark.slow
def test_importing_every_engine_module_never_imports_textual() -> None:
    code = (
        "import pkgutil, importlib, sys, kb\n"
        "for m in pkgutil.walk_packages(kb.__path__, 'kb.'):\n"
        "    importlib.import_module(m.name)\n"
        "bad = sorted(n for n in sys.modules if n == 'textual' or n.startswith(('textual.', 'dlperf_tui')))\n"
        "print(len(list(pkgutil.walk_packages(kb.__path__, 'kb.'))), bad)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    count, bad = proc.stdout.split(" ", 1)
    assert int(count) > 10
    assert bad.strip() == "[]"


def test_the_cli_parses_without_importing_heavy_libraries() -> None:
    code = (
        "import sys\n"
        "from kb.cli.main import build_parser\n"
        "build_parser()\n"
        "heavy = [m for m in ('textual', 'networkx', 'paramiko', 'pydantic', 'rapidfuzz') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_no_module_of_kb_imports_one_that_imports_it_back() -> None:
    """No file cycle in the engine (TYPE_CHECKING imports included): the layers contract in
    pyproject.toml orders the packages; this keeps each package's modules in order too."""
    import grimp

    graph = grimp.build_graph("kb")
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            chain = graph.find_shortest_chain(importer=imported, imported=module)
            if chain:
                cycles.append(" -> ".join((module, *chain)))
    assert cycles == []
