"""Fuzzing the two doors hostile input comes through: the log reader and the rule loader.

Whatever bytes a log holds (random, in any Unicode encoding, gzipped, cut short), the
reader gives whole lines or one `InputError` line, never another exception. Whatever a
rule file holds (YAML-ish text, anchors and aliases, tags, merge keys, control
characters, deep nesting), loading and linting give issues of the form `file:line:
message` on one line, never an exception, in bounded time. The runs are bounded
(`max_examples`) and derandomized, so CI sees the same examples every time.
"""

from __future__ import annotations

import codecs
import gzip
import re
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kb.authoring import lint
from kb.diagnosis import rawbytes, reader

HERE = Path(__file__).parent
FUZZ = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ---------------------------------------------------------------- the reader

TEXT = st.lists(
    st.characters(blacklist_categories=["Cs"])
    | st.sampled_from(["\n", "\r\n", "\0", "\x1b[31m", "\x1b]8;;x\x1b\\", "NCCL WARN ", "é", "😀"]),
    max_size=1500,
).map("".join)
CODECS = ["utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "latin-1", "gbk"]
BOMS = {
    "utf-8": codecs.BOM_UTF8,
    "utf-16-le": codecs.BOM_UTF16_LE,
    "utf-16-be": codecs.BOM_UTF16_BE,
    "utf-32-le": codecs.BOM_UTF32_LE,
    "utf-32-be": codecs.BOM_UTF32_BE,
}


@st.composite
def log_bytes(draw: st.DrawFn) -> bytes:
    """Random bytes, or a random text in a random encoding (with or without its mark),
    maybe gzipped, maybe cut anywhere."""
    if draw(st.booleans()):
        data = draw(st.binary(max_size=6000))
    else:
        codec = draw(st.sampled_from(CODECS))
        data = draw(TEXT).encode(codec, "replace")
        if codec in BOMS and draw(st.booleans()):
            data = BOMS[codec] + data
    if draw(st.integers(0, 3)) == 0:
        data = gzip.compress(data)
    if draw(st.integers(0, 4)) == 0:
        data = data[: draw(st.integers(0, len(data)))]
    return data


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@FUZZ
@given(data=log_bytes(), chunk=st.sampled_from([7, 100, 4096, None]))
@pytest.mark.slow
def test_the_reader_gives_lines_or_one_clean_error(scratch: Path, data: bytes, chunk: int) -> None:
    path = scratch / "fuzz.log"
    path.write_bytes(data)
    lines: list[str] = []
    try:
        stream = reader.open_input(str(path))
        try:
            for block in reader.blocks(stream, str(path), chunk=chunk):
                lines.extend(text for _, _, text in reader.iter_lines(block))
        finally:
            stream.close()
    except rawbytes.InputError as exc:
        message = str(exc)
        assert message.startswith(f"{path}: ") and "\n" not in message
        return
    assert all("\n" not in line and len(line.encode()) <= 4 * reader.MAX_LINE for line in lines)


@FUZZ
@given(text=TEXT, codec=st.sampled_from(list(BOMS)), bom=st.booleans(), gz=st.booleans())
@pytest.mark.slow
def test_every_unicode_encoding_reads_as_the_same_lines(
    scratch: Path, text: str, codec: str, bom: bool, gz: bool
) -> None:
    """A text that is plainly text (letters, no NULs, no controls) reads back the same in
    every encoding: the encodings are found, not guessed wrong. Without a byte-order mark
    only the NULs of ASCII tell UTF-16/32, so the text is then ASCII (as logs are)."""
    text = re.sub(r"[^\w .:,\n-]" if bom else r"[^A-Za-z0-9_ .:,\n-]", "", text)
    text = "NCCL WARN Bootstrap : no socket interface found\n" + text
    data = (BOMS[codec] if bom else b"") + text.encode(codec)
    path = scratch / "text.log"
    path.write_bytes(gzip.compress(data) if gz else data)
    stream = reader.open_input(str(path))
    try:
        got = [t for b in reader.blocks(stream, str(path)) for _, _, t in reader.iter_lines(b)]
    finally:
        stream.close()
    assert got == (text[:-1] if text.endswith("\n") else text).split("\n")


# ---------------------------------------------------------------- the rule loader

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
KEYS = st.sampled_from(
    ["id", "title", "description", "symptoms", "prior", "fixes", "checks", "run", "signatures"]
) | st.text(min_size=1, max_size=12)
DOCS = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=25,
)
INSERTS = st.sampled_from(
    [
        "&a ",
        "*a",
        "<<: {title: x}\n",
        "!!python/name:os.system ",
        "!!binary ",
        "!custom ",
        "!!set ",
        "---\n",
        "\0",
        "\x1b",
        "\t",
        "? [a, b]\n: c\n",
        '"\\0"',
        "[" * 80,
        "{",
        "'",
        ": ",
        "- ",
        "\n  ",
        "2026-13-45",
        "!!int x",
        "\ufeff",
        "\udcff",
    ]
)


@st.composite
def rule_text(draw: st.DrawFn) -> str:
    """A plausible rule file (a real one, or a random document dumped as YAML), with
    hostile fragments inserted at random places."""
    import yaml

    if draw(st.booleans()):
        base = (HERE / "base_rules" / "demo" / "demo-cause.yaml").read_text()
        text = base.replace("id: demo-cause", "id: fuzz")
    else:
        text = yaml.safe_dump(draw(DOCS), allow_unicode=True)
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(INSERTS) + text[at:]
    if draw(st.integers(0, 5)) == 0:  # an alias bomb of random depth and width
        width, depth = draw(st.integers(2, 12)), draw(st.integers(2, 12))
        refs = ",".join(["lol"] * width)
        rows = [f"l0: &l0 [{refs}]"]
        for i in range(1, depth):
            rows.append(f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * width)}]")
        text += "\n" + "\n".join(rows) + "\n"
    return text


ISSUE = re.compile(r"^rules/[\w./-]+:\d+: [^\n]+$")


@pytest.fixture(scope="module")
def rules_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rules = tmp_path_factory.mktemp("fuzz-rules") / "rules"
    shutil.copytree(HERE / "base_rules", rules)
    return rules


@FUZZ
@given(text=rule_text())
@example(text="? '\n\n  '\n: null\n")  # a key holding a newline: its message stays one line
@pytest.mark.slow
def test_any_rule_file_loads_or_gives_one_line_file_line_errors(rules_dir: Path, text: str) -> None:
    path = rules_dir / "demo" / "fuzz.yaml"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    start = time.perf_counter()
    _kb, issues = lint.lint(rules_dir)
    assert time.perf_counter() - start < 20  # the alias bombs included: no expansion
    for issue in issues:
        assert ISSUE.match(str(issue)), str(issue)
        assert issue.line >= 1
