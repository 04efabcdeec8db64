"""Placeholders are filled safely: values from logs can never run as shell code."""

from __future__ import annotations

import subprocess

from kb.placeholders import fill_command, fill_text, names_in, show_command


def test_names_are_found_in_order_and_shell_variables_are_left_alone() -> None:
    assert names_in("ssh -p {port} {user}@{peer} ${HOME} {port}") == ["port", "user", "peer"]
    assert names_in("awk '{{print $1}}'") == []


def test_text_leaves_unknown_values_visible_for_the_reader() -> None:
    assert fill_text("export NCCL_SOCKET_IFNAME={iface}", {}) == "export NCCL_SOCKET_IFNAME=<iface>"
    assert fill_text("use {iface}", {"iface": "enp3s0"}) == "use enp3s0"


def test_show_command_quotes_known_values() -> None:
    assert show_command("ping -c 3 {peer} {n}", {"peer": "a b"}) == "ping -c 3 'a b' <n>"


def test_a_hostile_value_is_one_inert_word(tmp_path) -> None:
    marker = tmp_path / "pwned"
    for hostile in (
        f"$(touch {marker})",
        f"`touch {marker}`",
        f"x; touch {marker}",
        f"x && touch {marker}",
        f"x\ntouch {marker}",
        f"' ; touch {marker} ; '",
    ):
        cmd = fill_command("printf '%s\\n' {value}", {"value": hostile})
        out = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, text=True, check=True)
        assert out.stdout == hostile + "\n"
    assert not marker.exists()
