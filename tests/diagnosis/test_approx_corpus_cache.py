"""The known messages approximate matching compares a line with come back from their cache
as they were built, named by the rules' key and the catalogue's content key, without
making the catalogue's 26,000 messages (issue 13: that alone cost a pasted log 0.3 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from kb.diagnosis import approx_corpus
from kb.diagnosis.wordindex import WordIndex, word_index
from kb.rules.catalogue import Catalogue, Message, load_catalogue
from kb.rules.catalogue import catalogue as module

ROOT = Path(__file__).resolve().parents[2]


def test_the_cached_corpus_is_the_built_one_and_needs_no_catalogue_message(shipped: Any) -> None:
    module._load.cache_clear()
    approx_corpus._CORPORA.clear()
    approx_corpus.known_messages(shipped, load_catalogue())  # built, or already cached
    module._load.cache_clear()
    approx_corpus._CORPORA.clear()
    try:
        cat = load_catalogue()
        warm = approx_corpus.known_messages(shipped, cat)
        assert cat._all is None  # named by keys: no catalogue message was made
        built = list(approx_corpus._collect(shipped, cat))
        assert len(built) > 1000 and list(warm) == built
        postings = {w: list(ids) for w, ids in word_index(warm).postings.items()}
        assert postings == WordIndex(built).postings
        assert warm[:2] == built[:2]
    finally:
        module._load.cache_clear()
        approx_corpus._CORPORA.clear()


def _message(template: str) -> Message:
    return Message("demo", template, "error", "a.cc", "1.0", "cause", cause="port-in-use")


def test_a_catalogue_built_in_memory_is_named_by_its_messages() -> None:
    """A catalogue with no content key (made from `Message`s) has its messages hashed, so
    another message is another corpus; a catalogue read from files is named by its key."""
    one = Catalogue([], [_message("Address already in use on port %d")])
    other = Catalogue([], [_message("Address already taken on port %d")])
    assert approx_corpus._cache_name("k", one) != approx_corpus._cache_name("k", other)
    keyed = Catalogue([], [], key="a" * 32)
    assert approx_corpus._cache_name("k", keyed) != approx_corpus._cache_name(
        "k", Catalogue([], [], key="b" * 32)
    )
    assert approx_corpus._cache_name("k", one) != approx_corpus._cache_name("j", one)


PROBE = """
import contextlib, io, json, sys
from kb.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["diagnose", "--json", sys.argv[1]])
print(json.dumps(sorted(sys.modules)))
"""
# a log no rule names: read against the catalogue, then compared with the known messages
NO_RULE = (
    ROOT / "corpora" / "batch-2026-12-01g" / "other-pyxis-53-enroot-squashfs-no-space-left.log"
)
UNNEEDED = {"dataclasses", "yaml", "hashlib", "kb.rules.catalogue.templates"}


def test_a_warm_paste_no_rule_names_reads_only_caches(shipped: Any, private_cache: Path) -> None:
    """Warm, such a paste reads the catalogue and the known messages from their caches:
    no YAML, no template compiler, no `dataclasses`, no hashing of the files."""
    env = {**os.environ, "XDG_CACHE_HOME": str(private_cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for _ in range(2):  # the first may build what this cache folder lacks
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(NO_RULE)],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
    modules = set(json.loads(done.stdout.splitlines()[-1]))
    assert {"kb.diagnosis.approx_corpus", "kb.rules.catalogue.literals"} <= modules
    assert not modules & UNNEEDED, sorted(modules & UNNEEDED)


def test_each_corpus_gets_its_own_word_index() -> None:
    """A corpus made after another was let go may be given its id: its index is its own."""
    from kb.diagnosis.approx_corpus import KnownCorpus, shape, words_of

    def corpus(*texts: str) -> KnownCorpus:
        known = [approx_corpus.Known(t, shape(t), words_of(shape(t)), "port-in-use") for t in texts]
        return KnownCorpus.of(known)

    for _ in range(20):  # ids are reused soon after a corpus is freed
        first = corpus("Address already in use", "Connection refused by peer")
        assert set(word_index(first).postings) == {
            "address",
            "already",
            "connection",
            "refused",
            "peer",
        }
        del first
        second = corpus("NCCL WARN NET/IB : Got completion from peer with error 12")
        postings = {w: list(ids) for w, ids in word_index(second).postings.items()}
        assert postings == WordIndex(list(second)).postings
