"""Every kind of bad input gets a result or a one-line error: never a traceback or a hang.

Binary data, invalid UTF-8, CRLF, ANSI colour codes, a 100 MB line without a newline,
an empty file, a missing file, a directory, gzip (good, damaged, misnamed), stdin, and
logs in UTF-16 or UTF-32 (with or without a byte-order mark, also gzipped).
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import random
from pathlib import Path

import pytest

from kb.diagnosis import decoding, rawbytes, reader
from kb.diagnosis.engine import diagnose_paths, diagnose_text

from .conftest import DEV_CORPUS, SHIPPED_RULES, agreed

CUDA_LINE = "OSError: libcudart.so.10.1: cannot open shared object file: No such file or directory"


def _ids(diag) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.id for c in diag.causes]


def test_binary_data_is_a_one_line_error(rules, tmp_path: Path) -> None:
    path = tmp_path / "core.bin"
    path.write_bytes(bytes(range(256)) * 400)
    diag = diagnose_paths(rules, [path])
    assert diag.errors == [{"file": str(path), "error": f"{path}: binary data, not a text log"}]
    assert diag.causes == []


def test_invalid_utf8_is_read_with_replacement(rules, tmp_path: Path) -> None:
    path = tmp_path / "mixed.log"
    path.write_bytes(b"ok\n\xff\xfe\xc3\x28 junk\n" + CUDA_LINE.encode() + b"\n")
    diag = diagnose_paths(rules, [path])
    assert _ids(diag) == ["cuda-lib-missing"]
    assert diag.causes[0].evidence[0].line == 3
    assert diag.stats.lines == 3


def test_crlf_and_ansi_codes_are_removed_before_matching(rules, tmp_path: Path) -> None:
    path = tmp_path / "color.log"
    colored = "\x1b[31mOSError: libcudart.so\x1b[0m.10.1: cannot open shared object file\x1b[0m"
    path.write_bytes(f"first\r\n{colored}\r\n".encode())
    diag = diagnose_paths(rules, [path])
    ev = diag.causes[0].evidence[0]
    assert ev.line == 2
    assert ev.text == "OSError: libcudart.so.10.1: cannot open shared object file"
    assert diag.causes[0].params["library"] == "libcudart.so.10.1"


def test_a_100_mb_line_without_newline_is_cut_not_held(rules, tmp_path: Path) -> None:
    path = tmp_path / "one-line.log"
    with open(path, "wb") as fh:
        fh.write(CUDA_LINE.encode() + b" ")
        for _ in range(100):
            fh.write(b"x" * (1 << 20))
    diag = diagnose_paths(rules, [path])
    assert diag.errors == []
    assert diag.stats.lines == 1
    assert _ids(diag) == ["cuda-lib-missing"]  # the start of the line is kept
    assert len(diag.causes[0].evidence[0].text) == reader.MAX_LINE


def test_a_long_line_between_normal_lines_keeps_line_numbers(rules, tmp_path: Path) -> None:
    path = tmp_path / "long-middle.log"
    path.write_bytes(b"a\n" + b"y" * (3 * rawbytes.CHUNK) + b"\nb\n" + CUDA_LINE.encode() + b"\n")
    diag = diagnose_paths(rules, [path])
    assert diag.stats.lines == 4
    assert diag.causes[0].evidence[0].line == 4


def test_empty_file_finds_nothing(rules, tmp_path: Path) -> None:
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    diag = diagnose_paths(rules, [path])
    assert (diag.causes, diag.errors, diag.stats.lines, diag.stats.files) == ([], [], 0, 1)


def test_missing_file_and_directory_are_errors_and_others_still_diagnosed(
    rules, tmp_path: Path
) -> None:
    good = tmp_path / "good.log"
    good.write_text(CUDA_LINE + "\n")
    diag = diagnose_paths(rules, [tmp_path / "nope.log", tmp_path, good])
    assert diag.errors == [
        {"file": str(tmp_path / "nope.log"), "error": f"{tmp_path / 'nope.log'}: no such file"},
        {"file": str(tmp_path), "error": f"{tmp_path}: is a directory (give the log files in it)"},
    ]
    assert _ids(diag) == ["cuda-lib-missing"]


def test_a_device_is_refused_instead_of_read_forever(rules) -> None:
    diag = diagnose_paths(rules, ["/dev/zero"])
    assert diag.errors == [{"file": "/dev/zero", "error": "/dev/zero: a device, not a log file"}]


def test_gzip_is_recognised_by_content_whatever_the_name(rules, tmp_path: Path) -> None:
    path = tmp_path / "rank0.txt"
    path.write_bytes(gzip.compress(("x\n" * 5000 + CUDA_LINE + "\n").encode()))
    diag = diagnose_paths(rules, [path])
    assert _ids(diag) == ["cuda-lib-missing"]
    assert diag.causes[0].evidence[0].line == 5001


def test_damaged_gzip_is_a_one_line_error(rules, tmp_path: Path) -> None:
    path = tmp_path / "cut.log.gz"
    path.write_bytes(gzip.compress(("hello world\n" * 20000).encode())[:500])
    diag = diagnose_paths(rules, [path])
    assert len(diag.errors) == 1
    assert diag.errors[0]["error"].startswith(f"{path}: damaged gzip data")
    assert "\n" not in diag.errors[0]["error"]


def test_pasted_text_without_final_newline(rules) -> None:
    diag = diagnose_text(rules, "a\n" + CUDA_LINE)
    assert diag.causes[0].evidence[0].line == 2


@pytest.mark.slow
def test_cli_bad_inputs_never_show_a_traceback(cli, tmp_path: Path) -> None:
    (tmp_path / "bin.dat").write_bytes(bytes(range(256)) * 100)
    (tmp_path / "empty.log").write_bytes(b"")
    for args in (["bin.dat"], ["missing.log"], ["."], ["empty.log"], ["--top", "0", "x"]):
        proc = cli("diagnose", "--json", *args, cwd=tmp_path)
        assert "Traceback" not in proc.stderr, args
        assert len(proc.stderr.strip().splitlines()) <= 1, (args, proc.stderr)
        if args == ["empty.log"]:
            assert proc.returncode == 0
            assert json.loads(proc.stdout)["causes"] == []
        else:
            assert proc.returncode == 2, args


@pytest.mark.slow
def test_cli_reads_standard_input(cli) -> None:
    proc = cli("diagnose", "--json", "-", input="hello\n" + CUDA_LINE + "\n")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["causes"][0]["id"] == "cuda-lib-missing"
    assert data["causes"][0]["evidence"][0] == {"file": "-", "line": 2, "text": CUDA_LINE}


@pytest.mark.slow
def test_cli_reads_piped_input_without_arguments(cli) -> None:
    proc = cli("diagnose", "--json", input=CUDA_LINE + "\n")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["causes"][0]["evidence"][0]["file"] == "-"


@pytest.mark.slow
def test_progress_counts_input_bytes_and_cancel_stops_the_scan(rules, tmp_path: Path) -> None:
    import threading

    path = tmp_path / "big.log.gz"
    lines = b"".join(b"filler line number %d with some words\n" % i for i in range(200_000))
    path.write_bytes(gzip.compress(lines))
    size = path.stat().st_size
    seen: list[tuple[int, int | None]] = []
    diagnose_paths(rules, [path], progress=lambda done, total, _name: seen.append((done, total)))
    assert seen[-1] == (size, size)  # the compressed bytes, as the file size counts them
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)

    cancel = threading.Event()
    diag = diagnose_paths(rules, [path], progress=lambda *_: cancel.set(), cancel=cancel)
    assert diag.cancelled
    assert 0 < diag.stats.lines < 200_000


# ---------------------------------------------------------------- UTF-16 and UTF-32 logs

NCCL_LOG = DEV_CORPUS / "h200-nccl-socket-ifname-missing.log"


def _same_diagnosis(diag: dict, name: str) -> dict:  # type: ignore[type-arg]
    """A diagnosis with the file name and the byte count (which the encoding changes) out."""
    text = json.dumps(diag).replace(json.dumps(name)[1:-1], "LOG")
    out = json.loads(text)
    out["stats"].pop("bytes")
    return out


def _encoded(text: str, codec: str, bom: bytes) -> bytes:
    return bom + text.encode(codec)


@pytest.fixture(scope="module")
def utf8_diagnosis(shipped) -> dict:  # type: ignore[no-untyped-def, type-arg]
    want = _same_diagnosis(agreed(shipped, paths=[NCCL_LOG]), str(NCCL_LOG))
    assert want["causes"][0]["id"] == "nccl-wrong-interface"
    return want


@pytest.mark.slow
@pytest.mark.parametrize(
    ("codec", "bom", "crlf", "gz"),
    [
        ("utf-16-le", codecs.BOM_UTF16_LE, True, False),  # what PowerShell's `>` writes
        ("utf-16-le", codecs.BOM_UTF16_LE, True, True),
        ("utf-16-le", b"", False, False),
        ("utf-16-be", codecs.BOM_UTF16_BE, False, False),
        ("utf-16-be", b"", True, False),
        ("utf-32-le", codecs.BOM_UTF32_LE, False, False),
        ("utf-32-le", b"", False, False),
        ("utf-32-be", codecs.BOM_UTF32_BE, True, False),
        ("utf-32-be", b"", False, True),
        ("utf-8", codecs.BOM_UTF8, True, False),
    ],
)
def test_a_utf16_or_utf32_log_is_diagnosed_as_its_utf8_original(
    shipped, utf8_diagnosis, tmp_path: Path, codec: str, bom: bytes, crlf: bool, gz: bool
) -> None:
    text = NCCL_LOG.read_text(encoding="utf-8")
    data = _encoded(text.replace("\n", "\r\n") if crlf else text, codec, bom)
    assert b"\0" in data or codec == "utf-8"
    path = tmp_path / (NCCL_LOG.name + (".gz" if gz else ""))  # a name says the rank: keep it
    path.write_bytes(gzip.compress(data) if gz else data)
    assert _same_diagnosis(agreed(shipped, paths=[path]), str(path)) == utf8_diagnosis


@pytest.mark.slow
def test_cli_diagnoses_a_powershell_log_instead_of_finding_nothing(cli, tmp_path: Path) -> None:
    text = NCCL_LOG.read_text(encoding="utf-8").replace("\n", "\r\n")
    (tmp_path / "out.log").write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    proc = cli("diagnose", "--json", "out.log", cwd=tmp_path, rules=SHIPPED_RULES)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["causes"][0]["id"] == "nccl-wrong-interface"
    assert data["causes"][0]["evidence"][0]["line"] == 8
    assert (
        "NCCL WARN Bootstrap : no socket interface found"
        in (data["causes"][0]["evidence"][0]["text"])
    )


def test_utf16_read_in_small_reads_keeps_characters_whole(rules) -> None:
    """A block boundary inside a code unit or a surrogate pair loses nothing."""
    text = "α😀 " + CUDA_LINE + "\n"
    raw = io.BytesIO(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    raw.peek = lambda n=0: raw.getvalue()[raw.tell() : raw.tell() + max(n, 1)]  # type: ignore[attr-defined]
    wrapped = decoding.as_utf8(raw, "x")  # type: ignore[arg-type]
    got = b"".join(iter(lambda: wrapped.read(3), b""))
    assert got.decode("utf-8") == text


@pytest.mark.parametrize(
    ("head", "what"),
    [
        (b"", "random bytes"),
        (codecs.BOM_UTF16_LE, "random bytes after a UTF-16 mark"),
        (codecs.BOM_UTF32_BE, "random bytes after a UTF-32 mark"),
    ],
)
def test_random_bytes_are_refused_with_one_line(
    rules, tmp_path: Path, head: bytes, what: str
) -> None:
    path = tmp_path / "garbage.log"
    path.write_bytes(head + random.Random(7).randbytes(200_000))
    diag = diagnose_paths(rules, [path])
    assert diag.errors == [{"file": str(path), "error": f"{path}: binary data, not a text log"}], (
        what
    )


def test_nul_runs_and_legacy_encodings_are_still_read_as_text(rules, tmp_path: Path) -> None:
    """A log truncated in place starts with NULs; a GBK log is invalid UTF-8 without
    control bytes: neither is taken for UTF-16 or refused."""
    nuls = tmp_path / "truncated.log"
    nuls.write_bytes(b"\0" * 5000 + b"restarted\n" + CUDA_LINE.encode() + b"\n")
    gbk = tmp_path / "gbk.log"
    gbk.write_bytes(("训练开始，加载数据集\n" * 200 + CUDA_LINE + "\n").encode("gbk"))
    for path, line in ((nuls, 2), (gbk, 201)):
        diag = diagnose_paths(rules, [path])
        assert diag.errors == [], path
        assert _ids(diag) == ["cuda-lib-missing"]
        assert diag.causes[0].evidence[0].line == line


def test_sniffing_names_the_encoding() -> None:
    assert decoding.sniff("hello\n".encode("utf-16-le")) == ("utf-16-le", 0)
    assert decoding.sniff("hello\n".encode("utf-16-be")) == ("utf-16-be", 0)
    assert decoding.sniff("hello\n".encode("utf-32-le")) == ("utf-32-le", 0)
    assert decoding.sniff("hello\n".encode("utf-32-be")) == ("utf-32-be", 0)
    assert decoding.sniff(codecs.BOM_UTF16_LE + b"h\0") == ("utf-16-le", 2)
    assert decoding.sniff(codecs.BOM_UTF32_LE + b"h\0\0\0") == ("utf-32-le", 4)
    assert decoding.sniff(b"\0" * 100 + b"hello") == ("utf-8", 0)
    assert decoding.sniff("训练".encode("utf-16-le")) == ("utf-8", 0)  # no NUL: left as is


def test_file_lines_numbers_a_utf16_log_as_the_diagnosis_does(shipped, tmp_path: Path) -> None:
    """For views that show the log beside the diagnosis: the evidence line is the same."""
    text = NCCL_LOG.read_text(encoding="utf-8").replace("\n", "\r\n")
    path = tmp_path / "out.log"
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    lines = list(reader.file_lines(str(path)))
    ev = diagnose_paths(shipped, [path]).causes[0].evidence[0]
    assert lines[ev.line - 1] == ev.text
    assert lines == NCCL_LOG.read_text(encoding="utf-8").splitlines()
    (tmp_path / "bin.dat").write_bytes(random.Random(3).randbytes(5000))
    assert list(reader.file_lines(str(tmp_path / "bin.dat"))) == []
