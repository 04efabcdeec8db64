"""Terminal controls from logs and nodes never reach a terminal (issue 11): `kb.util.textsafe` for
each kind of sequence, in linear time, under fuzzing; the reader's own stripping; and the CLI
(`diagnose`, `report`) on hostile input."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kb.diagnosis.reader import blocks, iter_lines, text_stream
from kb.util.textsafe import json_dumps, markdown_text, safe, safe_line, strip_escapes

ESC = "\x1b"
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# what must never come out: C0 but tab and newline, DEL, C1, bidi controls, lone surrogates
FORBIDDEN = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI}\ud800-\udfff]")
ROOT = Path(__file__).resolve().parents[2]

OSC52_ST = f"{ESC}]52;c;ZWNobyBwd25lZA=={ESC}\\"  # writes the clipboard, ended by ST
OSC8 = f"{ESC}]8;;https://evil.example/{ESC}\\docs{ESC}]8;;{ESC}\\"  # a hyperlink
HOSTILE = (
    f"{OSC52_ST} {OSC8} {ESC}]0;pwned{ESC}\\ {ESC}P+q544e{ESC}\\ {ESC}X sos {ESC}\\ "
    f"{ESC}^pm{ESC}\\ {ESC}_apc{ESC}\\ {ESC}c {ESC}(0 {ESC}#8 \x9b2J \x9d0;t\x9c \x85 \x08\x08 "
    "\u202eevil\u202c \u2066iso\u2069 \x07"
)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (f"a{OSC52_ST}b", "ab"),  # OSC 52 ended by ST
        (f"a{ESC}]52;c;ZXZpbA==\x07b", "ab"),  # ... and by BEL
        (f"see {OSC8} here", "see docs here"),  # OSC 8: the link's text stays
        (f"{ESC}]0;window title{ESC}\\ok", "ok"),  # OSC 0
        (f"{ESC}P1$r0m{ESC}\\ok", "ok"),  # DCS
        (f"{ESC}Xstart of string{ESC}\\ok", "ok"),  # SOS
        (f"{ESC}^privacy{ESC}\\ok", "ok"),  # PM
        (f"{ESC}_application{ESC}\\ok", "ok"),  # APC
        (f"{ESC}cafter reset", "after reset"),  # RIS
        (f"{ESC}7{ESC}8{ESC}M{ESC}=ok", "ok"),  # other two-character escapes
        (f"{ESC}(B{ESC}#8ok", "ok"),  # character set, DECALN
        (f"{ESC}[1;31mred{ESC}[0m {ESC}[2J{ESC}[?25l", "red "),  # CSI of every kind
        ("\x9b31mred\x9b0m", "red"),  # 8-bit CSI
        ("\x9d0;title\x9cok", "ok"),  # 8-bit OSC ended by 8-bit ST
        ("\x90dcs\x9cok", "ok"),  # 8-bit DCS
        ("next\x85line \x84", "next<U+0085>line <U+0084>"),  # other C1 shown
        ("rm -rf /\rls", "rm -rf /␍ls"),  # a lone CR cannot overwrite what came before
        ("abc\x08\x08\x08xyz", "abc␈␈␈xyz"),  # nor can backspace
        ("a\r\nb\r\r\nc\r", "a\nb\nc␍"),  # CRLF line ends become LF
        ("user \u202eexe.txt\u202c", "user <U+202E>exe.txt<U+202C>"),  # bidi override
        ("\u2066x\u2069 \u200f", "<U+2066>x<U+2069> <U+200F>"),  # isolates, RLM
        ("lone ESC at the end" + ESC, "lone ESC at the end␛"),
        (f"{ESC}]52;c;never ended", "52;c;never ended"),  # unterminated: the text stays
        (f"{ESC}[12;", "12;"),  # an unterminated CSI
        ("bell\x07 nul\x00 del\x7f", "bell␇ nul␀ del␡"),
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
        ("\udcff broken path", "\ufffd broken path"),  # a lone surrogate (os.fsdecode)
        ("plain text, ünïcödé, 日本語 — untouched", "plain text, ünïcödé, 日本語 — untouched"),
    ],
)
def test_each_kind_of_control_is_removed_or_shown(raw: str, shown: str) -> None:
    assert safe(raw) == shown
    assert not FORBIDDEN.search(safe(raw))


def test_everything_at_once_leaves_nothing_a_terminal_obeys() -> None:
    out = safe(HOSTILE)
    assert ESC not in out and not FORBIDDEN.search(out)
    assert "docs" in out and "evil" in out and "<U+202E>" in out and "␈␈" in out
    assert "https://evil.example" not in out  # a hidden link target is not shown either


def test_own_colours_are_kept_only_when_asked_and_only_colours() -> None:
    coloured = f"{ESC}[1mCause{ESC}[0m {ESC}]52;c;eA=={ESC}\\ {ESC}[2J"
    assert safe(coloured, keep_sgr=True) == f"{ESC}[1mCause{ESC}[0m  "
    assert safe(coloured) == "Cause  "


def test_safe_is_idempotent_and_one_line_forms_hold_one_line() -> None:
    assert safe(safe(HOSTILE)) == safe(HOSTILE)
    assert safe_line("a\nb\tc\x1b]0;x\x07") == "a␤b c"
    assert markdown_text("[click](https://evil) <img src=x> `x` a|b") == (
        "\\[click\\](https://evil) \\<img src=x\\> `x` a\\|b"
    )
    assert strip_escapes(f"{ESC}[31mred{ESC}[0m\x07") == "red\x07"  # only sequences go


def test_json_output_escapes_what_json_leaves_raw_and_keeps_the_data() -> None:
    data = {"line": f"x{ESC}]52;c;AA==\x07 \x85 \u202e \x7f \udcff", "n": 1}
    text = json_dumps(data, indent=2)
    assert not FORBIDDEN.search(text)
    assert json.loads(text) == data


# -- linear time: no input makes the sanitizer (or the reader) rescan what it has read.
# The bounds are generous: the quadratic versions took 70 s for 200 KB of `ESC ]` and
# 157 s for 1 MB of OSC 8 links; linear ones take well under a second on a loaded machine.

OSC8_LINE = (f"{ESC}]8;;file://host/home/u/file-0001.txt{ESC}\\file-0001.txt{ESC}]8;;{ESC}\\  ") * (
    1_000_000 // 70
)
WORST = {
    "2 MB of ESC ]": f"{ESC}]" * 1_000_000,
    "1 MB of OSC 8 links (ls --hyperlink)": OSC8_LINE,
    "1 MB of ESC ] without a terminator": f"{ESC}]" + "x" * 1_000_000,
    "1 MB of CSI parameters": f"{ESC}[" + "1;" * 500_000,
    "1 MB of C1 string starts": "\x9d" * 1_000_000,
    "1 MB of ESC + spaces": (ESC + " " * 9) * 100_000,
}


@pytest.mark.parametrize("name", list(WORST))
@pytest.mark.slow
def test_the_sanitizer_is_linear_on_its_worst_inputs(name: str) -> None:
    text = WORST[name]
    t0 = time.perf_counter()
    out = safe(text)
    elapsed = time.perf_counter() - t0
    assert not FORBIDDEN.search(out)
    assert elapsed < 10, f"{name}: {elapsed:.1f} s"
    # twice the input, about twice the work (a quadratic one would take 4x): timing-light
    half = text[: len(text) // 2]
    t0 = time.perf_counter()
    safe(half)
    t_half = time.perf_counter() - t0
    assert elapsed < 8 * t_half + 0.5, f"{name}: n/2 {t_half:.2f} s, n {elapsed:.2f} s"


@pytest.mark.parametrize("name", ["2 MB of ESC ]", "1 MB of OSC 8 links (ls --hyperlink)"])
def test_the_reader_strips_long_lines_of_escapes_in_linear_time(name: str) -> None:
    data = (WORST[name] + "\nNCCL WARN after the flood\n").encode()
    t0 = time.perf_counter()
    lines = [t for b in blocks(text_stream(data.decode()), "flood") for _, _, t in iter_lines(b)]
    assert time.perf_counter() - t0 < 10
    assert lines[-1] == "NCCL WARN after the flood"
    assert ESC not in lines[0]


def test_a_rule_example_is_cleaned_in_linear_time_too() -> None:
    from kb.diagnosis.shapes import clean  # the rule tests' (and pasted lines') cleaning

    t0 = time.perf_counter()
    assert clean(WORST["2 MB of ESC ]"] + "NCCL WARN x") == "NCCL WARN x"
    assert time.perf_counter() - t0 < 10
    assert clean(f"{OSC8} NCCL WARN {OSC52_ST}x\r\n") == "docs NCCL WARN x"


def test_the_reader_removes_st_ended_strings_before_matching() -> None:
    raw = f"{OSC8} {ESC}(BNCCL WARN {OSC52_ST}Connect failed{ESC}[0m\n"
    (block,) = list(blocks(text_stream(raw), "log"))
    ((_, _, line),) = list(iter_lines(block))
    assert line == "docs NCCL WARN Connect failed"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=8),
            st.sampled_from(
                [
                    ESC,
                    "[",
                    "]",
                    "\\",
                    "P",
                    "X",
                    "^",
                    "_",
                    "(",
                    "#",
                    "c",
                    "m",
                    ";",
                    "0",
                    "8",
                    "\x07",
                    "\x9b",
                    "\x9c",
                    "\x9d",
                    "\x90",
                    "\x85",
                    "\r",
                    "\b",
                    "\n",
                    "\t",
                    "\u202e",
                    "\u2066",
                    "\udcff",
                    "\x00",
                    "\x7f",
                    "\x18",
                ]
            ),
        ),
        max_size=60,
    ).map("".join)
)
@pytest.mark.slow
def test_fuzz_nothing_a_terminal_obeys_survives(text: str) -> None:
    out = safe(text)
    assert not FORBIDDEN.search(out), repr(out)
    assert ESC not in out
    assert safe(out) == out
    assert not FORBIDDEN.search(safe_line(text)) and "\n" not in safe_line(text)
    assert json.loads(json_dumps(text)) == text and not FORBIDDEN.search(json_dumps(text))


# -- the CLI, run as a user runs it, on hostile logs and surveys

CUDA_LINE = "OSError: libcudart.so.10.1: cannot open shared object file: No such file or directory"


RULES = ROOT / "tests" / "diagnosis" / "rules"  # a small real rule set: compiled in a second


def _cli(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), DLPERF_HELP_RULES=str(RULES))
    env.pop("DLPERF_HELP_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "kb.cli.main", *args],
        capture_output=True,
        timeout=300,
        env=env,
        cwd=ROOT,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
    )


def _clean(text: str) -> None:
    assert ESC not in text
    found = FORBIDDEN.search(text)
    assert found is None, f"raw {found.group()!r} in {text!r}"


@pytest.mark.slow
def test_diagnose_prints_no_terminal_control_from_a_hostile_log(tmp_path: Path) -> None:
    log = tmp_path / "hostile.log"
    log.write_text(
        f"{HOSTILE}\n{CUDA_LINE} {HOSTILE}\n{OSC8} \u202e{CUDA_LINE}\n", encoding="utf-8"
    )
    human = _cli("diagnose", str(log), cache=tmp_path / "cache")
    assert human.returncode == 1, human.stderr
    assert "libcudart.so.10.1" in human.stdout and "<U+202E>" in human.stdout
    _clean(human.stdout)
    _clean(human.stderr)
    as_json = _cli("diagnose", "--json", str(log), cache=tmp_path / "cache")
    _clean(as_json.stdout)
    doc = json.loads(as_json.stdout)
    assert any("\u202e" in e["text"] for c in doc["causes"] for e in c["evidence"])


@pytest.mark.slow
def test_a_hostile_file_name_is_shown_not_obeyed(tmp_path: Path) -> None:
    name = tmp_path / f"run{ESC}]52;c;eA=={ESC}\\\u202e.log"
    done = _cli("diagnose", str(name), cache=tmp_path / "cache")
    assert done.returncode == 2
    assert "no such file" in done.stderr and "<U+202E>" in done.stderr
    _clean(done.stderr)


@pytest.mark.slow
def test_report_prints_no_terminal_control_from_a_node(tmp_path: Path) -> None:
    docs = []
    for host in ("gpu01", f"gpu02{ESC}]0;x\x07"):
        docs.append(
            {
                "host": host,
                "facts": {
                    "hostname": host,
                    "driver_version": f"535.54{ESC}]52;c;ZXZpbA=={ESC}\\\u202e\x85",
                    "nccl_system_version": "2.18.3" if host == "gpu01" else f"2.7{ESC}c",
                },
                "unavailable": {},
            }
        )
    survey = tmp_path / "survey.json"
    survey.write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    for args in ([], ["--markdown"], ["--json"]):
        done = _cli("report", *args, str(survey), cache=tmp_path / "cache")
        assert done.returncode in (0, 1), done.stderr
        assert "535.54" in done.stdout
        _clean(done.stdout)
        _clean(done.stderr)


NODE_CHECK_RULE = r"""id: node-prints-controls
title: A node whose tool prints terminal controls
description: Its output holds escape sequences, C1 controls and bidi overrides.
symptoms: [job-fails]
prior: 0.1
signatures:
  - id: never
    weight: 0.5
    matchers:
      - type: regex
        pattern: 'this node prints controls'
checks:
  - id: print-controls
    title: Print what a hostile tool prints
    run: printf 'ok\033]52;c;ZXZpbA==\033\\ \302\233 \342\200\256evil\033c\n'
    read_only: true
    cost: 1
    problem_if:
      any_line_matches: 'ok'
    means: The tool printed what a terminal would obey.
    extract:
      said: '^(ok.*)$'
    finding: 'the tool said {said}'
fixes: [generic-fix]
examples:
  match:
    - 'this node prints controls'
"""


@pytest.mark.slow
def test_check_prints_no_terminal_control_from_a_command_output(tmp_path: Path) -> None:
    import shutil

    rules = tmp_path / "rules"
    shutil.copytree(RULES, rules)
    (rules / "misc" / "node-prints-controls.yaml").write_text(NODE_CHECK_RULE)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), DLPERF_HELP_RULES=str(rules))
    env.pop("DLPERF_HELP_DEBUG", None)
    for extra in ([], ["--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "kb.cli.main", "check", "--check", "print-controls", *extra],
            capture_output=True,
            timeout=300,
            env=env,
            cwd=ROOT,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 1, done.stdout + done.stderr
        shown = done.stdout + done.stderr
        assert "print-controls" in shown and "evil" in shown
        _clean(done.stdout)
        _clean(done.stderr)
