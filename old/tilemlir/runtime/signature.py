"""What a kernel takes and how it is launched, read off its tile IR before lowering.

A kernel is a `gpu.func ... kernel` whose pointer parameters are wrapped by `tile.global`, so
their shape and element type are known. Optional discardable attributes on the gpu.func:
`tile.params = ["A", "B", "D"]` (parameter names for messages) and
`tile.grid = array<i32: gx, gy, gz>` (the launch grid), `tile.cluster = array<i32: cx, cy, cz>`
(the thread-block cluster shape, for kernels launched in clusters); `known_block_size` gives the
block. TMA tensor maps that dispatch adds as parameters are read after lowering
(tilemlir.lowering.kernel_abi) and attached with `with_tensor_maps`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mlir import ir

from tilemlir.ir.modules import gpu_module_ops
from tilemlir.ir.types import parse_buffer_type
from tilemlir.lowering.kernel_abi import CLUSTER_ATTR, TensorMapRecord, lowered_records
from tilemlir.lowering.materialize import shared_memory_bytes


class SignatureError(ValueError):
    pass


@dataclass(frozen=True)
class Param:
    name: str
    kind: str                       # "buffer" | "scalar"
    dtype: str                      # MLIR element type: f16, bf16, f32, i32 ...
    shape: tuple[int, ...] = ()

    def describe(self) -> str:
        if self.kind == "scalar":
            return f"{self.name}: {self.dtype}"
        return f"{self.name}: {'x'.join(map(str, self.shape))}x{self.dtype}"


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


def _ints(attr) -> tuple[int, ...]:
    a = ir.DenseI32ArrayAttr(attr)
    return tuple(a[i] for i in range(len(a)))


def _param_names(func, count: int) -> list[str]:
    if "tile.params" in func.attributes:
        names = [ir.StringAttr(a).value for a in ir.ArrayAttr(func.attributes["tile.params"])]
        if len(names) == count:
            return names
    return [f"arg{i}" for i in range(count)]


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
    names = _param_names(func, len(args))
    params = []
    for arg, pname in zip(args, names):
        t = arg.type
        if str(t).startswith("!llvm.ptr"):
            buf = _buffer_of(arg)
            if buf is None or buf.scope != "global":
                raise SignatureError(f"kernel {name}: pointer parameter {pname} is not wrapped by "
                                     f"tile.global, so its shape and type are unknown")
            params.append(Param(pname, "buffer", str(buf.elem), tuple(buf.shape)))
        elif isinstance(t, (ir.IntegerType, ir.FloatType, ir.IndexType)):
            params.append(Param(pname, "scalar", str(t)))
        else:
            raise SignatureError(f"kernel {name}: parameter {pname} has unsupported type {t}")
    if "known_block_size" not in func.attributes:
        raise SignatureError(f"kernel {name} declares no known_block_size")
    block = _ints(func.attributes["known_block_size"])
    grid = _ints(func.attributes["tile.grid"]) if "tile.grid" in func.attributes else (1, 1, 1)
    cluster = _ints(func.attributes[CLUSTER_ATTR]) if CLUSTER_ATTR in func.attributes \
        else (1, 1, 1)
    return KernelSignature(module_name, name, tuple(params), block, grid,
                           shared_memory_bytes(func), cluster)


def with_tensor_maps(signatures: dict[str, KernelSignature], lowered: ir.Module) -> None:
    """Attaches the tensor-map parameters dispatch added (read from the lowered module)."""
    for (module_name, name), records in lowered_records(lowered).items():
        sig = signatures.get(name)
        if sig is not None and sig.module == module_name:
            signatures[name] = replace(sig, tensor_maps=tuple(records))
