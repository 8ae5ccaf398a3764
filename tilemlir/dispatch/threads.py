"""Which threads execute an op: the launch shape and the thread-dependent branches around it.

Warp-collective instructions (mma.sync, ldmatrix, wgmma ...) are undefined when some threads
of the warp (or warpgroup) do not reach them. The dispatcher therefore asks, for each enclosing
`scf.if`, how coarse its condition is: the *granularity* of a value is the size of the aligned
groups of consecutive threads (in x-major thread order) that are guaranteed to see the same
value. A constant has infinite granularity, `threadIdx.x` has 1, `threadIdx.x / 32` has 32
(the warp index), `tile.elect_sync` has 1. A warp-scope op is fully active when every enclosing
condition has granularity >= 32; a warpgroup-scope op needs >= 128; a CTA-scope op needs
uniform conditions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir

UNIFORM = math.inf

# Ops whose result is a thread index (granularity 1, and "index-like": dividing it by c gives c).
_THREAD_INDEX_OPS = {"gpu.thread_id", "gpu.lane_id", "nvvm.read.ptx.sreg.tid.x",
                     "nvvm.read.ptx.sreg.laneid"}
_SINGLE_THREAD_OPS = {"tile.elect_sync", "nvvm.elect.sync"}
_UNIFORM_OPS = {"arith.constant", "gpu.block_id", "gpu.grid_dim", "gpu.block_dim",
                "gpu.cluster_id", "gpu.cluster_block_id", "nvvm.read.ptx.sreg.ctaid.x",
                "nvvm.read.ptx.sreg.ctaid.y", "nvvm.read.ptx.sreg.ctaid.z"}


def _constant_int(v: ir.Value):
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def _is_thread_index(v: ir.Value) -> bool:
    """threadIdx.x or lane id, possibly reduced modulo a power of two (still index-like)."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return False
    if owner.name in _THREAD_INDEX_OPS:
        dim = owner.attributes["dimension"] if "dimension" in owner.attributes else None
        return dim is None or str(dim).endswith("x>")
    if owner.name in ("arith.remui", "arith.andi", "arith.index_cast", "arith.index_castui"):
        return _is_thread_index(owner.operands[0])
    return False


def granularity(v: ir.Value, _depth: int = 0) -> float:
    """Size of the aligned thread groups on which `v` is constant (see module doc)."""
    if _depth > 64:
        return 1
    owner = v.owner
    if isinstance(owner, ir.Block):
        parent = owner.owner
        # Loop induction variables and function arguments are uniform when the loop bounds are.
        if parent is not None and parent.name == "scf.for":
            return min([granularity(o, _depth + 1) for o in parent.operands[:3]] + [UNIFORM])
        return UNIFORM
    name = owner.name
    if name in _UNIFORM_OPS:
        return UNIFORM
    if name in _SINGLE_THREAD_OPS:
        return 1
    if name in _THREAD_INDEX_OPS:
        dim = str(owner.attributes["dimension"]) if "dimension" in owner.attributes else "x>"
        return 1 if dim.endswith("x>") else _block_x(owner)
    if name in ("arith.divui", "arith.shrui", "arith.divsi", "arith.shrsi"):
        c = _constant_int(owner.operands[1])
        base = granularity(owner.operands[0], _depth + 1)
        if c is not None and c > 0 and _is_thread_index(owner.operands[0]):
            factor = c if name.startswith("arith.div") else (1 << c)
            return max(base, factor)
        return base
    operands = list(owner.operands)
    if not operands:
        return 1
    return min(granularity(o, _depth + 1) for o in operands)


def _block_x(op: ir.Operation) -> float:
    func = enclosing(op, "gpu.func")
    size = block_size(func) if func is not None else None
    return size[0] if size else 1


def enclosing(op, name: str):
    """The nearest ancestor operation called `name`, or None."""
    parent = op.parent
    while parent is not None:
        if parent.name == name:
            return parent
        parent = parent.parent
    return None


def block_size(func) -> tuple[int, int, int] | None:
    """The `known_block_size` of a gpu.func, if it declares one."""
    if func is None or "known_block_size" not in func.attributes:
        return None
    attr = ir.DenseI32ArrayAttr(func.attributes["known_block_size"])
    return tuple(attr[i] for i in range(len(attr)))


@dataclass(frozen=True)
class Branch:
    """An enclosing thread-dependent branch and how coarse its condition is."""
    location: str
    granularity: float


def thread_dependent_branches(op: ir.Operation) -> list[Branch]:
    """The scf.if ancestors of `op` (up to its gpu.func) whose conditions depend on the thread."""
    found = []
    parent = op.parent
    while parent is not None and parent.name not in ("gpu.func", "func.func", "builtin.module"):
        if parent.name == "scf.if":
            g = granularity(parent.operands[0])
            if g != UNIFORM:
                found.append(Branch(str(parent.location), g))
        parent = parent.parent
    return found


SCOPE_THREADS = {"thread": 1, "warp": 32, "warpgroup": 128}


def scope_threads(scope: str, block: tuple[int, int, int] | None) -> int | None:
    """How many threads a scope spans (None for a CTA scope without a known block size)."""
    if scope in SCOPE_THREADS:
        return SCOPE_THREADS[scope]
    if scope == "cta" and block is not None:
        return block[0] * block[1] * block[2]
    return None
