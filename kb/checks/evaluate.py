"""Reading a check's output: the rule's `problem_if`/`ok_if` conditions turned into a status.

Used for commands run locally, over SSH, and for output the user pasted ("I ran it
myself"), so all three reach the same verdict.  Statuses are those of the
`check --json` contract: pass, fail, unavailable, error (skipped is the runner's).

A check that did not really run is never a pass: a missing tool (exit 127, or
`TOOL: not found` for a tool the check requires, whatever the exit status: `cmd & tool;
wait` exits with the other command's status) is `unavailable`; an exit status the check
does not expect (its conditions do not test the exit status, and it is neither 0 nor a
`grep`'s 1 for "no line matched") or empty output where a line must match is `error`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kb.rules.placeholders import fill_text
from kb.rules.schema.models import Check, Expect
from kb.util.re2syntax import compile_re2

NOT_FOUND = re.compile(r"(?:command not found|: not found|No such file or directory)\s*$", re.M)
# what a shell says about itself (`/bin/sh: 1: x: not found`, `bash: warning: setlocale:
# ...`): never a value a check reads
SHELL_NOISE = re.compile(r"^(?:/\S*/)?(?:ba|da|k|z)?sh: ")


@dataclass
class CheckOutcome:
    status: str  # pass | fail | unavailable | error
    finding: str | None = None
    params: dict[str, str] = field(default_factory=dict)
    reason: str = ""


class _Lines:
    """An output split into lines once, for searching it line by line."""

    def __init__(self, output: str) -> None:
        self.lines = output.splitlines()
        self.joined = "\n".join(self.lines)

    def first(self, pattern: str) -> Any:
        """The match of `pattern` in the first line where it matches, or None."""
        return next(self.matches(pattern), None)

    def matches(self, pattern: str) -> Iterator[Any]:
        """The match of `pattern` in each line where it matches, first line first.

        The joined text is searched once first with `(?m)` (^ and $ at line ends): a
        match inside a line is also a match there, so when that finds nothing no line
        can match, and an output of a hundred lines costs one search instead of a
        hundred.  Patterns with `\\A`, `\\z` or inline flags skip that shortcut.
        """
        shortcut = not any(mark in pattern for mark in _WHOLE_TEXT_ONLY)
        if shortcut and compile_re2("(?m)" + pattern).search(self.joined) is None:
            return
        rx = compile_re2(pattern)
        for line in self.lines:
            m = rx.search(line)
            if m is not None:
                yield m


_WHOLE_TEXT_ONLY = ("\\A", "\\z", "(?")


def holds(expect: Expect, output: str, exit_code: int | None, lines: _Lines | None = None) -> bool:
    """Whether every condition given in `expect` holds for this output."""
    lines = lines or _Lines(output)
    if expect.any_line_matches is not None and lines.first(expect.any_line_matches) is None:
        return False
    if expect.no_line_matches is not None and lines.first(expect.no_line_matches) is not None:
        return False
    if expect.contains is not None and expect.contains not in output:
        return False
    if expect.not_contains is not None and expect.not_contains in output:
        return False
    if expect.exit_code is not None and exit_code != expect.exit_code:
        return False
    if expect.exit_nonzero is not None and (exit_code not in (None, 0)) != expect.exit_nonzero:
        return False
    if expect.number is not None and not _number_holds(expect, output):
        return False
    if expect.all is not None and not all(holds(e, output, exit_code, lines) for e in expect.all):
        return False
    return expect.any is None or any(holds(e, output, exit_code, lines) for e in expect.any)


def _number_holds(expect: Expect, output: str) -> bool:
    spec = expect.number
    assert spec is not None
    m = compile_re2(spec.pattern).search(output)
    if m is None:
        return False
    try:
        value = float(m.group(1))
    except (TypeError, ValueError, IndexError):
        return False
    tests: list[tuple[float | None, Callable[[float], bool]]] = [
        (spec.lt, lambda b: value < b),
        (spec.le, lambda b: value <= b),
        (spec.gt, lambda b: value > b),
        (spec.ge, lambda b: value >= b),
        (spec.eq, lambda b: value == b),
    ]
    return all(test(bound) for bound, test in tests if bound is not None)


def extract(check: Check, output: str, lines: _Lines | None = None) -> dict[str, str]:
    """Values named in the check's `extract`, first match each."""
    lines = lines or _Lines(output)
    found: dict[str, str] = {}
    for name, pattern in check.extract.items():
        named = name in compile_re2(pattern).groupindex
        for m in lines.matches(pattern):  # the first line whose match carries a value
            value = m.group(name) if named else m.group(1)
            if value:
                found[name] = value
                break
    return found


def evaluate(check: Check, stdout: str, exit_code: int | None, stderr: str = "") -> CheckOutcome:
    """The status of a check from its command's output."""
    text = stdout if not stderr else f"{stdout}\n{stderr}" if stdout else stderr
    missing_tool = _required_tool_missing(check, text)
    if missing_tool is not None:
        return CheckOutcome("unavailable", reason=f"{missing_tool} is not installed on this node")
    if exit_code == 127 or (exit_code not in (0, None) and _tool_missing(check, text)):
        return CheckOutcome("unavailable", reason=_missing_reason(check, text))
    if not exit_expected(check, exit_code):
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "no output")
        return CheckOutcome("error", reason=f"the command failed (exit {exit_code}): {first[:200]}")
    lines = _Lines(text)
    params = extract(check, text, _Lines(_without_shell_noise(text)))
    if holds(check.problem_if, text, exit_code, lines):
        status = "fail"
    elif check.ok_if is None or holds(check.ok_if, text, exit_code, lines):
        status = "pass"
    else:
        return CheckOutcome(
            "error", None, params, "the output matched neither the problem nor the ok condition"
        )
    finding = fill_text(check.finding, params) if check.finding and params else None
    return CheckOutcome(status, finding, params)


def _tests_exit(expect: Expect | None) -> bool:
    """Whether a condition (or one nested in it) looks at the exit status."""
    if expect is None:
        return False
    if expect.exit_code is not None or expect.exit_nonzero is not None:
        return True
    return any(_tests_exit(e) for e in (*(expect.any or ()), *(expect.all or ())))


GREP = re.compile(r"\bgrep\b")


def exit_expected(check: Check, exit_code: int | None) -> bool:
    """Whether the check's reading covers this exit status: 0 always, any status when its
    conditions test the exit status, 1 when the command uses grep (no line matched)."""
    if exit_code in (0, None) or _tests_exit(check.problem_if) or _tests_exit(check.ok_if):
        return True
    return exit_code == 1 and GREP.search(check.run) is not None


def _required_tool_missing(check: Check, text: str) -> str | None:
    """A required tool the shell could not find, whatever the exit status."""
    for tool in check.requires:
        rx = re.compile(rf"(?:^|[\s:]){re.escape(tool)}: (?:command )?not found\s*$", re.M)
        if rx.search(text):
            return tool
    return None


def _tool_missing(check: Check, text: str) -> bool:
    """The shell (or exec) says a required tool is not there. `python3: can't open file
    'x': No such file or directory` is a missing file, not a missing python3."""
    if not NOT_FOUND.search(text):
        return False
    return bool(_named_missing(check, text)) if check.requires else True


def _named_missing(check: Check, text: str) -> list[str]:
    """The required tools a not-found message names as the program that is missing."""
    return [
        tool
        for tool in check.requires
        if re.search(
            rf"(?:^|[\s:'\"]){re.escape(tool)}['\"]?: (?:command not found|not found|"
            rf"No such file or directory)\s*$",
            text,
            re.M,
        )
    ]


def _missing_reason(check: Check, text: str) -> str:
    """Which tool is missing, in words: the one the output names, never every tool the
    check requires (python3 is there when only tensorflow is not)."""
    named = _named_missing(check, text)
    if named:
        return f"{', '.join(named)} is not installed on this node"
    m = NOT_FOUND.search(text)
    line = text[text.rfind("\n", 0, m.start()) + 1 : m.end()].strip() if m else ""
    if line:
        return f"a program it runs is not installed on this node ({line[:200]})"
    return "a program it runs is not installed on this node (exit status 127)"


def _without_shell_noise(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if not SHELL_NOISE.match(ln))
