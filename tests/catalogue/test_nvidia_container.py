"""GPUs in containers and the NVIDIA driver in the catalogue: the reader takes the toolkit's
Go messages (Go verbs and non-literal arguments as %s), the NVRM errors of the kernel
module, pynvml's NVMLError table and the transcribed libnvidia-container, moby and
nvidia-smi lines; a line as a user pastes it (docker's hook error, nvidia-smi, dmesg)
matches the entry its source prints with that entry's class."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kb.rules.catalogue import Catalogue
from kb.rules.catalogue.coverage import coverage
from tests.catalogue.entry_label import check_pasted_lines, label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import nvidia_container_src as nvc  # noqa: E402

LIB = "nvidia-container"


def test_go_calls_are_read_as_they_print() -> None:
    # shapes of cmd/nvidia-container-runtime-hook/main.go (1.4) and internal/modifier (1.17)
    src = """
func f() {
	log.Panicln("could not start nvidia-container-cli:", err)
	return fmt.Errorf("failed to create modifier: %w", err)
	err := errors.New("no NVIDIA devices found")
	return errors.Wrap(err, "error loading OCI specification for modification")
	return errors.Wrapf(err, "invalid CUDA version %v", v)
	m.logger.Warningf("Ignoring devices specified in NVIDIA_VISIBLE_DEVICES: %q", devices)
	logger.Infof("Using low-level runtime %v", path)
	logger.Debugf("not printed by default %v", x)
	fmt.Sprintf("%s-%d", a, b)
	return fmt.Errorf(msg)
}
"""
    assert nvc.go_messages(src) == [
        ("error", "could not start nvidia-container-cli: %s"),
        ("error", "failed to create modifier: %s"),
        ("error", "no NVIDIA devices found"),
        ("error", "error loading OCI specification for modification: %s"),
        ("error", "invalid CUDA version %s: %s"),
        ("warn", "Ignoring devices specified in NVIDIA_VISIBLE_DEVICES: %s"),
        ("info", "Using low-level runtime %s"),
    ]


def test_kernel_errors_and_warnings_are_kept_info_is_not() -> None:
    src = """
    nv_printf(NV_DBG_ERRORS,
              "NVRM: API mismatch: the client has the version %s, but\\n"
              "NVRM: this kernel module has the version %s.  Please\\n",
              pParams->versionString, NV_VERSION_STRING);
    nv_printf(NV_DBG_INFO, "NVRM: loading\\n");
    NV_DEV_PRINTF(NV_DBG_WARNINGS, nv, "NVRM: BAR resize resource not supported.\\n");
"""
    assert nvc.kernel_messages(src) == [
        (
            "error",
            "NVRM: API mismatch: the client has the version %s, but\n"
            "NVRM: this kernel module has the version %s.  Please\n",
        ),
        ("warn", "NVRM: BAR resize resource not supported.\n"),
    ]


def test_the_toolkit_scope_is_the_hook_runtime_and_cdi() -> None:
    kept = [
        "cmd/nvidia-container-runtime-hook/main.go",
        "cmd/nvidia-container-runtime/main.go",
        "nvidia-container-toolkit/main.go",  # 1.0.x
        "pkg/hook_config.go",  # 1.1-1.4
        "internal/modifier/cdi.go",
        "pkg/nvcdi/lib-nvml.go",
    ]
    left = [
        "tools/container/toolkit/toolkit.go",
        "internal/modifier/cdi_test.go",
        "vendor/github.com/NVIDIA/go-nvml/pkg/nvml/return.go",
        "nvidia-container-toolkit/vendor/github.com/BurntSushi/toml/encode.go",
        "pkg/config/engine/docker/docker.go",
    ]
    assert [p for p in kept if not nvc.toolkit_file(p)] == []
    assert [p for p in left if nvc.toolkit_file(p)] == []


def test_sampled_tags_are_the_first_and_last_of_each_minor() -> None:
    tags = [(f"v{v}", v) for v in ("1.13.0", "1.13.1", "1.13.5", "1.14.0", "1.15.0", "1.15.1")]
    assert nvc.first_last_per_minor(tags) == [
        ("v1.13.0", "1.13.0"),
        ("v1.13.5", "1.13.5"),
        ("v1.14.0", "1.14.0"),
        ("v1.15.0", "1.15.0"),
        ("v1.15.1", "1.15.1"),
    ]


def test_pynvml_table_is_read() -> None:
    src = """
class NVMLError(Exception):
    _errcode_to_string = {
        NVML_ERROR_DRIVER_NOT_LOADED:   "Driver Not Loaded",
        NVML_ERROR_LIBRARY_NOT_FOUND:   "NVML Shared Library Not Found",
        }
    def __str__(self):
            return "NVML Error with code %d" % self.value
"""
    assert nvc.pynvml_messages(src) == [
        ("error", "Driver Not Loaded"),
        ("error", "NVML Shared Library Not Found"),
        ("error", "NVML Error with code %d"),
    ]


def test_a_transcribed_entry_without_its_fields_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "x.yaml"
    bad.write_text("messages:\n  - {template: 'mount error: %s', level: error}\n")
    with pytest.raises(ValueError, match="message 1 lacks file, versions"):
        nvc.transcribed(bad)


def test_nvidia_container_is_catalogued_all_classified(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs[LIB].versions == "1.0.5-1.20.0"  # the toolkit's sampled tags
    [row] = [r for r in coverage(cat)["libraries"] if r["name"] == LIB]
    assert row["messages"] > 700
    assert row["classified"] == row["messages"] == row["causes"] + row["symptoms"] + row["benign"]
    causes = {m.cause for m in cat.by_library(LIB) if m.class_ == "cause"}
    assert causes == {"cuda-driver-too-old"}
    files = {m.file.split("/")[0] for m in cat.by_library(LIB)}
    assert {"libnvidia-container", "moby", "kernel-open", "src", "pynvml.py", "pkg"} <= files
    kernel = [m for m in cat.by_library(LIB) if m.file.startswith("kernel-open/")]
    assert {m.versions for m in kernel} >= {"515.43.04-595.45.04"}


# (a line as it is pasted, the label of its most specific entry)
LINES = [
    (  # dsl.c through the hook: the image's cuda>= requirement above the driver's CUDA
        "docker: Error response from daemon: failed to create shim task: OCI runtime create "
        "failed: runc create failed: unable to start container process: error during "
        "container init: error running hook #0: error running hook: exit status 1, stdout: , "
        "stderr: Auto-detected mode as 'legacy' nvidia-container-cli: requirement error: "
        "unsatisfied condition: cuda>=12.2, please update your driver to a newer version, or "
        "use an earlier cuda container: unknown.",
        "cause/cuda-driver-too-old",
    ),
    (  # driver.c: NVML init through the RPC helper, driver not loaded
        "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.",
        "symptom/cuda-error",
    ),
    (  # configure.c: a file of the image in the way of the driver's
        "nvidia-container-cli: mount error: file creation failed: "
        "/var/lib/docker/overlay2/3f1c/merged/usr/bin/nvidia-smi: file exists: unknown.",
        "symptom/file-error",
    ),
    (  # moby daemon/errors.go: `--gpus all` with no NVIDIA hook installed
        'docker: Error response from daemon: could not select device driver "" with '
        "capabilities: [[gpu]].",
        "symptom/unsupported",
    ),
    (  # the toolkit's hook invoked by docker --gpus in CSV/CDI mode (main.go)
        "nvidia-container-runtime-hook: invoking the NVIDIA Container Runtime Hook directly "
        "(e.g. specifying the docker --gpus flag) is not supported. Please use the NVIDIA "
        "Container Runtime (e.g. specify the --runtime=nvidia flag) instead.",
        "symptom/unsupported",
    ),
    (  # nvidia-smi with no kernel module loaded
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
        "sure that the latest NVIDIA driver is installed and running.",
        "symptom/cuda-error",
    ),
    (  # dmesg after a driver upgrade without reboot (osapi.c, 515-5xx)
        "[ 1234.567890] NVRM: API mismatch: the client has the version 535.129.03, but",
        "symptom/version-mismatch",
    ),
    (  # nv.c when nouveau holds the GPU
        "[    5.123456] NVRM: No NVIDIA GPU found.",
        "symptom/cuda-error",
    ),
    (  # pynvml: a container without the driver's libnvidia-ml
        "pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found",
        "symptom/library-load-error",
    ),
    (  # the runtime's CDI modifier ignoring the env var (internal/modifier/cdi.go)
        'level=warning msg="Ignoring devices specified in NVIDIA_VISIBLE_DEVICES: [all]"',
        "benign",
    ),
]


def test_a_stage_error_and_the_reason_it_wraps_are_both_entries(cat: Catalogue) -> None:
    # configure.c's stage wrapping xfuncs.h's xdlopen: no driver libraries on the host
    line = (
        "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: "
        "cannot open shared object file: no such file or directory: unknown."
    )
    hits = {m.template: (m.class_, m.symptom) for m in cat.match(line) if m.library == LIB}
    assert hits["initialization error: %s"] == ("symptom", "cuda-error")
    assert hits["load library failed: %s"] == ("symptom", "library-load-error")


@pytest.mark.parametrize(("line", "label"), LINES)
def test_a_pasted_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, label: str
) -> None:
    got, template = label_of(cat, line, LIB)
    assert got == label, (line, template)


def test_the_driver_requirement_line_ranks_its_cause_first_a_benign_line_fires_nothing() -> None:
    check_pasted_lines(LINES)
