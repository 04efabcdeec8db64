"""JAX in the catalogue: the reader takes what pyextract takes and the messages JAX binds to
a name before raising or logging it (`msg = f"..."; raise RuntimeError(msg)`), within one
function; every message of jax-v0.3.0-0.11.0 is classified; and a line as JAX prints it
(with its logger's prefix, inside XLA's "CUDA backend failed to initialize") matches the
entry its source prints, with that entry's class."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kb.rules.catalogue import Catalogue
from kb.rules.catalogue.coverage import coverage
from tests.catalogue.entry_label import check_pasted_lines, label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import jax_src  # noqa: E402


def test_a_message_bound_to_a_name_then_raised_or_logged_is_read() -> None:
    # jax/_src/lib/__init__.py and jax/_src/xla_bridge.py (0.11.0)
    src = """
def check_jaxlib_version(jax_version, jaxlib_version, minimum_jaxlib_version):
  if _jaxlib_version < _minimum_jaxlib_version:
    msg = (f'jaxlib is version {jaxlib_version}, but this version '
           f'of jax requires version >= {minimum_jaxlib_version}.')
    raise RuntimeError(msg)

def backends():
  for platform, priority, fail_quietly in platform_registrations:
    try:
      backend = _init_backend(platform)
    except Exception as err:
      err_msg = f"Unable to initialize backend '{platform}': {err}"
      if fail_quietly:
        logger.info(err_msg)
      else:
        err_msg += " (you may need to uninstall the failing plugin package)"
        raise RuntimeError(err_msg)

def unrelated():
  msg = compute()
  raise RuntimeError(msg)
"""
    assert [(level, template) for level, template, _ in jax_src.read(src)] == [
        (
            "error",
            "RuntimeError: jaxlib is version {}, but this version of jax requires version >= {}.",
        ),
        ("info", "Unable to initialize backend '{}': {}"),
        ("error", "RuntimeError: Unable to initialize backend '{}': {}"),
    ]


def test_jax_is_catalogued_over_its_releases_all_classified(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["jax"].versions == "0.3.0-0.11.0"  # jax-v tags from jax.distributed's first
    [row] = [r for r in coverage(cat)["libraries"] if r["name"] == "jax"]
    assert row["messages"] > 100
    assert row["classified"] == row["messages"] == row["causes"] + row["symptoms"] + row["benign"]
    causes = {m.cause for m in cat.by_library("jax") if m.class_ == "cause"}
    assert causes == {"cuda-lib-missing", "nccl-shm-too-small", "code-version-mismatch"}


# (a line as JAX prints it, the label of its most specific entry)
LINES = [
    (  # MIT-REALM/gcbfplus#1: the cuDNN installed is older than the one jaxlib was built with
        "CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against "
        "version 8906, which is newer. The copy of cuDNN that is installed must be at least as "
        "new as the version against which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun "
        "for more info.)",
        "cause/cuda-lib-missing",
    ),
    (  # conda-forge/jax-feedstock#149
        "CUDA backend failed to initialize: Unable to use CUDA because of the following issues "
        "with CUDA components:",
        "cause/cuda-lib-missing",
    ),
    (  # jax-ml/jax#20519: XLA's wrapper is the longer template; its cause still ranks first
        "CUDA backend failed to initialize: Unable to load cuDNN. Is it installed? (Set "
        "TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        "symptom/cuda-error",
    ),
    (  # jax-ml/jax#22416
        "RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT "
        "plugin PJRT API version (0.54) and framework PJRT API version 0.51).",
        "symptom/cuda-error",
    ),
    (  # jax-ml/jax#15876
        "RuntimeError: jaxlib is version 0.3.25, but this version of jax requires version >= 0.4.7.",
        "symptom/version-mismatch",
    ),
    (  # jax-ml/jax#17638
        "RuntimeError: jaxlib version 0.4.14 is newer than and incompatible with jax version "
        "0.4.6. Please update your jax and/or jaxlib packages.",
        "symptom/version-mismatch",
    ),
    (  # sashakolpakov/dire-jax#14: a CPU-only jaxlib on a GPU machine
        "WARNING:2025-05-27 20:22:28,949:jax._src.xla_bridge:791: An NVIDIA GPU may be present "
        "on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.",
        "symptom/unsupported",
    ),
    (  # gladiaio/gladia#927 (0.3.x)
        "2022-11-30 12:50:08,211 - jax._src.lib.xla_bridge - WARNING - No GPU/TPU found, "
        "falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
        "symptom/cuda-error",
    ),
    (  # jax-ml/jax#29068
        "ERROR:2025-05-28 18:06:26,600:jax._src.xla_bridge:444: Jax plugin configuration error: "
        "Exception when calling jax_plugins.xla_cuda12.initialize()",
        "symptom/library-load-error",
    ),
]


@pytest.mark.parametrize(("line", "label"), LINES)
def test_a_jax_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, label: str
) -> None:
    got, template = label_of(cat, line, "jax")
    assert got == label, (line, template)


def test_a_pasted_cause_line_ranks_its_cause_first() -> None:
    check_pasted_lines(LINES)
