"""Placeholders are filled by one builder: every value validated by its kind, then quoted,
and the linter refuses a template that puts a placeholder where quoting does not hold."""

from __future__ import annotations

import subprocess

import pytest

from kb.rules.placeholder_context import PLAIN, spots
from kb.rules.placeholders import fill_command, fill_text, names_in, refused, show_command
from kb.rules.schema.models import ParamDoc
from kb.rules.valuekinds import KINDS, kind_of, validate_value


def test_names_are_found_in_order_and_shell_variables_are_left_alone() -> None:
    assert names_in("ssh -p {port} {user}@{peer} ${HOME} {port}") == ["port", "user", "peer"]
    assert names_in("awk '{{print $1}}'") == []


def test_text_leaves_unknown_values_visible_for_the_reader() -> None:
    assert fill_text("export NCCL_SOCKET_IFNAME={iface}", {}) == "export NCCL_SOCKET_IFNAME=<iface>"
    assert fill_text("use {iface}", {"iface": "enp3s0"}) == "use enp3s0"


def test_show_command_quotes_valid_values_and_shows_the_others_as_names() -> None:
    assert show_command("ping -c 3 {peer} {n}", {"peer": "node-1"}) == "ping -c 3 node-1 <n>"
    assert show_command("ls {data_dir}", {"data_dir": "/data/img net"}) == "ls <data_dir>"
    assert show_command("echo {note}", {"note": "a b"}) == "echo 'a b'"
    # a user name read from a log as `-Eevil.log` never becomes an ssh option
    shown = show_command("ssh -p {port} {user}@{peer} true", {"user": "-Eevil.log", "peer": "n1"})
    assert shown == "ssh -p <port> <user>@n1 true"


def test_fill_command_names_the_missing_and_the_refused_value() -> None:
    with pytest.raises(KeyError, match="peer"):
        fill_command("ping {peer}", {})
    with pytest.raises(ValueError, match=r"^\{port\}: '29500;touch /tmp/P;' is not a port"):
        fill_command("ss -ltnp sport = :{port}", {"port": "29500;touch /tmp/P;"})
    assert refused("nc -z {peer} {port}", {"peer": "a b", "port": "22"}) == [
        "{peer}: 'a b' is not a host name or address"
    ]


def test_the_kind_comes_from_the_declaration_before_the_name() -> None:
    assert (kind_of("peer"), kind_of("cuda_home"), kind_of("tfds_version")) == (
        "host",
        "path",
        "version",
    )
    assert kind_of("whatever") == "text"
    declared = {"whatever": ParamDoc(description="x", kind="number")}
    assert kind_of("whatever", declared) == "number"
    with pytest.raises(ValueError, match="whatever"):
        fill_command("head -n {whatever} f", {"whatever": "-5"}, declared)


GOOD = {
    "host": ["node-1", "10.0.0.2", "fe80::1", "gpu01.cluster.local"],
    "hosts": ["n1:4,n2:4", "10.11.0.2:11111,10.11.0.3:11111", "n1"],
    "port": ["22", "29500", "65535"],
    "iface": ["eth0", "^docker,lo", "=enp3s0f0", "10.0.0.0/24", "bond0.100"],
    "hca": ["mlx5_0", "mlx5_0:1,mlx5_1:1", "^=mlx5_2"],
    "user": ["root", "deploy_1", "a.b-c"],
    "number": ["0", "8", "4242"],
    "numbers": ["0,1,2,3", "7"],
    "version": ["3.0.0", "2.18.3-1+cuda12.2", "535", "1:2.3~rc1"],
    "path": ["/usr/local/cuda-10.1", "models/official", "~/data", "./-odd"],
    "filename": ["libcudart.so.10.1", "libnccl.so.2"],
    "name": ["sshd", "nvidia-fabricmanager", "getty@tty1"],
    "image": ["nvcr.io/nvidia/pytorch:24.01-py3", "ubuntu@sha256:abc"],
    "package": ["torch==2.1.0+cu118", "nvidia-dali-cuda110", "horovod[tensorflow]>=0.19"],
    "module": ["horovod.tensorflow", "hvd"],
    "ref": ["v2.3.0", "7b7bf60259e2", "release/2.3"],
    "pci": ["0000:3b:00.0", "3b:00.1"],
    "env": ["NCCL_DEBUG", "_x1"],
    "text": ["any text at all", "-even like an option", "$(not run)"],
}
BAD = {
    "host": ["-oProxyCommand=x", "a b", "x;y", "héllo", "a..b"],
    "hosts": ["n1:4;n2", "-H,x", "n1:port"],
    "port": ["0", "65536", "22 ", "２２", "-1"],
    "iface": ["-eth0", "eth0;x", "eth 0", "^"],
    "hca": ["mlx5_0;x", "-d"],
    "user": ["-Eevil.log", "a b", "root;id"],
    "number": ["-5", "1e3", "٣", "1 2"],
    "numbers": ["0,,1", "0,-1"],
    "version": ["3.0.0;id", "-1", "1/2", "1&2"],
    "path": ["-rf", "/a b", "/x$(id)", "/a`b`", "/a'b", '/a"b', "/a;b", "/a\\b"],
    "filename": ["../libc.so", "lib/x.so", "-x", "x y"],
    "name": ["../../etc/x", "-n", "a/b"],
    "image": ["-v/:/host", "a b"],
    "package": ["--index-url=http://x", "-e.", "a b", "x/y"],
    "module": ["os;import", "1abc", "a..b"],
    "ref": ["--upload-pack=touch P", "a b"],
    "pci": ["3b:00.8", "0000:3b:00"],
    "env": ["A-B", "1X", "X=1"],
    "text": ["line\nnext", "esc\x1b[2J", "bidi\u202e", ""],
}


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_takes_real_values_and_refuses_look_alikes(kind: str) -> None:
    for value in GOOD[kind]:
        assert validate_value("x", value, kind) == value
    for value in BAD[kind]:
        with pytest.raises(ValueError, match=r"^\{x\}: "):
            validate_value("x", value, kind)


def test_every_kind_refuses_controls_empty_and_over_long_values() -> None:
    for kind in KINDS:
        for value in ("", "a\nb", "a\tb", "a\x00b", "\u2066a", "9" * 5000):
            with pytest.raises(ValueError):
                validate_value("x", value, kind)


def test_a_hostile_free_text_value_is_one_inert_word(tmp_path) -> None:
    marker = tmp_path / "pwned"
    for hostile in (
        f"$(touch {marker})",
        f"`touch {marker}`",
        f"x; touch {marker}",
        f"x && touch {marker}",
        f"' ; touch {marker} ; '",
        f'x"; touch {marker}; echo "',
    ):
        cmd = fill_command("printf '%s\\n' {value}", {"value": hostile})
        out = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, text=True, check=True)
        assert out.stdout == hostile + "\n"
    assert not marker.exists()


# ---------------------------------------------------------------- where a placeholder lands


def _where(template: str) -> list[tuple[str, str, bool]]:
    return [(s.name, s.where, s.starts_word and not s.after_dashdash) for s in spots(template)]


def test_quotes_backticks_and_expansions_are_found_around_a_placeholder() -> None:
    assert _where('echo "not found: {library}"') == [("library", "double quotes", False)]
    assert _where("sed 's/x/{v}/' {f}") == [("v", "single quotes", False), ("f", PLAIN, True)]
    assert _where("echo `ls {d}`") == [("d", "backticks", False)]
    assert _where("echo ${x:-{d}} $(( {n} + 1 ))") == [
        ("d", "a ${...} expansion", False),
        ("n", "an arithmetic expansion", False),
    ]
    assert _where("echo \\{d}") == [("d", "after a backslash", False)]
    assert _where("cat <<EOF\n{d}\nEOF") == [("d", "a here-document", False)]


def test_a_command_substitution_is_a_fresh_command_even_inside_double_quotes() -> None:
    assert _where("X=\"$(python3 -c 'print(1)' {a} {b})\"") == [
        ("a", PLAIN, True),
        ("b", PLAIN, True),
    ]


def test_words_between_quotes_and_after_dashdash_are_plain_and_safe() -> None:
    assert _where('mpirun -mca plm_rsh_args "-p "{port}" -q"') == [("port", PLAIN, False)]
    assert _where("grep -F -- {library} f; ls {library}") == [
        ("library", PLAIN, False),
        ("library", PLAIN, True),
    ]
    assert _where("x={a} && {{ ls -- {b}; }}") == [("a", PLAIN, False), ("b", PLAIN, False)]
