"""The framework rules recognise a *family* of messages, not one wording: the same failure
as printed by other versions, wrapped by a terminal (spaces lost), or reached through
another reader; and the more specific cause ranks first where two could apply.

The lines below are real (issue threads named in each rule's references); the property
tests vary them the way terminals and versions do.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest

from kb.diagnosis.engine import diagnose_paths, diagnose_text
from kb.knowledge import KnowledgeBase
from kb.matching import run_signatures

TESTS = Path(__file__).resolve().parents[1]
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


# ---------------------------------------------------------------- warm-up longer than the run

WARM = r"--(?:num[_-])?warm[_-]?up(?:[_-](?:steps|iters?|iterations|batches))?"
RUN = r"--[\w-]*(?:iter|batches)[\w-]*"


def _bigger_smaller() -> list[tuple[str, str]]:
    """(bigger, smaller) integer regexes: more digits, or as many and a larger first digit."""
    out = [(rf"[1-9]\d{{{n},}}", rf"\d{{1,{n}}}") for n in range(1, 5)]
    for length in range(1, 5):
        rest = rf"\d{{{length - 1}}}" if length > 1 else ""
        for d in range(2, 10):
            low = f"[1-{d - 1}]" if d > 2 else "1"
            out.append((rf"{d}{rest}", rf"{low}{rest}"))
    return out


def generated_warmup_patterns() -> list[str]:
    """How the `warmup-longer-than-run` regexes are built; regenerate them from here."""
    warm_first = "|".join(rf"{b}\b.*{RUN}[= ]{s}\b" for b, s in _bigger_smaller())
    run_first = "|".join(rf"{s}\b.*{WARM}[= ]{b}\b" for b, s in _bigger_smaller())
    return [rf"{WARM}[= ](?:{warm_first})", rf"{RUN}[= ](?:{run_first})"]


def _warmup_signature(rules: KnowledgeBase):  # type: ignore[no-untyped-def]
    cause = rules.causes["benchmark-misconfig"]
    return next(s for s in cause.signatures if s.id == "warmup-longer-than-run")


def test_the_warmup_regexes_are_the_generated_ones(rules: KnowledgeBase) -> None:
    assert [m.pattern for m in _warmup_signature(rules).matchers] == generated_warmup_patterns()


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
    found = list((TESTS / "data" / "logs").glob("*healthy*.log"))
    for corpus in (TESTS / "heldout", TESTS.parents[1] / "shared" / "corpus" / "dev"):
        labels = corpus / "labels.csv"
        if labels.is_file():
            with labels.open(newline="", encoding="utf-8") as fh:
                rows = [r for r in csv.DictReader(fh) if r["cause_id"].strip() == "none"]
            found += [
                p
                for r in rows
                for p in (corpus / r["file"], corpus / "logs" / r["file"])
                if p.is_file()
            ]
    return found


def test_healthy_logs_of_every_corpus_get_no_framework_cause(rules: KnowledgeBase) -> None:
    mine = {c for c in rules.causes if rules.area_of(c) in FRAMEWORK_AREAS}
    healthy = _healthy_logs()
    assert len(healthy) >= 10
    for path in healthy:
        found = {c.id for c in diagnose_paths(rules, [path]).causes}
        assert not found & mine, (path.name, found & mine)
