"""Kernel parameters that dispatch adds: TMA tensor maps, passed by value as grid constants.

A TMA copy needs a CUtensorMap describing the global tensor it reads or writes; the map's box
and swizzle follow from the shared-memory buffer of the copy, so only dispatch knows them. The
TMA variants call `tensor_map_argument`, which appends a `!llvm.ptr` parameter to the kernel and
records it on the gpu.func:

    gpu.func @k(%A: !llvm.ptr, %B: !llvm.ptr, %D: !llvm.ptr, %mapA: !llvm.ptr) kernel
        attributes {tile.tensor_maps = [{param = 0, arg = 3, box = array<i64: 128, 64>,
                                         swizzle = 128}]}

(param: the user parameter the map describes; box: outermost dimension first; swizzle: bytes,
0 for none). After the gpu.func has become an llvm.func, the `tile-kernel-abi` pass makes each
such parameter `.param .align 64 .b8 [128]` (`llvm.byval`, `nvvm.grid_constant`: gpu.func
rejects the latter) and copies the records to the top-level module as
`tile.kernel_abi = {"<gpu.module>.<kernel>" = [...]}`, which the runtime reads after lowering
(the gpu.func itself is gone by then). The runtime encodes a map per record at launch.
The same pass gives a kernel launched in clusters (`tile.cluster`) its PTX cluster shape
(`nvvm.cluster_dim`: .explicitcluster, .reqnctapercluster).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilemlir.ir import emit
from tilemlir.ir.dialect import CLUSTER_ATTR
from tilemlir.ir.modules import gpu_module_ops

ATTR = "tile.tensor_maps"
MODULE_ATTR = "tile.kernel_abi"
TENSOR_MAP_BYTES = 128


@dataclass(frozen=True)
class TensorMapRecord:
    param: int                      # index of the user parameter (a global buffer)
    arg: int                        # index of the kernel argument carrying the map
    box: tuple[int, ...]            # outermost first
    swizzle: int                    # bytes: 0, 32, 64 or 128


def _i64(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(emit.i64(), v)


def _to_attr(r: TensorMapRecord) -> ir.Attribute:
    return ir.DictAttr.get({"param": _i64(r.param), "arg": _i64(r.arg),
                            "box": ir.DenseI64ArrayAttr.get(list(r.box)),
                            "swizzle": _i64(r.swizzle)})


def _from_attr(attr: ir.Attribute) -> TensorMapRecord:
    d = ir.DictAttr(attr)
    box = ir.DenseI64ArrayAttr(d["box"])
    return TensorMapRecord(ir.IntegerAttr(d["param"]).value, ir.IntegerAttr(d["arg"]).value,
                           tuple(box[i] for i in range(len(box))),
                           ir.IntegerAttr(d["swizzle"]).value)


def records(func: ir.Operation) -> list[TensorMapRecord]:
    if ATTR not in func.attributes:
        return []
    return [_from_attr(a) for a in ir.ArrayAttr(func.attributes[ATTR])]


def _enclosing_kernel(op: ir.Operation) -> ir.Operation:
    parent = op.parent
    while parent is not None and parent.name != "gpu.func":
        parent = parent.parent
    if parent is None:
        raise ValueError("a TMA copy must be inside a gpu.func kernel")
    return parent


def tensor_map_argument(op: ir.Operation, param: int, box, swizzle: int) -> ir.Value:
    """The kernel argument holding the tensor map of user parameter `param` with this box and
    swizzle (one per distinct map: two copies with the same box share it)."""
    func = _enclosing_kernel(op)
    entry = func.regions[0].blocks[0]
    existing = records(func)
    for r in existing:
        if r.param == param and r.box == tuple(box) and r.swizzle == swizzle:
            return entry.arguments[r.arg]
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs = list(ftype.inputs)
    arg = entry.add_argument(emit.ptr(), func.location)
    func.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(inputs + [emit.ptr()], list(ftype.results)))
    if "arg_attrs" in func.attributes:
        attrs = list(ir.ArrayAttr(func.attributes["arg_attrs"]))
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs + [ir.DictAttr.get({})])
    record = TensorMapRecord(param, len(inputs), tuple(box), swizzle)
    func.attributes[ATTR] = ir.ArrayAttr.get([_to_attr(r) for r in existing + [record]])
    return arg


def run_kernel_abi(module: ir.Operation) -> None:
    """On the lowered llvm.func kernels: tensor-map params become 64-byte-aligned 128-byte
    grid constants, and their records are copied to the top-level module; cluster shapes
    become nvvm.cluster_dim."""
    with module.context:
        _apply(module)


def _apply(module: ir.Operation) -> None:
    byval = {"llvm.byval": ir.TypeAttr.get(ir.Type.parse(f"!llvm.array<{TENSOR_MAP_BYTES} x i8>")),
             "llvm.align": _i64(64), "nvvm.grid_constant": ir.UnitAttr.get()}
    table = {}
    for gname, op in gpu_module_ops(module, "llvm.func"):
        if CLUSTER_ATTR in op.attributes:
            # .explicitcluster / .reqnctapercluster: ptxas knows the shape, and a launch
            # without these clusters fails instead of running a cluster kernel without peers.
            op.attributes["nvvm.cluster_dim"] = op.attributes[CLUSTER_ATTR]
        if ATTR not in op.attributes:
            continue
        nargs = len(op.regions[0].blocks[0].arguments)
        attrs = list(ir.ArrayAttr(op.attributes["arg_attrs"])) \
            if "arg_attrs" in op.attributes else [ir.DictAttr.get({})] * nargs
        for r in records(op):
            attrs[r.arg] = ir.DictAttr.get(byval)
        op.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
        table[f"{gname}.{ir.StringAttr(op.attributes['sym_name']).value}"] = op.attributes[ATTR]
    if table:
        module.attributes[MODULE_ATTR] = ir.DictAttr.get(table)


def lowered_records(module: ir.Module) -> dict[tuple[str, str], list[TensorMapRecord]]:
    """(gpu.module, kernel) -> tensor-map records, read from a module after lowering."""
    op = module.operation
    if MODULE_ATTR not in op.attributes:
        return {}
    out = {}
    table = ir.DictAttr(op.attributes[MODULE_ATTR])
    for i in range(len(table)):
        named = table[i]
        gname, _, kname = named.name.partition(".")
        out[(gname, kname)] = [_from_attr(a) for a in ir.ArrayAttr(named.attr)]
    return out
