"""JAX (jax-ml/jax) at every release tag from jax-v0.3.0, the first with
`jax.distributed`: what a multi-process or GPU start prints. The files: distributed.py and
the cluster environments (clusters/: Slurm, Open MPI, mpi4py, Kubernetes, Cloud TPU),
xla_bridge.py (backends and plugins: "Unable to initialize backend 'cuda'", "a CUDA-enabled
jaxlib is not installed"), the jax/jaxlib version checks and the CUDA/ROCm plugins'
`__init__.py`. XLA's distributed client and service (the coordinator's gRPC errors) are
C++ of openxla/xla, not of this repository.

Read as `pyextract` reads Python (raises, logger calls, warnings), and also a message
first bound to a name in the same function and then raised or logged by it
(`msg = f"jaxlib is version {v}, ..."; raise RuntimeError(msg)`), as JAX writes its
longer ones; a later `msg += ...` only adds a tail the unanchored template need not hold.

    python scripts/catalogue/build.py jax --git-dir /path/to/jax.git"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from merge import Found, Seen, scan_releases
from pyextract import LOG_LEVELS, PyMessage, _name, _text, messages, parse

TAGS = r"jax-v(\d+\.\d+\.\d+(?:\.\d+)?)"  # jax-v0.4.30, jax-v0.9.0.1; -rc left out
MINIMUM = "0.3.0"
PATHS = (
    "jax/_src/distributed.py",
    "jax/distributed.py",
    "jax/_src/clusters",
    "jax/_src/xla_bridge.py",
    "jax/_src/lib/xla_bridge.py",
    "jax/lib/xla_bridge.py",
    "jax/_src/lib/__init__.py",
    "jax/lib/__init__.py",
    "jax/version.py",
    "jax_plugins/cuda/__init__.py",
    "jax_plugins/rocm/__init__.py",
)


def _in_order(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes under `node` in source order, nested functions and classes left out
    (they are scopes of their own)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield child
        yield from _in_order(child)


def _named_message(node: ast.AST, texts: dict[str, str]) -> PyMessage | None:
    """A raise or a logger call of a name bound to a message earlier in the scope."""
    if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
        call = node.exc
        if call.args and isinstance(call.args[0], ast.Name) and _name(call.func)[:1].isupper():
            text = texts.get(call.args[0].id)
            if text:
                return PyMessage("error", f"{_name(call.func)}: {text}", node.lineno)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        level = LOG_LEVELS.get(node.func.attr)
        arg = node.args[0]
        if level and isinstance(arg, ast.Name) and texts.get(arg.id):
            return PyMessage(level, texts[arg.id], node.lineno)
    return None


def named_messages(source: str) -> Iterator[PyMessage]:
    """Messages bound to a name (`msg = ...`) and raised or logged by that name in the same
    function or module body (nothing for a file that does not parse)."""
    tree = parse(source)
    if tree is None:
        return
    for scope in ast.walk(tree):
        if not isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        texts: dict[str, str] = {}
        for node in _in_order(scope):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                text = _text(node.value)
                if text and text.strip():
                    texts[node.targets[0].id] = text
                else:
                    texts.pop(node.targets[0].id, None)
                continue
            found = _named_message(node, texts)
            if found is not None:
                yield found


def read(text: str) -> list[Found]:
    found = dict.fromkeys((m.level, m.template) for m in messages(text))
    found.update(dict.fromkeys((m.level, m.template) for m in named_messages(text)))
    return [(level, template, {}) for level, template in found]


def scan(git_dir: Path) -> tuple[str, list[Seen]]:
    """Every message of `PATHS` at every release tag from jax-v0.3.0, merged."""

    def keep(path: str) -> bool:
        return path.endswith(".py") and "/test" not in path

    return scan_releases(git_dir, TAGS, MINIMUM, keep, read, PATHS)
