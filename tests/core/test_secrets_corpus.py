"""Secrets are masked in what leaves the machine, by the corpus in data/secrets/: every
form of `masked.tsv` becomes its masked form, every line of `plain.txt` stays as it is;
key bodies without their BEGIN line, values seen twice, the diagnosis JSON (`diagnose
--json`, and `--no-mask`), and masking in time linear in the text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kb.util.secrets import MASK, mask, mask_json

DATA = Path(__file__).parent / "data" / "secrets"
FIXTURE_RULES = Path(__file__).parents[1] / "diagnosis" / "rules"


def _lines(name: str) -> list[str]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("# ")]


MASKED = [tuple(line.split("\t")) for line in _lines("masked.tsv")]
PLAIN = _lines("plain.txt")

KEY_BODY = [
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "QyNTUxOQAAACDx0c3a4cZ2uQm0l6I1r6Yk5Qp9f0xW4VqK3n8y7t2k1wAAAJhQk0mYUJNJ",
    "mAAAAAtzc2gtZWQyNTUxOQAAACDx0c3a4cZ2uQm0l6I1r6Yk5Qp9f0xW4VqK3n8y7t2k1w",
]


def test_the_corpus_is_big_enough() -> None:
    assert len(MASKED) >= 35 and len(PLAIN) >= 35


@pytest.mark.parametrize(("text", "masked"), MASKED, ids=[m[1][:40] for m in MASKED])
def test_each_form_of_secret_is_masked_and_its_name_kept(text: str, masked: str) -> None:
    assert mask(text) == masked
    assert mask(masked) == masked  # masking twice changes nothing


@pytest.mark.parametrize("line", PLAIN)
def test_near_misses_are_left_alone(line: str) -> None:
    assert mask(line) == line


def test_a_key_body_is_masked_without_its_begin_line() -> None:
    """An excerpt that starts inside the key (the BEGIN line scrolled away)."""
    tail = "\n".join([*KEY_BODY[1:], "-----END OPENSSH PRIVATE KEY-----", "next line"])
    masked = mask(f"copied:\n{tail}")
    assert masked == f"copied:\n{MASK}\n{MASK}\n-----END OPENSSH PRIVATE KEY-----\nnext line"
    one = mask(f"{KEY_BODY[2]}\n-----END RSA PRIVATE KEY-----")  # one line above END
    assert KEY_BODY[2] not in one
    bare = mask("a\n" + "\n".join(KEY_BODY) + "\nb")  # neither BEGIN nor END: a block
    assert bare == f"a\n{MASK}\n{MASK}\n{MASK}\nb"  # line for line: numbers stay


def test_a_lone_base64_line_and_hex_digests_are_not_key_bodies() -> None:
    digest = "4f8a9d0c1e2b3a4f5d6e7c8b9a0f1e2d3c4b5a694f8a9d0c1e2b3a4f5d6e7c8b"
    text = f"{KEY_BODY[0]}\nchecksums:\n{digest}\n{digest}\n"
    assert mask(text) == text


def test_a_value_masked_once_is_masked_wherever_it_appears() -> None:
    text = "export DB_PASSWORD=Tr0ub4dor3\n...\nconnecting with Tr0ub4dor3 as bob\n"
    assert "Tr0ub4dor3" not in mask(text)
    assert mask(text).endswith(f"connecting with {MASK} as bob\n")


def test_mask_json_masks_log_text_and_params_but_not_ids() -> None:
    diag: dict[str, Any] = {
        "causes": [
            {
                "id": "git-auth-failed",
                "title": "Git credentials are wrong",
                "evidence": [
                    {"file": "rank0.log", "line": 3, "text": "fatal: https://bob:S3cr3t!@git.x/r"}
                ],
                "params": {"password": "hunter2", "url": "https://bob:S3cr3t!@git.x/r", "n": "3"},
                "explanation": "matched S3cr3t! in a URL",
                "fixes": ["set-git-credentials"],
            }
        ],
        "stats": {"files": 1, "lines": 3},
    }
    got = mask_json(diag)
    cause = got["causes"][0]
    assert cause["evidence"][0]["text"] == f"fatal: https://bob:{MASK}@git.x/r"
    assert cause["params"] == {"password": MASK, "url": f"https://bob:{MASK}@git.x/r", "n": "3"}
    assert cause["explanation"] == f"matched {MASK} in a URL"  # seen in the URL: masked here too
    assert (cause["id"], cause["title"], cause["fixes"]) == (
        "git-auth-failed",
        "Git credentials are wrong",
        ["set-git-credentials"],
    )
    assert got["stats"] == diag["stats"]
    assert diag["causes"][0]["params"]["password"] == "hunter2"  # a copy: the input is kept


CUDA = "OSError: libcudart.so.10.1: cannot open shared object file: No such file or directory"


def _diagnose(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DLPERF_HELP_RULES=str(FIXTURE_RULES))
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return subprocess.run(
        [sys.executable, "-m", "kb.cli.main", "diagnose", "--json", "--explain", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )


@pytest.mark.slow
def test_diagnose_json_is_masked_unless_no_mask_and_the_diagnosis_is_the_same(
    tmp_path: Path,
) -> None:
    token = "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"
    log = tmp_path / "run.log"
    log.write_text(f"export HF_TOKEN={token}\n{CUDA} (HF_TOKEN={token})\n")
    masked, plain = _diagnose(tmp_path, "run.log"), _diagnose(tmp_path, "--no-mask", "run.log")
    assert masked.returncode == plain.returncode == 1, masked.stderr + plain.stderr
    assert token not in masked.stdout
    assert token in plain.stdout
    got, raw = json.loads(masked.stdout), json.loads(plain.stdout)
    assert [c["id"] for c in got["causes"]] == [c["id"] for c in raw["causes"]]
    assert [c["confidence"] for c in got["causes"]] == [c["confidence"] for c in raw["causes"]]
    assert got["causes"][0]["id"] == "cuda-lib-missing"
    assert got["causes"][0]["evidence"][0]["text"] == f"{CUDA} (HF_TOKEN={MASK}"  # to a space
    assert got["causes"][0]["params"]["library"] == "libcudart.so.10.1"


def test_diagnose_help_documents_no_mask(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kb.cli.main", "diagnose", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "--no-mask" in proc.stdout and "masked" in proc.stdout


HOSTILE = {
    "words joined by dashes": "a-",
    "words": "a ",
    "scheme after scheme": "a://b:",
    "names": "password",
    "assignments": "token=",
    "key names": "A_KEY=",
    "quotes": '"password": "',
    "at signs after a URL user": "@",
    "commands": "docker login -p ",
    "key lines": "QUJDRA" * 11 + "\n",
    "END lines": "-----END RSA PRIVATE KEY-----\n",
}


def _seconds(text: str) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        mask(text)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("unit", list(HOSTILE.values()), ids=list(HOSTILE))
@pytest.mark.slow
def test_masking_time_grows_linearly(unit: str) -> None:
    """Four times the text takes about four times as long, not sixteen (quadratic)."""
    small = unit * (50_000 // len(unit))
    if unit == "@":
        small = "https://u:" + small
    big = small + small[len("https://u:") if unit == "@" else 0 :] * 3
    assert _seconds(big) < 8 * max(_seconds(small), 0.02)  # a floor for timer noise


@pytest.mark.slow
def test_the_rules_runbook_masks_a_token_pasted_into_a_rule_and_nothing_else(
    tmp_path: Path,
) -> None:
    import shutil

    from kb.markdown import runbook
    from kb.rules.loader import load

    rules = tmp_path / "rules"
    shutil.copytree(Path(__file__).parent / "base_rules", rules)
    cause = rules / "demo" / "demo-cause.yaml"
    token = "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"
    cause.write_text(
        cause.read_text().replace(
            "failed : Network is unreachable']",
            f"failed : Network is unreachable HF_TOKEN={token}']",
            1,
        )
    )
    kb, issues = load(rules)
    assert not [i for i in issues if i.severity == "error"], issues
    md = runbook.render(kb)
    assert token not in md and f"HF_TOKEN={MASK}" in md
    assert "NCCL_SOCKET_IFNAME={iface}" in md or "NCCL_SOCKET_IFNAME=<iface>" in md

    shipped, _ = load(Path(__file__).parents[2] / "rules")
    in_rules = sum(
        p.read_text().count(MASK) for p in (Path(__file__).parents[2] / "rules").rglob("*.yaml")
    )
    assert runbook.render(shipped).count(MASK) <= in_rules  # masking adds no mask of its own
