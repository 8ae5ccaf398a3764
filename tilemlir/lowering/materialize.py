"""The tile-materialize pass: gives every tile buffer real storage and removes the buffer ops.

After tile-dispatch, buffers are only reached through `tile.storage` (the raw storage of a root
buffer) and `tile.addr` (the address of one element). This pass replaces them:

    tile.global(%p)          -> llvm.addrspacecast %p to !llvm.ptr<1>
    tile.alloc_shared {off}  -> &__tile_smem[off], an `.extern .shared .align 1024` array
    tile.alloc_local         -> llvm.alloca of the layout's memory span, in the entry block
    tile.tmem(%addr)         -> %addr

and erases tile.slice / tile.view / root ops once nothing uses them. A buffer still used by
anything else (an op dispatch could not lower, say) is reported at that use.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import llvm

from tilemlir.analysis import alignment
from tilemlir.ir import emit, windows
from tilemlir.ir.types import llvm_type, parse_buffer_type
from tilemlir.lowering import addresses

SMEM_SYMBOL = "__tile_smem"
_BUFFER_OPS = windows.WINDOW_OPS + windows.ROOT_OPS


def _ensure_smem_global(gpu_module: ir.Operation) -> None:
    body = gpu_module.regions[0].blocks[0]
    for op in body.operations:
        if op.operation.name == "llvm.mlir.global" and \
                ir.StringAttr(op.operation.attributes["sym_name"]).value == SMEM_SYMBOL:
            return
    with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
        llvm.GlobalOp(ir.Type.parse("!llvm.array<0 x i8>"), SMEM_SYMBOL,
                      ir.Attribute.parse("#llvm.linkage<external>"),
                      alignment=alignment.SMEM_ALIGN, addr_space=3)


def _entry_block(op: ir.Operation) -> ir.Block:
    parent = op.parent
    while parent is not None and parent.name not in ("gpu.func", "func.func", "llvm.func"):
        parent = parent.parent
    if parent is None:
        raise ValueError("a register buffer outside any function")
    return parent.regions[0].blocks[0]


def _enclosing_gpu_module(op: ir.Operation):
    parent = op.parent
    while parent is not None and parent.name != "gpu.module":
        parent = parent.parent
    return parent


class _AllocaPoints:
    """Where the next alloca of an entry block goes: after the block's leading allocas (and
    their constants), so that allocas keep program order. The first op past them (the anchor)
    is found once per block, not once per alloca (a kernel with thousands of register buffers
    would be quadratic); `touch` forgets it when IR is built right before it or it is erased."""

    def __init__(self):
        self._anchors: dict = {}      # block -> first op that is no alloca or constant (None: end)

    def at(self, block: ir.Block) -> ir.InsertionPoint:
        if block not in self._anchors:
            self._anchors[block] = next(
                (op.operation for op in block.operations
                 if op.operation.name not in ("llvm.alloca", "arith.constant")), None)
        anchor = self._anchors[block]
        return ir.InsertionPoint(block) if anchor is None else ir.InsertionPoint(anchor)

    def touch(self, op: ir.Operation) -> None:
        """`op` is about to get ops built before it, or to be erased."""
        for block, anchor in list(self._anchors.items()):
            if anchor is not None and anchor == op:
                del self._anchors[block]


def _make_storage(root: ir.Operation, points: _AllocaPoints) -> ir.Value:
    buf = parse_buffer_type(root.results[0].type)
    name = root.name
    if name == "tile.tmem":
        return root.operands[0]
    if name == "tile.alloc_local":
        with points.at(_entry_block(root)), root.location:
            count = emit.const(1, emit.i64())
            array = ir.Type.parse(f"!llvm.array<{max(buf.layout.span('m'), 1)} x "
                                  f"{llvm_type(buf.elem)}>")
            return llvm.alloca(emit.ptr(), count, array)
    points.touch(root)
    with ir.InsertionPoint(root), root.location:
        if name == "tile.global":
            return llvm.addrspacecast(emit.ptr(1), root.operands[0])
        # tile.alloc_shared
        module = _enclosing_gpu_module(root)
        if module is None:
            raise ValueError("shared memory outside a gpu.module")
        _ensure_smem_global(module)
        base = llvm.mlir_addressof(emit.ptr(3), SMEM_SYMBOL)
        offset = ir.IntegerAttr(root.attributes["offset"]).value
        return emit.gep(base, ir.IntegerType.get_signless(8), offset)


def _collect(module: ir.Operation) -> dict[str, list]:
    found = {"tile.storage": [], "tile.addr": [], "buffer": []}

    def visit(op):
        if op.name in ("tile.storage", "tile.addr"):
            found[op.name].append(op)
        elif op.name in _BUFFER_OPS:
            found["buffer"].append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


def run_materialize(module: ir.Operation) -> list[tuple[ir.Location, str]]:
    """Materializes buffers under `module`; returns the problems (location, message)."""
    with module.context:
        ops = _collect(module)
        problems = []
        roots: dict = {}
        points = _AllocaPoints()

        def storage_of(root_value: ir.Value) -> ir.Value:
            key = root_value.owner
            if key not in roots:
                roots[key] = _make_storage(key, points)
            return roots[key]

        for op in ops["tile.addr"]:
            points.touch(op)
            with ir.InsertionPoint(op), op.location:
                ref = windows.resolve(op.operands[0])
                coord = [emit.to_index(v) for v in list(op.operands)[1:]]
                ptr = addresses.element_pointer(ref, coord, storage_of(ref.root))
                if ptr.type != op.results[0].type:
                    ptr = llvm.addrspacecast(op.results[0].type, ptr)
            op.results[0].replace_all_uses_with(ptr)
            op.erase()
        for op in ops["tile.storage"]:
            root = op.operands[0]
            if isinstance(root.owner, ir.Block) or root.owner.name not in windows.ROOT_OPS:
                problems.append((op.location, "tile.storage must take a root buffer (tile.global, "
                                              "tile.alloc_shared, tile.alloc_local or tile.tmem)"))
                continue
            op.results[0].replace_all_uses_with(storage_of(root))
            points.touch(op)
            op.erase()
        for op in reversed(ops["buffer"]):
            users = [u.owner for u in op.results[0].uses]
            for user in users:
                problems.append((user.location, f"'{user.name}' still uses a tile buffer after "
                                                f"dispatch; only tile primitives take buffers"))
            if not users:
                op.erase()
        return problems
