"""The kernel language's built-in functions: thread hierarchy, buffers, loops, escapes.

All of these build IR in the kernel currently being built (see builder.current()).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from mlir import ir

from tilemlir.dsl.buffers import TileBuffer, row_major
from tilemlir.dsl.builder import current
from tilemlir.dsl.values import KernelError, Scalar, as_scalar, mlir_type
from tilemlir.ir import emit
from tilemlir.ir.types import buffer_type, element_bits
from tilemlir.layout import TileLayout


# ---------------------------------------------------------------------------- types
@dataclass(frozen=True)
class Buffer:
    """Annotation of a global-memory kernel parameter: `A: T.Buffer((M, K), "float16")`. The
    leading extent may be known only at launch: a dim (`M = T.dynamic("M")`) or an expression
    of dims (tilemlir.dsl.dims); the others are static (they make the row strides)."""
    shape: tuple
    dtype: str

    def __init__(self, shape, dtype):
        from tilemlir.dsl.dims import DimExpr
        dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        if dims and isinstance(dims[0], DimExpr):
            shape = (dims[0],) + static_shape(dims[1:], "T.Buffer") if len(dims) > 1 \
                else (dims[0],)
            if any(isinstance(d, DimExpr) for d in dims[1:]):
                raise KernelError(f"T.Buffer: a run-time extent may only lead the shape (the "
                                  f"row strides stay static), got {dims!r}")
        else:
            shape = static_shape(shape, "T.Buffer")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", str(dtype))

    @property
    def leading(self):
        """The leading extent if it is known only at launch (a DimExpr), else None."""
        from tilemlir.dsl.dims import DimExpr
        return self.shape[0] if self.shape and isinstance(self.shape[0], DimExpr) else None


def static_shape(shape, what: str) -> tuple[int, ...]:
    """`shape` as positive Python ints; a float, a bool or a non-positive extent is an error
    (int() would silently truncate 16.5 to 16, or turn True into 1)."""
    from tilemlir.dsl.dims import DimExpr
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    for d in dims:
        if isinstance(d, DimExpr):
            raise KernelError(f"{what}: {d} is known only when the kernel runs; only a global "
                              f"buffer parameter's leading extent may be (T.Buffer((M, K), ...))")
        if isinstance(d, bool) or not hasattr(d, "__index__") or operator.index(d) < 1:
            raise KernelError(f"{what} shape entries are positive integers, got {d!r} in "
                              f"{dims!r}")
    return tuple(operator.index(d) for d in dims)


@dataclass(frozen=True)
class ScalarType:
    """A scalar dtype: an annotation (`phase: T.int32 = 0`), a parameter type, or a conversion.

    `T.int32`, `T.uint32`, `T.int64`, `T.uint64`, `T.float16`, `T.bfloat16`, `T.float32`,
    `T.boolean`. Calling one converts a value: `T.float32(i)`."""
    name: str

    def mlir(self) -> ir.Type:
        """The MLIR element type of this dtype (ir.F16Type for float16, ...)."""
        return mlir_type(self.name)

    def __call__(self, value):
        return as_scalar(value, self.mlir())


int32, uint32, int64, uint64 = (ScalarType(n) for n in ("int32", "uint32", "int64", "uint64"))
float16, bfloat16, float32 = (ScalarType(n) for n in ("float16", "bfloat16", "float32"))
boolean = ScalarType("bool")


# ---------------------------------------------------------------------------- loops
@dataclass(frozen=True)
class SerialRange:
    """`for i in T.serial(n)`: a device loop (scf.for); scalars it reassigns are carried."""
    start: object
    stop: object
    step: object


@dataclass(frozen=True)
class UnrollRange:
    """`for i in T.unroll(n)`: unrolled while building (i is a Python int)."""
    start: int
    stop: int
    step: int

    def __iter__(self):
        return iter(range(self.start, self.stop, self.step))


def _range_args(args):
    if len(args) == 1:
        return 0, args[0], 1
    if len(args) == 2:
        return args[0], args[1], 1
    if len(args) == 3:
        return args
    raise KernelError("expected (stop), (start, stop) or (start, stop, step)")


# Unrolling builds every iteration's IR in Python: beyond this, building takes minutes.
MAX_UNROLL = 4096


def serial(*args) -> SerialRange:
    """A device loop over range(start, stop, step): `for k in T.serial(n)` becomes one scf.for.

    The bounds may be device values. Scalars the body reassigns (`phase ^= 1`) are carried
    from one iteration to the next and hold their last value after the loop.

        phase: T.int32 = 0
        for k in T.serial(K // 64):
            T.ptx.mbarrier.try_wait(full.ptr_to([0]), phase)
            phase ^= 1"""
    start, stop, step = _range_args(args)
    if isinstance(step, int) and step == 0:
        raise KernelError("T.serial step must not be 0 (the loop would never end)")
    return SerialRange(start, stop, step)


def unroll(*args) -> UnrollRange:
    """A loop unrolled while the kernel is built: `for s in T.unroll(4)`, `s` a Python int.

    Static integer bounds only, at most 4096 iterations (beyond that, use T.serial).

        for s in T.unroll(STAGES):
            T.ptx.mbarrier.init(full.ptr_to([s]), 1)"""
    start, stop, step = _range_args(args)
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, stop, step)):
        raise KernelError("T.unroll needs static integer bounds; use T.serial for a device loop")
    if step == 0:
        raise KernelError("T.unroll step must not be 0")
    trips = len(range(start, stop, step))
    if trips > MAX_UNROLL:
        raise KernelError(f"T.unroll({start}, {stop}, {step}) would unroll {trips} iterations, "
                          f"more than {MAX_UNROLL}: use T.serial for a device loop")
    return UnrollRange(start, stop, step)


def meta_var(value):
    """Identity: marks a value computed once while building (seed compatibility)."""
    return value


# ---------------------------------------------------------------------------- thread hierarchy
def _tid() -> Scalar:
    return Scalar(current().thread_id())


def _dims(dims, what: str) -> list[int]:
    dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    if not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims):
        raise KernelError(f"{what} takes positive static extents, got {dims}")
    return dims


MAX_GRID_DIMS = (2 ** 31 - 1, 65535, 65535)


def cta_id(dims):
    """The CTA coordinates in a grid of `dims` (1 to 3 extents); one value per dimension. An
    extent may be known only at launch (an expression of run-time dims, e.g.
    `T.ceildiv(M, 128)`): the runtime evaluates it at each call."""
    from mlir.dialects import gpu

    from tilemlir.dsl.dims import DimExpr
    given = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    dynamic = [d if isinstance(d, DimExpr) else None for d in given]
    dims = _dims([1 if d is not None else d0 for d, d0 in zip(dynamic, given)], "T.cta_id")
    for axis, (extent, limit) in enumerate(zip(dims, MAX_GRID_DIMS)):
        if extent > limit:
            raise KernelError(f"T.cta_id: a grid extent of {extent} along {'xyz'[axis]} exceeds "
                              f"the hardware limit {limit}")
    current().set_grid(dims, dynamic)
    ids = [Scalar(gpu.block_id(getattr(gpu.Dimension, "xyz"[i]))) for i in range(len(dims))]
    return ids[0] if len(ids) == 1 else tuple(ids)


def cluster_shape(dims, non_portable: bool = False) -> None:
    """Launches the CTAs in thread-block clusters of `dims` (1 to 3 extents dividing the
    grid's, sm_90 or newer): recorded as the gpu.func attribute `tile.cluster`, which the
    runtime launches with. At most 8 CTAs, or 16 with `non_portable=True` (CUDA's non-portable
    cluster sizes, which not every GPU can run)."""
    if not isinstance(non_portable, bool):
        raise KernelError(f"T.cluster_shape non_portable must be True or False, got "
                          f"{non_portable!r}")
    current().set_cluster(_dims(dims, "T.cluster_shape"), non_portable)


def min_ctas_per_sm(count: int) -> None:
    """Asks ptxas to fit `count` CTAs of the kernel on an SM at once (.minnctapersm): it caps
    each thread's registers at what that leaves (64 for 2 CTAs of 512 threads), spilling if it
    must. For kernels whose CTAs overlap one another's phases (one loads while another
    computes or stores) and whose shared memory already fits `count`."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 32:
        raise KernelError(f"T.min_ctas_per_sm takes an integer from 1 to 32, got {count!r}")
    current().min_ctas = count


def _level(level: str, dims, divisor: int, modulus: int | None) -> Scalar:
    (extent,) = _dims(dims, f"T.{level}_id")
    current().declare_threads(level, extent)
    if divisor % 32 == 0:               # a warp's or warpgroup's index: one value a warp
        v = current().warp_index(divisor)
    else:
        v = emit.div(current().thread_id(), divisor)
    return Scalar(emit.rem(v, modulus) if modulus else v)


def warpgroup_id(dims) -> Scalar:
    """This thread's warpgroup (128 threads) in a CTA of `dims` = [count] warpgroups.

    Declare the warps too: `T.warp_id_in_wg([4])`, and lanes with `T.lane_id([32])`.

        wg = T.warpgroup_id([3])          # a producer and two consumers: 384 threads

    Read from lane 0 by a warp-wide shuffle at the top of the kernel (ptxas then keeps code
    keyed on it uniform), so it may be taken anywhere, under a branch on the lane too."""
    return _level("warpgroup", dims, 128, None)


def warp_id_in_wg(dims) -> Scalar:
    """This thread's warp within its warpgroup: `T.warp_id_in_wg([4])` (always 4).

    Read from lane 0 by a warp-wide shuffle at the top of the kernel (ptxas then keeps code
    keyed on it uniform), so it may be taken anywhere, under a branch on the lane too."""
    (extent,) = _dims(dims, "T.warp_id_in_wg")
    if extent != 4:
        raise KernelError(f"a warpgroup has 4 warps, got T.warp_id_in_wg([{extent}])")
    return _level("warp_in_wg", dims, 32, 4)


def warp_id(dims) -> Scalar:
    """This thread's warp in a CTA of `dims` = [count] warps: `warp = T.warp_id([4])`.

    Read from lane 0 by a warp-wide shuffle at the top of the kernel (ptxas then keeps code
    keyed on it uniform), so it may be taken anywhere, under a branch on the lane too."""
    return _level("warp", dims, 32, None)


def lane_id(dims) -> Scalar:
    """This thread's lane in its warp: `lane = T.lane_id([32])` (always 32)."""
    return _level("lane", dims, 1, 32)


def thread_id(dims) -> Scalar:
    """This thread's index in a CTA of `dims` = [count] threads: `tid = T.thread_id([256])`.

    Declares the CTA's size directly (a kernel otherwise gets it from T.warp_id,
    T.warpgroup_id and T.warp_id_in_wg)."""
    (extent,) = _dims(dims, "T.thread_id")
    current().declare_threads("thread", extent)
    return _tid()


# ---------------------------------------------------------------------------- buffers
def _layout(shape, layout) -> TileLayout:
    layout = layout or row_major(shape)
    try:
        layout.checked_shape(shape)
    except Exception as err:
        raise KernelError(str(err)) from None
    return layout


def alloc_local(shape, dtype, layout: TileLayout | None = None) -> TileBuffer:
    """A register tile: each thread holds the elements `layout` gives it (default: all, row-major).

        acc = T.alloc_local((64, 256), "float32", layout=T.wgmma_accumulator_layout(64, 256))
        x = T.alloc_local((8,), "float32")        # eight registers of this thread"""
    shape = static_shape(shape, "alloc_local")
    t = buffer_type(shape, mlir_type(dtype), "local", _layout(shape, layout))
    return TileBuffer(ir.Operation.create("tile.alloc_local", results=[t]).result)


def alloc_buffer(shape, dtype, scope: str = "local", layout: TileLayout | None = None) -> TileBuffer:
    """Registers (TIRx's spelling): `T.alloc_buffer(shape, dtype, scope="local", layout=L)`.

    The same as T.alloc_local; shared memory comes from T.SMEMPool, tensor memory from
    T.decl_buffer."""
    if scope != "local":
        raise KernelError("alloc_buffer makes registers; shared memory comes from T.SMEMPool")
    return alloc_local(shape, dtype, layout)


def decl_buffer(shape, dtype, scope: str = "tmem", allocated_addr=None,
                layout: TileLayout | None = None) -> TileBuffer:
    """Tensor memory at `allocated_addr` (the i32 that tcgen05.alloc wrote)."""
    if scope != "tmem":
        raise KernelError("decl_buffer declares tensor memory (scope='tmem')")
    if allocated_addr is None:
        raise KernelError("decl_buffer needs allocated_addr=")
    addr = as_scalar(allocated_addr, emit.i32())
    shape = static_shape(shape, "decl_buffer")
    t = buffer_type(shape, mlir_type(dtype), "tmem", _layout(shape, layout))
    return TileBuffer(ir.Operation.create("tile.tmem", results=[t], operands=[addr.value]).result)


def address_of(buf: TileBuffer) -> ir.Value:
    """The address of a buffer's first element (`buf.ptr_to([0])`), e.g. for tcgen05.alloc."""
    return buf.ptr_to([0])


class SMEMPool:
    """The kernel's shared memory, handed out at fixed byte offsets (one pool per kernel).

    Each `alloc` aligns to the element size, or to the swizzle period for a swizzled layout;
    the kernel's dynamic shared memory is the pool's high-water mark.

        pool = T.SMEMPool()
        full = pool.alloc((STAGES,), "uint64", align=8)       # mbarriers
        pool.move_base_to(1024)
        As = pool.alloc((STAGES * 128, 64), "float16",
                        layout=T.mma_shared_layout("float16", "128B", (STAGES * 128, 64)))
        pool.commit()"""

    def __init__(self):
        builder = current()
        if builder.pool is not None:
            raise KernelError("a kernel has one shared-memory pool")
        builder.pool = self
        self.offset = 0
        self.committed = False
        self.size = 0

    def move_base_to(self, offset: int) -> None:
        """Moves the next free byte forward to `offset` (e.g. 1024, the 128B-swizzle atom)."""
        if offset < self.offset:
            raise KernelError(f"move_base_to({offset}) goes back over allocated bytes "
                              f"(next free byte is {self.offset})")
        self.offset = offset

    def alloc(self, shape, dtype, align: int | None = None,
              layout: TileLayout | None = None) -> TileBuffer:
        """A shared-memory tile of `shape` and `dtype` at the next free offset (aligned to `align`).

        `layout` is the tile's layout in memory (default row-major); a swizzled one aligns the
        tile to its swizzle period."""
        if self.committed:
            raise KernelError("the pool is committed: allocate before pool.commit()")
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        layout = _layout(shape, layout)
        elem = mlir_type(dtype)
        elem_bytes = max(element_bits(elem) // 8, 1)
        if align is None:
            # A swizzled tile must start on a swizzle period (the hardware swizzles absolute
            # addresses); anything else on its element size.
            align = elem_bytes
            if layout.swizzle is not None:
                align = max(align, layout.swizzle.period * elem_bytes)
        self.offset = -(-self.offset // align) * align
        t = buffer_type(shape, elem, "shared", layout)
        op = ir.Operation.create("tile.alloc_shared", results=[t], attributes={
            "offset": ir.IntegerAttr.get(emit.i64(), self.offset)})
        self.offset += max(layout.span("m"), 1) * elem_bytes
        self.size = max(self.size, self.offset)
        return TileBuffer(op.result)

    def commit(self) -> None:
        """Closes the pool: later allocations are an error."""
        self.committed = True
