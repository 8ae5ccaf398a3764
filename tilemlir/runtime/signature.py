"""What a kernel takes and how it is launched, read off its tile IR before lowering.

What a kernel declares (parameter names, block, grid, cluster, shared memory) is the kernel ABI
of tilemlir/ir/kernel_abi.py; a pointer parameter's shape and element type come from the
`tile.global` that wraps it. TMA tensor maps that dispatch adds as parameters are read after
lowering and attached with `with_tensor_maps`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mlir import ir

from tilemlir.ir import kernel_abi
from tilemlir.ir.kernel_abi import TensorMapRecord
from tilemlir.ir.modules import gpu_module_ops
from tilemlir.ir.types import parse_buffer_type


class SignatureError(ValueError):
    pass


@dataclass(frozen=True)
class Param:
    name: str
    kind: str                       # "buffer" | "scalar"
    dtype: str                      # MLIR element type: f16, bf16, f32, i32 ...
    shape: tuple[int, ...] = ()
    leading: str = ""               # a run-time leading extent (JSON, tilemlir.dsl.dims), or ""

    def describe(self) -> str:
        if self.kind == "scalar":
            return f"{self.name}: {self.dtype}"
        dims = [str(d) for d in self.shape]
        if self.leading:
            dims[0] = leading_text(self.leading)
        return f"{self.name}: {'x'.join(dims)}x{self.dtype}"


def leading_text(extent: str) -> str:
    """A run-time extent's JSON as the expression it stands for (`M`, `cdiv(M, 128)`)."""
    import json

    def text(tree):
        if isinstance(tree, int):
            return str(tree)
        if tree[0] == "dim":
            return tree[1]
        sym = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}.get(tree[0])
        return f"({text(tree[1])} {sym} {text(tree[2])})" if sym else \
            f"{tree[0]}({text(tree[1])}, {text(tree[2])})"
    return text(json.loads(extent))


@dataclass(frozen=True)
class KernelSignature:
    module: str                     # gpu.module symbol
    name: str                       # gpu.func symbol
    params: tuple[Param, ...]
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    shared_memory: int              # bytes of dynamic shared memory
    cluster: tuple[int, int, int] = (1, 1, 1)
    tensor_maps: tuple[TensorMapRecord, ...] = ()   # parameters after `params`, by value
    # Run-time dims (T.dynamic): each a hidden i32 parameter after `params` (and before the
    # tensor maps) that the launcher reads off the leading extent of the buffers it sizes.
    dims: tuple[str, ...] = ()
    grid_exprs: tuple[str, ...] = ()                # per grid dim: JSON, or "" (grid's)


def _buffer_of(arg: ir.Value):
    for use in arg.uses:
        if use.owner.name == "tile.global":
            return parse_buffer_type(use.owner.results[0].type)
    return None


def kernels(module: ir.Module) -> list[KernelSignature]:
    """The signatures of every kernel in `module`'s gpu.modules."""
    found = []
    for module_name, op in gpu_module_ops(module.operation, "gpu.func"):
        if "gpu.kernel" in op.attributes:
            found.append(_signature(module_name, op))
    return found


def _signature(module_name: str, func) -> KernelSignature:
    name = ir.StringAttr(func.attributes["sym_name"]).value
    args = list(func.regions[0].blocks[0].arguments)
    declared = kernel_abi.read(func)
    names = declared.param_names(len(args))
    hidden = {index for _, index in declared.dims}
    if hidden and hidden != set(range(len(args) - len(hidden), len(args))):
        raise SignatureError(f"kernel {name}: its run-time dims are not its last parameters")
    leading = dict(declared.extents)
    params = []
    for index, (arg, pname) in enumerate(zip(args, names)):
        if index in hidden:
            continue
        t = arg.type
        if str(t).startswith("!llvm.ptr"):
            buf = _buffer_of(arg)
            if buf is None or buf.scope != "global":
                raise SignatureError(f"kernel {name}: pointer parameter {pname} is not wrapped by "
                                     f"tile.global, so its shape and type are unknown")
            params.append(Param(pname, "buffer", str(buf.elem), tuple(buf.shape),
                                leading.get(index, "")))
        elif isinstance(t, (ir.IntegerType, ir.FloatType, ir.IndexType)):
            params.append(Param(pname, "scalar", str(t)))
        else:
            raise SignatureError(f"kernel {name}: parameter {pname} has unsupported type {t}")
    if declared.block is None:
        raise SignatureError(f"kernel {name} declares no {kernel_abi.BLOCK}")
    return KernelSignature(module_name, name, tuple(params), declared.block, declared.grid,
                           kernel_abi.shared_memory_bytes(func), declared.cluster or (1, 1, 1),
                           dims=tuple(n for n, _ in sorted(declared.dims, key=lambda d: d[1])),
                           grid_exprs=declared.grid_exprs)


def with_tensor_maps(signatures: dict[str, KernelSignature], lowered: ir.Module) -> None:
    """Attaches the tensor-map parameters dispatch added (read from the lowered module)."""
    for (module_name, name), records in kernel_abi.lowered_tensor_maps(lowered).items():
        sig = signatures.get(name)
        if sig is not None and sig.module == module_name:
            signatures[name] = replace(sig, tensor_maps=tuple(records))
