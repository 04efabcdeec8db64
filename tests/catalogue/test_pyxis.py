"""Pyxis (NVIDIA/pyxis, Slurm's SPANK plugin that runs a step in an enroot container) in the
catalogue: the reader takes its `slurm_error`/`slurm_info`/`slurm_spank_log` formats at
every release tag, and a `pyxis: ...` line as srun or slurmstepd prints it matches the
entry its source prints, with that entry's class; none names a cause."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kb.authoring.checked import load_rules
from kb.diagnosis.engine import diagnose_text
from kb.rules.catalogue import Catalogue
from kb.rules.catalogue.coverage import coverage
from tests.catalogue.entry_label import label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import slurm_src  # noqa: E402


def test_the_plugin_log_calls_are_read_and_a_bare_replay_of_enroot_log_is_not() -> None:
    # shapes of pyxis_slurmstepd.c and common.c (0.24.0)
    src = r"""
static void f(void) {
    slurm_spank_log("pyxis: importing docker image: %s", context.args->image);
    slurm_error("pyxis: child %d failed with error code: %d", pid, WEXITSTATUS(status));
    slurm_info("pyxis: version v"PYXIS_VERSION);
    slurm_spank_log("%s", line);
    slurm_verbose("pyxis: only with -v");
}
"""
    assert slurm_src.read_pyxis(src) == [
        ("info", "pyxis: importing docker image: %s", {}),
        ("error", "pyxis: child %d failed with error code: %d", {}),
        ("info", "pyxis: version v%s", {}),
    ]


def test_pyxis_is_catalogued_over_its_releases_all_classified(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["pyxis"].versions == "0.1.0-0.24.0"
    [row] = [r for r in coverage(cat)["libraries"] if r["name"] == "pyxis"]
    assert row["messages"] > 150
    assert row["classified"] == row["messages"] == row["symptoms"] + row["benign"]
    assert row["causes"] == 0


# (a line as pyxis prints it through Slurm, the label of its most specific entry)
LINES = [
    (
        "slurmstepd: error: pyxis: child 48213 failed with error code: 1",
        "symptom/launch-failure",
    ),
    (
        "slurmstepd: error: pyxis: failed to import docker image: nvcr.io#nvidia/pytorch:24.01-py3",
        "symptom/launch-failure",
    ),
    (
        "slurmstepd: error: pyxis: container start failed with error code: 1",
        "symptom/launch-failure",
    ),
    ("slurmstepd: error: pyxis: container exited too soon", "symptom/launch-failure"),
    (
        "srun: error: pyxis: --container-mounts: invalid format: /data:/data:rx",
        "symptom/invalid-config",
    ),
    (
        'slurmstepd: error: pyxis: error: a container with name "train" does not exist, and '
        "--container-image is not set",
        "symptom/invalid-config",
    ),
    (
        "slurmstepd: error: pyxis: couldn't join user namespace: Operation not permitted",
        "symptom/system-call-error",
    ),
    (
        "slurmstepd: error: pyxis: child 48213 terminated with signal 9",
        "symptom/process-killed",
    ),
    ("pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.01-py3", "benign"),
    ("pyxis: imported docker image: nvcr.io#nvidia/pytorch:24.01-py3", "benign"),
    ("pyxis: creating container filesystem: pyxis_1234.0", "benign"),
    ("pyxis: starting container: pyxis_1234.0", "benign"),
    (
        "srun: error: pyxis: ignoring --container-mounts because neither --container-image nor "
        "--container-name is set",
        "benign",
    ),
]


@pytest.mark.parametrize(("line", "label"), LINES)
def test_a_pyxis_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, label: str
) -> None:
    got, template = label_of(cat, line, "pyxis")
    assert got == label, (line, template)


def test_a_benign_pyxis_line_fires_no_cause() -> None:
    rules = load_rules()
    for line, label in LINES:
        if label == "benign":
            assert [c.id for c in diagnose_text(rules, line + "\n").causes] == [], line
