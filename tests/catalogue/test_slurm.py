"""Slurm in the catalogue: the reader takes the `error`/`fatal`/`warning`/`info` formats and
the pmix plugin's `PMIXP_ERROR*` macros of srun, salloc, sbatch, slurmstepd and the plugins
a job's output shows, reads Slurm's own conversions (`%ps`) as values, and each row of
slurm_errno.c as an entry of its own; it samples the first and last release of each
minor; and a line as srun or slurmstepd prints it matches the entry its source prints,
with that entry's class."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kb.rules.catalogue import Catalogue
from kb.rules.catalogue.coverage import coverage
from tests.catalogue.entry_label import check_pasted_lines, label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import slurm_src  # noqa: E402


def test_log_calls_pmix_macros_and_slurm_conversions_are_read() -> None:
    # shapes of src/plugins/task/cgroup/task_cgroup_memory.c (23.02), src/srun/launch.c,
    # src/plugins/mpi/pmix/pmixp_utils.c and pmixp_client.c (25.05)
    src = r"""
#define PMIXP_ERROR(format, args...) { error(" %s: " format, plugin_type, ## args); }
static void f(void) {
    error("Detected %"PRIu64" oom_kill event%s in %ps. Some of the step tasks have been OOM Killed.",
          n, (n == 1) ? "" : "s", &step->step_id);
    error("%s: %s %s: Exited with exit code %d", hosts, task_str, tasks, rc);
    info("Job step aborted: Waiting up to "
         "%d seconds for job step to finish.", wait);
    verbose("%s: %s %s: Completed", hosts, task_str, tasks);
    debug("only with -vv");
    PMIXP_ERROR("send failed, rc=%d, exceeded the retry limit", rc);
    PMIXP_ERROR_STD("Cannot create UNIX socket");
    PMIXP_ERROR_NO(rc, "Cannot register namespace %s", nspace);
    warning("The following autodetected GPUs are being ignored:");
}
"""
    got = slurm_src.read(src)
    assert [(level, template) for level, template, _ in got] == [
        (
            "error",
            "Detected %llu oom_kill event%s in %s. Some of the step tasks have been OOM Killed.",
        ),
        ("error", "%s: %s %s: Exited with exit code %d"),
        ("info", "Job step aborted: Waiting up to %d seconds for job step to finish."),
        ("error", "send failed, rc=%d, exceeded the retry limit"),
        ("error", "Cannot create UNIX socket: %s (%d)"),
        ("error", "Cannot register namespace %s: %s (%d)"),
        ("warn", "The following autodetected GPUs are being ignored:"),
    ]


def test_error_code_rows_of_both_table_forms_are_entries_named_by_their_code() -> None:
    old = """static slurm_errtab_t slurm_errtab[] = {
    {0, "No error"},
    {-1, "Unspecified error"},
    { ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE,
      "Requested node configuration is not available"        },
};"""
    new = """slurm_errtab_t slurm_errtab[] = {
    { ERRTAB_ENTRY(SLURM_SUCCESS), "No error"},
    { ERRTAB_ENTRY(ESLURM_INVALID_GRES),
      "Invalid generic resource "
      "(gres) specification" },
};"""
    assert slurm_src.errno_strings(old) == [
        ("SLURM_ERROR", "Unspecified error"),
        (
            "ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE",
            "Requested node configuration is not available",
        ),
    ]
    assert slurm_src.read(new) == [
        ("error", "Invalid generic resource (gres) specification", {"topic": "ESLURM_INVALID_GRES"})
    ]
    assert slurm_src.errno_strings("int x = 0;") == []


def test_the_first_and_last_release_of_each_minor_are_sampled(tmp_path: Path) -> None:
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    tags = [
        "slurm-17-02-11-1", "slurm-17-11-0-0pre1", "slurm-17-11-0-1", "slurm-17-11-3-2",
        "slurm-17-11-13-1", "slurm-17-11-13-2", "slurm-18-08-0-0rc1", "slurm-18-08-0-1",
    ]  # fmt: skip
    for tag in tags:
        subprocess.run([*git, "tag", tag], check=True)
    assert slurm_src.sampled_tags(tmp_path / ".git") == [
        ("slurm-17-11-0-1", "17.11.0"),
        ("slurm-17-11-13-2", "17.11.13"),  # the last respin of the release
        ("slurm-18-08-0-1", "18.08.0"),
    ]


def test_the_scope_is_what_a_job_prints() -> None:
    kept = [
        "src/srun/launch.c", "src/srun/libsrun/opt.c", "src/slurmd/slurmstepd/req.c",
        "src/plugins/mpi/pmix/pmixp_utils.c", "src/plugins/task/cgroup/task_cgroup_memory.c",
        "src/plugins/gres/common/gres_common.c", "src/common/slurm_errno.c",
    ]  # fmt: skip
    assert all(slurm_src.keep(p) for p in kept)
    assert not slurm_src.keep("src/plugins/mpi/pmix/tests/pmixp_test.c")
    assert not slurm_src.keep("src/srun/Makefile.am")


def test_slurm_is_catalogued_over_its_releases_all_classified(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["slurm"].versions == "17.11.0-26.05.3"  # the tags sampled (slurm_src.py)
    [row] = [r for r in coverage(cat)["libraries"] if r["name"] == "slurm"]
    assert row["messages"] > 2000
    assert row["classified"] == row["messages"] == row["causes"] + row["symptoms"] + row["benign"]
    causes = {m.cause for m in cat.by_library("slurm") if m.class_ == "cause"}
    assert causes == {"host-out-of-memory", "gpu-rank-mapping", "mpi-launch-failure"}
    codes = {m.template for m in cat.by_library("slurm") if m.file == "src/common/slurm_errno.c"}
    assert "Requested node configuration is not available" in codes
    assert len(codes) > 300


# (a line as Slurm prints it, the label of its most specific entry)
LINES = [
    (  # task/cgroup, 22.05+: the step's memory cgroup OOM-killed a task
        "slurmstepd: error: Detected 1 oom_kill event in StepId=1234.0. Some of the step tasks "
        "have been OOM Killed.",
        "cause/host-out-of-memory",
    ),
    (  # task/cgroup, 17.11-20.02
        "slurmstepd: error: Detected 2 oom-kill event(s) in step 4567.0 cgroup. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.",
        "cause/host-out-of-memory",
    ),
    ("srun: error: gpu03: task 2: Out Of Memory", "cause/host-out-of-memory"),  # srun/launch.c
    (  # gres_common.c, 20.11: --gpu-bind=map_gpu naming a GPU the step does not hold
        "slurmstepd: error: Bind request 4 (0x10) does not specify any devices within the "
        "allocation. Binding to the first device in the allocation instead.",
        "cause/gpu-rank-mapping",
    ),
    (  # srun launch.c with ESLURM_TOO_MANY_REQUESTED_CPUS
        "srun: error: Unable to create step for job 238051: More processors requested than "
        "permitted",
        "cause/mpi-launch-failure",
    ),
    (  # mpi/pmix: the PMIx library Slurm was built against is not on the node
        "slurmstepd: error: mpi/pmix_v4: init: gpu01 [0]: mpi_pmix.c:200: pmi/pmix: can not "
        "load PMIx library",
        "cause/mpi-launch-failure",
    ),
    (  # task/cgroup: usage touched the limit (page cache counts); the job may go on
        "slurmstepd: error: Exceeded job memory limit at some point.",
        "symptom/host-out-of-memory",
    ),
    (
        "slurmstepd: error: *** JOB 1234 ON gpu01 CANCELLED AT 2024-05-01T12:00:00 DUE TO TIME "
        "LIMIT ***",
        "symptom/timeout",
    ),
    (
        "slurmstepd: error: *** STEP 1234.0 ON gpu01 CANCELLED AT 2024-05-01T12:00:00 ***",
        "symptom/process-killed",
    ),
    ("srun: error: gpu03: task 2: Exited with exit code 1", "symptom/peer-failure"),
    (
        "srun: error: Unable to allocate resources: Requested node configuration is not available",
        "symptom/launch-failure",
    ),
    (
        "sbatch: error: Batch job submission failed: Requested node configuration is not available",
        "symptom/launch-failure",
    ),
    (
        "srun: error: Unable to create step for job 1234: Invalid generic resource (gres) "
        "specification",
        "symptom/invalid-config",
    ),
    ('srun: error: Unable to resolve "gpu05": Unknown host', "symptom/address-resolution"),
    (  # mpi/pmix pmixp_utils.c: a peer stepd not answering
        "slurmstepd: error:  mpi/pmix_v3: pmixp_p2p_send: gpu01 [0]: pmixp_utils.c:467: send "
        "failed, rc=1001, exceeded the retry limit",
        "symptom/connection-failure",
    ),
    (
        "slurmstepd: error: execve(): bad interpreter(/usr/bin/python3): No such file or directory",
        "symptom/launch-failure",
    ),
    (
        "srun: error: gpu01: tasks 0-3: unable to claim reserved port, retrying.",
        "symptom/bind-failure",
    ),
    (
        "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
        "symptom/abort",
    ),
    (
        "srun: Job 1234 step creation temporarily disabled, retrying (Requested nodes are busy)",
        "benign",
    ),
    ("salloc: Granted job allocation 1234", "benign"),
    ("srun: job 1234 queued and waiting for resources", "benign"),
]


@pytest.mark.parametrize(("line", "label"), LINES)
def test_a_slurm_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, label: str
) -> None:
    got, template = label_of(cat, line, "slurm")
    assert got == label, (line, template)


def test_a_pasted_cause_line_ranks_its_cause_first_a_benign_line_fires_nothing() -> None:
    check_pasted_lines(LINES)
