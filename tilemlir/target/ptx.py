"""PTX out of a lowered module, and ptxas to turn it into a cubin (or just to check it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
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
    """A CUDA tool (ptxas, nvdisasm, cuobjdump) from $TILEMLIR_<NAME>, else where
    cuda.pathfinder finds it (the NVIDIA wheels: nvidia-cuda-nvcc carries ptxas,
    nvidia-cuda-nvdisasm nvdisasm; conda; CUDA_PATH / CUDA_HOME; the toolkit of the cudart the
    loader finds), else on the PATH."""
    explicit = os.environ.get(f"TILEMLIR_{name.upper()}")
    if explicit:
        return explicit
    return _pathfinder(name) or shutil.which(name)


def _pathfinder(name: str) -> str | None:
    try:
        from cuda.pathfinder import SUPPORTED_BINARY_UTILITIES, find_nvidia_binary_utility
    except ImportError:        # cuda-pathfinder before 1.3.4 finds no tools
        return None
    if name not in SUPPORTED_BINARY_UTILITIES:    # ptxas is known from 1.8.1 on
        return None
    return find_nvidia_binary_utility(name)


def find_ptxas() -> str | None:
    """ptxas, found as find_cuda_tool says."""
    return find_cuda_tool("ptxas")


class ToolNotFound(PtxasError):
    """A CUDA tool (ptxas, nvdisasm) is not installed where find_cuda_tool looks."""

    def __init__(self, tool: str, wheel: str):
        super().__init__(
            f"{tool} not found: pip install 'tilemlir[tools]' (it brings {wheel}), install a "
            f"CUDA toolkit (CUDA_HOME), or set TILEMLIR_{tool.upper()} to the {tool} to use")
        self.tool = tool


def disassemble(cubin: bytes) -> str:
    """The SASS of a cubin (nvdisasm); ToolNotFound without nvdisasm, PtxasError when it
    fails."""
    nvdisasm = find_cuda_tool("nvdisasm")
    if nvdisasm is None:
        raise ToolNotFound("nvdisasm", "nvidia-cuda-nvdisasm")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        proc = subprocess.run([nvdisasm, "-c", str(path)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise PtxasError(f"nvdisasm failed:\n{proc.stderr.strip()}")
        return proc.stdout


def assemble_verbose(ptx: str, chip: str, extra_args: tuple[str, ...] = ()) -> tuple[bytes, str]:
    """(cubin, the messages of `ptxas -v`) for `ptx`; ToolNotFound without ptxas, PtxasError
    with its message when it fails."""
    return _ptxas(ptx, chip, ("-v", *extra_args))


def _ptxas(ptx: str, chip: str, extra_args: tuple[str, ...]) -> tuple[bytes, str]:
    """(cubin, ptxas's messages) for `ptx`; PtxasError with its message on failure."""
    ptxas = find_ptxas()
    if ptxas is None:
        raise ToolNotFound("ptxas", "nvidia-cuda-nvcc")
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


@dataclass(frozen=True)
class ResourceUsage:
    """What `ptxas -v` reports for one kernel, per thread unless said otherwise.

    Registers are allocated per warp in steps of 8 a thread: 81 costs what 88 does, and can
    cost a CTA per SM. `stack` is the thread's local memory (its stack frame, spills included);
    `spill_stores` / `spill_loads` count the bytes the spill instructions move (0: nothing
    spills). `shared` is the CTA's static shared memory (tilemlir's kernels allocate theirs
    dynamically, so it is usually 0); `barriers` the named barriers the kernel uses."""
    kernel: str
    registers: int
    stack: int
    spill_stores: int
    spill_loads: int
    shared: int
    barriers: int


_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")


def parse_resource_usage(messages: str) -> dict[str, ResourceUsage]:
    """{kernel name: its ResourceUsage} from the messages of `ptxas -v`."""
    entries = list(_ENTRY.finditer(messages))
    found = {}
    for entry, after in zip(entries, entries[1:] + [None]):
        text = messages[entry.end():after.start() if after else len(messages)]
        frame, registers = _FRAME.search(text), re.search(r"Used (\d+) registers", text)
        if frame is None or registers is None:
            continue
        shared = re.search(r"(\d+) bytes smem", text)
        barriers = re.search(r"used (\d+) barriers", text)
        stack, stores, loads = (int(v) for v in frame.groups())
        found[entry.group(1)] = ResourceUsage(
            entry.group(1), int(registers.group(1)), stack, stores, loads,
            int(shared.group(1)) if shared else 0, int(barriers.group(1)) if barriers else 0)
    return found


def resource_usage(ptx: str, chip: str, kernel: str | None = None) -> ResourceUsage:
    """What `ptxas -v` reports for `kernel` of `ptx` (default: its first kernel) on `chip`.
    Compiled kernels have these figures as properties (Kernel.n_regs, .n_spills, ...)."""
    messages = assemble_verbose(ptx, chip)[1]
    return pick_usage(parse_resource_usage(messages), kernel, messages)


def pick_usage(usages: dict[str, ResourceUsage], kernel: str | None,
               messages: str) -> ResourceUsage:
    if kernel is None and usages:
        return next(iter(usages.values()))
    if kernel in usages:
        return usages[kernel]
    raise PtxasError(f"no resource usage for {kernel or 'any kernel'} in ptxas -v's output:\n"
                     f"{messages.strip()}")
