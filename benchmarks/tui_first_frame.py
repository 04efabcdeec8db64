"""Time from starting `dlperf-help` in a terminal to its first frame on screen.

Why: users start the assistant mid-incident; it must show something at once (target:
under one second on a 2-core machine). The command runs in a pseudo-terminal of 80x24,
as a user would start it, and the clock stops when the start screen's text and its
footer have been written. Rules load in a worker after that frame, so their size does
not count here.
Bytecode is cached (in a temporary folder) as it is for an installed wheel, and one
warm-up run fills it and the file cache, as a second start would find them.

    python benchmarks/tui_first_frame.py [--runs 5] [--rules DIR] [--paste 50000]

Beside it, the same clock on an empty Textual app (one `Static` with the same words):
the assistant's first frame may take at most `EMPTY_RATIO` times as long (CPU and wall,
medians of runs taken in turn, so both see the same load).

It also times a bracketed paste of many lines, from the paste to the diagnosis screen,
and the longest the UI's event loop went without running a 10 ms timer meanwhile (the
"freeze" a user would feel).
"""

from __future__ import annotations

import argparse
import fcntl
import itertools
import os
import pty
import re
import select
import signal
import statistics
import struct
import sys
import tempfile
import termios
import time
from pathlib import Path

ANSI = re.compile(
    rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>]"
)
# the start screen's text and its footer's last key: the whole first screen, footer too
# (the empty app's one line is its whole screen)
FIRST_FRAME = (b"Paste a log", b"F1 Help")
EMPTY_FRAME = (b"Paste a log",)
EMPTY_RATIO = 1.3
EMPTY_APP = (
    "from textual.app import App\n"
    "from textual.widgets import Static\n"
    "class Empty(App):\n"
    "    def compose(self):\n"
    "        yield Static('Paste a log')\n"
    "Empty().run()\n"
)
TIMEOUT = 20.0


def one_run(
    argv: list[str], env: dict[str, str], frame: tuple[bytes, ...] = FIRST_FRAME
) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the assistant) until its first frame (every text in
    `frame`) is written."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the assistant, in the pseudo-terminal
        os.execvpe(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    start = time.perf_counter()
    seen = b""
    wall = None
    try:
        while time.perf_counter() - start < TIMEOUT:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            seen += chunk
            shown = ANSI.sub(b"", seen)
            if all(text in shown for text in frame):
                wall = time.perf_counter() - start
                break
    finally:
        os.kill(pid, signal.SIGKILL)  # stop its clock at once: CPU time up to the frame
        _, _, usage = os.wait4(pid, 0)
        os.close(fd)
    if wall is None:
        raise SystemExit(f"no first frame within {TIMEOUT:g} s; output: {seen[-300:]!r}")
    return wall, usage.ru_utime + usage.ru_stime


def paste_figures(lines: int, rules: Path | None) -> tuple[float, float]:
    """(seconds from a bracketed paste of `lines` lines to the diagnosis screen, longest
    stall of the UI's event loop meanwhile), measured headless with Textual's Pilot."""
    import asyncio

    from textual import events

    from dlperf_tui.app import DlperfHelpApp
    from kb.authoring.checked import load_kb
    from kb.util import paths

    text = "\r".join(f"[rank{i % 64}] step {i} loss 0.{i % 9973:04d} lr 1e-4" for i in range(lines))
    app = DlperfHelpApp(kb=load_kb(rules or paths.rules_dir()), export_dir=Path(tempfile.mkdtemp()))
    ticks: list[float] = []

    async def drive() -> float:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.2)
            app.set_interval(0.01, lambda: ticks.append(time.perf_counter()))
            await pilot.pause(0.1)
            start = time.perf_counter()
            app.screen.query_one("#log").post_message(events.Paste(text))
            while type(app.screen).__name__ != "DiagnosisScreen":
                await pilot.pause(0.01)
            return time.perf_counter() - start

    seconds = asyncio.run(drive())
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    return seconds, max(gaps, default=0.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rules", type=Path, help="rules directory (default: the shipped ones)")
    parser.add_argument(
        "--paste",
        type=int,
        default=50_000,
        metavar="LINES",
        help="also time a bracketed paste of LINES lines (0: skip)",
    )
    args = parser.parse_args()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"}
    # An installed wheel has its bytecode compiled; this checkout may run with
    # PYTHONDONTWRITEBYTECODE. Keep the bytecode, outside the tree, as an install would.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="dlperf-help-pycache-")
    if args.rules:
        env["DLPERF_HELP_RULES"] = str(args.rules)
    argv = [sys.executable, "-m", "dlperf_tui.cli"]
    empty = [sys.executable, "-c", EMPTY_APP]
    one_run(argv, env)  # warm the file cache and the bytecode, as a second start would
    one_run(empty, env, EMPTY_FRAME)
    runs, bare = [], []
    for _ in range(args.runs):  # in turn: both under the same load
        runs.append(one_run(argv, env))
        bare.append(one_run(empty, env, EMPTY_FRAME))
    wall = [w for w, _ in runs]
    cpu = [c for _, c in runs]
    e_wall = statistics.median(w for w, _ in bare)
    e_cpu = statistics.median(c for _, c in bare)
    print(
        f"first frame at 80x24 over {args.runs} runs (load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores): wall median {statistics.median(wall):.3f} s "
        f"(min {min(wall):.3f}, max {max(wall):.3f}); CPU median {statistics.median(cpu):.3f} s"
    )
    ratio_wall = statistics.median(wall) / max(e_wall, 1e-6)
    ratio_cpu = statistics.median(cpu) / max(e_cpu, 1e-6)
    print(
        f"empty Textual app, same clock: wall median {e_wall:.3f} s, CPU median {e_cpu:.3f} s; "
        f"ratio {ratio_wall:.2f} (wall), {ratio_cpu:.2f} (CPU) (target <= {EMPTY_RATIO})"
    )
    if args.paste:
        seconds, stall = paste_figures(args.paste, args.rules)
        print(
            f"paste of {args.paste:,} lines to the diagnosis screen: {seconds:.2f} s; "
            f"longest stall of the UI meanwhile: {stall * 1000:.0f} ms"
        )
    return 0 if max(ratio_wall, ratio_cpu) <= EMPTY_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
