"""rdma-core in the catalogue: the reader spells out `PFX` and the logging wrappers as they
expand, cuts a format of several lines into the lines a log shows, leaves debug output and
option help out, samples the first and last tag of each release; and a line as
libibverbs, its examples (ibv_devinfo, the pingpongs), librdmacm's examples, mlx5 and the
diagnostics tools print it matches the entry its source prints, with that entry's class."""

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

import rdma_src  # noqa: E402


def test_prefixes_wrappers_and_lines_are_read_as_printed() -> None:
    # shapes of libibverbs/init.c and dynamic_driver.c (v64.0), libibmad/rpc.c,
    # infiniband-diags/ibstat.c, providers/mlx5/cq.c, libibverbs/examples/devinfo.c
    src = r"""
#define PFX "libibverbs: "
static void check_memlock_limit(void)
{
	if (rlim.rlim_cur <= 32768)
		fprintf(stderr, PFX "Warning: RLIMIT_MEMLOCK is %llu bytes.\n"
			"    This will severely limit memory registrations.\n",
			(unsigned long long)rlim.rlim_cur);
	fprintf(stderr, PFX "Warning: couldn't load driver '%s': %s\n", so_name, dlerror());
	perror("Failed to get IB devices list");
	IBPANIC("can't list IB device names");
	IBWARN("can't open UMAD port (%s:%d)", dev_name, dev_port);
	IBEXIT("can't resolve destination port %s", argv[0]);
	verbs_err(&ctx->ibv_ctx, "Failed to allocate QP table\n");
	verbs_debug(&ctx->ibv_ctx, "not printed unless VERBS_LOG_LEVEL says so\n");
	mlx5_dbg(fp, MLX5_DBG_CQ, "only in a debug build\n");
	mlx5_err(mctx->dbg_fp, PFX "%s: got completion with error:\n", hostname);
	printf("hca_id:\t%s\n", ibv_get_device_name(device));
	printf("  -d, --ib-dev=<dev>    use IB device <dev> (default first device found)\n");
}
"""
    got = {(lvl, tpl) for lvl, tpl, _ in rdma_src.file_messages("libibverbs/init.c", src)}
    assert got == {
        ("warn", "libibverbs: Warning: RLIMIT_MEMLOCK is %llu bytes."),
        ("warn", "This will severely limit memory registrations."),
        ("warn", "libibverbs: Warning: couldn't load driver '%s': %s"),
        ("error", "Failed to get IB devices list: %s"),
        ("fatal", "ibpanic: [%d] %s: can't list IB device names: %m"),
        ("warn", "ibwarn: [%d] %s: can't open UMAD port (%s:%d)"),
        ("fatal", "%s: iberror: failed: can't resolve destination port %s"),
        ("error", "%s: %s:%d: Failed to allocate QP table"),
        ("error", "libibverbs: %s: got completion with error:"),
        ("info", "hca_id:\t%s"),
    }


def test_pfx_is_the_prefix_of_the_files_directory() -> None:
    src = 'void f(void) { fprintf(stderr, PFX "Fatal: unable to open RDMA device\\n"); }\n'
    [(_, lib, _)] = rdma_src.file_messages("librdmacm/cma.c", src)
    [(_, mlx5, _)] = rdma_src.file_messages("providers/mlx5/mlx5.c", src)
    assert lib == "librdmacm: Fatal: unable to open RDMA device"
    assert mlx5 == "mlx5: Fatal: unable to open RDMA device"


def test_the_first_and_last_tag_of_each_release_are_read(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    run = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*run, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    for tag in ("v16", "v17", "v17.1", "v17.11", "v17.2", "v18", "v24.0", "v24.10", "v24.9",
                "v25.0-rc1", "debian/24.0-1"):  # fmt: skip
        subprocess.run([*run, "tag", tag], check=True)
    got = rdma_src.rdma_core_tags(repo / ".git")
    assert got == [
        ("v17", "17"), ("v17.11", "17.11"), ("v18", "18"), ("v24.0", "24.0"),
        ("v24.10", "24.10"),
    ]  # fmt: skip


def test_rdma_core_is_catalogued_over_its_releases_all_classified(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["rdma-core"].versions == "17-64.0"
    [row] = [r for r in coverage(cat)["libraries"] if r["name"] == "rdma-core"]
    assert row["messages"] > 1000
    assert row["classified"] == row["messages"] == row["causes"] + row["symptoms"] + row["benign"]
    causes = {m.cause for m in cat.by_library("rdma-core") if m.class_ == "cause"}
    assert causes == {"nccl-ib-missing", "memlock-limit", "nccl-ib-fabric-error"}


# (a line as rdma-core prints it, the label of its most specific entry)
LINES = [
    (  # libibverbs/dynamic_driver.c: the provider library of ibverbs-providers is absent
        "libibverbs: Warning: couldn't load driver 'libmlx5-rdmav34.so': libmlx5-rdmav34.so: "
        "cannot open shared object file: No such file or directory",
        "cause/nccl-ib-missing",
    ),
    (  # libibverbs/init.c: a uverbs device and no provider that claims it
        "libibverbs: Warning: no userspace device-specific driver found for "
        "/sys/class/infiniband_verbs/uverbs0",
        "cause/nccl-ib-missing",
    ),
    (  # libibverbs/dynamic_driver.c: no /etc/libibverbs.d in the image
        "libibverbs: Warning: couldn't open config directory '/etc/libibverbs.d'.",
        "cause/nccl-ib-missing",
    ),
    ("No IB devices found", "cause/nccl-ib-missing"),  # ibv_devinfo, ibv_rc_pingpong
    (  # ibv_devinfo without the uverbs/ib_core modules
        "Failed to get IB devices list: Function not implemented",
        "cause/nccl-ib-missing",
    ),
    (  # ibstat in a container without /sys/class/infiniband
        "ibpanic: [2231] main: can't list IB device names: No such file or directory",
        "cause/nccl-ib-missing",
    ),
    (  # libibumad/umad.c
        "ibwarn: [2231] umad_init: can't read ABI version from "
        "/sys/class/infiniband_mad/abi_version (No such file or directory): is ib_umad module "
        "loaded?",
        "cause/nccl-ib-missing",
    ),
    (  # libibverbs/init.c under a 64 KiB locked-memory limit
        "libibverbs: Warning: RLIMIT_MEMLOCK is 65536 bytes.",
        "cause/memlock-limit",
    ),
    ("    This will severely limit memory registrations.", "cause/memlock-limit"),
    ("Couldn't register MR", "cause/memlock-limit"),  # ibv_rc_pingpong
    ("Failed to modify QP to RTR", "cause/nccl-ib-fabric-error"),  # ibv_rc_pingpong
    (  # ibv_rc_pingpong: a work completion in error
        "Failed status transport retry counter exceeded (12) for wr_id 2",
        "cause/nccl-ib-fabric-error",
    ),
    (  # providers/mlx5/cq.c (MLX5_DEBUG_MASK's completion dump)
        "mlx5: gpu-node-07: got completion with error:",
        "cause/nccl-ib-fabric-error",
    ),
    ("RDMA_CM_EVENT_ADDR_ERROR, error: -19", "cause/nccl-ib-fabric-error"),  # cmtime
    ("rdma_resolve_addr: No such device", "symptom/address-resolution"),  # rping
    (  # libibverbs/init.c: rdma-core older than the kernel's uverbs ABI
        "libibverbs: Fatal: kernel ABI version 5 doesn't match library version 6.",
        "symptom/version-mismatch",
    ),
    ("Couldn't create QP", "symptom/rdma-error"),  # ibv_rc_pingpong
    (  # ibping, a LID that is not on the fabric
        "ibping: iberror: failed: can't resolve destination port 0x12",
        "symptom/rdma-error",
    ),
    ("\t\tPhysical state: LinkUp", "benign"),  # ibstat
    (  # ibv_rc_pingpong's address exchange and result
        "  local address:  LID 0x0004, QPN 0x00011b, PSN 0x5c7e3b, GID ::",
        "benign",
    ),
    ("8192000 bytes in 0.01 seconds = 7812.50 Mbit/sec", "benign"),
]


@pytest.mark.parametrize(("line", "label"), LINES)
def test_an_rdma_core_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, label: str
) -> None:
    got, template = label_of(cat, line, "rdma-core")
    assert got == label, (line, template)


def test_a_pasted_cause_line_ranks_its_cause_first_an_output_line_fires_nothing() -> None:
    check_pasted_lines(LINES)
