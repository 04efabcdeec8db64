"""How `dlperf-help check` scales with hosts: the same node survey on 1 and on 32 nodes.

Starts 32 real OpenSSH servers on 127.0.0.1 (the test suite's fake GPU nodes, which
replay recorded nvidia-smi outputs), then times the standard survey (the cheap,
read-only checks of the rules plus kb.cluster.survey's facts, one SSH connection per node) on
one node, on all 32 at once, and on all 32 one after the other.  The sshd processes
and the commands they run share this machine's cores with the client, so the 32-node
figure is an upper bound of what 32 real nodes would take: the table also gives the
CPU seconds spent by the client (dlperf-help) and by the "nodes" (the sshd servers and
everything they ran), which on a real cluster are spread over the nodes' own CPUs, and
the last lines turn them into the floor here (all CPU-seconds over this machine's cores)
and the estimate for real nodes (the client's own CPU, or one node's time if longer).

    python benchmarks/ssh_bench.py [--nodes 32] [--repeat 3] [--rules DIR] [--pairs] [--light]

`--light` replaces the survey by one trivial command per node, to time what the SSH layer
itself costs (connect, authenticate, one batch) without the survey's node-side work.

Needs /usr/sbin/sshd and ssh-keygen (package openssh-server).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "ssh"))

from sshd_nodes import Cluster, have_sshd  # noqa: E402

from kb.authoring.checked import load_kb  # noqa: E402
from kb.checks import RunOptions, plan, run_checks, ssh_runners  # noqa: E402
from kb.runners.hosts import parse_host, targets  # noqa: E402
from kb.runners.ssh import SSHOptions  # noqa: E402


def node_cpu(cluster: Cluster) -> float:
    """CPU seconds used by all sshd servers and what they ran (children reaped so far)."""
    total = 0.0
    for node in cluster.nodes:
        assert node.proc is not None
        fields = Path(f"/proc/{node.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


def client_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def survey_once(
    cluster: Cluster, count: int, tasks: list, parallel: int, pairs: bool, survey: bool
) -> tuple[float, float, float]:
    """(wall seconds, client CPU seconds, node CPU seconds) of one survey."""
    specs = [s for n in cluster.nodes[:count] for s in parse_host(n.spec)]
    make_runner, session = ssh_runners(
        SSHOptions(known_hosts=cluster.known_hosts, identity_files=[cluster.client_key])
    )
    cpu0, node0 = client_cpu(), node_cpu(cluster)
    start = time.perf_counter()
    report = run_checks(
        targets(specs, None, None, cluster.user),
        tasks,
        make_runner,
        RunOptions(parallel=parallel, survey=survey, pairs=pairs),
    )
    seconds = time.perf_counter() - start
    cpu = client_cpu() - cpu0
    session.close()
    time.sleep(0.5)  # let the servers reap their sessions, so their CPU is counted
    bad = [f"{h.host}: {h.error}" for h in report.hosts if not h.ok]
    if bad:
        raise SystemExit(f"unreachable during the benchmark: {bad[:3]}")
    return seconds, cpu, node_cpu(cluster) - node0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rules", type=Path, help="rules directory (default: the shipped one)")
    parser.add_argument("--pairs", action="store_true", help="add the node-to-node probes")
    parser.add_argument("--light", action="store_true", help="one trivial command per node")
    args = parser.parse_args()
    if not have_sshd():
        print("needs /usr/sbin/sshd and ssh-keygen (openssh-server)", file=sys.stderr)
        return 2
    if args.light:
        tasks = [plan.Task("true", "a trivial command", "true", True, 10.0)]
        what = "one trivial command per node (the SSH layer alone)"
    else:
        tasks = plan.survey(load_kb(args.rules))
        what = f"survey: {len(tasks)} rule checks + kb.cluster.survey facts per node"
    survey = not args.light
    with tempfile.TemporaryDirectory(prefix="ssh-bench-") as tmp:
        cluster = Cluster(Path(tmp), args.nodes).start()
        try:
            survey_once(cluster, 1, tasks, 1, False, survey)  # warm up: imports, page cache
            rows = [
                ("1 node", 1, 64),
                (f"{args.nodes} nodes, concurrent", args.nodes, 64),
                (f"{args.nodes} nodes, one at a time", args.nodes, 1),
            ]
            results = []
            for label, count, parallel in rows:
                runs = [
                    survey_once(cluster, count, tasks, parallel, args.pairs and count > 1, survey)
                    for _ in range(args.repeat)
                ]
                walls = [r[0] for r in runs]
                cpu = statistics.median(r[1] for r in runs)
                nodes = statistics.median(r[2] for r in runs)
                results.append((label, statistics.median(walls), min(walls), cpu, nodes))
        finally:
            cluster.stop()
    base = results[0][1]
    cores = os.cpu_count() or 1
    print(
        f"{what}{' + node-to-node probes' if args.pairs else ''}; {cores} CPU(s), load average "
        f"{os.getloadavg()[0]:.1f}; median of {args.repeat}"
    )
    print(f"{'':32} {'wall s':>7} {'best s':>7} {'x 1':>5} {'client CPU s':>13} {'node CPU s':>11}")
    for label, median, best, cpu, nodes in results:
        print(
            f"{label:32} {median:7.2f} {best:7.2f} {median / base:5.1f} {cpu:13.2f} {nodes:11.2f}"
        )
    client_n, nodes_n = results[1][3], results[1][4]
    floor = (client_n + nodes_n) / cores
    real = max(base, client_n)
    print(
        f"\nper node: {client_n / args.nodes * 1000:.0f} ms of client CPU, "
        f"{nodes_n / args.nodes * 1000:.0f} ms of node CPU (sshd and the commands).\n"
        f"here all {args.nodes} nodes share {cores} CPU(s): {client_n + nodes_n:.1f} CPU-s, so "
        f"{args.nodes} nodes cannot take less than {floor:.2f} s ({floor / base:.1f} x 1).\n"
        f"on {args.nodes} real nodes each runs its own share, and the client's CPU is the "
        f"floor: about {real:.2f} s ({real / base:.1f} x 1)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
