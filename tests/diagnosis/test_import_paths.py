"""`No module named 'X'` where X is a folder of the job's own files: its checkout is not on
the import path (kb.diagnosis.analyzers.imports -> pythonpath-missing). A folder of an
installed package's tree says nothing of the kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kb.diagnosis.engine import diagnose_paths, diagnose_text

ROOT = Path(__file__).resolve().parents[2]
DEEPLAB2 = ROOT / "corpora/batch-2026-12-01d/pypath-deeplab2-20-no-module-deeplab2.log"


def _findings(diag: Any) -> list[str]:
    return [e.signature for c in diag.causes for e in c.evidence]


def test_gate_batch_2026_12_01d_own_package_beats_a_warning_of_a_library(shipped: Any) -> None:
    # google-research/deeplab2#20: run from the checkout's parent without PYTHONPATH; TF's
    # libcudart warning comes first in the log, the import error ends the run
    diag = diagnose_paths(shipped, [DEEPLAB2])
    assert [c.id for c in diag.causes][:2] == ["pythonpath-missing", "cuda-lib-missing"]
    top = diag.causes[0]
    assert top.params["module"] == "deeplab2"
    assert [(e.line, e.signature) for e in top.evidence] == [
        (7, "imports/missing"),
        (1, "imports/script"),
    ]


def test_a_traceback_frame_in_the_checkout_shows_it(shipped: Any) -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/work/mmseg_custom/tools/train.py", line 12, in <module>\n'
        "    from mmseg_custom.apis import train_segmentor\n"
        "ModuleNotFoundError: No module named 'mmseg_custom'\n"
    )
    diag = diagnose_text(shipped, text)
    assert diag.causes[0].id == "pythonpath-missing"
    assert "imports/frame" in _findings(diag)


def test_windows_paths_count_too(shipped: Any) -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "C:\\\\Users\\\\me\\\\yolact_edge\\\\eval.py", line 3, in <module>\n'
        "    from yolact_edge.data import cfg\n"
        "ModuleNotFoundError: No module named 'yolact_edge'\n"
    )
    assert diagnose_text(shipped, text).causes[0].id == "pythonpath-missing"


def test_a_folder_of_an_installed_package_is_no_checkout(shipped: Any) -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 5, in <module>\n'
        "    import tensorflow.contrib.slim as slim\n"
        '  File "/usr/lib/python3/dist-packages/tensorflow/__init__.py", line 40, in <module>\n'
        "    from tensorflow.contrib import slim\n"
        "ModuleNotFoundError: No module named 'tensorflow.contrib'\n"
    )
    diag = diagnose_text(shipped, text)
    assert not any(s.startswith("imports/") for s in _findings(diag))
    assert diag.causes and diag.causes[0].id != "pythonpath-missing"


def test_a_module_elsewhere_is_no_checkout(shipped: Any) -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/proj/train.py", line 3, in <module>\n'
        "    import apex\n"
        "ModuleNotFoundError: No module named 'apex'\n"
    )
    assert not any(s.startswith("imports/") for s in _findings(diagnose_text(shipped, text)))


# Python prints `No module named 'a.b'` only once `a` was imported: an `a` that is not the
# job's own folder is an installed release that lacks `b` (installed-module-lacks-name)
LMFLOW = ROOT / "corpora/batch-2026-12-01f/codever-lmflow-913-no-module-transformers-deepspeed.log"
KERAS = ROOT / "corpora/batch-2026-12-01g/codever-keras-14440-cannot-import-multi-gpu-model.log"


def test_gate_batch_2026_12_01f_a_submodule_missing_from_an_installed_package(
    shipped: Any,
) -> None:
    # LMFlow#913: transformers 4.46 dropped transformers.deepspeed; fine with 4.45.2
    diag = diagnose_paths(shipped, [LMFLOW])
    assert diag.causes[0].id == "code-version-mismatch"
    assert diag.causes[0].params["module"] == "transformers"


def test_gate_batch_2026_12_01g_a_name_missing_under_a_dotted_from_line(shipped: Any) -> None:
    # keras-team/keras#14440: keras 2.4 removed keras.utils.multi_gpu_model
    diag = diagnose_paths(shipped, [KERAS])
    assert [c.id for c in diag.causes] == ["code-version-mismatch"]
    assert diag.causes[0].params["module"] == "keras.utils"


def test_a_submodule_of_the_jobs_own_package_is_no_release(shipped: Any) -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/work/mmseg_custom/tools/train.py", line 12, in <module>\n'
        "    from mmseg_custom.apis import train_segmentor\n"
        "ModuleNotFoundError: No module named 'mmseg_custom.apis'\n"
    )
    diag = diagnose_text(shipped, text)
    assert [c.id for c in diag.causes] == ["pythonpath-missing"]
    assert diag.causes[0].params == {"module": "mmseg_custom"}


def test_a_bare_top_level_name_proves_no_release(shipped: Any) -> None:
    # a checkout shadowed by an unrelated installed `nets` prints the same line
    text = "    from nets import inception_resnet_v2\nImportError: cannot import name inception_resnet_v2\n"
    assert [c.id for c in diagnose_text(shipped, text).causes] == ["pythonpath-missing"]


DAMO = ROOT / "corpora/batch-2026-12-02b/d-pythonpath-missing-damoyolo-11-no-module-damo-zh.log"


def test_gate_batch_2026_12_02b_a_script_started_from_a_folder_of_its_repository(
    shipped: Any,
) -> None:
    # tinyvision/DAMO-YOLO#11: `python -m torch.distributed.launch ... tools/train.py`, whose
    # `from damo...` fails: Python put tools/, not the checkout's root, on the path
    diag = diagnose_paths(shipped, [DAMO])
    assert [c.id for c in diag.causes] == ["pythonpath-missing"]
    assert diag.causes[0].params["module"] == "damo"
    assert [e.signature for e in diag.causes[0].evidence] == ["imports/missing", "imports/frame"]


def test_an_installed_or_absolute_script_is_no_subfolder_of_a_checkout(shipped: Any) -> None:
    absolute = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/bin/train.py", line 3, in <module>\n'
        "    import damo\n"
        "ModuleNotFoundError: No module named 'damo'\n"
    )
    assert "pythonpath-missing" not in [c.id for c in diagnose_text(shipped, absolute).causes][:1]
