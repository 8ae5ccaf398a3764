"""Buffers in the kernel language: tiles in a memory scope with a layout.

    A[m:m + 128, k:k + 64]          a window (tile.slice; dynamic starts allowed)
    D[row, n:n + 128]               an integer index drops that dimension
    buf.view(128, 64, layout=L)     the same storage seen with another shape and layout
    regs.local(8)                   a thread's own register slots, addressable one by one
    tmem_addr[0], regs[s] = v       element loads and stores (layouts without thread axes)
    bar.ptr_to([0])                 the address of an element (for mbarriers, TMEM allocation)
"""

from __future__ import annotations

import functools

from mlir import ir

from tilemlir.dsl.builder import current
from tilemlir.dsl.values import KernelError, Scalar, index_of, static_difference
from tilemlir.ir import emit
from tilemlir.ir.dialect import DYNAMIC_OFFSET, build
from tilemlir.ir.types import BufferType, parse_buffer_type
from tilemlir.layout import S, Iter, LayoutError, TileLayout

THREAD_AXES = ("laneid", "warpid", "wid_in_wg", "tid_in_wg", "wgid", "tx")
POINTER_SPACE = {"global": 1, "shared": 3, "local": 0}


def row_major(shape) -> TileLayout:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return TileLayout(S[tuple(shape):tuple(reversed(strides))])


# Layouts are immutable and every build of a kernel slices the same tiles the same way, so the
# layout arithmetic of windows is cached (a tenth to a sixth of a build's time).
@functools.lru_cache(maxsize=4096)
def shaped(layout: TileLayout, shape: tuple[int, ...]) -> TileLayout:
    """The same layout with its iterators split along the dims of `shape` (readable, and what
    structural comparisons with layout constructors expect)."""
    groups = layout.canonicalize().group(tuple(shape))
    return layout.replace(shard=tuple(it for g in groups for it in g))


@functools.lru_cache(maxsize=4096)
def _sliced(layout: TileLayout, shape: tuple[int, ...], region: tuple) -> TileLayout:
    return layout.slice(shape, region)


def _covering(layout: TileLayout, shape: tuple[int, ...], region: tuple):
    """(layout, shape, region) to slice: a region hanging past the edges of a strided layout
    (one memory iterator per dim, as a global buffer's) is sliced out of the same strides
    extended far enough to hold it."""
    if all(stop <= extent for (_, stop), extent in zip(region, shape)):
        return layout, shape, region
    shard = layout.shard
    if layout.swizzle is not None or layout.replica or len(shard) != len(shape) or \
            any(it.axis != "m" or it.extent != extent for it, extent in zip(shard, shape)):
        return layout, shape, region                    # slice() explains the refusal
    covering = tuple(max(extent, stop) for (_, stop), extent in zip(region, shape))
    strides = tuple(it.stride for it in shard)
    return TileLayout(S[covering:strides]).replace(offset=dict(layout.offset)), covering, region


@functools.lru_cache(maxsize=4096)
def _dim_iterators(layout: TileLayout, shape: tuple[int, ...]) -> tuple[tuple[Iter, ...], ...]:
    return tuple(map(tuple, layout.group(shape)))


class TileBuffer:
    """A tile of the kernel being built: a shape, an element type, a memory and a layout.

    Parameters (`T.Buffer`), `pool.alloc`, `T.alloc_local` and `T.decl_buffer` make them;
    indexing makes windows and element accesses:

        A[m:m + 128, k:k + 64]          a window (tile.slice; starts may be device values)
        D[row, n:n + 128]               an integer index drops that dimension
        x[i], regs[s] = v               element loads and stores (layouts without thread axes)"""

    def __init__(self, value: ir.Value, type_: BufferType | None = None):
        """`type_`: the BufferType `value`'s type was built from, when the caller has it."""
        self.value = value
        self.type: BufferType = type_ or parse_buffer_type(value.type)

    # ------------------------------------------------------------------ description
    @property
    def shape(self) -> tuple[int, ...]:
        """The tile's shape, a tuple of Python ints."""
        return self.type.shape

    @property
    def dtype(self) -> ir.Type:
        """The element type, an MLIR type (f16, bf16, f32, i32, ...)."""
        return self.type.elem

    @property
    def scope(self) -> str:
        """Where the tile lives: "global", "shared", "local" (registers) or "tmem"."""
        return self.type.scope

    @property
    def layout(self) -> TileLayout:
        """The tile's TileLayout: where each element lives (see tilemlir.layout)."""
        return self.type.layout

    def __repr__(self) -> str:
        return f"Buffer({self.type.describe()}, {self.layout})"

    # ------------------------------------------------------------------ windows
    def __getitem__(self, key):
        items = self._items(key)
        if all(not isinstance(k, slice) for k in items):
            return self._load(items)
        return self._slice(items)

    def __setitem__(self, key, value):
        items = self._items(key)
        if any(isinstance(k, slice) for k in items):
            raise KernelError("assigning to a slice is not supported: use Tx.copy or Tx.fill")
        self._store(items, value)

    def _items(self, key) -> list:
        items = list(key) if isinstance(key, tuple) else [key]
        if len(items) > len(self.shape):
            raise KernelError(f"{len(items)} indices for a {len(self.shape)}-d buffer "
                              f"{list(self.shape)}")
        return items + [slice(None)] * (len(self.shape) - len(items))

    def _slice(self, items) -> "TileBuffer":
        starts, sizes, keep, dynamic = [], [], [], []
        for dim, (item, extent) in enumerate(zip(items, self.shape)):
            if isinstance(item, slice):
                if item.step is not None:
                    raise KernelError("slices with a step are not supported")
                start = 0 if item.start is None else item.start
                stop = extent if item.stop is None else item.stop
                size = static_difference(stop, start)
                if size is None:
                    raise KernelError(f"the extent of slice {dim} must be static (write "
                                      f"a:a + n), got a start and stop that differ by a "
                                      f"device value")
                keep.append(True)
            else:
                start, size = item, 1
                keep.append(False)
            if isinstance(start, int):
                # A window of a global buffer may hang past its edge (a ragged tile): only
                # masked copies (bounds=...) and TMA, which reads zeros and clips stores past
                # the edges, accept such a window (tile-dispatch says so of the others).
                overhang = self.scope == "global" and start < extent
                if start < 0 or size < 1 or (start + size > extent and not overhang):
                    raise KernelError(f"slice [{start}:{start + size}] is out of dim {dim} "
                                      f"(size {extent})")
            starts.append(start)
            sizes.append(size)
        static = [s if isinstance(s, int) else 0 for s in starts]
        region = [(s, s + n) for s, n in zip(static, sizes)]
        if all(keep) and region == [(0, n) for n in self.shape]:
            return self                                   # A[:, :] is A itself
        try:
            layout = _sliced(*_covering(self.layout, self.shape, tuple(region)))
        except LayoutError as err:
            raise KernelError(f"cannot slice {self!r} at {region}: {err}") from None
        for dim, s in enumerate(starts):
            if not isinstance(s, int):
                self._check_dynamic_dim(dim, sizes[dim])
                dynamic.append(index_of(s))
        shape = tuple(n for n, k in zip(sizes, keep) if k)
        window = BufferType(shape, self.dtype, self.scope, shaped(layout, shape))
        offsets = ir.DenseI64ArrayAttr.get([s if isinstance(s, int) else DYNAMIC_OFFSET
                                            for s in starts])
        op = build("slice", {"source": self.value, "offsets": dynamic},
                   {"static_offsets": offsets}, [window.mlir_type()])
        return TileBuffer(op.result, window)

    def _check_dynamic_dim(self, dim: int, size: int) -> None:
        """A dynamic start must only move along memory, in whole inner iterators."""
        # (iterators of extent 1 cover nothing; grouping may put one in a neighbouring dim)
        group = [it for it in _dim_iterators(self.layout, self.shape)[dim] if it.extent > 1]
        if any(it.axis != "m" for it in group):
            raise KernelError(f"dim {dim} of {self!r} is spread over threads: it can only be "
                              f"sliced at static offsets")
        inner = 1
        for it in reversed(group):
            if inner >= size:
                break
            inner *= it.extent
        if inner != size and len(group) > 1:
            raise KernelError(f"a dynamic slice of size {size} along dim {dim} must cover whole "
                              f"iterators of the layout {self.layout}")

    def view(self, *shape, layout: TileLayout | None = None) -> "TileBuffer":
        """This storage seen with `shape` and `layout` (default: row-major, per thread)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        layout = layout or row_major(shape)
        try:
            layout.checked_shape(shape)
        except LayoutError as err:
            raise KernelError(str(err)) from None
        seen = BufferType(tuple(int(d) for d in shape), self.dtype, self.scope, layout)
        return TileBuffer(build("view", {"source": self.value}, results=[seen.mlir_type()]).result,
                          seen)

    def local(self, count: int | None = None) -> "TileBuffer":
        """The calling thread's register slots of a distributed register buffer, 1-d."""
        if self.scope != "local":
            raise KernelError(".local() is for register buffers")
        span = max(self.layout.span("m"), 1)
        count = span if count is None else count
        if count > span:
            raise KernelError(f"the buffer has {span} register slots per thread, asked for {count}")
        return self.view(count, layout=TileLayout(S[count:1]))

    # ------------------------------------------------------------------ elements
    def _element_pointer(self, items) -> ir.Value:
        if self.scope == "tmem":
            raise KernelError("tensor memory has no element access; copy it to registers")
        if any(it.axis in THREAD_AXES for it in self.layout.shard):
            raise KernelError(f"{self!r} is spread over threads: address its elements through "
                              f".local(n) (the calling thread's slots)")
        coord = [index_of(i) for i in items]
        for dim, (c, extent) in enumerate(zip(coord, self.shape)):
            if isinstance(c, int) and not 0 <= c < extent:
                raise KernelError(f"index {c} is out of dim {dim} (size {extent})")
        return self._address(coord, POINTER_SPACE[self.scope])

    def _address(self, coord: list, space: int) -> ir.Value:
        """tile.addr: the address of the element at `coord`, resolved by tile-materialize."""
        return build("addr", {"source": self.value, "indices": [emit.as_index(c) for c in coord]},
                     results=[emit.ptr(space)]).result

    def _load(self, items) -> Scalar:
        return Scalar(emit.load(self.dtype, self._element_pointer(items)))

    def _store(self, items, value) -> None:
        from tilemlir.dsl.values import as_scalar
        v = as_scalar(value, self.dtype)
        emit.store(v.value, self._element_pointer(items))

    def ptr_to(self, index) -> ir.Value:
        """The address of one element (an !llvm.ptr in this buffer's address space)."""
        coord = [index_of(i) for i in (index if isinstance(index, (list, tuple)) else [index])]
        coord += [0] * (len(self.shape) - len(coord))
        space = POINTER_SPACE.get(self.scope)
        if space is None:
            raise KernelError("tensor memory has no pointers")
        current()
        return self._address(coord, space)
