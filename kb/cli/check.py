"""`dlperf-help check`: run the rules' checks on this machine or on nodes over SSH.

Hosts come from `--host`, `--hostfile`, `-H` (Slurm expressions expand) and go through
~/.ssh/config; checks from `--cause`, `--symptom`, `--check`, `--fix`,
`--from-diagnosis`, or else the standard node survey.  Results stream to stderr as they
arrive; at the end stdout gets the report grouped by area, as doctor tools print it
(`kb.checks.render.doctor_text`; colour only on a terminal, NO_COLOR honoured), or with
`--json` one JSON document.  Exit status: 0 nothing wrong, 1 a failing check / unreachable host / broken pair,
2 bad usage, 130 interrupted (what finished is still printed).
"""

from __future__ import annotations

import argparse
import getpass
import json
import re
import sys
import threading
from pathlib import Path
from typing import Any

from kb.util.errors import UserError

HELP = "run verifying checks on this machine or on nodes over SSH"


def add_arguments(p: argparse.ArgumentParser) -> None:
    h = p.add_argument_group("hosts (none: this machine)")
    h.add_argument(
        "--host",
        action="append",
        default=[],
        metavar="[USER@]NAME[:PORT]",
        help="a node; :PORT is the SSH port; gpu[01-04] expands (repeatable)",
    )
    h.add_argument(
        "--hostfile",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="MPI hostfile (node1 slots=8) or one host per line",
    )
    h.add_argument(
        "-H",
        dest="hostlist",
        action="append",
        default=[],
        metavar="H1:N,H2:N",
        help="mpirun/horovodrun host list; :N is slots, not a port",
    )
    h.add_argument("--port", type=int, help="SSH port for hosts given without one")
    h.add_argument("--user", "-l", help="user for hosts given without one")
    h.add_argument(
        "--ssh-config",
        type=Path,
        metavar="FILE",
        help="OpenSSH client config (default ~/.ssh/config)",
    )
    h.add_argument(
        "-i",
        dest="identity",
        action="append",
        default=[],
        type=Path,
        metavar="KEY",
        help="private key to log in with (repeatable)",
    )
    h.add_argument(
        "--known-hosts",
        type=Path,
        metavar="FILE",
        help="known_hosts file (default ~/.ssh/known_hosts)",
    )
    h.add_argument(
        "--accept-new-host-keys",
        action="store_true",
        help="trust and record keys of hosts not yet known (changed keys are always refused)",
    )
    h.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds to wait for a node to answer, log us in and start its shell "
        "(a ForceCommand or a ~/.bashrc that blocks is cut after this; default 10)",
    )
    h.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds each remote command may run, enforced here (default: each check's "
        "own, 20 s for most); checks needing a tool that timed out are not run again",
    )
    h.add_argument(
        "--host-budget",
        type=float,
        metavar="S",
        help="total seconds per host; when spent, the rest is 'unavailable: host budget "
        "spent' (default 300, or longer to fit a check whose own timeout is longer)",
    )
    h.add_argument(
        "--parallel", type=int, default=64, metavar="N", help="hosts checked at once (default 64)"
    )
    w = p.add_argument_group("what to check (none: the standard node survey)")
    w.add_argument(
        "--cause",
        action="append",
        default=[],
        metavar="ID",
        help="the checks of a cause (repeatable; see: dlperf-help rules list)",
    )
    w.add_argument(
        "--symptom",
        action="append",
        default=[],
        metavar="ID",
        help="the checks of every cause of a symptom (repeatable)",
    )
    w.add_argument(
        "--check",
        dest="check_ids",
        action="append",
        default=[],
        metavar="ID",
        help="one check by its id (repeatable)",
    )
    w.add_argument(
        "--fix",
        metavar="ID",
        help="run a fix's commands (each confirmed per host), then its verifying checks",
    )
    w.add_argument(
        "--from-diagnosis",
        type=Path,
        metavar="FILE",
        help="the checks of the causes in a `diagnose --json` file, with the "
        "values found in the logs",
    )
    w.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a value for a {placeholder} in the commands (repeatable)",
    )
    w.add_argument(
        "--job-port",
        type=int,
        metavar="PORT",
        help="SSH port the job uses between nodes (default: the port used here)",
    )
    w.add_argument(
        "--pairs",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the node-to-node checks (SSH matrix, routes, large-packet ping); "
        "default: on for the survey of 2+ hosts, off with --cause/--symptom/--check",
    )
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also list the passing checks with what they found, and why some did not run",
    )


def run(args: argparse.Namespace) -> int:
    from kb.authoring.checked import load_kb
    from kb.checks import RunOptions, local_runners, run_checks, ssh_runners
    from kb.checks.render import doctor_text, event_line
    from kb.cli.common import print_json
    from kb.runners.hosts import Target, check_port

    for value, what in ((args.port, "--port"), (args.job_port, "--job-port")):
        if value is not None:
            check_port(value, what)
    if args.parallel < 1:
        raise UserError("--parallel must be at least 1")
    if not 0 < args.connect_timeout <= 600:
        raise UserError("--connect-timeout must be between 0 and 600 seconds")
    for value, what in ((args.timeout, "--timeout"), (args.host_budget, "--host-budget")):
        if value is not None and not 0 < value <= 86400:
            raise UserError(f"{what} must be between 0 and 86400 seconds")
    params, diag_causes = _params(args)
    targets = _targets(args)
    survey_mode = not (args.cause or args.symptom or args.check_ids or args.fix or diag_causes)
    kb = load_kb()
    tasks = _tasks(kb, args, diag_causes, survey_mode)
    _refuse_masked(tasks, params, args)
    _refuse_values(tasks, params, args.from_diagnosis)
    interactive = not args.json and sys.stdin.isatty()
    options = RunOptions(
        parallel=args.parallel,
        pairs=survey_mode if args.pairs is None else args.pairs,
        survey=survey_mode,
        job_port=args.job_port,
        params=params,
        confirm=_confirm if interactive else None,
        timeout=args.timeout,
        host_budget=args.host_budget,
    )
    session: Any = None
    if targets:
        from kb.runners.sshoptions import SSHOptions

        ssh = SSHOptions(
            accept_new_host_keys=args.accept_new_host_keys,
            identity_files=[_readable(k) for k in args.identity],
            connect_timeout=args.connect_timeout,
            ask_secret=_ask_secret if interactive else None,
        )
        if args.known_hosts:
            ssh.known_hosts = args.known_hosts
        make_runner, session = ssh_runners(ssh)
    else:
        targets = [Target("local", getpass.getuser(), "localhost", 22)]
        make_runner = local_runners()
    # each result as it arrives goes to stderr (one status line on a terminal); the
    # report, grouped by area, comes on stdout when the run ends
    progress = _Progress(sys.stderr)
    progress.say(
        f"checking {len(targets)} host(s): {len(tasks)} check(s)"
        + (" + node survey" if survey_mode else "")
    )

    def show(event: Any) -> None:
        line = event_line(event)
        if line is not None:
            progress.result(line)

    try:
        report = run_checks(targets, tasks, make_runner, options, show, threading.Event())
    finally:
        progress.clear()
        if session is not None:
            session.close()
    if args.json:
        print_json(report.as_json(), "check")
    else:
        from kb.cli.output import write
        from kb.cli.style import use_color, width

        color = use_color(sys.stdout)
        text = doctor_text(report, kb, color=color, verbose=args.verbose, width=width())
        write(text, keep_sgr=color)  # doctor_text made the nodes' text safe first
    if report.interrupted:
        return 130
    return 1 if report.found_problem else 0


class _Progress:
    """Results as they arrive, on stderr: one line each in a pipe or a log file; on a
    terminal one status line, rewritten, so the report that follows is not said twice."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.live = bool(getattr(stream, "isatty", lambda: False)())
        self.count = 0

    def say(self, text: str) -> None:
        from kb.cli.output import line

        line(text, self.stream)

    def result(self, text: str) -> None:
        from kb.util.textsafe import safe_line

        self.count += 1
        if not self.live:
            self.say(text)
            return
        from kb.cli.style import width

        shown = safe_line(f"[{self.count}] {text}")[: max(20, width() - 1)]
        self.stream.write(f"\r\x1b[K{shown}")
        self.stream.flush()

    def clear(self) -> None:
        if self.live and self.count:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _readable(path: Path) -> Path:
    if not path.is_file():
        raise UserError("no such key file", str(path))
    return path


def _targets(args: argparse.Namespace) -> list[Any]:
    from kb.runners.hosts import load_config, parse_host, parse_hostfile, parse_slots_list, targets

    specs = [s for text in args.host for s in parse_host(text)]
    specs += [s for text in args.hostlist for s in parse_slots_list(text)]
    specs += [s for path in args.hostfile for s in parse_hostfile(path)]
    if not specs:
        return []
    user = args.user or getpass.getuser()
    return targets(specs, load_config(args.ssh_config), args.port, user)


def _params(args: argparse.Namespace) -> tuple[dict[str, str], list[str]]:
    from kb.rules.valuekinds import kind_of, validate_value

    params: dict[str, str] = {}
    causes: list[str] = []
    if args.from_diagnosis:
        for cause_id, values in _diagnosis_causes(args.from_diagnosis):
            causes.append(cause_id)
            for name, value in values.items():
                params.setdefault(name, value)
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
            raise UserError(f"--param '{item}': expected NAME=VALUE (NAME like good_iface)")
        params[name] = value
        try:
            validate_value(name, value, kind_of(name))
        except ValueError as exc:
            raise UserError(f"{exc} (--param)") from None
    return params, causes


def _refuse_masked(tasks: list[Any], params: dict[str, str], args: argparse.Namespace) -> None:
    """A value `diagnose --json` masked as a secret (`****`) is not the value: a check run
    with it would test the mask, so the run stops, exit 2 (a --param for it is used instead)."""
    from kb.rules.placeholders import names_in
    from kb.util.secrets import MASK

    given = {item.partition("=")[0] for item in args.param}
    for task in tasks:
        for name in names_in(task.template):
            if name not in given and MASK in params.get(name, ""):
                raise UserError(
                    f"{{{name}}} was masked as a secret ({MASK}); re-run "
                    f"`dlperf-help diagnose --json --no-mask` or give --param {name}=VALUE",
                    str(args.from_diagnosis),
                )


def _refuse_values(tasks: list[Any], params: dict[str, str], source: Path | None) -> None:
    """A value its kind refuses (from --param or a diagnosis file) stops the run, exit 2:
    a planned command never runs with it, whether it is read-only or not."""
    from kb.rules.placeholders import refused

    for task in tasks:
        bad = refused(task.template, params, task.declared)
        if bad:
            raise UserError(bad[0] + (f" (from {source})" if source else ""))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read ({exc.strerror or exc})", str(path)) from None
    except UnicodeDecodeError:
        raise UserError("not a `diagnose --json` file (not UTF-8 text)", str(path)) from None
    except json.JSONDecodeError as exc:
        raise UserError(f"not JSON ({exc.msg})", f"{path}:{exc.lineno}") from None
    except RecursionError:
        raise UserError("not a `diagnose --json` file (nested too deeply)", str(path)) from None


def _diagnosis_causes(path: Path) -> list[tuple[str, dict[str, str]]]:
    """(cause id, values found) of each cause in a `diagnose --json` file; a file of
    another shape is a one-line error naming it, never a traceback."""
    doc = _read_json(path)

    def bad(what: str) -> UserError:
        return UserError(f"not a `diagnose --json` file ({what})", str(path))

    if not isinstance(doc, dict) or not isinstance(doc.get("causes", []), list):
        raise bad("expected an object with a list of causes")
    out = []
    for n, cause in enumerate(doc.get("causes", []), 1):
        if not isinstance(cause, dict) or not isinstance(cause.get("id"), str):
            raise bad(f"cause {n} has no id")
        values = cause.get("params") or {}
        if not isinstance(values, dict) or not all(
            isinstance(v, str | int | float) and not isinstance(v, bool) for v in values.values()
        ):
            raise bad(f"the params of cause '{cause['id']}' are not name: value pairs")
        out.append((cause["id"], {str(k): str(v) for k, v in values.items()}))
    return out


def _tasks(kb: Any, args: argparse.Namespace, diag: list[str], survey_mode: bool) -> list[Any]:
    from kb.checks import plan

    if survey_mode:
        return plan.survey(kb)
    tasks = plan.for_causes(kb, args.cause + [c for c in diag if c in kb.causes])
    tasks += plan.for_symptoms(kb, args.symptom) + plan.for_checks(kb, args.check_ids)
    if args.fix:
        tasks += plan.for_fix(kb, args.fix)
    return list({(t.id, t.kind): t for t in tasks}.values())


_prompt_lock = threading.Lock()


def _ask_secret(prompt: str) -> str | None:
    """A passphrase or password from the terminal; never echoed, stored or logged."""
    with _prompt_lock:
        try:
            return getpass.getpass(prompt) or None
        except (EOFError, OSError):
            return None


def _confirm(host: str, command: str) -> bool:
    """Ask before running a command that changes a machine; shows the exact command."""
    with _prompt_lock:
        from kb.util.textsafe import safe, safe_line

        # controls in the command are shown, not obeyed: the user reads what will run
        print(
            f"\n{safe_line(host)}: this command may change the machine:\n    {safe(command)}",
            flush=True,
        )
        try:
            answer = input("Run it there? [y/N] ")
        except EOFError:
            return False
        return answer.strip().lower() in ("y", "yes")
