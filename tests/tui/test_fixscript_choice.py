"""The TUI's copied fix is chosen for the values found, as `diagnose` and `check` choose it:
a TensorFlow build of Horovod is never handed the MXNet reinstall line (issue 14)."""

from __future__ import annotations

import pytest

from dlperf_tui import fixscript
from kb.authoring.checked import load_kb


@pytest.mark.slow
def test_a_tensorflow_horovod_build_is_not_given_the_mxnet_pip_line() -> None:
    fix = load_kb().fixes["horovod-reinstall-with-nccl"]
    values = {
        "framework": "tensorflow",
        "horovod_version": "0.21.3",
        "nccl_home": "/usr/local/nccl",
    }
    text = fixscript.script(fix, values)
    assert "mxnet" not in text
    assert "python -m pip uninstall -y horovod" in text
    assert "HOROVOD_GPU_OPERATIONS=NCCL python -m pip install --no-cache-dir horovod" in text


@pytest.mark.slow
def test_an_mxnet_build_keeps_it_and_unknown_values_keep_every_command() -> None:
    fix = load_kb().fixes["horovod-reinstall-with-nccl"]
    mx = fixscript.chosen(fix, {"framework": "mxnet", "horovod_version": "0.21.3"})
    assert any("mxnet-cu102mkl" in c.run for c in mx)
    assert fixscript.chosen(fix, {}) == list(fix.commands)


@pytest.mark.slow
def test_the_diagnosis_screen_asks_nothing_of_a_session_whose_diagnosis_was_replaced() -> None:
    """A walk started from a symptom leaves the session without a diagnosis while the
    diagnosis screen is still underneath: its footer's redraw must not fail."""
    from dlperf_tui.screens.diagnosis import DiagnosisScreen
    from kb.walk.session import Session

    screen = DiagnosisScreen(Session(load_kb()))
    assert screen.check_action("walk", ()) is False
    assert screen.check_action("copy_fix", ()) is False
