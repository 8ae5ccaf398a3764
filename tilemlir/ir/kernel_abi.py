"""The kernel ABI: what a tile kernel declares to whoever launches it (the runtime) or runs it
(the interpreter), and the one place its attributes are named, written and read.

A kernel is a `gpu.func ... kernel`. Its pointer parameters are wrapped by `tile.global`, which
gives their shape and element type. The gpu.func declares the rest in attributes:

    known_block_size = array<i32: bx, by, bz>    the block (the gpu dialect's own attribute)
    tile.params = ["A", "B", "D"]                parameter names, for messages
    tile.grid = array<i32: gx, gy, gz>           the launch grid (absent: 1, 1, 1)
    tile.cluster = array<i32: cx, cy, cz>        the thread-block cluster shape, for a kernel
                                                 launched in clusters (absent: none)
    tile.cluster_non_portable                    (a unit attribute) the opt-in to clusters of
                                                 9 to 16 CTAs, which not every GPU runs
    tile.tensor_maps = [{param = 0, arg = 3, box = array<i64: 128, 64>, swizzle = 128}, ...]
                                                 TMA tensor maps dispatch added as parameters
    tile.dims = [{name = "M", arg = 3}]          run-time dims (T.dynamic): hidden i32
                                                 parameters the launcher fills in
    tile.extents = [{param = 0, extent = "[\"dim\",\"M\"]"}]
                                                 buffers whose leading extent is a run-time
                                                 expression (JSON, tilemlir.dsl.dims)
    tile.grid_exprs = ["[\"cdiv\",[\"dim\",\"M\"],128]", "", ""]
                                                 grid extents known at launch ("": tile.grid's)

A buffer whose leading extent is known only at launch has dynamic_extent(row elements) there
in its type (DYNAMIC_EXTENT unless its rows are very long): an upper bound that keeps every
static check true; what it really is comes from the argument.

Its dynamic shared memory is the end of its furthest `tile.alloc_shared` (shared_memory_bytes).
A tensor-map record names the user parameter the map describes (`param`), the kernel argument
that carries it (`arg`), the box (outermost dimension first) and the swizzle in bytes (0: none);
the runtime encodes one map per record at launch and passes it by value (TENSOR_MAP_BYTES).
Lowering turns the gpu.func into an llvm.func, so tile-kernel-abi (lowering/kernel_abi.py)
copies the records to the top-level module as `tile.kernel_abi = {"<gpu.module>.<kernel>" =
[...]}`, where the runtime reads them after lowering (lowered_tensor_maps).

The language writes the declaration (declare), dispatch adds tensor maps (set_tensor_maps), the
runtime and the interpreter read it (read, tensor_maps, lowered_tensor_maps).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from mlir import ir

from tilemlir.ir import emit
from tilemlir.ir.types import parse_buffer_type

BLOCK = "known_block_size"
PARAMS = "tile.params"
GRID = "tile.grid"
CLUSTER = "tile.cluster"
NON_PORTABLE_CLUSTER = "tile.cluster_non_portable"
PORTABLE_CLUSTER_CTAS = 8       # CUDA's portable cluster size: more needs the function's opt-in
TENSOR_MAPS = "tile.tensor_maps"
LOWERED_TENSOR_MAPS = "tile.kernel_abi"     # on the top-level module, after lowering
TENSOR_MAP_BYTES = 128                      # a CUtensorMap, passed by value
DIMS = "tile.dims"
EXTENTS = "tile.extents"
GRID_EXPRS = "tile.grid_exprs"
DYNAMIC_EXTENT = 2 ** 31 - 1                # a run-time leading extent's static stand-in
MAX_GLOBAL_ELEMENTS = 2 ** 47               # no global buffer reaches further (checks/verify.py)


def dynamic_extent(row_elements: int) -> int:
    """The stand-in of a run-time leading extent over rows of `row_elements` elements:
    DYNAMIC_EXTENT (the most an i32 dim holds), or as many rows as fit in MAX_GLOBAL_ELEMENTS
    when rows are so long that DYNAMIC_EXTENT of them would not (rows of more than 65536)."""
    return min(DYNAMIC_EXTENT, MAX_GLOBAL_ELEMENTS // max(row_elements, 1))


# ------------------------------------------------------------------------------ run-time dims
_DIM_OP_FNS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
    "cdiv": lambda a, b: -(-a // b), "min": min, "max": max,
}
DIM_OPS = tuple(_DIM_OP_FNS)


def apply_dim_op(op: str, a: int, b: int) -> int:
    """One operation of a run-time extent expression on known values."""
    fn = _DIM_OP_FNS.get(op)
    if fn is None:
        raise ValueError(f"unknown run-time extent operation {op!r}")
    return fn(a, b)


def evaluate_extent(extent: str, values: dict[str, int]) -> int:
    """A run-time extent (JSON: ["dim", "M"], ["cdiv", ["dim", "M"], 128], an int) for the
    dims' `values`."""
    return extent_function(extent)(values)


def extent_dim(extent: str) -> str | None:
    """The dim a run-time extent is, if it is a bare dim (read off an argument), else None."""
    tree = json.loads(extent)
    return tree[1] if isinstance(tree, list) and tree[0] == "dim" else None


@functools.lru_cache(maxsize=4096)
def extent_function(extent: str):
    """A run-time extent as a function of the dims' values, built once: the launcher evaluates
    the extents at every call, where parsing their JSON again cost 10-27 us a call."""
    def build(tree):
        if isinstance(tree, int) and not isinstance(tree, bool):
            return lambda values: tree
        if not isinstance(tree, list) or len(tree) not in (2, 3):
            raise ValueError(f"not a run-time extent: {extent!r}")
        if tree[0] == "dim":
            name = tree[1]
            return lambda values: values[name]
        fn = _DIM_OP_FNS.get(tree[0])
        if fn is None:
            raise ValueError(f"unknown run-time extent operation {tree[0]!r}")
        a, b = build(tree[1]), build(tree[2])
        return lambda values: fn(a(values), b(values))
    return build(json.loads(extent))


@dataclass(frozen=True)
class KernelDeclaration:
    """What a kernel declares about its parameters and launch."""
    params: tuple[str, ...] | None                  # parameter names (None: not declared)
    block: tuple[int, int, int] | None              # None: not declared
    grid: tuple[int, int, int] = (1, 1, 1)
    cluster: tuple[int, int, int] | None = None     # None: not launched in clusters
    dims: tuple[tuple[str, int], ...] = ()          # (run-time dim, its kernel argument)
    extents: tuple[tuple[int, str], ...] = ()       # (parameter, leading extent as JSON)
    grid_exprs: tuple[str, ...] = ()                # per grid dim: JSON, or "" (static)
    non_portable_cluster: bool = False              # clusters of more than 8 CTAs allowed

    def param_names(self, count: int) -> list[str]:
        """The names of `count` parameters: the declared ones if they match, else arg0, ..."""
        if self.params is not None and len(self.params) == count:
            return list(self.params)
        return [f"arg{i}" for i in range(count)]


@dataclass(frozen=True)
class TensorMapRecord:
    param: int                      # index of the user parameter (a global buffer)
    arg: int                        # index of the kernel argument carrying the map
    box: tuple[int, ...]            # outermost first
    swizzle: int                    # bytes: 0, 32, 64 or 128


# ------------------------------------------------------------------------------ reading
def _ints(attr: ir.Attribute) -> tuple[int, ...]:
    a = ir.DenseI32ArrayAttr(attr)
    return tuple(a[i] for i in range(len(a)))


def block_size(func: ir.Operation | None) -> tuple[int, int, int] | None:
    """The block a gpu.func declares (known_block_size), or None."""
    if func is None or BLOCK not in func.attributes:
        return None
    return _ints(func.attributes[BLOCK])


def cluster_shape(func: ir.Operation | None) -> tuple[int, int, int] | None:
    """The cluster shape of a kernel launched in clusters, or None."""
    if func is None or CLUSTER not in func.attributes:
        return None
    return _ints(func.attributes[CLUSTER])


def read(func: ir.Operation) -> KernelDeclaration:
    """What the gpu.func `func` declares (attributes the tile-IR verifier has checked)."""
    attrs = func.attributes
    params = tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(attrs[PARAMS])) \
        if PARAMS in attrs else None
    grid = _ints(attrs[GRID]) if GRID in attrs else (1, 1, 1)
    dims = tuple((ir.StringAttr(ir.DictAttr(a)["name"]).value,
                  ir.IntegerAttr(ir.DictAttr(a)["arg"]).value)
                 for a in ir.ArrayAttr(attrs[DIMS])) if DIMS in attrs else ()
    extents = tuple((ir.IntegerAttr(ir.DictAttr(a)["param"]).value,
                     ir.StringAttr(ir.DictAttr(a)["extent"]).value)
                    for a in ir.ArrayAttr(attrs[EXTENTS])) if EXTENTS in attrs else ()
    grid_exprs = tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(attrs[GRID_EXPRS])) \
        if GRID_EXPRS in attrs else ()
    return KernelDeclaration(params, block_size(func), grid, cluster_shape(func), dims,
                             extents, grid_exprs, NON_PORTABLE_CLUSTER in attrs)


def shared_memory_bytes(func: ir.Operation) -> int:
    """Bytes of dynamic shared memory the kernel's buffers need: the end of its furthest
    tile.alloc_shared (read before tile-materialize, which removes them)."""
    total = 0

    def visit(op):
        nonlocal total
        if op.name == "tile.alloc_shared":
            buf = parse_buffer_type(op.results[0].type)
            end = ir.IntegerAttr(op.attributes["offset"]).value + \
                buf.layout.span("m") * buf.elem_bits // 8
            total = max(total, end)
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return total


def _i64(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(emit.i64(), v)


def _record_attr(r: TensorMapRecord) -> ir.Attribute:
    return ir.DictAttr.get({"param": _i64(r.param), "arg": _i64(r.arg),
                            "box": ir.DenseI64ArrayAttr.get(list(r.box)),
                            "swizzle": _i64(r.swizzle)})


def _record(attr: ir.Attribute) -> TensorMapRecord:
    d = ir.DictAttr(attr)
    box = ir.DenseI64ArrayAttr(d["box"])
    return TensorMapRecord(ir.IntegerAttr(d["param"]).value, ir.IntegerAttr(d["arg"]).value,
                           tuple(box[i] for i in range(len(box))),
                           ir.IntegerAttr(d["swizzle"]).value)


def tensor_maps(func: ir.Operation) -> list[TensorMapRecord]:
    """The tensor-map parameters dispatch added to a kernel (gpu.func or lowered llvm.func)."""
    if TENSOR_MAPS not in func.attributes:
        return []
    return [_record(a) for a in ir.ArrayAttr(func.attributes[TENSOR_MAPS])]


def lowered_tensor_maps(module: ir.Module) -> dict[tuple[str, str], list[TensorMapRecord]]:
    """(gpu.module, kernel) -> tensor-map records, read from a module after lowering."""
    op = module.operation
    if LOWERED_TENSOR_MAPS not in op.attributes:
        return {}
    out = {}
    table = ir.DictAttr(op.attributes[LOWERED_TENSOR_MAPS])
    for i in range(len(table)):
        named = table[i]
        gname, _, kname = named.name.partition(".")
        out[(gname, kname)] = [_record(a) for a in ir.ArrayAttr(named.attr)]
    return out


# ------------------------------------------------------------------------------ writing
def declare(func: ir.Operation, declaration: KernelDeclaration) -> None:
    """Writes `declaration` on the gpu.func `func` (in its context); None fields are left out."""
    attrs = func.attributes
    d = declaration
    if d.params is not None:
        attrs[PARAMS] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in d.params])
    if d.block is not None:
        attrs[BLOCK] = ir.DenseI32ArrayAttr.get(list(d.block))
    attrs[GRID] = ir.DenseI32ArrayAttr.get(list(d.grid))
    if d.cluster is not None:
        attrs[CLUSTER] = ir.DenseI32ArrayAttr.get(list(d.cluster))
        if d.non_portable_cluster:
            attrs[NON_PORTABLE_CLUSTER] = ir.UnitAttr.get()
    if d.dims:
        attrs[DIMS] = ir.ArrayAttr.get([ir.DictAttr.get({"name": ir.StringAttr.get(n),
                                                         "arg": _i64(a)}) for n, a in d.dims])
    if d.extents:
        attrs[EXTENTS] = ir.ArrayAttr.get([ir.DictAttr.get({"param": _i64(p),
                                                            "extent": ir.StringAttr.get(e)})
                                           for p, e in d.extents])
    if any(d.grid_exprs):
        attrs[GRID_EXPRS] = ir.ArrayAttr.get([ir.StringAttr.get(e) for e in d.grid_exprs])


def set_tensor_maps(func: ir.Operation, records: list[TensorMapRecord]) -> None:
    func.attributes[TENSOR_MAPS] = ir.ArrayAttr.get([_record_attr(r) for r in records])


def publish_tensor_maps(module: ir.Operation,
                        table: dict[tuple[str, str], list[TensorMapRecord]]) -> None:
    """Records (gpu.module, kernel) -> tensor maps on the top-level module, for the runtime
    (lowered_tensor_maps) once the kernels are llvm.funcs."""
    if table:
        module.attributes[LOWERED_TENSOR_MAPS] = ir.DictAttr.get(
            {f"{g}.{k}": ir.ArrayAttr.get([_record_attr(r) for r in records])
             for (g, k), records in table.items()})
