"""Which commands to run: the checks of a cause, of a symptom, the cheap survey set, a fix.

A `Task` is one check (or one fix command) from the rules, not yet tied to a host.
Filling it for a host goes through `kb.rules.placeholders.fill_command`, the one command
builder: every value is validated by its kind (the rule's `params` declare it, or the
name implies it) and shell-quoted, so a value taken from a log that carries `$(...)`,
backticks, `;` or a leading `-` is refused or stays one inert word.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from kb.rules.knowledge import KnowledgeBase
from kb.rules.placeholders import fill_command, names_in
from kb.rules.schema.models import Check, ParamDoc, text_of
from kb.util.errors import UserError

SURVEY_MAX_COST = 1.0  # the standard survey runs only checks this cheap


@dataclass(frozen=True)
class Task:
    """One command to run on each node (or from each node towards each peer)."""

    id: str
    title: str
    template: str
    read_only: bool
    timeout: float
    scope: Literal["node", "pair"] = "node"
    cause: str | None = None
    check: Check | None = None  # None for a fix command: no expectation to evaluate
    kind: Literal["check", "fix"] = "check"
    declared: Mapping[str, ParamDoc] = field(default_factory=dict, hash=False, compare=False)

    @property
    def needs_confirmation(self) -> bool:
        return self.kind == "fix" or not self.read_only


def _check_task(cause: str | None, check: Check) -> Task:
    return Task(
        check.id,
        text_of(check.title),
        check.run,
        check.read_only,
        check.timeout,
        check.scope,
        cause,
        check,
        declared=check.params,
    )


def _unknown(kind: str, value: str, known: list[str]) -> UserError:
    near = difflib.get_close_matches(value, known, n=3, cutoff=0.5)
    hint = f" (did you mean: {', '.join(near)}?)" if near else " (see: dlperf-help rules list)"
    return UserError(f"unknown {kind} '{value}'{hint}")


def for_causes(kb: KnowledgeBase, cause_ids: list[str]) -> list[Task]:
    tasks: dict[str, Task] = {}
    for cid in cause_ids:
        if cid not in kb.causes:
            raise _unknown("cause", cid, sorted(kb.causes))
        for chk in kb.checks_of(cid):
            tasks.setdefault(chk.id, _check_task(cid, chk))
    return list(tasks.values())


def for_symptoms(kb: KnowledgeBase, symptom_ids: list[str]) -> list[Task]:
    causes: list[str] = []
    for sid in symptom_ids:
        if sid not in kb.symptoms:
            raise _unknown("symptom", sid, sorted(kb.symptoms))
        causes += [c.id for c in kb.causes_of(sid) if c.id not in causes]
    return for_causes(kb, causes)


def for_checks(kb: KnowledgeBase, check_ids: list[str]) -> list[Task]:
    table = kb.checks
    out = []
    for cid in check_ids:
        if cid not in table:
            raise _unknown("check", cid, sorted(table))
        cause, chk = table[cid]
        out.append(_check_task(cause, chk))
    return out


def survey(kb: KnowledgeBase) -> list[Task]:
    """Every cheap, read-only, node-scope check that needs no value from the user.

    The survey knows one port, the SSH port: only the checks of the `ssh` area get it
    (the rendezvous-port check handed it said `held by sshd` on every node)."""
    out = []
    for _cid, (cause, chk) in sorted(kb.checks.items()):
        cheap = chk.read_only and chk.cost <= SURVEY_MAX_COST and chk.scope == "node"
        needs = set(names_in(chk.run))
        if "port" in needs and kb.area_of(cause) == SSH_AREA:
            needs.discard("port")
        if cheap and not needs:
            out.append(_check_task(cause, chk))
    return out


SSH_AREA = "ssh"  # the rules folder whose {port} is the SSH port the survey knows


def for_fix(kb: KnowledgeBase, fix_id: str) -> list[Task]:
    """A fix's commands (each needs confirmation per host), then its verifying checks."""
    if fix_id not in kb.fixes:
        raise _unknown("fix", fix_id, sorted(kb.fixes))
    fix = kb.fixes[fix_id]
    out = [
        _env_only_task(f"{fix_id}#{i + 1}", cmd.run, cmd.where)
        if ENV_ONLY.fullmatch(cmd.run.strip())
        else Task(
            f"{fix_id}#{i + 1}",
            text_of(fix.title),
            cmd.run,
            not cmd.changes_machine,
            120.0,
            "node",
            None,
            None,
            "fix",
            fix.params,
        )
        for i, cmd in enumerate(fix.commands)
    ]
    return out + for_checks(kb, [v for v in fix.verify if v in kb.checks])


ENV_ONLY = re.compile(r"export [A-Za-z_][A-Za-z0-9_]*=\S*")


def _env_only_task(task_id: str, run: str, where: str | None) -> Task:
    """An `export` in a shell of its own changes nothing: instead of running it (and
    reporting it applied), say where it must go; the task fails so nobody reads it as done."""
    import shlex

    place = " ".join((where or "the job script every rank runs").split())
    note = f"NOT APPLIED: {run.strip()} takes effect only in {place}"
    note = re.sub(r"\{(\w+)\}", r"<\1>", note).replace("{", "{{").replace("}", "}}")
    return Task(
        task_id,
        "set in the job's environment",
        f"printf '%s\\n' {shlex.quote(note)}; exit 3",
        True,
        10.0,
    )


# ---------------------------------------------------------------- values


def fill(task: Task, values: dict[str, str]) -> str:
    """The command for one host; KeyError names a missing value, ValueError a refused one."""
    return fill_command(task.template, values, task.declared)
