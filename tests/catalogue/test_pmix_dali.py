"""PMIx and DALI in the catalogue: the extractors read each library's own ways of printing
(PMIx's help-*.txt topics, `pmix_output(0, ...)` and the status strings PMIX_ERROR_LOG
prints, 2.x-4.x switch and 5.x+ constants; DALI's `DALI_ENFORCE`/`DALI_FAIL` with their
`+`/`make_string` messages, nvJPEG's error texts, CUDA's stream-built texts, Python raises),
wheels are laid out by repository paths, and real log lines of public threads match the
entry their source prints with its class."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from kb.authoring.checked import load_rules
from kb.diagnosis.engine import diagnose_text
from kb.rules.catalogue import Catalogue
from tests.catalogue.entry_label import label_of

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalogue"))

import dali_src  # noqa: E402
import pmix_src  # noqa: E402


def test_pmix_help_topics_and_stderr_lines_are_read_debug_output_is_not() -> None:
    # src/mca/ptl/base/help-ptl-base.txt (5.0.11), src/mca/pif/posix_ipv4/pif_posix.c and
    # src/mca/ptl/base/ptl_base_listener.c (5.0.11)
    help_txt = """#
[no-listeners]
No sockets were able to be opened on the available protocols
(IPv4 and/or IPv6). Please check your network and retry.
#
"""
    got = pmix_src.read_source("src/mca/ptl/base/help-ptl-base.txt", help_txt)
    assert got == [
        (
            "help",
            "No sockets were able to be opened on the available protocols\n"
            "(IPv4 and/or IPv6). Please check your network and retry.",
            {"topic": "no-listeners"},
        )
    ]
    src = r"""
    if ((sd = socket(AF_INET, SOCK_DGRAM, 0)) < 0) {
        pmix_output(0, "pmix_ifinit: socket() failed with errno=%d\n", errno);
        return PMIX_ERROR;
    }
    pmix_output_verbose(8, pmix_ptl_base_framework.framework_output,
                        "ptl:base:listener setup");
    pmix_output(pmix_globals.debug_output, "not printed by default");
    """
    got = pmix_src.read_source("src/mca/pif/posix_ipv4/pif_posix.c", src)
    assert got == [("error", "pmix_ifinit: socket() failed with errno=%d\n", {})]


def test_pmix_error_log_statuses_from_the_switch_and_from_the_constants() -> None:
    # src/util/error.c (3.2.5): PMIx_Error_string is a switch; include/pmix_common.h.in
    # (5.0.11): the constants whose names the generated table returns
    switch = """
PMIX_EXPORT const char* PMIx_Error_string(pmix_status_t errnum)
{
    switch(errnum) {

    case PMIX_SUCCESS:
        return "SUCCESS";
    case PMIX_ERR_UNREACH:
        return "UNREACHABLE";
    case PMIX_ERR_IN_ERRNO:
        return "ERR-IN-ERRNO";
    }
}
"""
    assert list(pmix_src.status_strings(switch)) == ["UNREACHABLE", "ERR-IN-ERRNO"]
    got = pmix_src.read_source("src/util/error.c", switch)
    assert ("error", "PMIX ERROR: UNREACHABLE in file %s at line %d", {}) in got
    header = """/****    PMIX ERROR CONSTANTS    ****/
#define PMIX_SUCCESS                                 0
#define PMIX_ERROR                                  -1          // general error
#define PMIX_ERR_UNREACH                            -25
#define PMIX_EXTERNAL_ERR_BASE                      -3000
#define PMIX_ERR_AFTER_THE_END                      -3001
"""
    assert list(pmix_src.status_strings(header)) == ["PMIX_ERROR", "PMIX_ERR_UNREACH"]
    # a release whose table is the switch takes no names from the header
    assert pmix_src.read_source("include/pmix_common.h.in", header, statuses=False) == []


def test_dali_enforce_fail_and_built_messages_are_read() -> None:
    # dali/operators/reader/loader/file_loader.h (2.4.0), nvjpeg_helper.h (1.53.0),
    # dali/core/cuda_error.h (2.4.0)
    src = r"""
        std::ifstream s(file_list_);
        DALI_ENFORCE(s.is_open(), "Cannot open: " + file_list_);
        DALI_ENFORCE(s.eof(), "Wrong format of file_list: " + file_list_);
    }
    DALI_ENFORCE(SizeImpl() > 0, "No files found.");
    DALI_ENFORCE(ret == image_size, make_string("Failed to read ", image_file, " file."));
    DALI_ENFORCE(index < size);
      DALI_FAIL("Unknown nvjpegBackend_t "
                + std::to_string(state.nvjpeg_backend));
    ss << "CUDA runtime API error "
       << name << " (" << static_cast<unsigned>(status) << ")";
  static const char *ErrorString(nvjpegStatus_t result) {
    switch (result) {
      case NVJPEG_STATUS_SUCCESS:
        return "The API call has finished successfully. Note that many of the calls are "
               "asynchronous and some of the errors may be seen only after synchronization.";
      case NVJPEG_STATUS_BAD_JPEG:
        return "Cannot parse the JPEG stream. Check that the encoded JPEG stream and its "
               "size parameters are correct.";
    }
  }
      return make_string("nvJPEG error (", result, "): ", ErrorString(result));
    """
    got = dali_src.file_messages("dali/operators/reader/loader/file_loader.h", src)
    assert ("error", 'Assert on "%s" failed: Cannot open: %s') in got
    assert ("error", 'Assert on "%s" failed: Wrong format of file_list: %s') in got
    assert ("error", 'Assert on "%s" failed: No files found.') in got
    assert ("error", 'Assert on "%s" failed: Failed to read %s file.') in got
    assert ("error", "Unknown nvjpegBackend_t %s") in got
    assert ("error", "CUDA runtime API error %s (%s)") in got
    assert (
        "error",
        "nvJPEG error (%s): Cannot parse the JPEG stream. Check that the encoded JPEG "
        "stream and its size parameters are correct.",
    ) in got
    assert not [t for _, t in got if "successfully" in t or t.endswith("failed: ")]


def test_dali_python_raises_and_warnings_are_read() -> None:
    # dali/python/nvidia/dali/plugin/base_iterator.py (2.4.0)
    src = """
import warnings
def reset(self):
    if self._counter >= self._size or self._size < 0:
        pass
    else:
        warnings.warn("DALI iterator does not support resetting while epoch is not finished. "
                      "Ignoring...", Warning, stacklevel=2)
    if not isinstance(policy, LastBatchPolicy):
        raise ValueError(f"Wrong type for `last_batch_policy`. Expected {LastBatchPolicy}, got {policy}")
"""
    got = dali_src.file_messages("dali/python/nvidia/dali/plugin/base_iterator.py", src)
    assert set(got) == {
        (
            "warn",
            "DALI iterator does not support resetting while epoch is not finished. Ignoring...",
        ),
        ("error", "ValueError: Wrong type for `last_batch_policy`. Expected {}, got {}"),
    }


def test_an_indented_block_message_is_catalogued_from_its_first_printed_line() -> None:
    # dali/python/nvidia/dali/pipeline.py (2.4.0): the exception's name prints alone on its
    # line, so "RuntimeError: " would be the template's headline and match any RuntimeError
    src = '''
def _check(self):
    raise RuntimeError(
        f"""
        When using pipeline_inputs named arguments, either
        `prefetch_queue_depth` in Pipeline constructor shall be set to 1 (for both devices)
        or `exec_pipelined` shall be set to False.
        Received: prefetch_queue_depth={self._prefetch_queue_depth},
        exec_pipelined={self._exec_pipelined}."""
    )
'''
    [(level, template)] = dali_src.file_messages("dali/python/nvidia/dali/pipeline.py", src)
    assert level == "error"
    assert template.startswith("When using pipeline_inputs named arguments, either\n`prefetch")
    assert template.endswith("exec_pipelined={}.")


def test_a_dali_wheel_is_laid_out_by_repository_paths(tmp_path: Path) -> None:
    wheel = tmp_path / "nvidia_dali_cuda120-1.30.0-9783408-py3-none-manylinux2014_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("nvidia/dali/pipeline.py", "raise ValueError('x')\n")
        zf.writestr("nvidia/dali/include/dali/operators/reader/loader/file_loader.h", "// h\n")
        zf.writestr("nvidia/dali/include/dali/kernels/imgproc/resample.h", "// not kept\n")
        zf.writestr("nvidia/dali/math.py", "raise ValueError('not kept')\n")
        zf.writestr("nvidia/dali/plugin/pytorch/test_iter.py", "# a test: not kept\n")
    out = tmp_path / "1.30.0"
    assert dali_src.wheel_tree(wheel, out) == 2
    kept = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert kept == [
        "dali/operators/reader/loader/file_loader.h",
        "dali/python/nvidia/dali/pipeline.py",
    ]
    assert dali_src.wheel_version(wheel) == "1.30.0"
    with pytest.raises(ValueError, match="not an nvidia-dali wheel"):
        dali_src.wheel_version(tmp_path / "torch-2.4.0-cp310-none-any.whl")


def test_both_libraries_are_catalogued_over_their_releases_all_classified(cat: Catalogue) -> None:
    libs = {lib.name: lib for lib in cat.libraries}
    assert libs["pmix"].versions == "2.0.0-6.1.0"  # every vX.Y.Z tag from 2.0.0 (pmix_src.py)
    assert libs["dali"].versions == "1.23.0-2.4.0"  # the wheels read (dali_src.py)
    for name in ("pmix", "dali"):
        messages = cat.by_library(name)
        assert len(messages) > 500, name
        assert all(m.class_ in ("cause", "symptom", "benign") for m in messages), name
    unreach = [m for m in cat.by_library("pmix") if "UNREACH" in m.template]
    # the word through 4.2.4, the constant's name from 4.2.5 (the generated table)
    assert sorted((m.template, m.versions) for m in unreach) == [
        ("PMIX ERROR: PMIX_ERR_UNREACH in file %s at line %d", "4.2.5-6.1.0"),
        ("PMIX ERROR: UNREACHABLE in file %s at line %d", "2.0.0-4.2.4"),
    ]


# (real line, library, label of its most specific entry)
LINES = [
    (  # open-mpi/ompi#9785 (Open MPI 4.1.0's internal PMIx)
        "[cn007.24154] PMIX ERROR: UNREACHABLE in file server/pmix_server.c at line 2147",
        "pmix",
        "symptom/launch-failure",
    ),
    (  # openpmix/prrte#259 (prun against a prte on localhost)
        "[pessoa3:06117] PMIX ERROR: NOT-FOUND in file tool/pmix_tool.c at line 250",
        "pmix",
        "symptom/mpi-error",
    ),
    (  # NVIDIA/DALI#31 (a file_list whose labels were not integers)
        "RuntimeError: [XXXXX/DALI/dali/pipeline/operators/reader/loader/file_loader.h:104] "
        'Assert on "Size() > 0" failed: No files found.',
        "dali",
        "cause/dataset-format",
    ),
]


@pytest.mark.parametrize(("line", "library", "label"), LINES)
def test_a_real_line_matches_the_entry_its_source_prints(
    cat: Catalogue, line: str, library: str, label: str
) -> None:
    got, template = label_of(cat, line, library)
    assert got == label, (line, template)


def test_the_dali_no_files_paste_gets_dataset_format_first() -> None:
    got = [c.id for c in diagnose_text(load_rules(), LINES[2][0] + "\n").causes]
    assert got[:1] == ["dataset-format"], got
