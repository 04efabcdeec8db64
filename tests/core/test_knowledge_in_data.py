"""Knowledge lives in rules/, never as rule ids in Python (issue 12).

The engine names evidence by *finding names* (rules/vocabulary/findings.yaml); the rules
that list a name under `named_by` are what it is evidence for. These tests read the
Python source (its syntax tree, not its text) and prove that:
- no string constant in kb/ or dlperf_tui/ is the id of a cause, symptom or fix;
- every finding name the engine emits is defined in the vocabulary and named by a rule,
  and every finding of the vocabulary is emitted by the module it says;
- a misspelt finding name is caught (the checker is run on a module that has one).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from kb.rules import loader

ROOT = Path(__file__).resolve().parents[2]
CODE = [ROOT / "kb", ROOT / "dlperf_tui"]
LOOKUPS = {"causes_named_by", "symptoms_named_by", "rules_named_by"}


@pytest.fixture(scope="module")
def kb():  # type: ignore[no-untyped-def]
    kb, issues = loader.load(ROOT / "rules")
    assert not [i for i in issues if i.severity == "error"], issues[:3]
    return kb


def _python_files() -> list[Path]:
    return sorted(p for root in CODE for p in root.rglob("*.py"))


def _constants(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


@pytest.mark.slow
def test_no_rule_id_is_written_in_python(kb) -> None:  # type: ignore[no-untyped-def]
    ids = set(kb.causes) | set(kb.symptoms) | set(kb.fixes)
    assert len(ids) > 100
    hits = [
        f"{path.relative_to(ROOT)}:{line}: {value}"
        for path in _python_files()
        for line, value in _constants(ast.parse(path.read_text(encoding="utf-8")))
        if value in ids
    ]
    assert hits == [], "rule ids in Python (name a finding instead):\n" + "\n".join(hits)


# ---------------------------------------------------------------- finding names in Python


def _module_strings(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level names bound to a string, or to a table whose strings are all values."""
    out: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            values = {v for _, v in _constants(node.value)}
            for t in targets:
                if isinstance(t, ast.Name) and values:
                    out[t.id] = values
    return out


def _values(node: ast.expr, names: dict[str, set[str]]) -> set[str] | None:
    """The strings an argument can be, or None when the source does not say."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.IfExp):
        a, b = _values(node.body, names), _values(node.orelse, names)
        return None if a is None or b is None else a | b
    return None


ANALYZER_FINDING = "kb.diagnosis.analyzers.base"  # Finding(name, ...) calls


@functools.cache
def _enums() -> dict[str, dict[str, str]]:
    """module -> {member: value} of each `class Finding(str, Enum)` of finding names."""
    out: dict[str, dict[str, str]] = {}
    for path in _python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if not (isinstance(node, ast.ClassDef) and node.name == "Finding"):
                continue
            if not any(isinstance(b, ast.Name) and b.id == "Enum" for b in node.bases):
                continue
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            out[module] = {
                t.id: str(st.value.value)
                for st in node.body
                if isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant)
                for t in st.targets
                if isinstance(t, ast.Name)
            }
    return out


def emitted_names(
    path: Path, enums: dict[str, dict[str, str]] | None = None
) -> tuple[dict[str, int], list[str]]:
    """(finding name -> line) that the module emits or defines, and the places whose name
    the source does not show (each a defect: a finding name is a literal, a module
    constant or a member of a Finding enum)."""
    enums = _enums() if enums is None else enums
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _module_strings(tree)
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and any(a.name == "Finding" for a in node.names)
    }
    members = {k: v for m in imported if m in enums for k, v in enums[m].items()}
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    found: dict[str, int] = {}
    unknown: list[str] = []
    for value in enums.get(module, {}).values():  # the enum's own definitions
        found.setdefault(value, 1)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "Finding"
            and node.attr in members
        ):
            found.setdefault(members[node.attr], node.lineno)
            continue
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        fname = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        emits = (
            (fname == "Finding" and isinstance(func, ast.Name) and ANALYZER_FINDING in imported)
            or fname in LOOKUPS
            or (fname == "append" and getattr(func.value, "attr", "") == "shows")  # type: ignore[attr-defined]
        )
        if not emits:
            continue
        arg = node.args[0] if node.args else next((k.value for k in node.keywords), None)
        values = _values(arg, names) if arg is not None else None
        if fname in LOOKUPS and values is None:
            continue  # a lookup of a name its caller gives (checked where it is written)
        if values is None:
            unknown.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            continue
        for v in values:
            found.setdefault(v, node.lineno)
    return found, unknown


def _all_emitted() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in _python_files():
        names, _ = emitted_names(path)
        for name, line in names.items():
            out.setdefault(name, []).append(f"{path.relative_to(ROOT)}:{line}")
    return out


@pytest.mark.slow
def test_the_analyzers_emit_finding_names_the_source_shows() -> None:
    unknown = [u for p in _python_files() for u in emitted_names(p)[1]]
    assert unknown == [], "finding names not written as a literal or module constant"
    analyzers = {
        name
        for p in (ROOT / "kb" / "diagnosis" / "analyzers").glob("*.py")
        for name in emitted_names(p)[0]
    }
    assert len(analyzers) >= 20  # every analyzer finding, none left as a cause id


@pytest.mark.slow
def test_every_finding_name_in_python_is_defined_and_names_a_rule(kb) -> None:  # type: ignore[no-untyped-def]
    named = {w for c in kb.causes.values() for w in c.named_by}
    named |= {w for s in kb.symptoms.values() for w in s.named_by}
    emitted = _all_emitted()
    undefined = {n: at for n, at in emitted.items() if n not in kb.vocabulary.findings}
    assert undefined == {}, "finding names missing from rules/vocabulary/"
    unnamed = sorted(n for n in emitted if n not in named)
    assert unnamed == [], "findings no rule lists under named_by (they would only be notes)"


@pytest.mark.slow
def test_every_finding_of_the_vocabulary_is_emitted_where_it_says(kb) -> None:  # type: ignore[no-untyped-def]
    for name, word in kb.vocabulary.findings.items():
        for module in word.emitted_by:
            spec = importlib.util.find_spec(module)
            assert spec is not None and spec.origin, f"{name}: no module {module}"
            emitted, _ = emitted_names(Path(spec.origin))
            assert name in emitted, f"{module} does not emit the finding {name}"


def test_a_misspelt_finding_name_fails(tmp_path: Path, kb) -> None:  # type: ignore[no-untyped-def]
    module = tmp_path / "kb" / "diagnosis" / "analyzers" / "typo.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        "from kb.diagnosis.analyzers.base import Finding\n"
        "NAME = 'gloo-loopback-peer'\n"
        "def f(kind):\n"
        "    a = Finding('gloo-loopback-pier', 'x', 0.5, 'text')\n"
        "    b = Finding(NAME, 'y', 0.5, 'text')\n"
        "    c = Finding(kind, 'z', 0.5, 'text')\n"
        "    return a, b, c\n"
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        names, unknown = emitted_names(module, {})
    finally:
        ROOT = saved
    assert names == {"gloo-loopback-pier": 4, "gloo-loopback-peer": 5}
    assert unknown == ["kb/diagnosis/analyzers/typo.py:6"]
    assert "gloo-loopback-pier" not in kb.vocabulary.findings  # what the test above refuses
    assert "gloo-loopback-peer" in kb.vocabulary.findings


def test_an_analyzer_finding_reaches_its_cause_through_named_by(tmp_path: Path) -> None:
    """The link is the rule's `named_by`: take the name out and the finding is a note."""
    import shutil

    from kb.authoring.checked import load_rules
    from kb.diagnosis.engine import diagnose_text

    fixture = ROOT / "tests" / "diagnosis" / "rules"  # no signature of its own matches
    loop = "Gloo connectFullMesh failed: Connection refused, remote=[127.0.0.1]:40011 (size=16)"
    first = diagnose_text(load_rules(fixture), loop).causes
    assert [c.id for c in first] == ["nccl-wrong-interface"]
    assert "Gloo ranks in a mesh of 16 ranks" in first[0].explanation
    rules = tmp_path / "rules"
    shutil.copytree(fixture, rules)
    cause = rules / "nccl" / "nccl-wrong-interface.yaml"
    text = cause.read_text(encoding="utf-8")
    assert "named_by: [gloo-loopback-peer, " in text
    cause.write_text(text.replace("named_by: [gloo-loopback-peer, ", "named_by: ["))
    diag = diagnose_text(load_rules(rules), loop)
    assert diag.causes == []
    assert [n.id for n in diag.notes] == ["gloo-loopback-peer"]
