"""A failure whose cause no line names: the symptom's probable causes, below "likely".

A bare NCCL error code proves NCCL failed; the engine then lists the causes of the
symptom, ranked by their priors and by what the logs show of the job (container, one
node or several, the error's kind, the framework), marked `basis: symptom`, and says
to rerun with NCCL_DEBUG=INFO. Healthy logs must still give nothing.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from kb.authoring.checked import load_rules
from kb.diagnosis.candidates import SYMPTOM_MAX
from kb.diagnosis.engine import diagnose_paths, diagnose_text
from kb.diagnosis.model import BASIS_SYMPTOM
from kb.diagnosis.ranking import LIKELY

from .conftest import DATA_CORPUS, DEV_CORPUS, FIXTURE_RULES, HELDOUT

BARE = (
    "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, "
    "unhandled system error, NCCL version 2.7.8"
)


def _ids(diag) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.id for c in diag.causes]


def test_a_bare_nccl_error_lists_the_symptoms_causes_below_likely(rules) -> None:
    diag = diagnose_text(rules, "epoch 0\n" + BARE + "\n")
    assert diag.causes, "a failure is certainly present: never 'no known problem'"
    assert diag.symptoms == ["nccl-init-fails"]
    for c in diag.causes:
        assert c.basis == BASIS_SYMPTOM and c.symptom == "nccl-init-fails"
        assert 0 < c.confidence <= SYMPTOM_MAX < LIKELY
        assert c.evidence[0].line == 2 and "unhandled system error" in c.evidence[0].text
    assert [c.confidence for c in diag.causes] == sorted(
        (c.confidence for c in diag.causes), reverse=True
    )
    out = diag.causes[0].to_json(explain=True)
    assert out["basis"] == "symptom" and out["symptom"] == "nccl-init-fails"
    assert "only the symptom 'nccl-init-fails' is visible" in out["explanation"]


@pytest.mark.parametrize(
    ("context", "first"),
    [
        # a container on one node: /dev/shm
        (
            "docker run --gpus all img\nsrun --nnodes=1 python /workspace/train.py",
            "nccl-shm-too-small",
        ),
        # containers on several nodes: their network
        (
            "docker run --gpus all img\ntorchrun --nnodes=2 /workspace/train.py",
            "docker-network-mode",
        ),
        # several nodes, no container: the interface
        ("torchrun --nnodes=4 --nproc_per_node=8 train.py", "nccl-wrong-interface"),
        # a launcher that puts every rank on localhost is one node, in a container or not
        ("mpirun -np 2 -H localhost:2 /workspace/all_reduce_perf -g 1", "nccl-shm-too-small"),
        ("mpirun -np 2 -H gpu1:1,gpu2:1 /workspace/all_reduce_perf", "docker-network-mode"),
    ],
)
def test_what_the_logs_show_of_the_job_reorders_the_candidates(
    rules, context: str, first: str
) -> None:
    diag = diagnose_text(rules, context + "\n" + BARE + "\n")
    assert _ids(diag)[0] == first, [(c.id, c.explanation) for c in diag.causes]


def test_the_kind_of_nccl_error_points_at_different_causes(rules) -> None:
    one_node = "srun --nnodes=1 python train.py\n"
    system = diagnose_text(rules, one_node + BARE)
    cuda = diagnose_text(rules, one_node + BARE.replace("system error", "cuda error"))
    assert _ids(system)[0] == "nccl-shm-too-small"
    assert _ids(cuda)[0] == "nccl-p2p-failure"
    assert "NCCL returned a cuda error: x2.5" in cuda.causes[0].explanation


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: NCCL Error 2: unhandled system error",
        "fastmoe: Test NCCL failure common.cu:777 'unhandled system error'",
        "ncclSystemError: System call (socket, malloc, munmap, etc) failed.",
        "fail to new train...e= NCCL error in: ProcessGroupNCCL.cpp:272, unhanled system error",
        "> [rank3]: torch.distributed.DistBackendError: NCCL error in: x.cpp:1, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
        # RCCL (NCCL on AMD GPUs) returns the same codes, here through Paddle
        "Rccl error, unhandled system error",
        "RuntimeError: RCCL error in: ProcessGroupNCCL.cpp:1169, unhandled system error",
    ],
)
def test_every_wording_of_an_nccl_system_error_is_the_symptom(rules, line: str) -> None:
    diag = diagnose_text(rules, line + "\n")
    assert diag.symptoms == ["nccl-init-fails"], line
    assert "NCCL returned a system error" in diag.causes[0].explanation


def test_error_words_without_nccl_are_not_the_symptom(rules) -> None:
    diag = diagnose_text(rules, "ValueError: internal error in the parser\nInvalid usage: -x\n")
    assert diag.causes == [] and diag.symptoms == []


def test_weak_evidence_of_a_cause_lifts_it_among_the_candidates(rules) -> None:
    cuda = BARE.replace("system error", "cuda error")
    weak = "vm:1:1 [0] NCCL INFO Bootstrap : Using veth12ab:10.0.0.5<0>"  # a note alone
    plain = {c.id: c for c in diagnose_text(rules, cuda).causes}
    lifted = {c.id: c for c in diagnose_text(rules, weak + "\n" + cuda).causes}
    assert lifted["nccl-wrong-interface"].confidence > plain["nccl-wrong-interface"].confidence
    assert "its own weak evidence" in lifted["nccl-wrong-interface"].explanation
    assert any("veth12ab" in e.text for e in lifted["nccl-wrong-interface"].evidence)


def test_a_likely_cause_leaves_no_room_for_symptom_candidates(rules) -> None:
    unreachable = "NCCL WARN Connect to 10.0.0.2<4000> failed : Network is unreachable"
    diag = diagnose_text(rules, unreachable + "\n" + BARE + "\n")
    assert _ids(diag) == ["nccl-wrong-interface"]
    assert diag.causes[0].basis == "evidence"
    assert "basis" not in diag.causes[0].to_json()


def test_the_traits_and_their_weights_come_from_the_rules(tmp_path: Path) -> None:
    one_node = "srun --nnodes=1 python train.py\n"

    def shm(rules_dir: Path) -> tuple[str, str]:
        """(the first candidate, the explanation of nccl-shm-too-small or '')."""
        causes = diagnose_text(load_rules(rules_dir), one_node + BARE).causes
        why = next((c.explanation for c in causes if c.id == "nccl-shm-too-small"), "")
        return causes[0].id, why

    first, why = shm(FIXTURE_RULES)
    assert first == "nccl-shm-too-small" and re.search(r"one node \(.*?\): x2;", why), why
    rules = tmp_path / "rules"
    shutil.copytree(FIXTURE_RULES, rules)
    traits = rules / "vocabulary" / "traits.yaml"
    text = traits.read_text()
    assert "{single-node: 2.0, multi-node: 0.6}" in text
    traits.write_text(text.replace("{single-node: 2.0, multi-node: 0.6}", "{single-node: 0.01}"))
    first, why = shm(rules)
    assert first != "nccl-shm-too-small"
    assert not why or re.search(r"one node \(.*?\): x0.01;", why), why
    cause = rules / "nccl" / "nccl-shm-too-small.yaml"
    text = cause.read_text()
    assert "traits: [container, intra-node, err-system]\n" in text
    cause.write_text(text.replace("traits: [container, intra-node, err-system]\n", ""))
    _, why = shm(rules)
    assert "one node" not in why and "NCCL returned a system error: x0.6" in why, why


def test_gate_bare_error_logs_of_batch_2026_11_29_and_dev_get_candidates(shipped) -> None:
    # nccl-tests on one host (four ranks, one process): a system error there is /dev/shm
    diag = diagnose_paths(
        shipped, [HELDOUT / "shm-nccl-473-nccl-tests-conda-unhandled-system-error.log"]
    )
    assert diag.causes[0].basis == BASIS_SYMPTOM
    assert diag.causes[0].id == "nccl-shm-too-small"
    assert "one node (all 4 nccl-tests ranks run on fastmoe)" in diag.causes[0].explanation
    # old PyTorch's misspelt `unhanled system error`, and nothing else
    bare = diagnose_paths(
        shipped, [DATA_CORPUS / "dockernet-pytorch-23363-two-containers-bridge.log"]
    )
    assert bare.causes and all(c.basis == BASIS_SYMPTOM for c in bare.causes)
    assert all(c.confidence < LIKELY for c in bare.causes)


def _healthy() -> list[Path]:
    return [r.path for c in (DEV_CORPUS, DATA_CORPUS, HELDOUT) for r in c.rows() if r.healthy]


def test_there_are_healthy_logs_to_check() -> None:
    assert len(_healthy()) >= 20


@pytest.mark.slow
@pytest.mark.parametrize("path", _healthy(), ids=lambda p: p.name)
def test_healthy_logs_give_no_cause_and_no_failure_symptom(shipped, path: Path) -> None:
    diag = diagnose_paths(shipped, [path])
    assert diag.causes == [], [(c.id, c.basis) for c in diag.causes]
    failures = [s for s in diag.symptoms if shipped.symptoms[s].group != "slow"]
    assert failures == []


@pytest.mark.slow
def test_cli_marks_symptom_candidates_and_says_what_to_do(cli, tmp_path: Path) -> None:
    log = tmp_path / "rank0.log"
    log.write_text("srun --nnodes=1 python train.py\n" + BARE + "\n")
    proc = cli("diagnose", "--json", str(log))
    assert proc.returncode == 1  # a failure is present
    data = json.loads(proc.stdout)
    assert data["symptoms"] == ["nccl-init-fails"]
    assert {c["basis"] for c in data["causes"]} == {"symptom"}
    assert all(c["confidence"] < LIKELY for c in data["causes"])
    human = " ".join(cli("diagnose", str(log)).stdout.split())
    assert "but only the symptom: no line names its cause" in human
    assert "rerun with NCCL_DEBUG=INFO" in human
    assert "confidence 0.45, from the symptom only" in human or "from the symptom only" in human


@pytest.mark.slow
def test_a_symptom_line_at_info_level_is_a_probe_not_a_failure(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(FIXTURE_RULES, rules)
    (rules / "symptoms" / "library-load-fails.yaml").write_text(
        "id: library-load-fails\ntitle: A library cannot be loaded\ndescription: x\n"
        "group: library\nsignatures:\n  - id: so-missing\n    weight: 0.6\n    matchers:\n"
        "      - {type: substring, text: 'cannot open shared object file'}\n"
        "questions:\n  - id: q\n    text: Which library?\n    answers:\n"
        "      - {id: a, text: cudart, confirms: [cuda-lib-missing]}\n"
        "      - {id: b, text: other}\n"
    )
    (rules / "cuda" / "cuda-lib-missing.yaml").write_text(
        (FIXTURE_RULES / "cuda" / "cuda-lib-missing.yaml")
        .read_text()
        .replace("symptoms: [job-fails]", "symptoms: [job-fails, library-load-fails]")
    )
    compiled = load_rules(rules)
    probe = (
        "gpu1:7:7 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: "
        "cannot open shared object file: No such file or directory"
    )
    assert diagnose_text(compiled, probe + "\n").causes == []
    failure = "ImportError: libfoo.so.1: cannot open shared object file: No such file or directory"
    diag = diagnose_text(compiled, failure + "\n")
    assert diag.symptoms == ["library-load-fails"]
    assert [(c.id, c.basis) for c in diag.causes] == [("cuda-lib-missing", BASIS_SYMPTOM)]
