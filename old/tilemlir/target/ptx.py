"""PTX out of a lowered module, and ptxas to turn it into a cubin (or just to check it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path

from mlir import ir
from mlir.dialects import gpu


class PtxasError(RuntimeError):
    pass


def extract_ptx(module: ir.Module) -> dict[str, str]:
    """{gpu.binary name: PTX text} for every gpu.binary with an `isa` object in `module`."""
    found = {}
    for op in module.body.operations:
        if op.operation.name != "gpu.binary":
            continue
        name = ir.StringAttr(op.operation.attributes["sym_name"]).value
        for obj in op.operation.attributes["objects"]:
            data = gpu.ObjectAttr(obj).object
            found[name] = data.decode() if isinstance(data, bytes) else str(data)
    return found


def find_cuda_tool(name: str) -> str | None:
    """A CUDA tool (ptxas, nvdisasm) from $TILEMLIR_<NAME>, the PATH, CUDA_HOME, or the NVIDIA
    wheels (nvidia-cuda-nvcc carries ptxas, nvidia-cuda-nvdisasm nvdisasm)."""
    explicit = os.environ.get(f"TILEMLIR_{name.upper()}")
    if explicit:
        return explicit
    on_path = shutil.which(name)
    if on_path:
        return on_path
    candidates = []
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            candidates.append(Path(home) / "bin" / name)
    site = Path(sysconfig.get_paths()["purelib"])
    candidates += [site / "nvidia" / "cu13" / "bin" / name,
                   site / "nvidia" / "cuda_nvcc" / "bin" / name]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    return None


def find_ptxas() -> str | None:
    """ptxas from $TILEMLIR_PTXAS, the PATH, CUDA_HOME, or the nvidia-cuda-nvcc wheel."""
    return find_cuda_tool("ptxas")


def disassemble(cubin: bytes) -> str:
    """The SASS of a cubin (nvdisasm); PtxasError when nvdisasm is missing or fails."""
    nvdisasm = find_cuda_tool("nvdisasm")
    if nvdisasm is None:
        raise PtxasError("nvdisasm not found: `pip install nvidia-cuda-nvdisasm` or set "
                         "TILEMLIR_NVDISASM")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        proc = subprocess.run([nvdisasm, "-c", str(path)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise PtxasError(f"nvdisasm failed:\n{proc.stderr.strip()}")
        return proc.stdout


def _ptxas(ptx: str, chip: str, extra_args: tuple[str, ...]) -> tuple[bytes, str]:
    """(cubin, ptxas's messages) for `ptx`; PtxasError with its message on failure."""
    ptxas = find_ptxas()
    if ptxas is None:
        raise PtxasError("ptxas not found: install a CUDA toolkit or `pip install nvidia-cuda-nvcc`"
                         ", or set TILEMLIR_PTXAS")
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "kernel.ptx", Path(tmp) / "kernel.cubin"
        src.write_text(ptx)
        proc = subprocess.run([ptxas, f"-arch={chip}", *extra_args, str(src), "-o", str(out)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise PtxasError(f"ptxas -arch={chip} failed:\n{proc.stderr.strip()}")
        return out.read_bytes(), proc.stdout + proc.stderr


def assemble(ptx: str, chip: str, extra_args: tuple[str, ...] = ()) -> bytes:
    """The cubin ptxas makes of `ptx` for `chip`; PtxasError with its message on failure."""
    return _ptxas(ptx, chip, extra_args)[0]


_USAGE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
                    r".*?Used (\d+) registers", re.S)


def resource_usage(ptx: str, chip: str) -> dict[str, int]:
    """What `ptxas -v` reports for the (first) kernel of `ptx`: registers a thread, and the
    stack frame, spill stores and spill loads in bytes. Registers are allocated per warp in
    steps of 8 a thread: 81 costs what 88 does, and can cost a CTA per SM."""
    messages = _ptxas(ptx, chip, ("-v",))[1]
    found = _USAGE.search(messages)
    if found is None:
        raise PtxasError(f"no resource usage in ptxas -v's output:\n{messages.strip()}")
    stack, spill_stores, spill_loads, registers = (int(v) for v in found.groups())
    return dict(registers=registers, spill_stores=spill_stores, spill_loads=spill_loads,
                stack=stack)
