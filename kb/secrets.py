"""Masking secrets in text that leaves the machine: pasted logs, check outputs, runbooks.

Why it exists: people paste whole launch logs and command outputs, and those carry
passwords on command lines, tokens in environment dumps, keys in URLs. A runbook is
written to be shared, so everything it quotes passes through `mask` first.

What is masked (the value only; the name stays, so the reader knows what was there):
private key blocks; credentials in URLs (`https://user:pass@host`, `https://TOKEN@host`);
`Authorization:` headers; assignments and options whose name says secret (`password=`,
`HF_TOKEN=`, `"api_key": "..."`, `--password x`, `sshpass -p x`); and tokens recognisable
by their shape (GitHub, GitLab, Slack, AWS access keys, Hugging Face, OpenAI-style `sk-`,
Google API keys, JWTs).
"""

from __future__ import annotations

import re

MASK = "****"

_PEM = re.compile(
    r"(-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)(.*?)(-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.S,
)
# scheme://user:password@host  and  scheme://token@host (a long userinfo with no colon)
_URL_USERPASS = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:)([^\s@/]+)(@)")
_URL_TOKEN = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://)([A-Za-z0-9_\-.]{20,})(@)")
_AUTH_HEADER = re.compile(
    r"(?i)(\bauthorization[ \t]*[:=][ \t]*(?:(?:bearer|basic|token)[ \t]+)?)(\S+)"
)
_SECRET_NAME = (
    r"[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|[A-Za-z0-9]_pwd|secret|token|api[_-]?key|apikey"
    r"|access[_-]?key|private[_-]?key|credentials?|auth)"
)
# NAME=value, NAME: value, "name": "value" (name ends in one of the words above)
_ASSIGN = re.compile(
    rf"""(?ix)
    (\b{_SECRET_NAME}["']?[ \t]*[:=][ \t]*)   # the name and the separator
    (?!\*\*\*\*)
    ("[^"\n]*"|'[^'\n]*'|[^\s,;"'&]+)     # the value
    """
)
# --password value, --token=value, -p value for sshpass
_OPTION = re.compile(
    r"(?i)(--?(?:[a-z0-9-]*?(?:password|passwd|token|secret|api-key|apikey))[ =])(\S+)"
)
_SSHPASS = re.compile(r"(\bsshpass[ \t]+-p[ \t]*)(\S+)")
_TOKEN_SHAPES = re.compile(
    r"""\b(?:
        gh[pousr]_[A-Za-z0-9]{30,}
      | github_pat_[A-Za-z0-9_]{30,}
      | glpat-[A-Za-z0-9_\-]{20,}
      | xox[abprs]-[A-Za-z0-9-]{10,}
      | (?:AKIA|ASIA)[0-9A-Z]{16}
      | hf_[A-Za-z0-9]{30,}
      | sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}
      | AIza[0-9A-Za-z_\-]{35}
      | eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}
    )""",
    re.X,
)


def _keep_quotes(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return f"{value[0]}{MASK}{value[0]}"
    return MASK


def mask(text: str) -> str:
    """`text` with every secret value it recognises replaced by `****`."""
    if not text:
        return text
    text = _PEM.sub(lambda m: f"{m.group(1)}\n{MASK}\n{m.group(3) or ''}".rstrip(), text)
    text = _URL_USERPASS.sub(lambda m: f"{m.group(1)}{MASK}{m.group(3)}", text)
    text = _URL_TOKEN.sub(lambda m: f"{m.group(1)}{MASK}{m.group(3)}", text)
    text = _AUTH_HEADER.sub(lambda m: f"{m.group(1)}{MASK}", text)
    text = _SSHPASS.sub(lambda m: f"{m.group(1)}{MASK}", text)
    text = _OPTION.sub(lambda m: f"{m.group(1)}{MASK}", text)
    text = _ASSIGN.sub(lambda m: f"{m.group(1)}{_keep_quotes(m.group(2))}", text)
    return _TOKEN_SHAPES.sub(MASK, text)


def has_secret(text: str) -> bool:
    """Whether `mask` would change `text`."""
    return mask(text) != text
