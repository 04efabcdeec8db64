"""Constants the TUI tests share: the fixed rule set, a real log, real-shaped outputs."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
RULES = HERE / "rules"
LOG = HERE / "data" / "h200-nccl-socket-ifname-missing.log"  # real: 2xH200, NCCL_SOCKET_IFNAME=ib9

# `ip -o addr show` of a node with a docker bridge (the shape of a real node's output)
IP_ADDR_WITH_DOCKER = (
    "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n"
    "2: enp3s0    inet 10.0.0.11/24 brd 10.0.0.255 scope global enp3s0\\       valid_lft forever\n"
    "3: docker0    inet 172.17.0.1/16 brd 172.17.255.255 scope global docker0\\       valid_lft\n"
)
IP_ADDR_PHYSICAL_ONLY = (
    "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n"
    "2: enp3s0    inet 10.0.0.11/24 brd 10.0.0.255 scope global enp3s0\\       valid_lft forever\n"
)
