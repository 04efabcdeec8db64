"""Regexes compiled on first use (`kb.util.lazyre`, issue 13): a `LazyPattern` answers as
the compiled pattern does, compiles once, and the needles that let `kb.util.secrets` skip
a rule (and never compile it) are held by every text the rule matches, the corpus's
secrets and texts made of the rules' own pieces, in every letter case, alike."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.util import recache, secrets
from kb.util.lazyre import LazyPattern

DATA = Path(__file__).parent / "data" / "secrets"


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    for pattern, flags, text in [
        (r"(a)(b)?", re.I, "xAb aB a"),
        (r"^\s*(\w+)=(\S*)$", re.M, "k=v\n  x=\nno"),
        (r"", 0, "abc"),
    ]:
        lazy, real = LazyPattern(pattern, flags), re.compile(pattern, flags)
        assert lazy.groups == real.groups
        for method in ("search", "match", "fullmatch", "findall", "split"):
            got, want = getattr(lazy, method)(text), getattr(real, method)(text)
            assert str(got) == str(want), method
        assert lazy.sub(lambda m: "<" + m.group() + ">", text) == real.sub(
            lambda m: "<" + m.group() + ">", text
        )
        assert lazy.subn("-", text, 1) == real.subn("-", text, 1)
        assert [m.span() for m in lazy.finditer(text, 1)] == [
            m.span() for m in real.finditer(text, 1)
        ]
        assert str(lazy.search(text, 1, 2)) == str(real.search(text, 1, 2))
    data = LazyPattern(rb"\x1b\[[0-9;]*m")
    assert data.sub(b"", b"a\x1b[1;31mb") == b"ab"


def test_it_compiles_once_and_only_when_used(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_compile = re.compile

    def counting(pattern: str, flags: int = 0) -> re.Pattern[str]:
        calls.append(pattern)
        return real_compile(pattern, flags)

    monkeypatch.setattr(recache, "compile", counting)  # where LazyPattern compiles (cached)
    lazy = LazyPattern(r"x+")
    assert calls == []
    assert lazy.search("axx") is not None and lazy.sub("y", "xx") == "y"
    assert lazy.match("x") is not None and lazy.groups == 0
    assert calls == [r"x+"]


# each guarded pattern of kb.util.secrets and the needles guarding it
GUARDED = [
    *secrets._RULES,
    (("://",), secrets._URL_USER),
    ((":", "="), secrets._NAME_SEP),
    (("-",), secrets._OPTION_SEP),
    (secrets._TOKEN_STARTS, secrets._TOKEN_SHAPES),
]
# the rules' own pieces, letter case varied (the `(?i)` rules match `ſ`, `ı`, `K` too)
PIECES = [
    *"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    *" \t\n:=@/?&;.-_'\"+<>#",
    *["ſ", "ı", "İ", "\u212a"],
    *["://", "https://", "user:", "pass@host", "x" * 24, "AbC1" * 12],
    *["authorization", "AUTHORIZATION", "AuthorıZation", "bearer ", "Basic "],
    *["sshpass", "mysql", "mariadb", "mysqlsh", "curl", "--user", "-u", "-p"],
    *["docker", "podman", "helm", "registry", "login", "aws", "configure", "set"],
    *["aws_secret_access_key", "aws_session_token", "sig", "SIG", "ſig", "signature"],
    *["x-amz-signature", "X-Goog-Signature", "hooks.slack.com/", "services/", "discord"],
    *["discordapp", ".com/api/webhooks/", "123/", ".dockerconfigjson", ".dockercfg"],
    *["ghp_", "github_pat_", "glpat-", "xoxb-", "xapp-", "AKIA", "ASIA", "hf_", "sk-"],
    *["sk-proj-", "AIza", "eyJ", "eyJhdXRocyI", "password", "TOKEN", "api_key", "--token"],
]


def _holds_a_needle(text: str) -> None:
    for needles, pattern in GUARDED:
        if pattern.search(text) is not None:
            assert any(n in text for n in needles), (pattern.pattern, needles, text)


WORDS = [p for p in PIECES if len(p) > 1]
SEPARATORS = ["", " ", ":", "=", ": ", " = ", "://", "@", "/", " -p", " -u ", "?", "&", ";"]
VALUE = "Ab3/x+y=z@host:9/p" + "K" * 24


def _variants(word: str) -> list[str]:
    swapped = word.replace("s", "ſ").replace("i", "ı").replace("k", "\u212a")
    return [word, word.upper(), word.title(), swapped]


def test_each_keyword_then_each_separator_holds_its_needle() -> None:
    for word in WORDS:
        for variant in _variants(word):
            for sep in SEPARATORS:
                for before in ("", "x ", "https://h/p?", "&", ";"):
                    _holds_a_needle(before + variant + sep + VALUE + "\n")


@settings(max_examples=800, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(WORDS).flatmap(lambda w: st.sampled_from(_variants(w))),
            st.sampled_from(SEPARATORS),
            st.sampled_from(PIECES),
        ).map("".join),
        max_size=8,
    ).map(" ".join)
)
def test_a_text_a_guarded_secret_pattern_matches_holds_its_needle(text: str) -> None:
    _holds_a_needle(text)


def test_the_corpus_texts_hold_their_needles_too() -> None:
    texts = [
        line
        for name in ("masked.tsv", "plain.txt")
        for line in (DATA / name).read_text(encoding="utf-8").splitlines()
    ]
    assert len(texts) >= 70
    matched = 0
    for text in texts:
        _holds_a_needle(text)
        matched += any(p.search(text) for _, p in GUARDED)
    assert matched >= 35  # the corpus's secrets are matched: the check above checks something
