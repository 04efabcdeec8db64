"""Masking secrets in text that leaves the machine: runbooks, `diagnose --json`, check outputs.

Why it exists: people paste whole launch logs and command outputs, and those carry
passwords on command lines, tokens in environment dumps, keys in URLs. A runbook and a
diagnosis file are written to be shared, so everything they quote passes through `mask`.

What is masked (the value only; the name stays, so the reader knows what was there):
private key blocks, also a key's body whose BEGIN line is not in the text; credentials
in URLs (`https://user:p@ss/w@host`, `redis://:pw@host`, `https://TOKEN@host`); signed
URLs (`sig=`, `X-Amz-Signature=`, `X-Goog-Signature=`); Slack and Discord webhooks;
`Authorization:` headers; assignments and options whose name says secret (`password=`,
`HF_TOKEN=`, `WANDB_KEY=`, Azure `AccountKey=`, `"api_key": "..."`, `--password x`);
the password arguments of `sshpass -p`, `mysql -pPASS`, `curl -u user:pass`,
`docker login -p`, `aws configure set aws_secret_access_key`; `.dockerconfigjson`
values; and tokens recognisable by their shape (GitHub, GitLab, Slack, AWS access keys,
Hugging Face, OpenAI-style `sk-`, Google API keys, JWTs). A value masked in one place is
masked wherever else it appears in the same text (or the same JSON document).

Every pattern is bounded (no unbounded repetition that can backtrack), so masking takes
time linear in the text, whatever the text holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kb.util.lazyre import LazyPattern

MASK = "****"
_MAX_SPREAD = 64  # masked values looked for elsewhere in the same text, at most

_PEM = LazyPattern(
    r"(-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----)(.*?)"
    r"(-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.S,
)
# a line of a key's body: base64 only, as long as PEM (64) or OpenSSH (70) writes them
_BODY_LINE = LazyPattern(r"[ \t]*[A-Za-z0-9+/]{40,76}={0,2}[ \t]*\r?")
_END_KEY = LazyPattern(r"[ \t]*-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_HEX_LINE = LazyPattern(r"[ \t]*[0-9a-fA-F]+[ \t]*\r?")

_SCHEME = r"(?<![a-zA-Z0-9+.-])([a-zA-Z][a-zA-Z0-9+.-]{0,30}://)"
_URL_USER = LazyPattern(_SCHEME + r"""([^\s:/@"'<>]{0,256}:)""")  # scheme://user:
_URL_REST = LazyPattern(r"""[^\s"'<>]+""")  # matched within 512 characters
_PORT = LazyPattern(r"\d{1,5}(?:[/?#]|$)")
# a name and its separator: NAME=, NAME: , "name": (a name starts where no name goes on)
_NAME_SEP = LazyPattern(r"""(?<![\w.-])([\w.-]{1,64})(["']?[ \t]{0,8}[:=][ \t]{0,8})""")
_OPTION_SEP = LazyPattern(r"(?<![\w-])(--?[A-Za-z0-9-]{1,48})([ =])")
_VALUE = LazyPattern(r"""("[^"\n]{0,1024}"|'[^'\n]{0,1024}'|[^\s,;"'&]{1,1024})""")
_ARG = LazyPattern(r"\S{1,1024}")
_SECRET_NAME = LazyPattern(
    r"(?i)(?:password|passwd|passphrase|[a-z0-9]_pwd|secret|token|api[_-]?key|apikey"
    r"|access[_-]?key|private[_-]?key|credentials?|auth)$"
)
# names ending in KEY (WANDB_KEY, AccountKey, SharedAccessKey), when the value holds a
# digit or base64's +/= and is no path or variable ('sort_key=length' is no secret)
_KEY_NAME = LazyPattern(r"(?:[_-][Kk][Ee][Yy]|[a-z]Key|KEY)$")
_KEY_VALUE = LazyPattern(r"""["']?(?![/~.$<])[^\s,;"'&]{0,1024}?[0-9+/=]""")
_SECRET_OPTION = LazyPattern(r"(?i)(?:password|passwd|token|secret|api-key|apikey)$")


def _rule(needles: tuple[str, ...], pattern: str) -> tuple[tuple[str, ...], LazyPattern[str]]:
    """A rule run only on a text that holds one of `needles` (text each match holds): most
    texts hold none, and the rule is then never compiled."""
    return needles, LazyPattern(pattern)


# group 1 is kept, group 2 is the secret, group 3 (where there is one) is kept after it
_RULES: list[tuple[tuple[str, ...], LazyPattern[str]]] = [
    _rule(("://",), _SCHEME + r"([A-Za-z0-9_\-.]{20,256})(@)"),  # scheme://TOKEN@host
    _rule(
        (":", "="),
        r"(?i)(\bauthorization[ \t]{0,8}[:=][ \t]{0,8}(?:(?:bearer|basic|token)[ \t]{1,8})?)(\S{1,4096})",
    ),
    _rule(("sshpass",), r"(\bsshpass[ \t]{1,8}-p[ \t]{0,8})(\S{1,1024})"),
    _rule(
        ("mysql", "mariadb"),
        r"(\b(?:mysql|mysqldump|mysqladmin|mariadb|mysqlsh)\b[^\n]{0,128}?[ \t]-p)"
        r"""('[^'\n]{0,1024}'|"[^"\n]{0,1024}"|[^\s-]\S{0,1023})""",
    ),
    _rule(
        ("curl",),
        r"""(\bcurl\b[^\n]{0,128}?[ \t](?:-u|--user)(?:[ \t]{1,8}|=)?["']?[^\s:"']{0,128}:)"""
        r"""([^\s"']{1,1024})""",
    ),
    _rule(
        ("login",),
        r"(\b(?:docker|podman|nerdctl|buildah|skopeo|helm)[ \t]{1,8}(?:registry[ \t]{1,8})?login\b"
        r"[^\n]{0,128}?"
        r"[ \t]-p(?:[ \t]{1,8}|=)?)([^\s-]\S{0,1023})",
    ),
    _rule(
        ("aws",),
        r"(\baws[ \t]{1,8}configure[ \t]{1,8}set[ \t]{1,8}(?:[\w-]{1,64}\.)?"
        r"(?:aws_secret_access_key|aws_session_token)[ \t]{1,8})(\S{1,1024})",
    ),
    # signed URLs: Azure SAS, S3 and GCS presigned, CloudFront
    _rule(
        ("=",),
        r"(?i)([?&;](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token)=)"
        r"""([^&\s"'#<>]{1,4096})""",
    ),
    _rule(
        ("hooks.slack.com/",),
        r"(\bhooks\.slack\.com/(?:services|workflows|triggers)/)([A-Za-z0-9/_-]{1,256})",
    ),
    _rule(
        (".com/api/webhooks/",),
        r"(\bdiscord(?:app)?\.com/api/webhooks/\d{1,30}/)([A-Za-z0-9_-]{1,256})",
    ),
    _rule(
        (".docker",),
        r"""(\.docker(?:configjson|cfg)["']?[ \t]{0,8}[:=][ \t]{0,8}["']?)([A-Za-z0-9+/=]{8,65536})""",
    ),
]
_TOKEN_SHAPES = LazyPattern(
    r"""\b(?:
        gh[pousr]_[A-Za-z0-9]{30,255}
      | github_pat_[A-Za-z0-9_]{30,255}
      | glpat-[A-Za-z0-9_\-]{20,255}
      | xox[abposre]-[A-Za-z0-9-]{10,255}
      | xapp-[A-Za-z0-9-]{10,255}
      | (?:AKIA|ASIA)[0-9A-Z]{16}
      | hf_[A-Za-z0-9]{30,255}
      | sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,255}
      | AIza[0-9A-Za-z_\-]{35}
      | eyJ[A-Za-z0-9_\-]{10,4096}\.eyJ[A-Za-z0-9_\-]{10,4096}\.[A-Za-z0-9_\-]{10,4096}
      | eyJhdXRocyI[A-Za-z0-9+/=]{10,65536}
    )""",
    re.X,
)
# what each of _TOKEN_SHAPES' tokens starts with: a text with none holds no token
_TOKEN_STARTS = (
    "gh",
    "github_pat_",
    "glpat-",
    "xox",
    "xapp-",
    "AKIA",
    "ASIA",
    "hf_",
    "sk-",
    "AIza",
    "eyJ",
)
_SECRET_KEY = LazyPattern(
    r"(?i)^(?:[A-Za-z0-9_.-]*(?:password|passwd|passphrase|_pwd|secret|token|api[_-]?key"
    r"|apikey|access[_-]?key|private[_-]?key|credentials?|[_-]key))$"
)


# a placeholder or a variable stands for a secret, it is none: `-p <password>`,
# `--token {token}`, `HF_TOKEN=${HF_TOKEN}`, `-p"$DOCKER_PASSWORD"`
# what follows a prompt's user@host when ssh asks again before anything was typed: the
# `user@host` after `password:` is the next prompt, not a password
_NEXT_PROMPT = "'s password:"
_STANDS_FOR = LazyPattern(r"""["']?(?:<[\w.-]{1,64}>|\{[\w.-]{1,64}\}|\$\{?\w{1,64}\}?)["']?""")


def _keep_quotes(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return f"{value[0]}{MASK}{value[0]}"
    return MASK


def _spreadable(value: str) -> bool:
    """Whether a masked value is worth masking wherever else it appears: long enough and
    not a plain word (a 'sort_key=length' must not mask every 'length')."""
    value = value.strip("\"'")
    return len(value) >= 6 and MASK not in value and not value.isalpha()


class _Masker:
    """One masking pass; remembers the values it masked so they are masked elsewhere too."""

    def __init__(self) -> None:
        self.found: set[str] = set()

    def _secret(self, value: str) -> str:
        if _spreadable(value) and len(self.found) < _MAX_SPREAD:
            self.found.add(value.strip("\"'"))
        return _keep_quotes(value)

    def _sub(self, match: re.Match[str]) -> str:
        if _STANDS_FOR.fullmatch(match.group(2)):
            return match.group(0)
        after = match.group(3) if (match.re.groups or 0) >= 3 else ""
        return f"{match.group(1)}{self._secret(match.group(2))}{after or ''}"

    def _token(self, match: re.Match[str]) -> str:
        self._secret(match.group(0))
        return MASK

    def in_context(self, text: str) -> str:
        """`text` with every secret recognised by its context or shape masked."""
        if "PRIVATE KEY" in text:
            text = _PEM.sub(lambda m: f"{m.group(1)}\n{MASK}\n{m.group(3) or ''}".rstrip(), text)
        if _BODY_LINE.search(text):
            text = _key_bodies(text)
        if "://" in text:  # what _URL_USER needs
            text = self._url_passwords(text)
        for needles, rule in _RULES:
            if any(n in text for n in needles):
                text = rule.sub(self._sub, text)
        if ":" in text or "=" in text:  # what _NAME_SEP needs
            text = self._named(text, _NAME_SEP, _VALUE, self._name_says_secret)
        if "-" in text:  # what _OPTION_SEP needs
            text = self._named(
                text, _OPTION_SEP, _ARG, lambda name, _text, _pos: bool(_SECRET_OPTION.search(name))
            )
        if any(n in text for n in _TOKEN_STARTS):
            text = _TOKEN_SHAPES.sub(self._token, text)
        return text

    def _url_passwords(self, text: str) -> str:
        """scheme://user:password@host: the password runs to the last '@' of the word, so
        it may hold '@' and '/'; 'host:8080/...' (a port) is no password."""
        out: list[str] = []
        pos = 0
        for m in _URL_USER.finditer(text):
            if m.start() < pos:
                continue
            if text.find("@", m.end(), m.end() + 512) < 0:  # memchr: most URLs have none
                continue
            rest = _URL_REST.match(text, m.end(), m.end() + 512)
            at = rest.group().rfind("@") if rest else -1
            if rest is None or at <= 0 or _PORT.match(rest.group(), 0, at):
                continue
            if _STANDS_FOR.fullmatch(rest.group(), 0, at):
                continue
            out.append(text[pos : m.end()] + self._secret(rest.group()[:at]))
            pos = m.end() + at
        return "".join(out) + text[pos:] if out else text

    def _named(
        self,
        text: str,
        names: LazyPattern[str],
        values: LazyPattern[str],
        says_secret: Callable[[str, str, int], bool],
    ) -> str:
        """Mask the value after each name `says_secret` of, in one pass over `text`."""
        out: list[str] = []
        pos = 0
        for m in names.finditer(text):
            if m.start() < pos or text.startswith(MASK, m.end()):
                continue
            if not says_secret(m.group(1), text, m.end()):  # first: the value may be long
                continue
            value = values.match(text, m.end())
            if value is None or _STANDS_FOR.fullmatch(value.group()):
                continue
            if text.startswith(_NEXT_PROMPT, value.end()):
                continue  # `user@host's password: user@host's password:`: the next prompt
            out.append(text[pos : m.end()] + self._secret(value.group()))
            pos = value.end()
        return "".join(out) + text[pos:] if out else text

    @staticmethod
    def _name_says_secret(name: str, text: str, at: int) -> bool:
        if _SECRET_NAME.search(name):
            return True
        return bool(_KEY_NAME.search(name) and _KEY_VALUE.match(text, at))

    def spread(self, text: str, found: set[str] | None = None) -> str:
        """`text` with every value masked so far (or in `found`) masked wherever it is."""
        values = sorted(found if found is not None else self.found, key=len, reverse=True)
        if not values:
            return text
        return re.sub("|".join(map(re.escape, values)), MASK, text)


def _key_bodies(text: str) -> str:
    """Mask runs of key-body lines (each line, so that line numbers stay): two or more, or
    one right above an END line. One pass over the lines (a regex over runs could
    backtrack over a long base64 block)."""
    lines = text.split("\n")
    out: list[str] = []
    run: list[str] = []

    def flush(before_end: bool) -> None:
        if run and (before_end or len(run) >= 2) and not all(_HEX_LINE.fullmatch(x) for x in run):
            out.extend(MASK for _ in run)
        else:
            out.extend(run)
        run.clear()

    for line in lines:
        if _BODY_LINE.fullmatch(line):
            run.append(line)
            continue
        flush(bool(_END_KEY.match(line)))
        out.append(line)
    flush(False)
    return "\n".join(out)


def mask(text: str) -> str:
    """`text` with every secret value it recognises replaced by `****`."""
    if not text:
        return text
    masker = _Masker()
    return masker.spread(masker.in_context(text))


def has_secret(text: str) -> bool:
    """Whether `mask` would change `text`."""
    return mask(text) != text


# keys whose values are the tool's own words (rule ids and titles), never a log's
KEEP_KEYS = frozenset(
    {"id", "title", "fixes", "symptoms", "symptom", "basis", "source", "known", "rule", "check"}
)


def mask_json(data: Any, keep: frozenset[str] = KEEP_KEYS) -> Any:
    """A copy of a JSON-like value with secrets masked in every string (but those under
    `keep`); the value of a key named like a secret (`password`, `HF_TOKEN`) is masked whole,
    and a value masked anywhere is masked everywhere in the document."""
    masker = _Masker()

    def walk(value: Any, key: str, fn: Callable[[str], str]) -> Any:
        if isinstance(value, dict):
            return {k: walk(v, str(k), fn) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, key, fn) for v in value]
        if not isinstance(value, str) or key in keep:
            return value
        if value and _SECRET_KEY.match(key) and MASK not in value:
            masker._secret(value)
            return MASK
        return fn(value)

    first = walk(data, "", masker.in_context)  # finds the values to spread
    return walk(first, "", masker.spread)
