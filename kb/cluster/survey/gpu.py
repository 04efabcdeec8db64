"""Reading GPU, CUDA, NCCL and framework facts from `nvidia-smi`, the loader cache and Python.

Two NCCLs matter and they often differ: the library the dynamic loader finds
(`libnccl.so.2` -> `libnccl.so.2.28.3`) and the one a framework bundles (PyTorch
wheels carry their own, reported by `torch.cuda.nccl.version()`).  Both are read.
"""

from __future__ import annotations

import json
import re
from typing import Any

# --- nvidia-smi -------------------------------------------------------------------------

QUERY = "index,name,driver_version,pci.bus_id,memory.total"


def parse_gpu_query(text: str) -> dict[str, Any]:
    """`nvidia-smi --query-gpu=index,name,driver_version,... --format=csv[,noheader]`."""
    gpus = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 3 or not cells[0].isdigit():
            continue  # header, "No devices were found", blank
        gpus.append(
            {
                "index": int(cells[0]),
                "name": cells[1],
                "driver": cells[2],
                "bus_id": cells[3] if len(cells) > 3 else "",
                "memory": cells[4] if len(cells) > 4 else "",
            }
        )
    if not gpus:
        if "no devices were found" in text.lower():
            return {"gpu_count": 0}
        return {}
    names = list(dict.fromkeys(str(g["name"]) for g in gpus))
    drivers = list(dict.fromkeys(str(g["driver"]) for g in gpus))
    return {
        "gpu_count": len(gpus),
        "gpu_model": ", ".join(names),
        "driver_version": drivers[0],
        "gpus": gpus,
    }


_HEADER = re.compile(r"Driver Version:\s*(?P<driver>[\d.]+)\s+CUDA Version:\s*(?P<cuda>[\d.]+|N/A)")


def parse_smi_header(text: str) -> dict[str, str]:
    """The banner of plain `nvidia-smi`: driver version and the newest CUDA the driver supports."""
    m = _HEADER.search(text)
    if not m:
        return {}
    out = {"driver_version": m["driver"]}
    if m["cuda"] != "N/A":
        out["cuda_version"] = m["cuda"]
    return out


# --- the loader: libnccl, libcudart, libcudnn ----------------------------------------------

_NCCL_FILE = re.compile(r"libnccl\.so\.(\d+\.\d+\.\d+)")
_RESOLVED = re.compile(r"^(?P<kind>ldpath|ldconfig) (?P<link>\S+) -> (?P<real>\S+)$")
_LDCONFIG = re.compile(
    r"^\s*(?P<soname>lib(?:cudart|cudnn|nccl)\.so(?:\.[\d.]+)?)\s+\(.*\)\s+=>\s+(?P<path>\S+)"
)


def parse_loader(text: str) -> dict[str, Any]:
    """Our `loader` section: `ldconfig -p` lines for CUDA libraries plus resolved NCCL links.

    Also reads `ls -l` listings (`libnccl.so.2 -> libnccl.so.2.28.3`).  The loader tries
    `LD_LIBRARY_PATH` before its cache, so those hits come first.
    """
    found: list[dict[str, str]] = []
    cudart: list[str] = []
    cudnn: list[str] = []
    for line in text.splitlines():
        m = _RESOLVED.match(line.strip())
        if m:
            v = _NCCL_FILE.search(m["real"]) or _NCCL_FILE.search(m["link"])
            found.append(
                {
                    "path": m["link"],
                    "file": m["real"],
                    "version": v.group(1) if v else "",
                    "via": "LD_LIBRARY_PATH" if m["kind"] == "ldpath" else "ldconfig",
                }
            )
            continue
        m2 = _LDCONFIG.match(line)
        if m2:
            major = m2["soname"].split(".so")[1].lstrip(".")
            if m2["soname"].startswith("libcudart") and major and major not in cudart:
                cudart.append(major)
            if m2["soname"].startswith("libcudnn") and major and major not in cudnn:
                cudnn.append(major)
            continue
        if "libnccl.so" in line and "->" in line:  # `ls -l` style listing
            v = _NCCL_FILE.search(line.split("->", 1)[1])
            if v:
                found.append(
                    {
                        "path": line.split("->")[0].split()[-1],
                        "file": v.group(0),
                        "version": v.group(1),
                        "via": "listing",
                    }
                )
    out: dict[str, Any] = {}
    versions = [f for f in found if f["version"]]
    versions.sort(key=lambda f: f["via"] != "LD_LIBRARY_PATH")
    if versions:
        out["nccl_system_version"] = versions[0]["version"]
        out["nccl_system_libraries"] = _unique(versions)
    if cudart:
        out["cuda_runtime_versions"] = cudart
    if cudnn:
        out["cudnn_system_versions"] = cudnn
    return out


def _unique(items: list[dict[str, str]]) -> list[dict[str, str]]:
    seen: set[tuple[str, str]] = set()
    out = []
    for it in items:
        key = (it["file"], it["version"])
        if key not in seen:
            seen.add(key)
            out.append(it)
    return out


LOADER_SHELL = r"""
LDC=$(command -v ldconfig || echo /sbin/ldconfig)
"$LDC" -p 2>/dev/null | grep -E 'lib(cudart|cudnn|nccl)\.so'
old_ifs=$IFS; IFS=:
for d in ${LD_LIBRARY_PATH:-}; do
  for f in "$d"/libnccl.so*; do [ -e "$f" ] && echo "ldpath $f -> $(readlink -f "$f")"; done
done
IFS=$old_ifs
for p in $("$LDC" -p 2>/dev/null | awk '/libnccl\.so/ {print $NF}'); do
  echo "ldconfig $p -> $(readlink -f "$p")"
done
true
"""

# --- Python: framework versions and the NCCL they load ------------------------------------

# Runs on the node with its own Python (3.6 or newer): no walrus, no importlib.metadata-only code.
PROBE = r"""
import json, sys
out = {"python": sys.version.split()[0], "executable": sys.executable}
dists = {}
try:
    from importlib import metadata as md
    for d in md.distributions():
        name = (d.metadata.get("Name") or "").lower().replace("_", "-")
        dists.setdefault(name, d.version)
except Exception:
    try:
        import pkg_resources
        for d in pkg_resources.working_set:
            dists.setdefault(d.project_name.lower().replace("_", "-"), d.version)
    except Exception as e:
        out["dist_error"] = str(e)[:200]
out["dists"] = dict((k, v) for k, v in dists.items() if k.startswith((
    "torch", "tensorflow", "tf-nightly", "intel-tensorflow", "paddlepaddle", "mxnet",
    "horovod", "nvidia-nccl", "oneflow", "mindspore")))
if "torch" in dists:
    try:
        import torch
        out["torch_cuda"] = torch.version.cuda
        try:
            v = torch.cuda.nccl.version()
            out["torch_nccl"] = list(v) if isinstance(v, tuple) else v
        except Exception as e:
            out["torch_nccl_error"] = str(e)[:200]
        try:
            out["torch_cudnn"] = torch.backends.cudnn.version()
        except Exception:
            pass
    except Exception as e:
        out["torch_error"] = (type(e).__name__ + ": " + str(e))[:300]
if "paddlepaddle" in dists or "paddlepaddle-gpu" in dists:
    try:
        import paddle
        try:
            out["paddle_nccl"] = paddle.version.nccl()
        except Exception as e:
            out["paddle_nccl_error"] = str(e)[:200]
    except Exception as e:
        out["paddle_error"] = (type(e).__name__ + ": " + str(e))[:300]
print("@@probe " + json.dumps(out))
"""

_TF_NAMES = (
    "tensorflow",
    "tensorflow-gpu",
    "tensorflow-cpu",
    "tf-nightly",
    "tf-nightly-gpu",
    "intel-tensorflow",
    "tensorflow-macos",
)


def nccl_code_to_version(code: object) -> str | None:
    """`torch.cuda.nccl.version()`: a tuple (2, 28, 9) in new PyTorch, an int 2708 / 21803 in old."""
    if isinstance(code, (list, tuple)) and len(code) >= 2:
        return ".".join(str(int(x)) for x in code[:3])
    if isinstance(code, int) and code > 0:
        if code >= 10000:  # NCCL >= 2.9: major*10000 + minor*100 + patch
            return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
        return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"
    if isinstance(code, str) and re.fullmatch(r"\d+(\.\d+)+", code):
        return code
    if isinstance(code, str) and code.isdigit():
        return nccl_code_to_version(int(code))
    return None


def cudnn_code_to_version(code: object) -> str | None:
    """`torch.backends.cudnn.version()`: 7605 -> 7.6.5, 8902 -> 8.9.2, 91900 -> 9.19.0."""
    if not isinstance(code, int) or code <= 0:
        return str(code) if code else None
    if code >= 90000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def parse_probe(text: str) -> dict[str, Any] | None:
    """The probe's JSON line, or None when Python printed something else (an error)."""
    for line in text.splitlines():
        if line.startswith("@@probe "):
            try:
                data = json.loads(line[len("@@probe ") :])
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


def probe_facts(data: dict[str, Any], python: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Facts from the probe, and reasons for the framework facts it could not give."""
    dists = {str(k): str(v) for k, v in (data.get("dists") or {}).items()}
    facts: dict[str, Any] = {"python_version": data.get("python")}
    why: dict[str, str] = {}
    where = f"{python} ({data.get('executable') or '?'})"

    def pick(fact: str, names: tuple[str, ...], label: str, prefix: str | None = None) -> None:
        hit = next((dists[n] for n in names if n in dists), None)
        if hit is None and prefix:
            hit = next((v for k, v in sorted(dists.items()) if k.startswith(prefix)), None)
        facts[fact] = hit
        if hit is None:
            why[fact] = f"{label} is not installed for {where}"

    pick("torch_version", ("torch",), "PyTorch")
    pick("tensorflow_version", _TF_NAMES, "TensorFlow")
    pick("paddle_version", ("paddlepaddle-gpu", "paddlepaddle"), "PaddlePaddle")
    pick("mxnet_version", ("mxnet",), "MXNet", prefix="mxnet-cu")
    pick("horovod_version", ("horovod",), "Horovod")
    pip_nccl = next((v for k, v in sorted(dists.items()) if k.startswith("nvidia-nccl")), None)
    if pip_nccl:
        facts["nccl_pip_version"] = pip_nccl
    nccl = None
    if "torch_nccl" in data:
        nccl = nccl_code_to_version(data["torch_nccl"])
    if nccl is None and "paddle_nccl" in data:
        nccl = nccl_code_to_version(data["paddle_nccl"])
    facts["nccl_version"] = nccl
    if nccl is None:
        err = data.get("torch_error") or data.get("torch_nccl_error") or data.get("paddle_error")
        if err:
            why["nccl_version"] = f"the framework could not report its NCCL: {err}"
        else:
            why["nccl_version"] = (
                f"no framework that reports its NCCL (PyTorch, Paddle) is importable by {where}"
            )
    if data.get("torch_cuda"):
        facts["torch_cuda_version"] = str(data["torch_cuda"])
    if data.get("torch_cudnn"):
        facts["cudnn_version"] = cudnn_code_to_version(data["torch_cudnn"])
    return facts, why
