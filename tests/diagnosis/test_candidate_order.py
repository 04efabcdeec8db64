"""Which of a symptom's causes come first (issue 9, from the misses of batch-2026-12-01).

A cause a failure section names is a candidate even when it is generic; the framework a
catalogued line belongs to (a c10d store message is PyTorch's) weighs other frameworks'
causes down; equal weights break by evidence, then prior, then id; and a one-line paste
that is just an exception line is the failure. Lines are real, from the corpora.
"""

from __future__ import annotations

from kb.authoring.checked import load_rules
from kb.diagnosis.candidates import symptom_candidates
from kb.diagnosis.compiled import ensure_compiled
from kb.diagnosis.engine import diagnose_text
from kb.diagnosis.model import BASIS_SYMPTOM, Evidence

# corpora/batch-2026-12-01/hang-llamafactory-2072-title-nccluniqueid-store-socket-timeout.log
C10D = (
    "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
    "via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout"
)
# a torch.distributed store timing out (corpora, DistStoreError)
STORE = (
    "torch.distributed.DistStoreError: Timed out after 21 seconds waiting for clients. "
    "1/2 clients joined."
)
# corpora/batch-2026-12-01/port-pipelinerl-27-short-vllm-port-race.log (the whole log)
LISTEN = (
    "RuntimeError: The server socket has failed to listen on any local network address. "
    "port: 46571, useIpv6: 0, code: -9"
)
# corpora/batch-2026-12-01/iface-nccltests-219-title-internal-error-different-ifnames.log
NCCLTESTS = (
    "Test NCCL failure common.cu:959 'internal error - please report this issue to the "
    "NCCL developers / '"
)


def _named_causes(rules, symptom: str) -> list[str]:  # type: ignore[no-untyped-def]
    return list(rules.symptoms[symptom].failure["causes"])


def test_a_generic_cause_a_failure_section_names_is_a_candidate() -> None:
    rules = load_rules()
    diag = diagnose_text(rules, STORE + "\n")
    assert diag.causes and all(c.basis == BASIS_SYMPTOM for c in diag.causes)
    assert {c.symptom for c in diag.causes} == {"rendezvous-fails"}
    named = _named_causes(rules, "rendezvous-fails")
    generic = [cid for cid in named if rules.causes[cid].generic]
    assert generic, "the rendezvous failure section names a generic cause"
    assert set(generic) <= {c.id for c in diag.causes}


def test_a_pytorch_c10d_line_weighs_other_frameworks_causes_down() -> None:
    rules = load_rules()
    diag = diagnose_text(rules, C10D + "\n")
    areas = {rules.causes[c.id].area for c in diag.causes}
    assert not areas & {"paddle", "tensorflow", "mxnet", "horovod"}, diag.causes
    named = set(_named_causes(rules, "rendezvous-fails"))
    assert {c.id for c in diag.causes} <= named


def test_a_catalogue_line_shows_its_librarys_framework_in_the_explanation() -> None:
    rules = load_rules()
    cr = ensure_compiled(rules)
    assert cr.vocabulary.framework_libraries.get("torch") == "pytorch"
    ev = Evidence("-", 1, C10D, 0, len(C10D), "catalogue/torch")
    out = symptom_candidates(cr, {"rendezvous-fails": [ev]}, {}, {"frameworks": set()})
    assert out
    # the same line with no known library: the framework causes are not weighed down
    plain = Evidence("-", 1, C10D, 0, len(C10D), "rendezvous-fails/x")
    unweighed = symptom_candidates(cr, {"rendezvous-fails": [plain]}, {}, {})
    weights = {c.id: c.confidence for c in unweighed}
    framework = [cid for cid in weights if cr.causes[cid].area in cr.vocabulary.framework_areas]
    assert framework, "without the library, a framework cause ranks among the first"
    assert not [c for c in out if cr.causes[c.id].area in {"paddle", "tensorflow"}]


def test_equal_weights_break_by_evidence_then_prior_then_id() -> None:
    rules = load_rules()
    first = diagnose_text(rules, NCCLTESTS + "\n")
    again = diagnose_text(rules, NCCLTESTS + "\n")
    assert [c.id for c in first.causes] == [c.id for c in again.causes]
    confs = [c.confidence for c in first.causes]
    assert confs == sorted(confs, reverse=True)
    cr = ensure_compiled(rules)
    for a, b in zip(first.causes, first.causes[1:], strict=False):
        if round(a.confidence, 6) == round(b.confidence, 6):
            pa, pb = cr.causes[a.id].prior, cr.causes[b.id].prior
            assert pa > pb or (pa == pb and a.id < b.id), (a.id, b.id)
    # a cause with weak evidence of its own beats an equal prior without any
    sid = first.causes[0].symptom
    ev = Evidence("-", 1, NCCLTESTS, 0, 10, f"{sid}/x")
    # without the job's facts (its internal error kind included) two causes tie on their prior
    plain = symptom_candidates(cr, {sid: [ev]}, {}, {})
    tied = [c.id for c in plain if c.confidence == plain[0].confidence]
    assert len(tied) >= 2, "the nccl-tests line's likeliest causes tie on their prior"
    last = tied[-1]
    own: dict[str, tuple[float, list[Evidence], dict[str, str]]] = {
        last: (cr.causes[last].prior, [ev], {})
    }
    out = symptom_candidates(cr, {sid: [ev]}, own, {})
    assert out[0].id == last


def test_a_lone_pasted_exception_line_is_the_failure() -> None:
    rules = load_rules()
    # corpora/batch-2026-11-29/wrong-iface-aws-do-eks-69-gloo-loopback-fullmesh.log, alone
    diag = diagnose_text(rules, "RuntimeError: Engine core initialization failed\n")
    assert diag.failure is not None
    assert diag.causes and {c.symptom for c in diag.causes} == {"python-exception"}
    assert all(c.basis == BASIS_SYMPTOM for c in diag.causes)


def test_the_docs_example_exception_pasted_alone_is_a_failure() -> None:
    """tests/diagnosis/test_failures.py keeps this line in a longer text: no failure there."""
    rules = load_rules()
    diag = diagnose_text(rules, "ValueError: shown in the docs as an example, never raised\n")
    assert diag.failure is not None and diag.failure.kind == "exception"


def test_an_exception_line_in_a_longer_log_without_a_traceback_is_not_a_failure() -> None:
    rules = load_rules()
    text = "\n".join(
        [
            "INFO 01-01 starting the engine",
            "loading weights",
            "weights loaded",
            "warming up",
            "RuntimeError: Engine core initialization failed",
            "retrying with a smaller batch",
        ]
    )
    diag = diagnose_text(rules, text + "\n")
    assert "python-exception" not in {c.symptom for c in diag.causes}


def test_a_pasted_exception_close_to_a_known_message_keeps_that_messages_cause() -> None:
    rules = load_rules()
    diag = diagnose_text(rules, LISTEN + "\n")
    assert diag.causes and diag.causes[0].id == "port-in-use"  # the corpus's label
    assert diag.failure is not None, "the pasted exception is still a failure"


def test_gate_batch_2026_12_01g_a_failure_sections_order_breaks_near_ties(shipped) -> None:
    # Peterande/D-FINE#118 (a title): only the watchdog's WorkNCCL(...) ran for ... part;
    # job-hang lists nccl-timeout-hang first, code-version-mismatch (prior 0.35) seventh
    from kb.diagnosis.candidates import LISTED_LOWER
    from kb.diagnosis.engine import diagnose_paths
    from tests import corpora_loader as corpora

    log = corpora.path(
        "batch-2026-12-01g", "hang-dfine-118-two-a100-allreduce-timeout-title-zh.log"
    )
    causes = diagnose_paths(shipped, [log]).causes
    assert [c.id for c in causes][:2] == ["nccl-timeout-hang", "nccl-wrong-interface"]
    # the same two causes weighed directly: the second listed loses one step
    ev = Evidence("pasted", 1, causes[0].evidence[0].text)
    direct = symptom_candidates(shipped, {"job-hang": [ev]}, {}, {})
    assert [c.id for c in direct][:1] == ["nccl-timeout-hang"]
    assert f"listed 2. for the failure: x{LISTED_LOWER:.2f}" in direct[1].explanation
