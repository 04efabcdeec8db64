"""Every kind of bad input gets a result or a one-line error: never a traceback or a hang.

Binary data, invalid UTF-8, CRLF, ANSI colour codes, a 100 MB line without a newline,
an empty file, a missing file, a directory, gzip (good, damaged, misnamed) and stdin.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from kb.diagnosis import reader
from kb.diagnosis.engine import diagnose_paths, diagnose_text

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
    path.write_bytes(b"a\n" + b"y" * (3 * reader.CHUNK) + b"\nb\n" + CUDA_LINE.encode() + b"\n")
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


def test_cli_reads_standard_input(cli) -> None:
    proc = cli("diagnose", "--json", "-", input="hello\n" + CUDA_LINE + "\n")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["causes"][0]["id"] == "cuda-lib-missing"
    assert data["causes"][0]["evidence"][0] == {"file": "-", "line": 2, "text": CUDA_LINE}


def test_cli_reads_piped_input_without_arguments(cli) -> None:
    proc = cli("diagnose", "--json", input=CUDA_LINE + "\n")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["causes"][0]["evidence"][0]["file"] == "-"


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
