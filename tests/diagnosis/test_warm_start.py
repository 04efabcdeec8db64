"""A warm `diagnose` starts fast (issue 13): what it reads back from its own cache (the
compiled rules, the plan's signature part, the key from the files' fingerprint) is used
only while it is current and ours, and a small log pulls in none of the heavy modules."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kb.authoring.checked import load_rules
from kb.cli.main import SUBCOMMANDS, build_parser, command_of
from kb.diagnosis import compiled, plan
from kb.diagnosis.compiled import CompiledRules, load_cached, rules_key
from kb.util import cachepickle

from .conftest import FIXTURE_RULES

CUDA_LINE = "OSError: libcudart.so.10.1: cannot open shared object file: No such file or directory"
RULE = Path("cuda") / "cuda-lib-missing.yaml"
HEAVY = ("pydantic", "yaml", "networkx", "rapidfuzz", "paramiko", "textual")
# stdlib modules a small plain log never needs: shutil (and its bz2, lzma) came with
# argparse's help formatter, unicodedata with the UTF-16/32 check
UNNEEDED = ("shutil", "bz2", "lzma", "unicodedata")

PROBE = """
import contextlib, io, json, sys
from kb.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["--rules", sys.argv[1], "diagnose", "--json", sys.argv[2]])
from kb.util.lazyre import LazyPattern
from kb.util.secrets import _RULES
lazy = {f"{name}.{k}": v for name, m in list(sys.modules.items()) if name.startswith("kb.")
        for k, v in vars(m).items() if isinstance(v, LazyPattern)}
lazy.update({f"kb.util.secrets._RULES[{i}]": rx for i, (_, rx) in enumerate(_RULES)})
print(json.dumps({"code": code, "causes": [c["id"] for c in json.loads(out.getvalue())["causes"]],
                  "modules": sorted(sys.modules),
                  "compiled": sorted(k for k, v in lazy.items() if "compiled" in vars(v)),
                  "lazy": sorted(lazy)}))
"""


@pytest.fixture
def rules_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture rules in a folder of their own, with a cache of their own (and no
    catalogue: parsing it anew for each test would cost seconds)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "no-catalogue").mkdir()
    monkeypatch.setenv("DLPERF_HELP_CATALOGUE", str(tmp_path / "no-catalogue"))
    root = tmp_path / "rules"
    shutil.copytree(FIXTURE_RULES, root)
    return root


def _probe(root: Path, log: Path, cache: Path, catalogue: Path) -> dict[str, Any]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), DLPERF_HELP_CATALOGUE=str(catalogue))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(root), str(log)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def test_a_warm_small_log_imports_no_heavy_module(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(CUDA_LINE + "\n")
    cache, catalogue = tmp_path / "cache", tmp_path / "no-catalogue"
    catalogue.mkdir()
    first = _probe(FIXTURE_RULES, log, cache, catalogue)  # compiles: pydantic and yaml
    assert first["causes"] == ["cuda-lib-missing"]
    assert {"pydantic", "yaml"} <= {m.split(".")[0] for m in first["modules"]}
    _probe(FIXTURE_RULES, log, cache, catalogue)  # in case an engine file was just edited
    warm = _probe(FIXTURE_RULES, log, cache, catalogue)
    assert warm["causes"] == first["causes"] and warm["code"] == first["code"] == 1
    top = {m.split(".")[0] for m in warm["modules"]}
    assert not top & set(HEAVY), sorted(top & set(HEAVY))
    assert not top & set(UNNEEDED), sorted(top & set(UNNEEDED))
    # the readers of what a small log does not hold are not even imported: a RAS report's
    # grammar, Flight Recorder dumps, NCCL INFO lines and their hosts, a topology matrix
    readers = ("hangs.ras", "hangs.flightrec", "analyzers.nccl_lines", "analyzers.nccl_hosts")
    unread = {f"kb.diagnosis.{name}" for name in readers} | {"kb.sysinfo.topology"}
    assert not unread & set(warm["modules"]), sorted(unread & set(warm["modules"]))
    # regexes a small log never needs are never compiled: the secret rules for commands
    # (sshpass, mysql, curl, docker, aws) and webhooks, NCCL's error codes
    assert len(warm["lazy"]) >= 40
    never = [f"kb.util.secrets._RULES[{i}]" for i in (2, 3, 4, 5, 6, 8, 9, 10)]
    never += ["kb.diagnosis.analyzers.nccl_errors._ANY", "kb.diagnosis.unwrap._ESCAPES"]
    assert set(never) <= set(warm["lazy"]) and not set(never) & set(warm["compiled"])
    assert "kb.diagnosis.lines._EXCEPTION" in warm["compiled"]  # what a cause's line needs
    assert not [m for m in warm["modules"] if m.startswith(("kb.runners", "kb.rules.catalogue"))]
    others = [f"kb.cli.{name}" for name in SUBCOMMANDS if name != "diagnose"]
    assert "kb.cli.diagnose" in warm["modules"]
    assert not [m for m in others if m in warm["modules"]]


def test_the_cached_rules_equal_the_compiled_ones_and_share_equal_matchers(
    rules_copy: Path,
) -> None:
    first = load_rules(rules_copy)
    warm = load_cached(rules_copy)
    assert warm is not None and warm == first
    assert warm == CompiledRules.from_json(first.to_json())  # what the JSON cache gave back
    unless = [s.unless for c in warm.causes.values() for s in c.signatures if s.unless]
    assert unless  # the fixture's rules have vetoes, or the check below checks nothing
    assert all(isinstance(u, tuple) for u in unless)


def test_equal_matchers_are_one_object_in_the_cache() -> None:
    from kb.diagnosis.specs import MatcherSpec, SignatureSpec

    a, b = MatcherSpec("regex", "x+"), MatcherSpec("regex", "x+")
    f, g = MatcherSpec("fuzzy", text="t", threshold=85), MatcherSpec("fuzzy", text="t")
    sigs = [SignatureSpec("s1", (a, f), unless=(a,)), SignatureSpec("s2", (b, g), unless=(b,))]
    cause = compiled.CauseSpec("c", "t", 0.1, [], [], sigs)
    shared = compiled._shared(CompiledRules("k", {"c": cause}, {}, {}))
    s1, s2 = shared.causes["c"].signatures
    assert s1 == sigs[0] and s2 == sigs[1]
    assert s1.matchers[0] is s2.matchers[0] and s1.unless is s2.unless
    assert s1.matchers[1] is not s2.matchers[1]  # 85 and 85.0: equal, not the same


def test_a_damaged_or_foreign_cache_file_is_ignored(rules_copy: Path, tmp_path: Path) -> None:
    load_rules(rules_copy)
    target = compiled.cache_path(rules_key(rules_copy))
    assert target.exists()
    target.write_bytes(b"\x80\x05 not a pickle")
    assert load_cached(rules_copy) is None
    assert load_rules(rules_copy).causes  # rebuilt
    assert load_cached(rules_copy) is not None

    planted = tmp_path / "planted"

    class Boom:  # a pickle that would run a command if it were trusted
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, (f"touch {planted}",))

    target.write_bytes(pickle.dumps(Boom()))
    os.chmod(target, 0o600)
    assert load_cached(rules_copy) is None
    assert not planted.exists()

    load_rules(rules_copy)  # a good cache again, then writable by others: not ours
    assert load_cached(rules_copy) is not None
    os.chmod(target, 0o666)
    assert load_cached(rules_copy) is None


def test_a_cache_of_other_rules_under_this_key_is_not_served(rules_copy: Path) -> None:
    first = load_rules(rules_copy)
    other = CompiledRules("0" * 32, {}, {}, {})
    cachepickle.save(compiled.cache_path(first.key), other)  # its own key says it is not it
    assert load_cached(rules_copy) is None


def test_the_fingerprint_shortcut_holds_until_a_file_changes(
    rules_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compiled, "RACY_NS", -(10**12))  # the files were copied just now
    load_rules(rules_copy)
    assert load_cached(rules_copy) is not None  # hashed, and the fingerprint recorded
    real_key = compiled.rules_key

    def no_hashing(root: Path) -> str:
        raise AssertionError("the files were hashed although nothing changed")

    monkeypatch.setattr(compiled, "rules_key", no_hashing)
    assert load_cached(rules_copy) is not None
    # the same size, the old modification time: the change time still moves
    path = rules_copy / RULE
    st = path.stat()
    path.write_text(path.read_text().replace("prior: 0.2", "prior: 0.3"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    with pytest.raises(AssertionError, match="hashed"):
        load_cached(rules_copy)
    monkeypatch.setattr(compiled, "rules_key", real_key)
    assert load_cached(rules_copy) is None  # those rules were never compiled
    assert load_rules(rules_copy).causes["cuda-lib-missing"].prior == 0.3
    (rules_copy / "cuda" / "new-rule.yaml").write_text("")  # a file added: hashed again
    monkeypatch.setattr(compiled, "rules_key", no_hashing)
    with pytest.raises(AssertionError, match="hashed"):
        load_cached(rules_copy)


def test_a_racy_fingerprint_is_never_recorded(rules_copy: Path) -> None:
    load_rules(rules_copy)
    assert load_cached(rules_copy) is not None
    fingerprint, racy = compiled._fingerprint(rules_copy)
    assert racy  # copied a moment ago
    assert not compiled._fingerprint_path(fingerprint).exists()


def test_the_plan_part_is_read_back_and_follows_the_rules(
    rules_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = plan.Plan(load_rules(rules_copy), False)
    warm_rules = load_cached(rules_copy)
    assert warm_rules is not None

    def no_building(specs: Any) -> Any:
        raise AssertionError("the signature part was built although it was cached")

    monkeypatch.setattr(plan, "signature_part", no_building)
    warm = plan.Plan(warm_rules, False)
    assert warm.patterns == built.patterns
    assert warm.consumers == built.consumers
    assert warm.pids_of == built.pids_of
    assert warm.vetoes.patterns == built.vetoes.patterns
    assert warm.vetoes.by_sig == built.vetoes.by_sig
    assert warm._approximate == built._approximate
    # a rule changed: other rules, another key, the part built again with the new regex
    path = rules_copy / RULE
    path.write_text(path.read_text().replace("lib(?:cudart|", "lib(?:cudart|cufft|"))
    with pytest.raises(AssertionError, match="built"):
        plan.Plan(load_rules(rules_copy), False)
    monkeypatch.undo()
    fresh = plan.Plan(load_rules(rules_copy), False)
    assert any("cufft" in p.regex for p in fresh.patterns)
    assert not any("cufft" in p.regex for p in built.patterns)


def test_a_plan_part_for_other_signatures_is_rebuilt(rules_copy: Path) -> None:
    rules = load_rules(rules_copy)
    built = plan.Plan(rules, False)
    key = plan.part_key(rules.key)
    part = plan.signature_part(rules.signatures()[1:])  # as if a signature were gone
    ids = [(rid, s.id, len(s.matchers)) for rid, s in rules.signatures()[1:]]
    cachepickle.save(plan.part_path(key), (plan.PART_FORMAT, key, ids, part))
    assert plan.Plan(rules, False).patterns == built.patterns
    plan.part_path(key).write_bytes(b"garbage")
    assert plan.Plan(rules, False).patterns == built.patterns


def test_rules_compiled_in_memory_never_touch_the_plan_cache(
    rules_copy: Path, tmp_path: Path
) -> None:
    rules = load_rules(rules_copy)
    in_memory = CompiledRules("", rules.causes, rules.symptoms, rules.fixes, rules.vocabulary)
    before = set((tmp_path / "cache").rglob("plan-*"))
    plan.Plan(in_memory, False)
    assert set((tmp_path / "cache").rglob("plan-*")) == before


def test_an_allow_list_refuses_every_other_class(tmp_path: Path) -> None:
    path = tmp_path / "x.pickle"
    cachepickle.save(path, {"a": (1, 2.0, "x", None, True)})
    assert cachepickle.load(path, {}) == {"a": (1, 2.0, "x", None, True)}
    cachepickle.save(path, Path("/etc"))  # a class pickle knows, but not on the list
    assert cachepickle.load(path, {}) is None
    assert cachepickle.load(path, cachepickle.allow(type(Path("/etc")))) == Path("/etc")
    assert cachepickle.load(tmp_path / "missing", {}) is None
    (tmp_path / "folder.pickle").mkdir()
    assert cachepickle.load(tmp_path / "folder.pickle", {}) is None


@pytest.mark.parametrize(
    "args",
    [
        ["diagnose", "--json", "a.log", "b.log"],
        ["--rules", "R", "diagnose", "--top", "2", "x"],
        ["--rules=R", "diagnose", "--rules", "S", "x"],
        ["diagnose", "--explain", "-"],
        ["rules", "lint"],
        ["walk"],
    ],
)
def test_the_one_command_parser_parses_as_the_whole_one(args: list[str]) -> None:
    command = command_of(args)
    assert command == next(a for a in args if a in ("diagnose", "rules", "walk"))
    lazy, full = build_parser(command).parse_args(args), build_parser().parse_args(args)
    assert vars(lazy) == vars(full)


@pytest.mark.parametrize(
    "args",
    [[], ["--help"], ["--version"], ["-h", "diagnose"], ["--rules"], ["bogus"], ["--rul", "R"]],
)
def test_anything_but_a_command_first_gets_the_whole_parser(args: list[str]) -> None:
    assert command_of(args) is None
