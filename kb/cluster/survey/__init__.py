"""The node survey: read-only facts about one node, gathered in one round trip.

`collect(runner)` runs every collector through a `kb.runners.Runner` (local or SSH)
as one shell script and returns the document that `dlperf-help survey --json`
prints:

    {"host": "gpu01", "facts": {"nccl_version": "2.7.3", ...},
     "unavailable": {"ofed_version": "ofed_info is not installed ..."}}

A fact that cannot be read is null, and `unavailable` says why: a missing tool is
information, not an error.  `parse_output(text)` turns the script's raw output into
the same document, so a survey can be replayed from a saved capture.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kb.cluster.survey.facts import FACTS, build, sections
from kb.cluster.survey.script import build_script, split_output
from kb.runners.base import Runner

__all__ = ["FACTS", "SURVEY_VERSION", "collect", "collect_many", "parse_output", "script"]

SURVEY_VERSION = 1
DEFAULT_TIMEOUT = 180.0


def script(python: str = "python3", tool_timeout: int | None = None) -> str:
    """The shell script the survey runs on a node (for review, or to run by hand)."""
    return build_script(sections(python, tool_timeout))


def parse_output(
    stdout: str, host: str | None = None, python: str = "python3", tool_timeout: int | None = None
) -> dict[str, Any]:
    """The survey document from the survey script's stdout."""
    secs = sections(python, tool_timeout)
    facts, why = build(split_output(stdout, secs), python)
    return {
        "host": host or facts.get("hostname") or "unknown",
        "survey_version": SURVEY_VERSION,
        "facts": facts,
        "unavailable": why,
    }


def collect(
    runner: Runner,
    timeout: float = DEFAULT_TIMEOUT,
    python: str = "python3",
    tool_timeout: int | None = None,
) -> dict[str, Any]:
    """Survey the node behind `runner` in a single `runner.run` call.

    The host is the runner's name (as the user named the node), except for the local
    runner, where it is the node's own hostname.  When the script could not run at
    all (connection lost, timeout before any output), every fact is unavailable with
    that reason and `error` says it.  `tool_timeout` caps each command on the node.
    """
    result = runner.run(script(python, tool_timeout), timeout)
    local = runner.name == "local"
    doc = parse_output(result.stdout, None if local else runner.name, python, tool_timeout)
    if result.error:
        doc["error"] = result.error
        for name, value in doc["facts"].items():
            if value is None and doc["unavailable"].get(name, "").startswith("not reported"):
                doc["unavailable"][name] = f"the survey did not finish: {result.error}"
    if local and doc["host"] == "unknown":
        doc["host"] = "local"
    return doc


def collect_many(
    runners: Sequence[Runner],
    parallel: int = 16,
    timeout: float = DEFAULT_TIMEOUT,
    python: str = "python3",
    on_done: Callable[[int, dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Survey several nodes at once (one thread per node, `parallel` at a time), in order.

    `on_done(index, document)` is called as each node finishes (from a worker thread),
    so a UI can fill its table while the rest still run.
    """

    def one(i: int) -> dict[str, Any]:
        doc = collect(runners[i], timeout, python)
        if on_done is not None:
            on_done(i, doc)
        return doc

    with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(runners)))) as pool:
        return list(pool.map(one, range(len(runners))))
