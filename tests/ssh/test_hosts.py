"""Host lists as users write them: --host, -H, MPI hostfiles, Slurm ranges, ~/.ssh/config."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.runners.hosts import load_config, parse_host, parse_hostfile, parse_slots_list, targets
from kb.util.errors import UserError


def test_host_with_user_and_port_keeps_the_users_words_as_label() -> None:
    [spec] = parse_host("root@10.0.0.11:10001")
    assert (spec.name, spec.user, spec.port, spec.label) == (
        "10.0.0.11",
        "root",
        10001,
        "root@10.0.0.11:10001",
    )


def test_slurm_range_in_host_expands_with_the_port_on_each() -> None:
    specs = parse_host("gpu[01-03]:2222")
    assert [s.label for s in specs] == ["gpu01:2222", "gpu02:2222", "gpu03:2222"]


def test_ipv6_addresses_bracketed_with_port_or_bare_without() -> None:
    [a] = parse_host("[fe80::1]:2200")
    [b] = parse_host("fd00::2")
    assert (a.name, a.port, b.name, b.port) == ("fe80::1", 2200, "fd00::2", None)


def test_dash_h_colon_number_is_slots_not_port() -> None:
    specs = parse_slots_list("gpu[01-02]:8,cpu1:4,cpu2")
    assert [(s.name, s.slots, s.port) for s in specs] == [
        ("gpu01", 8, None),
        ("gpu02", 8, None),
        ("cpu1", 4, None),
        ("cpu2", None, None),
    ]


def test_mpi_hostfile_with_slots_comments_and_ranges(tmp_path: Path) -> None:
    f = tmp_path / "hosts"
    f.write_text(
        "# the job's nodes\nnode1 slots=8\nnode2 slots=8 max_slots=8\n\n"
        "gpu[05-06]:4  # two more\nroot@node9\n"
    )
    specs = parse_hostfile(f)
    assert [(s.name, s.slots, s.user) for s in specs] == [
        ("node1", 8, None),
        ("node2", 8, None),
        ("gpu05", 4, None),
        ("gpu06", 4, None),
        ("node9", None, "root"),
    ]


@pytest.mark.parametrize(
    "line, message",
    [
        ("node1 slot=8", "unexpected 'slot=8'"),
        ("node1 slots=x", "slots 'x' is not a number"),
        ("gpu[01-", "bad host list"),
        ("no$(reboot)", "is not a host name"),
    ],
)
def test_bad_hostfile_lines_are_one_error_with_file_and_line(
    tmp_path: Path, line: str, message: str
) -> None:
    f = tmp_path / "hosts"
    f.write_text(f"good1\n{line}\n")
    with pytest.raises(UserError) as err:
        parse_hostfile(f)
    assert str(err.value).startswith(f"{f}:2: ") and message in str(err.value)


@pytest.mark.parametrize(
    "text", ["a;reboot", "$(id)", "`id`", "-oProxyCommand=x", "h:99999", "bad user@h"]
)
def test_hosts_that_could_be_read_as_shell_or_options_are_refused(text: str) -> None:
    with pytest.raises(UserError):
        parse_host(text)


def test_ssh_config_gives_alias_hostname_port_user_key_and_proxyjump(tmp_path: Path) -> None:
    cfg = tmp_path / "config"
    cfg.write_text(
        "Host gpu*\n  HostName %h.cluster.example\n  Port 10001\n  User train\n"
        "  IdentityFile ~/.ssh/cluster_key\n  ProxyJump admin@bastion:2222\n"
        "Host bastion\n  HostName 203.0.113.5\n"
    )
    [t] = targets(parse_host("gpu01"), load_config(cfg), None, "me")
    assert (t.label, t.hostname, t.port, t.user) == (
        "gpu01",
        "gpu01.cluster.example",
        10001,
        "train",
    )
    assert t.identity_files == [Path("~/.ssh/cluster_key").expanduser()]
    assert t.proxy_jump is not None
    assert (t.proxy_jump.hostname, t.proxy_jump.port, t.proxy_jump.user) == (
        "203.0.113.5",
        2222,
        "admin",
    )


def test_port_precedence_explicit_then_dash_dash_port_then_config(tmp_path: Path) -> None:
    cfg = tmp_path / "config"
    cfg.write_text("Host *\n  Port 2200\n")
    lookup = load_config(cfg)
    ports = [
        targets(parse_host(h), lookup, default, "me")[0].port
        for h, default in (("a:3300", 4400), ("a", 4400), ("a", None))
    ]
    assert ports == [3300, 4400, 2200]


def test_proxyjump_chain_is_nested_last_hop_nearest(tmp_path: Path) -> None:
    cfg = tmp_path / "config"
    cfg.write_text("Host node\n  ProxyJump j1,j2:2022\n")
    [t] = targets(parse_host("node"), load_config(cfg), None, "me")
    assert t.proxy_jump and t.proxy_jump.hostname == "j2" and t.proxy_jump.port == 2022
    assert t.proxy_jump.proxy_jump and t.proxy_jump.proxy_jump.hostname == "j1"


def test_repeated_hosts_are_checked_once() -> None:
    specs = parse_host("a") + parse_host("b") + parse_host("a")
    assert [t.label for t in targets(specs, None, None, "me")] == ["a", "b"]


def test_missing_explicit_ssh_config_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such SSH config"):
        load_config(tmp_path / "nope")
