"""Secrets are masked in what leaves the machine; ordinary log lines are left alone."""

from __future__ import annotations

import pytest

from kb.util.secrets import MASK, has_secret, mask

PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDx0c3a4cZ2uQm0l6I1r6Yk5Qp9f0xW4VqK3n8y7t2k1wAAAJhQk0mYUJNJ\n"
    "-----END OPENSSH PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (
            "export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
            "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        ),
        ("WANDB_API_KEY: 0123456789abcdef0123", "0123456789abcdef0123"),
        ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY"),
        ("aws key AKIAIOSFODNN7EXAMPLE in env", "AKIAIOSFODNN7EXAMPLE"),
        ('{"user": "bob", "password": "hunter2"}', "hunter2"),
        ("mysql://root:s3cr3t@db.internal:3306/runs", "s3cr3t"),
        (
            "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/a/b",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ),
        ("curl -H 'Authorization: Bearer eyJabc.def.ghi'", "eyJabc.def.ghi'"),
        ("sshpass -p hunter2 ssh gpu02 true", "hunter2"),
        ("horovodrun --password=hunter2 -np 8", "hunter2"),
        ("docker login --password s3cr3t registry", "s3cr3t"),
        ("token: glpat-abcdefghijklmnopqrstu", "glpat-abcdefghijklmnopqrstu"),
        ("OPENAI_KEY=sk-proj-abcdefghijklmnopqrstuvwx", "sk-proj-abcdefghijklmnopqrstuvwx"),
        ("db_pwd=letmein", "letmein"),
    ],
)
def test_each_kind_of_secret_is_masked_and_its_name_kept(text: str, secret: str):
    masked = mask(text)
    assert secret not in masked
    assert MASK in masked
    assert has_secret(text)


def test_a_private_key_block_keeps_its_markers_and_loses_its_body():
    masked = mask(f"key:\n{PEM}\nafter")
    assert "-----BEGIN OPENSSH PRIVATE KEY-----" in masked
    assert "-----END OPENSSH PRIVATE KEY-----" in masked
    assert "b3BlbnNzaC1rZXkt" not in masked
    assert masked.endswith("after")


def test_a_truncated_private_key_block_is_masked_to_the_end():
    masked = mask(PEM.rsplit("\n", 1)[0])
    assert "QyNTUxOQ" not in masked


def test_a_url_keeps_its_user_and_host():
    assert mask("https://alice:pw@example.org/x") == "https://alice:****@example.org/x"


@pytest.mark.parametrize(
    "line",
    [
        "vm:851:851 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ib9",
        "[2026-11-29 19:54:45] vm:851:851 [0] bootstrap.cc:114 NCCL WARN Bootstrap : no socket interface found",
        "PWD=/home/alice/jobs",
        "OLDPWD=/home/alice",
        "tokenizer=bert-base-uncased pad_token_id=0",
        "https://pytorch.org/docs/stable/distributed.html#shutdown",
        "ssh -o BatchMode=yes gpu02 true",
        "Permission denied (publickey,password).",
        "mpirun --hostfile hosts -x NCCL_DEBUG=INFO python train.py",
        "password:",
    ],
)
def test_ordinary_lines_are_left_alone(line: str):
    assert mask(line) == line
    assert not has_secret(line)


def test_the_session_runbook_masks_the_new_forms_in_the_log_excerpt(kb):  # type: ignore[no-untyped-def]
    """A runbook quotes the log around the evidence: a key body whose BEGIN line is out of
    the excerpt, a URL password holding '@' and '/', `mysql -p` and a signed URL are masked."""
    from kb.diagnosis.engine import diagnose_text
    from kb.markdown import session_runbook
    from kb.walk.session import Session
    from tests.tui.common import LOG

    body = PEM.splitlines()[1:]  # without its BEGIN line
    secrets = [
        "git clone https://alice:p@ss/w0rd@git.example.com/r.git",
        "mysql -u root -pS3cr3tPass runs",
        "wget 'https://acct.blob.core.windows.net/c/x.pt?sv=2021&sig=Zx9%2Fq'",
        *body,
    ]
    lines = LOG.read_text().splitlines()
    s = Session(kb)
    text = "\n".join([*lines[:6], *secrets, *lines[6:12]])  # short: quoted whole
    s.set_log("pasted log", text=text)
    s.diagnosis = diagnose_text(kb, s.log_text or "", "pasted log")
    md = session_runbook.render(s)
    assert "mysql -u root -p****" in md  # the log is in the runbook
    for leaked in ("b3BlbnNzaC1rZXkt", "QyNTUxOQ", "p@ss/w0rd", "S3cr3tPass", "Zx9%2Fq"):
        assert leaked not in md, leaked
    assert "https://alice:****@git.example.com/r.git" in md
    assert "  ****\n" in md and "-----END OPENSSH PRIVATE KEY-----" in md  # line for line
