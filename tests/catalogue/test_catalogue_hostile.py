"""A hostile or unlucky catalogue folder (`$DLPERF_HELP_CATALOGUE` can point anywhere) gives
a one-line error naming the file, in bounded time and memory: a FIFO never blocks (every
command hashes the catalogue for the rules' cache key), a YAML alias bomb is refused with
its file:line before it expands, and only regular files inside the folder are read."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kb.rules.catalogue import CatalogueError, load_catalogue
from kb.rules.catalogue.loader import MAX_CATALOGUE_BYTES, content_key, parse_library

ROOT = Path(__file__).resolve().parents[2]
CUDA_LINE = "OSError: libcudart.so.10.1: cannot open shared object file: No such file or directory"
BOMB = """library: laughs
source: https://example.org/laughs
versions: 1.0-1.0
messages:
- template: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
- template: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
- template: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
- template: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
- template: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
- template: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
- template: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
- template: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
- template: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def small_catalogue(tmp_path: Path) -> Path:
    """A real catalogue folder: the shipped vocabulary, classification and one library."""
    root = tmp_path / "catalogue"
    root.mkdir()
    for name in ("symptoms.yaml", "classify.yaml", "cuda.yaml"):
        shutil.copy(ROOT / "catalogue" / name, root / name)
    return root


def cli(catalogue: Path, tmp_path: Path, *args: str, memory: int | None = None):  # type: ignore[no-untyped-def]
    """`dlperf-help ARGS` in a subprocess over `catalogue`, with a private cache and a
    deadline (a hang fails the test with TimeoutExpired)."""
    env = dict(
        os.environ, DLPERF_HELP_CATALOGUE=str(catalogue), XDG_CACHE_HOME=str(tmp_path / "cache")
    )
    env.pop("DLPERF_HELP_DEBUG", None)

    def limit() -> None:
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "kb.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        preexec_fn=limit,
    )


def test_the_small_catalogue_loads(tmp_path: Path) -> None:
    cat = load_catalogue(small_catalogue(tmp_path))
    assert [lib.name for lib in cat.libraries] == ["cuda"] and len(cat.messages) > 50


@pytest.mark.parametrize("name", ["pipe.yaml", "symptoms.yaml"])
@pytest.mark.slow
def test_a_fifo_in_the_catalogue_is_a_one_line_error_and_never_blocks(
    tmp_path: Path, name: str
) -> None:
    root = small_catalogue(tmp_path)
    (root / name).unlink(missing_ok=True)
    os.mkfifo(root / name)
    content_key(root)  # hashes every file: returns at once
    proc = cli(root, tmp_path, "rules", "coverage", str(root))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{root / name}: a FIFO, not a regular file" in proc.stderr
    # the diagnosis goes on without the catalogue's signatures (lint reports the folder)
    log = tmp_path / "run.log"
    log.write_text(CUDA_LINE + "\n")
    proc = cli(root, tmp_path, "diagnose", "--json", str(log))
    assert proc.returncode in (0, 1), proc.stderr
    assert "cuda-lib-missing" in proc.stdout


def test_an_alias_bomb_is_refused_with_file_and_line_within_a_memory_cap(tmp_path: Path) -> None:
    root = small_catalogue(tmp_path)
    bomb = root / "laughs.yaml"
    bomb.write_text(BOMB)
    with pytest.raises(CatalogueError, match=r"laughs\.yaml:5: YAML anchors \(&a\) are not"):
        parse_library(bomb)
    proc = cli(root, tmp_path, "rules", "coverage", str(root), memory=3 << 30)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{bomb}:5: YAML anchors (&a) are not allowed" in proc.stderr


def test_only_plain_yaml_tags_and_files_inside_the_folder_are_read(tmp_path: Path) -> None:
    root = small_catalogue(tmp_path)
    tagged = root / "tagged.yaml"
    tagged.write_text("library: x\nmessages:\n- template: !!python/name:os.system\n")
    with pytest.raises(CatalogueError, match=r"tagged\.yaml:3: YAML tag '!!python/name:os"):
        parse_library(tagged)
    tagged.unlink()
    outside = tmp_path / "elsewhere.yaml"
    shutil.copy(root / "cuda.yaml", outside)
    (root / "link.yaml").symlink_to(outside)
    with pytest.raises(CatalogueError, match=r"a symbolic link to .*, outside the rules folder"):
        load_catalogue(root)


def test_the_size_cap_fits_the_catalogue_and_refuses_larger(tmp_path: Path) -> None:
    root = small_catalogue(tmp_path)
    assert 256 << 10 < (ROOT / "catalogue" / "nccl.yaml").stat().st_size < MAX_CATALOGUE_BYTES
    huge = root / "huge.yaml"
    with huge.open("w") as fh:
        fh.write("library: huge\nmessages:\n")
        while fh.tell() <= MAX_CATALOGUE_BYTES:
            fh.write("- template: " + "x" * 4000 + "\n")
    with pytest.raises(CatalogueError, match=r"huge\.yaml: larger than 8192 KB"):
        parse_library(huge)
