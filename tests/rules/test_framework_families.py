"""The framework rules recognise a *family* of messages, not one wording: the same failure
as printed by other versions, wrapped by a terminal (spaces lost), or reached through
another reader; and the more specific cause ranks first where two could apply.

The lines below are real (issue threads named in each rule's references); the property
tests vary them the way terminals and versions do.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from kb.diagnosis.engine import diagnose_paths, diagnose_text
from kb.diagnosis.matching import run_signatures
from kb.rules.knowledge import KnowledgeBase
from tests import corpora_loader as corpora

FRAMEWORK_AREAS = {"cuda", "tensorflow", "paddle", "mxnet", "pytorch", "perf", "data"}


def _first(rules: KnowledgeBase, log: str) -> str | None:
    causes = diagnose_text(rules, log).causes
    return causes[0].id if causes else None


def _drop_one_space(line: str, rng: random.Random) -> str:
    spaces = [i for i, ch in enumerate(line) if ch == " "]
    i = rng.choice(spaces)
    return line[:i] + line[i + 1 :]


@pytest.mark.parametrize(
    ("line", "cause"),
    [
        (
            "Cuda Error: CUDA driver version is insufficient for CUDA runtime version",
            "cuda-driver-too-old",
        ),
        (
            "CUDA error: the provided PTX was compiled with an unsupported toolchain.",
            "cuda-driver-too-old",
        ),
        (
            "RuntimeError: Collective ops must be configured at program startup",
            "tf-distribution-strategy",
        ),
        (
            "tensorflow.python.framework.errors_impl.InternalError: Collective ops is aborted by: "
            "Device /job:worker/replica:0/task:0/device:GPU:0 is joining a group with "
            "incompatible device typeCPU (group_key=3)",
            "tf-distribution-strategy",
        ),
    ],
)
def test_a_message_wrapped_by_a_terminal_is_still_recognised(
    rules: KnowledgeBase, line: str, cause: str
) -> None:
    """Terminals drop the space where they wrap; any one space lost still names the cause."""
    rng = random.Random(35)
    head = line[: line.index(":") + 1]  # the prefix is not part of the message
    for _ in range(40):
        wrapped = head + _drop_one_space(line[len(head) :], rng)
        assert _first(rules, wrapped) == cause, wrapped


@pytest.mark.parametrize(
    "log",
    [
        # tfds 2.1 on TF 1.14 (mit-han-lab/data-efficient-gans#46)
        "Traceback (most recent call last):\n"
        '  File "training/dataset.py", line 14, in <module>\n'
        "    import tensorflow_datasets as tfds\n"
        "AttributeError: module 'tensorflow.compat.v2'has no attribute 'contrib'",
        # tfds 1.1 on TF 2.0 alpha, Windows paths (tensorflow/datasets#802)
        ">>> import tensorflow_datasets as tfds\n"
        "Traceback (most recent call last):\n"
        '  File "C:\\Users\\u\\envs\\venv\\lib\\site-packages\\tensorflow_datasets\\core\\'
        'dataset_info.py", line 53, in <module>\n'
        "AttributeError: module 'tensorflow._api.v2.autograph.experimental' has no attribute "
        "'do_not_convert'",
        # no traceback, but the installed versions are listed (data-efficient-gans#46)
        "tensorflow-datasets     2.1.0\n"
        "tensorflow-gpu            1.14.0\n"
        "AttributeError: module 'tensorflow.compat.v2'has no attribute 'contrib'",
    ],
)
def test_a_tensorflow_api_error_raised_inside_tfds_is_a_tfds_version_problem(
    rules: KnowledgeBase, log: str
) -> None:
    ids = [c.id for c in diagnose_text(rules, log).causes]
    assert ids[:1] == ["tfds-version"]
    # the generic code/framework mismatch may be listed, but after the specific cause
    assert "code-version-mismatch" not in ids[:1]


def test_the_same_attribute_error_outside_tfds_stays_a_code_version_mismatch(
    rules: KnowledgeBase,
) -> None:
    log = "AttributeError: module 'tensorflow.compat.v2' has no attribute 'contrib'"
    assert _first(rules, log) == "code-version-mismatch"


@pytest.mark.parametrize(
    "line",
    [
        'RuntimeError: [XXXXX/DALI/dali/pipeline/operators/reader/loader/file_loader.h:104] Assert on "Size() > 0" failed: No files found.',
        'RuntimeError: [/opt/dali/dali/pipeline/operators/reader/loader/lmdb.h:73] Assert on "mdb_env_open(mdb_env_, db_path_.c_str(), mdb_flags, 0664) == 0" failed: LMDB Error: No such file or directory',
        "[Warning]: File _train.rec has extension that is not supproted by the decoder. Supported extensions: .jpg, .jpeg, .png",
        "RuntimeError: Found 0 images in subfolders of: ./data",
        "FileNotFoundError: Couldn't find any class folder in face_images/vgg_verify_set.",
        'mxnet.base.MXNetError: [14:09:27] src/io/local_filesys.cc:209: Check failed: allow_null:  LocalFileSystem::Open "home/cl/insightface/datasets/faces_emore/train.rec": No such file or directory',
        "mxnet.base.MXNetError: [11:21:00] src/io/input_split_base.cc:173: Check failed: files_.size() != 0U (0 vs. 0) : Cannot find any files that matches the URI pattern /tmp/val.rec",
        "[2023/03/08 22:38:23] ppcls ERROR: Exception occured when parse line: ./dataset/Person_BC/train/pos/152096.jpg with msg: list index out of range",
    ],
)
def test_every_reader_saying_it_found_no_data_points_at_the_dataset(
    rules: KnowledgeBase, line: str
) -> None:
    assert _first(rules, line) == "dataset-format", line


def test_a_stray_file_skipped_by_dali_is_not_a_dataset_problem(rules: KnowledgeBase) -> None:
    line = "[Warning]: File i0000010_0_0.dcm has extension that is not supported by the decoder."
    assert _first(rules, line) is None


# ---------------------------------------------------------------- library version checks


@pytest.mark.parametrize(
    "line",
    [
        # OpenMMLab packages, each bound style (open-mmlab/mmdetection#4058, ColonFormer#4)
        "AssertionError: MMCV==1.1.4 is used but incompatible. Please install mmcv>=1.1.5, <=1.3.",
        "AssertionError: MMCV==2.0.0 is used but incompatible. Please install mmcv>=[1, 1, 4], <=[1, 3, 0].",
        "AssertionError: MMCV==1.5.3 is used but incompatible. Please install mmcv>=(1, 3, 13, 0, 0, 0), <=(1, 5, 0, 0, 0, 0).",
        "MMEngine==0.7.0 is used but incompatible. Please install mmengine>=0.7.1, <1.0.0.",
        # transformers' require_version
        "ImportError: tokenizers>=0.11.1,!=0.11.3,<0.14 is required for a normal functioning of this module, but found tokenizers==0.19.1.",
        "ImportError: huggingface-hub>=1.3.0,<2.0 is required for a normal functioning of this module, but found huggingface-hub==0.35.3.",
        # setuptools entry points
        "pkg_resources.VersionConflict: (rekall-core 1.6.0 (/home/noraj/.local/lib/python2.7/site-packages), Requirement.parse('rekall-core<1.6,>=1.5.0'))",
        # TensorFlow Probability's import-time check
        "ImportError: This version of TensorFlow Probability requires TensorFlow version >= 2.18; Detected an installation of version 2.16.2. Please upgrade TensorFlow to proceed.",
    ],
)
def test_a_library_refusing_the_installed_version_of_another_is_a_version_mismatch(
    rules: KnowledgeBase, line: str
) -> None:
    assert _first(rules, line) == "code-version-mismatch", line


def test_the_same_check_of_tensorflow_datasets_stays_a_tfds_problem(rules: KnowledgeBase) -> None:
    line = (
        "ImportError: This version of TensorFlow Datasets requires TensorFlow version >= 2.1.0; "
        "Detected an installation of version 1.15.0. Please upgrade TensorFlow to proceed."
    )
    ids = [c.id for c in diagnose_text(rules, line).causes]
    assert ids[:1] == ["tfds-version"]


@pytest.mark.parametrize(
    "line",
    [
        # healthy logs print these: a DeepSpeed op report, pip's resolution, a pip warning
        " [WARNING]  sparse_attn requires a torch version >= 1.5 and < 2.0 but detected 2.3",
        "Requirement already satisfied: tokenizers!=0.11.3,<0.14,>=0.11.1 in /usr/lib/python3/dist-packages (0.13.3)",
        "tensorflow 2.15.0 requires numpy<2.0.0,>=1.23.5, but you have numpy 2.2.6 which is incompatible.",
    ],
)
def test_version_talk_in_a_healthy_log_is_no_mismatch(rules: KnowledgeBase, line: str) -> None:
    assert _first(rules, line) is None, line


# ---------------------------------------------------------------- the model repository's own package


@pytest.mark.parametrize(
    "module",
    [
        "megatron.training",
        "megatron.legacy.model",
        "megatron.optimizer",
        "megatron.data.gpt_dataset",
        "models",
        "models.yolo",
        "utils.general",
        "src",
    ],
)
def test_a_package_of_the_repository_itself_is_a_pythonpath_problem_first(
    rules: KnowledgeBase, module: str
) -> None:
    """The repository's package is never a pip requirement: PYTHONPATH before a version
    mismatch, whichever wording Python uses."""
    for line in (
        f"ModuleNotFoundError: No module named '{module}'",
        f"ImportError: No module named '{module}'",
    ):
        ids = [c.id for c in diagnose_text(rules, line).causes]
        assert ids[:1] == ["pythonpath-missing"], (line, ids)


@pytest.mark.parametrize(
    "line",
    [
        # megatron.core is the pip package; `is not a package`: another megatron was imported
        "ModuleNotFoundError: No module named 'megatron.core'",
        "ModuleNotFoundError: No module named 'megatron.training.tokenizer'; 'megatron.training' is not a package",
        # third-party packages stay requirements
        "ModuleNotFoundError: No module named 'modelscope'",
        "ModuleNotFoundError: No module named 'utilities'",
    ],
)
def test_other_missing_modules_are_not_read_as_the_repository(
    rules: KnowledgeBase, line: str
) -> None:
    assert _first(rules, line) != "pythonpath-missing", line


# ---------------------------------------------------------------- TF_CONFIG consistent with itself

TASK_TYPES = ("chief", "worker", "ps", "master")


def _tf_config(cluster: dict[str, list[str]], task: str, rng: random.Random) -> str:
    """TF_CONFIG as TensorFlow prints it (Python repr) or as a script exports it (JSON),
    with the two keys in either order."""
    parts = [("cluster", cluster), ("task", {"type": task, "index": 0})]
    rng.shuffle(parts)
    if rng.random() < 0.5:
        return "INFO:tensorflow:TF_CONFIG environment variable: " + repr(dict(parts))
    return "export TF_CONFIG='" + json.dumps(dict(parts)) + "'"


@pytest.mark.slow
def test_a_task_type_its_own_cluster_lacks_is_a_distribution_setup_error(
    rules: KnowledgeBase,
) -> None:
    rng = random.Random(207)
    seen = {True: 0, False: 0}
    for _ in range(120):
        jobs = rng.sample(TASK_TYPES, rng.randint(1, 3))
        cluster = {j: [f"10.0.0.{i}:2222" for i in range(rng.randint(1, 3))] for j in jobs}
        task = rng.choice(TASK_TYPES)
        line = _tf_config(cluster, task, rng)
        inconsistent = task not in cluster
        seen[inconsistent] += 1
        ids = [c.id for c in diagnose_text(rules, line).causes]
        assert (ids[:1] == ["tf-distribution-strategy"]) is inconsistent, line
    assert min(seen.values()) > 20  # both kinds were tried


# ---------------------------------------------------------------- damaged or missing data


@pytest.mark.parametrize(
    "line",
    [
        "tensorflow.python.framework.errors_impl.DataLossError: corrupted record at 12",
        "  (0) Data loss: truncated record at 136219998",
        "DataLossError (see above for traceback): corrupted record at 3289898.",
        "FileNotFoundError: [Errno 2] No such file or directory: 'RTE-bin/input0/dict.txt'",
        "FileNotFoundError: Dict not found: /zjw/testproject/data/mustc/en-fr/dict.txt",
        "ValueError: num_samples should be a positive integer value, but got num_samples=0",
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/processed/train.csv'",
    ],
)
def test_a_damaged_empty_or_unprepared_dataset_is_a_dataset_problem(
    rules: KnowledgeBase, line: str
) -> None:
    assert _first(rules, line) == "dataset-format", line


@pytest.mark.parametrize(
    "line",
    [
        # a checkpoint, a program, an output file, a pretrained model: not the dataset
        "DataLossError (see above for traceback): Unable to open table file ckpt/handlang-small-105435.meta: Data loss: not an sstable (bad magic number): perhaps your file is in a different file format and you need to use a different restore operator?",
        "FileNotFoundError: [Errno 2] No such file or directory: 'mpicxx': 'mpicxx'",
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/output.txt'",
        "FileNotFoundError: [Errno 2] No such file or directory: '/data/pretrained/checkpoint_best.pt'",
        "FileNotFoundError: [Errno 2] No such file or directory: '/data/configs/train.yaml'",
        "python3: can't open file 'train.py': [Errno 2] No such file or directory",
    ],
)
def test_other_missing_files_are_not_read_as_the_dataset(rules: KnowledgeBase, line: str) -> None:
    assert _first(rules, line) != "dataset-format", line


# ---------------------------------------------------------------- warm-up longer than the run


def _warmup_signature(rules: KnowledgeBase):  # type: ignore[no-untyped-def]
    cause = rules.causes["benchmark-misconfig"]
    return next(s for s in cause.signatures if s.id == "warmup-longer-than-run")


def test_hyperscan_accepts_every_warmup_regex(rules: KnowledgeBase) -> None:
    hyperscan = pytest.importorskip("hyperscan")
    for pattern in (m.pattern for m in _warmup_signature(rules).matchers):
        db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        flags = hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_SINGLEMATCH
        db.compile(expressions=[pattern.encode()], ids=[0], elements=1, flags=[flags])


@pytest.mark.slow
def test_the_warmup_signature_fires_only_when_the_warmup_is_longer_than_the_run(
    rules: KnowledgeBase,
) -> None:
    sig = _warmup_signature(rules)
    rng = random.Random(834)
    fired = 0
    for _ in range(3000):
        warmup, iters = rng.randint(0, 20000), rng.randint(1, 20000)
        flags = [f"--warmup_steps {warmup}", f"--num_iter={iters}", "--batch_size 64"]
        rng.shuffle(flags)
        line = "python ./main.py --mode=training_benchmark " + " ".join(flags)
        results = run_signatures([sig], [line])
        if results:
            fired += 1
            assert warmup > iters, line
            assert results[0].params == {"warmup_iters": str(warmup), "run_iters": str(iters)}
    assert fired > 1000  # not vacuous: most longer warm-ups are caught


def test_zero_throughput_after_a_too_long_warmup_is_a_benchmark_misconfiguration(
    rules: KnowledgeBase,
) -> None:
    log = (
        "python ./main.py --mode=training_benchmark --warmup_steps 200 --batch_size 64 "
        "--num_iter 100 --use_xla --use_dali\n"
        "DLL 2021-02-18 06:21:29.862595 - () train_throughput : 0\n"
    )
    diag = diagnose_text(rules, log)
    assert [c.id for c in diag.causes][:1] == ["benchmark-misconfig"]
    assert diag.causes[0].params["warmup_iters"] == "200"


# ---------------------------------------------------------------- healthy logs stay clean


def _healthy_logs() -> list[Path]:
    return corpora.healthy("dev", "batch-2026-11-29", "dev-h200")


@pytest.mark.slow
def test_healthy_logs_of_every_corpus_get_no_framework_cause(rules: KnowledgeBase) -> None:
    mine = {c for c in rules.causes if rules.area_of(c) in FRAMEWORK_AREAS}
    healthy = _healthy_logs()
    assert len(healthy) >= 10
    for path in healthy:
        found = {c.id for c in diagnose_paths(rules, [path]).causes}
        assert not found & mine, (path.name, found & mine)
