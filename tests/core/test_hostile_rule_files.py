"""A hostile or unlucky rules folder gives a one-line `file:line:` error, in bounded time
and memory: never a hang (a FIFO), an endless read (a device, a huge file), a file
outside the folder (a link), an exponential expansion (YAML aliases) or a traceback."""

from __future__ import annotations

import os
import resource
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kb.diagnosis.compiled import rules_key
from kb.rules.loader import load
from kb.util.rulefiles import MAX_RULE_BYTES
from kb.util.yamlsrc import MAX_DEPTH, YamlSyntaxError, load_located

HERE = Path(__file__).parent
CUDA_LINE = "OSError: libcudart.so.10.1: cannot open shared object file: No such file or directory"


def base(tmp_path: Path) -> Path:
    rules = tmp_path / "rules"
    shutil.copytree(HERE / "base_rules", rules)
    return rules


def cli(rules: Path, tmp_path: Path, *args: str, memory: int | None = None):  # type: ignore[no-untyped-def]
    """`dlperf-help ARGS` in a subprocess over `rules`, with a private cache, a deadline and
    (optionally) a cap on its address space."""
    env = dict(os.environ, DLPERF_HELP_RULES=str(rules), XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("DLPERF_HELP_DEBUG", None)

    def limit() -> None:
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "kb.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
        preexec_fn=limit,
    )


def messages(rules: Path) -> list[str]:
    return [str(i) for i in load(rules)[1]]


@pytest.mark.slow
def test_the_alias_bomb_is_refused_within_a_small_memory_cap(tmp_path: Path) -> None:
    rules = base(tmp_path)
    shutil.copy(HERE / "broken" / "yaml-alias-bomb" / "demo" / "laughs.yaml", rules / "demo")
    log = tmp_path / "run.log"
    log.write_text(CUDA_LINE + "\n")
    proc = cli(rules, tmp_path, "diagnose", str(log), memory=3 << 30)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "rules/demo/laughs.yaml:3: YAML anchors (&a) are not allowed" in proc.stderr
    assert "internal error" not in proc.stderr


@pytest.mark.parametrize(
    ("case", "where"),
    [("yaml-merge-key", "merged.yaml:7: YAML merge keys"), ("yaml-python-tag", "tagged.yaml:2")],
)
@pytest.mark.slow
def test_merge_keys_and_object_tags_are_a_file_line_error_not_an_internal_one(
    tmp_path: Path, case: str, where: str
) -> None:
    rules = base(tmp_path)
    for src in (HERE / "broken" / case / "demo").iterdir():
        shutil.copy(src, rules / "demo")
    proc = cli(rules, tmp_path, "rules", "lint", str(rules))
    assert proc.returncode == 1
    assert f"rules/demo/{where}" in proc.stdout
    assert "internal error" not in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_a_fifo_in_the_rules_folder_never_blocks_a_command(tmp_path: Path) -> None:
    rules = base(tmp_path)
    os.mkfifo(rules / "demo" / "pipe.yaml")
    assert "rules/demo/pipe.yaml:1: a FIFO, not a regular file" in messages(rules)
    rules_key(rules)  # the cache's key reads every rule file: returns at once
    log = tmp_path / "run.log"
    log.write_text(CUDA_LINE + "\n")
    proc = cli(rules, tmp_path, "diagnose", str(log))  # times out (raises) if it blocks
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "rules/demo/pipe.yaml:1: a FIFO, not a regular file" in proc.stderr


def test_a_socket_is_refused(tmp_path: Path) -> None:
    rules = base(tmp_path)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(rules / "demo" / "sock.yaml"))
        assert "rules/demo/sock.yaml:1: a socket, not a regular file" in messages(rules)
        rules_key(rules)
    finally:
        sock.close()


def test_a_link_out_of_the_folder_is_refused_and_one_inside_is_followed(tmp_path: Path) -> None:
    rules = base(tmp_path)
    (rules / "demo" / "passwd.yaml").symlink_to("/etc/passwd")
    (rules / "demo" / "zero.yaml").symlink_to("/dev/zero")
    moved = tmp_path / "demo-cause.yaml"
    shutil.move(rules / "demo" / "demo-cause.yaml", moved)
    (rules / "demo" / "demo-cause.yaml").symlink_to(moved)  # outside too
    inside = rules / "demo" / "inner"
    inside.mkdir()
    shutil.move(rules / "fixes" / "demo-fix.yaml", inside / "demo-fix.txt")
    (rules / "fixes" / "demo-fix.yaml").symlink_to(inside / "demo-fix.txt")
    got = messages(rules)
    assert any(
        m.startswith("rules/demo/passwd.yaml:1: a symbolic link to /etc/passwd") for m in got
    )
    assert any(m.startswith("rules/demo/zero.yaml:1: a symbolic link to /dev/zero") for m in got)
    assert any(m.startswith("rules/demo/demo-cause.yaml:1: a symbolic link to ") for m in got)
    assert not any("demo-fix.yaml" in m for m in got), got  # the link inside loads
    assert "demo-fix" in load(rules)[0].fixes


def test_a_huge_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    rules = base(tmp_path)
    big = rules / "demo" / "big.yaml"
    with open(big, "wb") as fh:
        fh.write(b"id: big\n")
        fh.truncate(8 << 30)  # 8 GB, sparse
    assert f"rules/demo/big.yaml:1: larger than {MAX_RULE_BYTES // 1024} KB: not a rule file" in (
        messages(rules)
    )
    rules_key(rules)


def test_deep_nesting_is_refused_with_its_line() -> None:
    text = "id: x\nnested: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n"
    with pytest.raises(YamlSyntaxError) as info:
        load_located(text)
    assert info.value.line == 2
    assert f"nested more than {MAX_DEPTH} levels" in str(info.value)


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("a: 1\nb: *x\n", 2, "aliases (*x)"),
        ("a: !!binary aGk=\n", 1, "tag '!!binary'"),
        ("a: !!set {x}\n", 1, "tag '!!set'"),
        ("a: !custom x\n", 1, "tag '!custom'"),
        ("a: 1\n---\na: 2\n", 2, "one YAML document"),
        ("a: 2026-13-45\n", 1, "not a valid !!timestamp value"),
        ("a: !!int twelve\n", 1, "not a valid !!int value"),
        ("? [a, b]\n: 1\n", 1, "a mapping key must be a plain value"),
        ("a: ok\nb: x\x00y\n", 2, "control characters are not allowed"),
    ],
)
def test_each_refused_construct_names_its_line(text: str, line: int, says: str) -> None:
    with pytest.raises(YamlSyntaxError) as info:
        load_located(text)
    assert (info.value.line, "\n" in str(info.value)) == (line, False)
    assert says in str(info.value)


def test_plain_core_types_still_load() -> None:
    loc = load_located("a: !!str 12\nb: 1.5\nc: true\nd: ~\ne: '='\nf: [x, {g: 2}]\n")
    assert loc.data == {"a": "12", "b": 1.5, "c": True, "d": None, "e": "=", "f": ["x", {"g": 2}]}
    assert loc.line_of(("f", 1, "g")) == 6
