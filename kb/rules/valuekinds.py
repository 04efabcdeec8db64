"""What a `{placeholder}` value may be, by its kind, and the check that enforces it.

Why it exists: shell-quoting makes a value one word, but one word can still do harm
where it lands: `-oProxyCommand=...` read as an option, `../../etc` as a path out of its
folder, `a/b` as a second sed expression, `$(...)` read again by a later shell from
`~/.bashrc`. Each kind admits only what such a value really looks like: never a leading
`-`, never a control character, never the shell's own characters where a name is meant.
The kind comes from the rule (`params: {name: {kind: path}}`), else from the name
(`peer` is a host, `*_dir` a path), else the value is free `text`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Literal, Protocol, get_args

from kb.util import recache
from kb.util.lazyre import LazyPattern


class ParamDoc(Protocol):
    """A rule's declaration of a placeholder (`kb.rules.schema.models.ParamDoc`): named
    structurally, since the schema imports pydantic, which a cached CLI start must not load."""

    @property
    def kind(self) -> str | None: ...


# what a {placeholder}'s value may be; the rule schema's `kind:` takes these words
ValueKind = Literal[
    "host",
    "hosts",
    "port",
    "iface",
    "hca",
    "user",
    "number",
    "numbers",
    "version",
    "path",
    "filename",
    "name",
    "image",
    "package",
    "module",
    "ref",
    "pci",
    "env",
    "text",
]

KINDS: tuple[str, ...] = get_args(ValueKind)
MAX_TEXT = 4096  # free text and paths
MAX_NAME = 255  # every other kind

# C0 controls (tab and newline too: a newline ends a command), DEL, C1, bidi controls,
# line and paragraph separators: a value that holds one is not what the user was shown
_CONTROL = recache.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")

_EXACT: dict[str, str] = {
    "peer": "host",
    "host": "host",
    "node": "host",
    "address": "host",
    "hostname": "host",
    "new_hostname": "host",
    "hosts": "hosts",
    "node_ips": "hosts",
    "worker_list": "hosts",
    "port": "port",
    "nic": "iface",
    "iface": "iface",
    "ifname": "iface",
    "user": "user",
    "library": "filename",
    "lib": "filename",
    "installed_lib": "path",
    "script": "path",
    "np": "number",
    "pid": "number",
    "numa_node": "number",
    "gpus": "numbers",
    "gpu_list": "numbers",
    "bdf": "pci",
    "image": "image",
    "container": "name",
    "service": "name",
}
_SUFFIX: tuple[tuple[tuple[str, ...], str], ...] = (
    (("_host", "_addr", "_ip", "_hostname"), "host"),
    (("_hosts", "_ips"), "hosts"),
    (("_port",), "port"),
    (("_iface", "_ifname", "_nic"), "iface"),
    (("_hca",), "hca"),
    (("_user",), "user"),
    (("_dir", "_home", "_prefix", "_file", "_script", "_path", "_runfile"), "path"),
    (("_version", "_branch"), "version"),
    (("_pid", "_index", "_threads", "_count", "_per_gpu", "_per_node", "_size"), "number"),
    (("_module",), "module"),
    (("_ref", "_commit"), "ref"),
    (("_package", "_spec"), "package"),
    (("_var", "_env"), "env"),
    (("_image",), "image"),
    (("_container", "_service"), "name"),
)


def kind_of(name: str, declared: Mapping[str, ParamDoc] | None = None) -> str:
    """The kind of `{name}`: as the rule declares it, else as its name implies, else text."""
    doc = (declared or {}).get(name)
    if doc is not None and doc.kind is not None:
        return doc.kind
    if name in _EXACT:
        return _EXACT[name]
    for suffixes, kind in _SUFFIX:
        if name.endswith(suffixes):
            return kind
    return "text"


def _pattern(regex: str) -> Callable[[str], bool]:
    compiled = LazyPattern(regex, re.ASCII)  # compiled for the first value of its kind
    return lambda v: compiled.fullmatch(v) is not None


def _host_entry(entry: str) -> bool:
    """`host` or `host:N` (slots for mpirun -H, a port for TF's worker list)."""
    host, sep, tail = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
    if sep and not re.fullmatch(r"[0-9]{1,5}", tail, re.ASCII):
        return False
    return _is_host(host)


def _is_host(value: str) -> bool:
    from kb.runners.hosts import is_host  # the runners' modules only when a host is checked

    return value.isascii() and not value.startswith("-") and is_host(value)


def _iface_list(value: str) -> bool:
    """NCCL/Gloo/Open MPI syntax: `eth0`, `^docker,lo`, `=eth0`, `10.0.0.0/24`."""
    parts = value.removeprefix("^").removeprefix("=").split(",")
    return value.isascii() and all(p and (_iface(p) or _cidr(p)) for p in parts)


def _iface(value: str) -> bool:
    from kb.runners.hosts import is_iface

    return not value.startswith("-") and is_iface(value)


def _cidr(value: str) -> bool:
    import ipaddress  # here: an interface list rarely holds a network

    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return "/" in value


def _port(value: str) -> bool:
    return re.fullmatch(r"[0-9]{1,5}", value, re.ASCII) is not None and 1 <= int(value) <= 65535


_NAME_START = "[A-Za-z0-9_]"  # no kind but text may start like an option
_TESTS: dict[str, tuple[Callable[[str], bool], str]] = {
    "host": (_is_host, "a host name or address"),
    "hosts": (
        lambda v: all(_host_entry(e) for e in v.split(",")),
        "a comma-separated list of host or host:N",
    ),
    "port": (_port, "a port number (1-65535)"),
    "iface": (_iface_list, "a network interface name (or a list: ^docker,lo)"),
    "hca": (
        _pattern(
            r"[\^=]{0,2}[A-Za-z0-9_][A-Za-z0-9_.-]*(:[0-9]+)?(,[A-Za-z0-9_][A-Za-z0-9_.-]*(:[0-9]+)?)*"
        ),
        "an HCA name or list (mlx5_0:1,mlx5_1)",
    ),
    "user": (_pattern(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}\$?"), "a user name"),
    "number": (_pattern(r"[0-9]{1,10}"), "a whole number"),
    "numbers": (_pattern(r"[0-9]{1,10}(,[0-9]{1,10})*"), "a comma-separated list of numbers"),
    "version": (
        _pattern(r"[A-Za-z0-9][A-Za-z0-9.+~_:-]{0,63}"),
        "a version (e.g. 2.18.3-1+cuda12.2)",
    ),
    "path": (
        _pattern(r"[A-Za-z0-9_./~+@%,:=][A-Za-z0-9_./~+@%,:=-]{0,4095}"),
        "a path of letters, digits and ._/~+@%,:=- (no spaces or shell characters)",
    ),
    "filename": (
        _pattern(_NAME_START + r"[A-Za-z0-9_.+-]{0,254}"),
        "a file name (letters, digits, ._+-, no '/')",
    ),
    "name": (_pattern(_NAME_START + r"[A-Za-z0-9_.@:-]{0,254}"), "a name (letters, digits, ._@:-)"),
    "image": (
        _pattern(_NAME_START + r"[A-Za-z0-9_./:@-]{0,254}"),
        "a container image (e.g. nvcr.io/nvidia/pytorch:24.01-py3)",
    ),
    "package": (
        _pattern(_NAME_START + r"[A-Za-z0-9_.+=<>!~,:*\[\]-]{0,254}"),
        "a package requirement (e.g. torch==2.1.0+cu118)",
    ),
    "module": (
        _pattern(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"),
        "a Python module name",
    ),
    "ref": (_pattern(_NAME_START + r"[A-Za-z0-9_./-]{0,254}"), "a git branch, tag or commit"),
    "pci": (
        _pattern(r"([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"),
        "a PCI address (0000:3b:00.0)",
    ),
    "env": (_pattern(r"[A-Za-z_][A-Za-z0-9_]*"), "an environment variable name"),
    "text": (lambda v: True, "text"),
}


def validate_value(name: str, value: str, kind: str = "text") -> str:
    """`value` if it can be what `{name}` of `kind` stands for; else ValueError saying why.

    The message starts with `{name}:`, so the user sees which value was refused.
    """
    if not value:
        raise ValueError(f"{{{name}}}: an empty value")
    if _CONTROL.search(value):
        raise ValueError(f"{{{name}}}: control characters (a newline, an escape) in the value")
    limit = MAX_TEXT if kind in ("text", "path") else MAX_NAME
    if len(value) > limit:
        raise ValueError(f"{{{name}}}: a value longer than {limit} characters")
    test, what = _TESTS.get(kind, _TESTS["text"])
    if not test(value):
        raise ValueError(f"{{{name}}}: {_shown(value)} is not {what}")
    return value


def _shown(value: str) -> str:
    """The refused value, short and printable, for a one-line error."""
    text = value if len(value) <= 60 else value[:57] + "..."
    return repr(text)
