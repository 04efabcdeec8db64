"""The rule format, as pydantic models: the one definition that loading, linting and the
editors' JSON Schema (`rules/schema/*.json`) all come from.

A rule file holds one of three kinds of node, decided by its folder:
`rules/symptoms/` holds symptoms, `rules/fixes/` holds fixes, every other folder (the
area: `nccl`, `ssh`, ...) holds causes.  Text fields are Markdown; each is either a
plain English string or `{en: ..., zh: ...}`.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from kb.rules.numeric import parse_operand
from kb.rules.valuekinds import ValueKind

ID_PATTERN = r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$"
NAME_PATTERN = r"^[a-z_][a-z0-9_]*$"

RuleId = Annotated[str, Field(pattern=ID_PATTERN, description="lower-case words joined by '-'")]
ParamName = Annotated[str, Field(pattern=NAME_PATTERN, description="a placeholder name")]
Word = Annotated[str, Field(pattern=ID_PATTERN, description="a word defined in rules/vocabulary/")]

# in a command: C0 controls but tab and newline, DEL, C1 controls, bidi and line separators
_COMMAND_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)


def _no_control_chars(command: str) -> str:
    """A NUL fails only when the shell runs it, and an invisible control shows the user
    another command than the one that runs: both are refused where the rule is written."""
    bad = _COMMAND_CONTROL.search(command)
    if bad:
        raise ValueError(
            f"a command must not hold control characters (U+{ord(bad.group()):04X} at "
            f"position {bad.start()})"
        )
    return command


CommandText = Annotated[str, Field(min_length=1), AfterValidator(_no_control_chars)]


class Strict(BaseModel):
    """Every rule model refuses fields it does not know, so typos are reported."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Localized(Strict):
    """A text with its translations; English is required."""

    en: str = Field(min_length=1)
    zh: str | None = None


Text = str | Localized


def text_of(value: Text | None, lang: str = "en") -> str:
    """The text in `lang`, falling back to English."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if lang == "zh" and value.zh:
        return value.zh
    return value.en


class Reference(Strict):
    title: str
    url: str | None = None


# ---------------------------------------------------------------- matchers


class _MatcherBase(Strict):
    ignore_case: bool = False
    scope: Literal["line", "log"] = Field(
        "log",
        description="for `unless` matchers only: 'line' vetoes the same line, 'log' vetoes the whole log",
    )


def _bound(value: float | str | None) -> float | str | None:
    if value is not None:
        parse_operand(value)  # a one-line ValueError for anything but a bound
    return value


BoundValue = Annotated[
    float | str | None,
    AfterValidator(_bound),
    Field(description="a number, a group of the same match, or '<number> * <group>'"),
]


class NumberBounds(Strict):
    """Bounds on the number a named group captured (`kb.rules.numeric`); all must hold."""

    lt: BoundValue = None
    le: BoundValue = None
    gt: BoundValue = None
    ge: BoundValue = None
    eq: BoundValue = None


class RegexMatcher(_MatcherBase):
    """A regular expression in RE2 syntax; named groups `(?P<name>...)` are extractors."""

    type: Literal["regex"]
    pattern: str = Field(min_length=1)
    where: dict[ParamName, NumberBounds] = Field(
        default_factory=dict,
        description="group name -> bounds on its number: the matcher fires only on a "
        "match whose values satisfy them all, e.g. {data_time: {ge: 0.5 * batch_time}}",
    )


class SubstringMatcher(_MatcherBase):
    type: Literal["substring"]
    text: str = Field(min_length=1)


class FuzzyMatcher(_MatcherBase):
    """Matches lines close to `text` once numbers, hex, addresses and paths are masked."""

    type: Literal["fuzzy"]
    text: str = Field(min_length=8)
    threshold: float = Field(85, description="rapidfuzz score 0-100 a line must reach")


Matcher = Annotated[RegexMatcher | SubstringMatcher | FuzzyMatcher, Field(discriminator="type")]


class Signature(Strict):
    """One independent piece of log evidence for a cause (or a symptom).

    With `condition: or` any matcher firing on a line fires the signature; with `and`
    every matcher must fire somewhere in the same log. `unless` matchers veto it.
    """

    id: RuleId
    condition: Literal["or", "and"] = "or"
    matchers: list[Matcher] = Field(min_length=1)
    unless: list[Matcher] = Field(default_factory=list)
    weight: float = Field(0.8, gt=0, le=1, description="how specific this evidence is, 0-1")
    alone: bool = Field(
        True,
        description="false: supporting evidence that never makes a diagnosis by itself",
    )
    note: Text | None = Field(
        None, description="observation reported when this fires but the cause is not diagnosed"
    )
    asked: bool = Field(
        False,
        description="with a note: a paste of a few lines where nothing failed that holds "
        "this line asks about this cause (`NET/IB : No device found`: why is InfiniBand "
        "not used?); the cause is then listed with `basis: observation`",
    )
    extract: dict[ParamName, str] = Field(
        default_factory=dict,
        description="name -> RE2 regex with one capture group, applied to the matched lines",
    )
    min_hits: int = Field(
        1,
        description="fires only when its matchers hit at least this many lines (1-20): "
        "a line that means something only when it repeats",
    )
    at_end: bool = Field(
        False,
        description="fires only when a matched line is among the last meaningful lines of "
        "the log: the run stopped there",
    )


# ---------------------------------------------------------------- checks


class ParamDoc(Strict):
    description: str
    example: str | None = None
    kind: ValueKind | None = Field(
        None,
        description="what the value may be (host, port, path, ...); without it, the kind "
        "its name implies (peer: host, *_dir: path, ...) or free text",
    )


class NumberTest(Strict):
    """A number captured from the output (first group of `pattern`) compared with bounds."""

    pattern: str
    lt: float | None = None
    le: float | None = None
    gt: float | None = None
    ge: float | None = None
    eq: float | None = None


class Expect(Strict):
    """Conditions on a command's output; all the given ones must hold."""

    any_line_matches: str | None = None
    no_line_matches: str | None = None
    contains: str | None = None
    not_contains: str | None = None
    exit_code: int | None = None
    exit_nonzero: bool | None = None
    number: NumberTest | None = None
    any: list[Expect] | None = None
    all: list[Expect] | None = None


class Outcome(Strict):
    confirms: list[RuleId] = Field(default_factory=list)
    rules_out: list[RuleId] = Field(default_factory=list)


class Check(Strict):
    """A command that verifies a cause on a node, and how to read its output.

    The status is `fail` when `problem_if` holds, `pass` when `ok_if` holds (or, without
    `ok_if`, when `problem_if` does not), `unavailable` when a tool in `requires` is missing.
    By default a failing check confirms its cause and a passing one rules it out.
    """

    id: RuleId
    title: Text
    run: CommandText = Field(description="shell command; {placeholders} are quoted values")
    read_only: bool = Field(description="true only if the command changes nothing on the machine")
    cost: float = Field(
        1, gt=0, description="1 a quick read-only command, 10 a test run, 100 a rebuild"
    )
    timeout: float = Field(20, gt=0, le=3600)
    requires: list[str] = Field(default_factory=list, description="programs the command needs")
    scope: Literal["node", "pair"] = Field(
        "node", description="'pair' runs from each node towards each other node ({peer})"
    )
    problem_if: Expect
    ok_if: Expect | None = None
    means: Text = Field(description="what a failing result means")
    finding: str | None = Field(
        None, description="one-line summary template, e.g. 'NCCL {version}'"
    )
    extract: dict[ParamName, str] = Field(default_factory=dict)
    params: dict[ParamName, ParamDoc] = Field(
        default_factory=dict, description="placeholders the user supplies, e.g. {peer} or {port}"
    )
    on_problem: Outcome | None = None
    on_ok: Outcome | None = None
    sensitivity: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="how often it fails when its cause holds (default by kind, see kb.walk.engine)",
    )
    false_alarm: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="how often it fails when its cause does not hold (default by kind)",
    )
    shows: list[RuleId] = Field(
        default_factory=list,
        description="signature ids of its cause whose claim it tests (the variant it can "
        "show); a cause the log proves moves fully only on such a check",
    )
    applies_if: dict[ParamName, list[str]] = Field(
        default_factory=dict,
        description="offered only once each named value (from the log, an answer or a "
        "check) is one of these, e.g. framework: [paddle]",
    )


# ---------------------------------------------------------------- examples


class LogExample(Strict):
    """A log snippet (one or more lines) with the values the extractors must find."""

    log: str = Field(min_length=1)
    params: dict[str, str] = Field(default_factory=dict)
    why: str | None = None


Example = str | LogExample


class Examples(Strict):
    match: list[Example] = Field(default_factory=list, description="logs that must fire the rule")
    no_match: list[Example] = Field(default_factory=list, description="logs that must not")
    todo: list[Example] = Field(
        default_factory=list, description="known gaps: must fire one day, fail loudly when they do"
    )


# ---------------------------------------------------------------- nodes


class Cause(Strict):
    id: RuleId
    title: Text
    description: Text
    symptoms: list[RuleId] = Field(min_length=1)
    prior: float = Field(gt=0, lt=1, description="how common this cause is, 0-1")
    generic: bool = Field(
        False, description="an umbrella (e.g. a watchdog timeout): more specific causes rank first"
    )
    tags: list[str] = Field(default_factory=list)
    named_by: list[Word] = Field(
        default_factory=list,
        description="names of findings (rules/vocabulary/findings.yaml: from analyzers, the "
        "cluster report, the speedup verdict) that are evidence for this cause",
    )
    traits: list[Word] = Field(
        default_factory=list,
        description="where the cause can occur (rules/vocabulary/traits.yaml: inter-node, "
        "container, err-system, ...): what the logs show about the job weighs it by them",
    )
    signatures: list[Signature] = Field(default_factory=list)
    checks: list[Check | RuleId] = Field(
        default_factory=list, description="inline checks, or ids of checks defined in other causes"
    )
    fixes: list[RuleId] = Field(min_length=1, description="ids of fixes in rules/fixes/")
    references: list[Reference] = Field(default_factory=list)
    examples: Examples = Field(default_factory=Examples)


class Answer(Strict):
    id: RuleId
    text: Text
    confirms: list[RuleId] = Field(default_factory=list)
    rules_out: list[RuleId] = Field(default_factory=list)
    sets: dict[ParamName, str] = Field(
        default_factory=dict, description="values the answer establishes, e.g. framework: paddle"
    )


class Question(Strict):
    id: RuleId
    text: Text
    help: Text | None = None
    cost: float = Field(1, gt=0)
    answers: list[Answer] = Field(min_length=2)
    applies_if: dict[ParamName, list[str]] = Field(
        default_factory=dict,
        description="asked only once each named value (from the log, an answer or a check) "
        "is one of these, or the log shows a cause it confirms, e.g. nccl_error: [ipc]",
    )


Group = Literal["launch", "hang", "slow", "library", "install", "dataset", "crash"]

FailureKind = Literal["crash", "killed", "exception", "hang", "no-success"]


class Failure(Strict):
    """What makes a symptom a *failure* (a crash, a killed rank, an uncaught exception, a
    hang, a job that ended without success): when its signatures fire, the diagnosis is
    never "no known problem", even when no line names the cause."""

    kind: FailureKind
    what: Text = Field(description="the failure in a few words, e.g. 'a process crashed'")
    causes: list[RuleId] = Field(
        default_factory=list,
        description="causes that often show as this failure (besides those that list the "
        "symptom under their own 'symptoms')",
    )
    rerun_with: list[str] = Field(
        default_factory=list,
        description="debug variables to rerun with, e.g. 'NCCL_DEBUG=INFO'",
    )
    next: Text | None = Field(None, description="the next step when no line names the cause")
    catalogue: list[str] = Field(
        default_factory=list,
        description="message-catalogue symptom words that are this failure (e.g. 'abort')",
    )
    in_traceback: bool = Field(
        False,
        description="its lines count only as the final line of a Python traceback",
    )
    pasted_only: bool = Field(
        False,
        description="its catalogue messages are this failure only in a paste of one to "
        "three lines (the user pasted the error): runs that go on print them too",
    )
    generic: bool = Field(
        False,
        description="any message of its kind shows it (a Python exception's last line): where "
        "the catalogue knows that line as another failure, that failure takes its place",
    )


class Symptom(Strict):
    id: RuleId
    title: Text
    description: Text
    group: Group = Field(description="kind of trouble, for the TUI's tree")
    named_by: list[Word] = Field(
        default_factory=list,
        description="names of findings (rules/vocabulary/findings.yaml) that show this symptom",
    )
    signatures: list[Signature] = Field(default_factory=list)
    questions: list[Question] = Field(default_factory=list)
    examples: Examples = Field(default_factory=Examples)
    failure: Failure | None = Field(None, description="set when this symptom is a failure")
    next: Text | None = Field(
        None,
        description="what to do when only this symptom shows and no line names its cause "
        "(e.g. rerun with more logging); without it, its cheapest question",
    )


class FixCommand(Strict):
    run: CommandText
    where: str | None = Field(
        None, description="where to run it: each node, the container, the launch script"
    )
    changes_machine: bool = Field(description="true when it installs, writes or restarts anything")
    applies_if: dict[ParamName, list[str]] = Field(
        default_factory=dict,
        description="left out once a named value is found (from the log, an answer or a "
        "check) and matches none of these (case-insensitive, * ? [..] as in file names), "
        "e.g. framework: [mxnet]; a value not found keeps the command",
    )


class MajorDiffers(Strict):
    """Two versions whose major numbers differ: `wanted` (e.g. `libcudart.so.10.1`: 10)
    against the first of `installed` that is known (e.g. `13.0`: 13)."""

    wanted: ParamName
    installed: list[ParamName] = Field(min_length=1)


class Caution(Strict):
    """Why a fix is fragile for the values found: shown with it, and the fix is offered
    after the cause's other fixes when the condition holds."""

    text: Text
    when_major_differs: MajorDiffers


class Fix(Strict):
    id: RuleId
    title: Text
    steps: Text
    commands: list[FixCommand] = Field(default_factory=list)
    params: dict[ParamName, ParamDoc] = Field(
        default_factory=dict, description="placeholders the user supplies (not extracted from logs)"
    )
    verify: list[RuleId] = Field(
        default_factory=list, description="checks that prove the fix worked"
    )
    references: list[Reference] = Field(default_factory=list)
    caution: Caution | None = Field(
        None, description="a warning shown when the values found make this fix fragile"
    )


KIND_MODELS: dict[str, type[Strict]] = {"cause": Cause, "symptom": Symptom, "fix": Fix}
