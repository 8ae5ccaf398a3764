"""Kernel parameters that dispatch adds: TMA tensor maps, passed by value as grid constants.

A TMA copy needs a CUtensorMap describing the global tensor it reads or writes; the map's box
and swizzle follow from the shared-memory buffer of the copy, so only dispatch knows them. The
TMA variants call `tensor_map_argument`, which appends a `!llvm.ptr` parameter to the kernel and
records it on the gpu.func (`tile.tensor_maps`, see tilemlir/ir/kernel_abi.py):

    gpu.func @k(%A: !llvm.ptr, %B: !llvm.ptr, %D: !llvm.ptr, %mapA: !llvm.ptr) kernel
        attributes {tile.tensor_maps = [{param = 0, arg = 3, box = array<i64: 128, 64>,
                                         swizzle = 128}]}

After the gpu.func has become an llvm.func, the `tile-kernel-abi` pass makes each such
parameter `.param .align 64 .b8 [128]` (`llvm.byval`, `nvvm.grid_constant`: gpu.func rejects
the latter) and copies the records to the top-level module (`tile.kernel_abi`), which the
runtime reads after lowering (the gpu.func itself is gone by then). The runtime encodes a map
per record at launch. The same pass gives a kernel launched in clusters (`tile.cluster`) its PTX
cluster shape (`nvvm.cluster_dim`: .explicitcluster, .reqnctapercluster).
"""

from __future__ import annotations

from mlir import ir

from tilemlir.ir import emit, kernel_abi
from tilemlir.ir.kernel_abi import TensorMapRecord
from tilemlir.ir.modules import gpu_module_ops


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
    existing = kernel_abi.tensor_maps(func)
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
    kernel_abi.set_tensor_maps(func, existing + [TensorMapRecord(param, len(inputs), tuple(box),
                                                                 swizzle)])
    return arg


def run_kernel_abi(module: ir.Operation) -> None:
    """On the lowered llvm.func kernels: tensor-map params become 64-byte-aligned 128-byte
    grid constants, and their records are copied to the top-level module; cluster shapes
    become nvvm.cluster_dim."""
    with module.context:
        _apply(module)


def _apply(module: ir.Operation) -> None:
    byval = {"llvm.byval": ir.TypeAttr.get(
                 ir.Type.parse(f"!llvm.array<{kernel_abi.TENSOR_MAP_BYTES} x i8>")),
             "llvm.align": ir.IntegerAttr.get(emit.i64(), 64),
             "nvvm.grid_constant": ir.UnitAttr.get()}
    table = {}
    for gname, op in gpu_module_ops(module, "llvm.func"):
        if kernel_abi.CLUSTER in op.attributes:
            # .explicitcluster / .reqnctapercluster: ptxas knows the shape, and a launch
            # without these clusters fails instead of running a cluster kernel without peers.
            op.attributes["nvvm.cluster_dim"] = op.attributes[kernel_abi.CLUSTER]
        records = kernel_abi.tensor_maps(op)
        if not records:
            continue
        nargs = len(op.regions[0].blocks[0].arguments)
        attrs = list(ir.ArrayAttr(op.attributes["arg_attrs"])) \
            if "arg_attrs" in op.attributes else [ir.DictAttr.get({})] * nargs
        for r in records:
            attrs[r.arg] = ir.DictAttr.get(byval)
        op.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
        table[(gname, ir.StringAttr(op.attributes["sym_name"]).value)] = records
    kernel_abi.publish_tensor_maps(module, table)
