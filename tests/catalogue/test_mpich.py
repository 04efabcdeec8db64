"""MPICH in the catalogue: the reader takes Hydra's error macros (their format after the
status arguments, `HYDU_ASSERT(x)` as `assert (<x>) failed`), leaves the option help out,
reads the capitals Hydra reports a job's failure in as errors, takes the PMI client's
always-printed lines only, and reads errnames.txt's `**name:text` entries with MPICH's own
conversions as values; every message of v3.0-5.0.1 is classified; and a line as mpiexec,
a Hydra proxy or an MPI rank prints it (whatever its `[mpiexec@HOST] FUNC (FILE:LINE): `
prefix) matches the entry its source prints, with that entry's class."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kb.rules.catalogue import Catalogue
from kb.rules.catalogue.coverage import coverage
from tests.catalogue.entry_label import check_pasted_lines, label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import mpich_src  # noqa: E402


def test_hydra_error_macros_and_asserts_are_read_option_help_is_not() -> None:
    # src/pm/hydra/lib/utils/args.c and pm/pmiserv/pmip_cb.c (3.3), mpiexec/options.c and
    # mpiexec/pmiserv_cb.c (5.0.1), hydra2's libhydra/demux/hydra_demux_poll.c (3.3)
    src = r"""
    if ((fp = fopen(hostfile, "r")) == NULL)
        HYDU_ERR_SETANDJUMP(status, HYD_INTERNAL_ERROR, "unable to open host file: %s\n", hostfile);
    status = HYDU_sock_read(fd, buf, hdr.buflen, &count, &closed, HYDU_SOCK_COMM_MSGWAIT);
    HYDU_ERR_POP(status, "unable to read PMI response from proxy\n");
    HYDU_ASSERT(!closed, status);
    HYDU_ERR_CHKANDJUMP(status, ret < 0, HYD_INTERNAL_ERROR, "pipe error (%s)\n",
                        MPL_strerror(errno));
        HYD_ERR_SETANDJUMP(status, HYD_ERR_SOCK, "poll error (%s)\n", MPL_strerror(errno));
static void ppn_help_fn(void)
{
    printf("\n");
    printf("-ppn: Processes per node\n\n");
}
static HYD_status control_cb(int fd, HYD_event_t events, void *userp)
{
                    HYDU_dump_noprefix(stdout, "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n");
                    HYDU_dump_noprefix(stdout, "=   PID %d RUNNING AT %s\n", proxy->pid[i],
                                       proxy->node->hostname);
        HYDU_dump(stdout, "[pgid: %d] got PMI command: %s\n", pgid, buf);
}
"""
    got = mpich_src.read_source("src/pm/hydra/mpiexec/pmiserv_cb.c", src)
    assert [(level, template) for level, template, _ in got] == [
        ("error", "unable to open host file: %s\n"),
        ("error", "unable to read PMI response from proxy\n"),
        ("error", "pipe error (%s)\n"),
        ("error", "poll error (%s)\n"),
        ("error", "assert (!closed) failed"),
        ("error", "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n"),
        ("error", "=   PID %d RUNNING AT %s\n"),
        ("info", "[pgid: %d] got PMI command: %s\n"),
    ]


def test_the_pmi_client_line_always_printed_is_read_a_verbose_one_is_not() -> None:
    # src/pmi/src/pmi_util.c and pmi_util.h's PMIU_ERR_SETANDJUMP (5.0.1)
    src = r"""
    if (ret) {
        PMIU_printf(1, "Unable to get host entry for %s\n", hostname);
        return -1;
    }
        PMIU_printf(PMIU_verbose, "ERROR: "str" in %s (%d)\n", __func__, __LINE__);
"""
    got = mpich_src.read_source("src/pmi/src/pmi_util.c", src)
    assert got == [("error", "Unable to get host entry for %s\n", {})]


def test_errnames_entries_with_mpich_conversions_and_continued_lines() -> None:
    # src/mpi/errhan/errnames.txt (5.0.1, 3.0)
    text = r"""#
# Error messages
**nomem:Out of memory
**nomem %s %d:Out of memory (unable to allocate a '%s' of size %d)
**gethostbyname %s %d:gethostbyname failed, %s (errno %d)
**mpi_barrier %C:MPI_Barrier(%C) failed
**rank %d %d:Invalid rank has value %d but must be nonnegative and \
less than %d
**mpi_add_error_string %d %s:MPI_Add_error_string(code=%d, str=\"%s\") failed
**mpi_type_size_x %D %p:MPI_Type_size_x(datatype=%D, size=%p) failed
"""
    got = mpich_src.errnames(text)
    assert got == [
        ("error", "Out of memory", {"topic": "**nomem"}),
        ("error", "Out of memory (unable to allocate a '%s' of size %d)", {"topic": "**nomem"}),
        ("error", "gethostbyname failed, %s (errno %d)", {"topic": "**gethostbyname"}),
        ("error", "MPI_Barrier(%s) failed", {"topic": "**mpi_barrier"}),
        (
            "error",
            "Invalid rank has value %d but must be nonnegative and less than %d",
            {"topic": "**rank"},
        ),
        (
            "error",
            'MPI_Add_error_string(code=%d, str="%s") failed',
            {"topic": "**mpi_add_error_string"},
        ),
        ("error", "MPI_Type_size_x(datatype=%s, size=%p) failed", {"topic": "**mpi_type_size_x"}),
    ]
    assert mpich_src.mpich_format("%i of %t in 100% of %L") == "%s of %s in 100%% of %lld"


def test_lines_assembled_from_pieces_are_entries_where_their_file_holds_every_piece() -> None:
    # src/mpid/ch4/src/ch4_globals.c MPID_Abort (5.0.1)
    src = r"""
        snprintf(world_str, sizeof(world_str), " on node %d", rank);
        snprintf(comm_str, sizeof(comm_str), " (rank %d in comm %d)", rank, context_id);
    snprintf(error_str, sizeof(error_str), "Abort(%d)%s%s: %s%s\n",
             exit_code, world_str, comm_str, error_msg, sys_str);
    MPL_error_printf("%s", error_str);
"""
    got = [t for _, t, _ in mpich_src.read_source("src/mpid/ch4/src/ch4_globals.c", src)]
    assert got == ["%s", "Abort(%d) on node %d (rank %d in comm %d): %s"]
    assert mpich_src.read_source("src/mpid/ch4/src/ch4_init.c", '" on node %d"') == []


def test_the_scope_leaves_out_bundled_copies_tests_and_examples() -> None:
    kept = [
        "src/pm/hydra/lib/utils/args.c", "src/pm/hydra2/libhydra/sock/hydra_sock.c",
        "src/pm/hydra/lib/tools/bootstrap/src/bsci_init.c.in", "src/pmi/src/pmi_util.c",
        "src/mpi/errhan/errnames.txt", "src/mpid/ch4/netmod/ofi/errnames.txt",
        "src/mpid/ch4/src/ch4_globals.c",
    ]  # fmt: skip
    assert all(mpich_src.keep(p) for p in kept)
    left = [
        "src/pm/hydra/examples/binding.c", "src/pm/hydra/mpl/src/mplstr.c",
        "src/pm/hydra/tools/topo/hwloc/hwloc/src/topology.c", "src/mpi/romio/adio/common/ad_open.c",
        "src/mpi/errhan/errnames-old.txt", "src/pm/hydra/Makefile.am", "test/mpi/errors/x.c",
    ]  # fmt: skip
    assert not any(mpich_src.keep(p) for p in left)


def test_mpich_is_catalogued_over_its_releases_all_classified(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["mpich"].versions == "3.0-5.0.1"  # the release tags (mpich_src.TAGS)
    [row] = [r for r in coverage(cat)["libraries"] if r["name"] == "mpich"]
    assert row["messages"] > 3000
    assert row["classified"] == row["messages"] == row["causes"] + row["symptoms"] + row["benign"]
    causes = {m.cause for m in cat.by_library("mpich") if m.class_ == "cause"}
    assert causes == {"mpi-launch-failure", "mpi-build-deps"}
    hydra2 = [m for m in cat.by_library("mpich") if m.file.startswith("src/pm/hydra2/")]
    assert {m.versions for m in hydra2} >= {"3.3-4.0.3"}  # shipped beside hydra in 3.3-4.0


# (a line as MPICH prints it, the label of its most specific entry)
LINES = [
    (  # the brief's PBS job: mpiexec cannot read the host file the batch system named
        "[mpiexec@batch11] HYDU_parse_hostfile (utils/args/args.c:319): unable to open host "
        "file: /var/spool/PBS/aux/1469996.pbs01",
        "cause/mpi-launch-failure",
    ),
    (  # mcdc-project/mcdc#148 (MPICH 4)
        "[proxy:0:23@quartz2664] HYDU_sock_connect (lib/utils/sock.c:140): unable to connect "
        'from "quartz2664" to "quartz79" (No route to host)',
        "cause/mpi-launch-failure",
    ),
    (  # pmodels/mpich#4712
        "[proxy:0:1@gunavaran-HP-Pavilion-Notebook] HYDU_sock_connect (utils/sock/sock.c:113): "
        "unable to get host address for gunavaran-HP-ENVY-15-Notebook-PC",
        "cause/mpi-launch-failure",
    ),
    (  # University of Sheffield ShARC docs: the program is not on the node
        "[proxy:0:0@sharc-node129.shef.ac.uk] HYDU_create_process (utils/launch/launch.c:75): "
        "execvp error on file mpi_hello_world (No such file or directory)",
        "cause/mpi-launch-failure",
    ),
    ("[unset]: Unable to get host entry for MAC-140753", "cause/mpi-launch-failure"),
    (  # sccn/amica#11 (MPICH 3.3): an error stack's frame naming the host that does not resolve
        "MPID_nem_tcp_init(384).............: gethostbyname failed, Mac (errno 1)",
        "cause/mpi-launch-failure",
    ),
    (  # the brief's proxy: its control socket to mpiexec closed under it
        "[proxy:0:0@host] HYD_pmcd_pmip_control_cmd_cb (pm/pmiserv/pmip_cb.c:887): assert "
        "(!closed) failed",
        "symptom/connection-closed",
    ),
    # openai/jukebox#155: Hydra's banner for a rank killed by signal 9
    ("=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "symptom/process-killed"),
    ("=   PID 9665 RUNNING AT NeuroRTX6000", "symptom/process-killed"),
    ("=   EXIT CODE: 9", "symptom/process-killed"),
    (
        "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)",
        "symptom/process-killed",
    ),
    ("This typically refers to a problem with your application.", "benign"),
    (  # mpi4py/mpi4py#281 (Intel MPI 2021.7)
        "Abort(1090959) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init_thread: Other MPI "
        "error, error stack:",
        "symptom/abort",
    ),
    ("Fatal error in MPI_Init: Other MPI error, error stack:", "symptom/mpi-error"),
    (  # firemodels/fds#5853
        "PMPI_Testall(299)...............: MPI_Testall(count=36, req_array=0x2b1c9ffeec00, "
        "flag=0x7fffc44ce640, status_array=0x1) failed",
        "symptom/mpi-error",
    ),
    (
        "dcp_recv(165)...................: Internal MPI error!  Cannot read from remote process",
        "symptom/internal-error",
    ),
    (  # pmodels/mpich#7478: the ranks' PMI barrier with the launcher failed
        "pmi1_barrier(120)...................: PMI_Barrier returned -1",
        "symptom/launch-failure",
    ),
]


@pytest.mark.parametrize(("line", "label"), LINES)
def test_an_mpich_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, label: str
) -> None:
    got, template = label_of(cat, line, "mpich")
    assert got == label, (line, template)


def test_a_pasted_cause_line_ranks_its_cause_first_a_benign_line_fires_nothing() -> None:
    check_pasted_lines(LINES)
