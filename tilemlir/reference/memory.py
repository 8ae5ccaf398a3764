"""The interpreter's memory: typed storage, element types, and windows of tile buffers.

Storage is bytes, one row per holder: global and shared memory have one row that every thread
of the CTA sees, registers one row per thread (a thread reads only its own), tensor memory is
128 lanes x 512 columns of 32-bit cells. A `!tile.buf` value is resolved the way the lowerings
resolve it (tilemlir.ir.windows): the root buffer's storage, plus the window's layout over it
and the per-thread dynamic offsets of its slices. `gather` / `scatter` move a whole window
between storage and a numpy tile for the threads of one scope, each element to or from the
thread the layout names as its holder, so a wrong layout or a wrong index gives a wrong tile.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import lru_cache

import ml_dtypes
import numpy as np
from mlir import ir

from tilemlir.ir.dialect import DYNAMIC_OFFSET
from tilemlir.ir.types import F8_NUMPY_DTYPES, BufferType, parse_buffer_type
from tilemlir.ir.windows import BufferRef, resolve, view_offsets, window_ops


class InterpretError(RuntimeError):
    """The interpreter cannot run the kernel as written (an out-of-bounds access, a wait that
    would block forever, a collective op that some threads of its scope miss, an op it does
    not model); the message names the kernel's Python line."""


# ------------------------------------------------------------------------------ element types
@dataclass(frozen=True)
class Elem:
    """An element type: how it is stored (`storage`) and computed on (`compute`)."""
    name: str
    storage: np.dtype
    compute: np.dtype

    @property
    def itemsize(self) -> int:
        return self.storage.itemsize

    def to_compute(self, stored: np.ndarray) -> np.ndarray:
        if self.name == "bf16":
            return (stored.astype(np.uint32) << 16).view(np.float32)
        if self.name in F8_LIMITS:
            return stored.view(F8_NUMPY_DTYPES[self.name]).astype(np.float32)
        return stored.astype(self.compute, copy=False)

    def to_storage(self, values) -> np.ndarray:
        values = np.asarray(values)
        if self.name == "bf16":
            return bf16_bits(values)
        if self.name in F8_LIMITS:
            return f8_bits(values, self.name)
        if self.name == "i1":
            return (values != 0).astype(np.uint8)
        return values.astype(self.storage, copy=False)

    def round(self, values) -> np.ndarray:
        """`values` as this type computes them (bf16: rounded to bf16, held in float32)."""
        return self.to_compute(self.to_storage(values))


def bf16_bits(values) -> np.ndarray:
    """float values rounded to the nearest bfloat16 (ties to even), as uint16 bit patterns."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return np.where(nan, 0x7FC0, rounded).astype(np.uint16)


# The 8-bit floats' largest finite values (numpy has no 8-bit floats: ml_dtypes' stand in).
F8_LIMITS = {name: float(ml_dtypes.finfo(dtype).max)
             for name, dtype in F8_NUMPY_DTYPES.items()}


def f8_bits(values, name: str) -> np.ndarray:
    """float values rounded to the nearest `name` (f8E4M3FN / f8E5M2, ties to even) and
    saturated as cvt.rn.satfinite does (beyond the largest finite value, infinities included:
    that value with its sign; NaN stays NaN), as uint8 bit patterns."""
    limit = F8_LIMITS[name]
    clipped = np.clip(np.asarray(values, dtype=np.float32), -limit, limit)
    return clipped.astype(F8_NUMPY_DTYPES[name]).view(np.uint8)


_ELEMS = {
    "f16": Elem("f16", np.dtype(np.float16), np.dtype(np.float16)),
    "bf16": Elem("bf16", np.dtype(np.uint16), np.dtype(np.float32)),
    "f32": Elem("f32", np.dtype(np.float32), np.dtype(np.float32)),
    "f64": Elem("f64", np.dtype(np.float64), np.dtype(np.float64)),
    "i1": Elem("i1", np.dtype(np.uint8), np.dtype(np.bool_)),
    "f8E4M3FN": Elem("f8E4M3FN", np.dtype(np.uint8), np.dtype(np.float32)),
    "f8E5M2": Elem("f8E5M2", np.dtype(np.uint8), np.dtype(np.float32)),
    "i8": Elem("i8", np.dtype(np.int8), np.dtype(np.int8)),
    "i16": Elem("i16", np.dtype(np.int16), np.dtype(np.int16)),
    "i32": Elem("i32", np.dtype(np.int32), np.dtype(np.int32)),
    "i64": Elem("i64", np.dtype(np.int64), np.dtype(np.int64)),
    "index": Elem("index", np.dtype(np.int64), np.dtype(np.int64)),
}


def elem_of(t: ir.Type) -> Elem:
    name = str(t)
    if name not in _ELEMS:
        raise InterpretError(f"the interpreter has no element type {name}")
    return _ELEMS[name]


# ------------------------------------------------------------------------------ storage
# Thread axes as functions of the thread's index in the CTA (as the lowerings compute them).
THREAD_AXES = {"laneid": lambda t: t % 32, "wid_in_wg": lambda t: (t // 32) % 4,
               "tid_in_wg": lambda t: t % 128, "wgid": lambda t: t // 128,
               "warpid": lambda t: t // 32, "tx": lambda t: t}
TMEM_LANES, TMEM_COLUMNS = 128, 512


class Storage:
    """Bytes: `rows` rows (1: seen by every thread; one per thread: registers)."""

    def __init__(self, kind: str, nbytes: int, rows: int = 1, data: np.ndarray | None = None):
        self.kind = kind                       # "global", "shared", "local", "tmem"
        self.data = data if data is not None else np.zeros((rows, -(-nbytes // 8) * 8), np.uint8)

    @property
    def per_thread(self) -> bool:
        return self.kind == "local"

    def typed(self, elem: Elem) -> np.ndarray:
        """The rows as elements of `elem` (a view: writes land in the storage)."""
        return self.data.view(elem.storage)

    def row(self, thread: np.ndarray) -> np.ndarray:
        return thread if self.per_thread else np.zeros_like(thread)


@dataclass
class Root:
    """The storage of a root buffer (tile.global, tile.alloc_shared, tile.alloc_local,
    tile.tmem): where its element 0 is, and how big it is."""
    storage: Storage
    type: BufferType
    elem: Elem
    byte_base: int = 0                         # global, shared, registers
    tmem_address: np.ndarray | None = None     # per thread: lane << 16 | column
    elements: int = 0                          # elements the storage holds from byte_base


@dataclass
class Pointer:
    """An element address per thread (tile.addr): bytes into one storage."""
    storage: Storage
    byte_offset: np.ndarray
    limit: int = field(default=0)              # bytes of the storage the root may address

    def view(self, elem: Elem, threads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows, element indices) of `threads`' pointers, checked."""
        offsets = self.byte_offset[threads]
        if np.any(offsets % elem.itemsize):
            raise InterpretError(f"a misaligned {elem.name} access (byte offsets "
                                 f"{sorted(set(offsets.tolist()))[:4]})")
        if np.any(offsets < 0) or np.any(offsets + elem.itemsize > self.storage.data.shape[1]):
            raise InterpretError(f"an access out of its {self.storage.kind} storage (byte offsets "
                                 f"{sorted(set(offsets.tolist()))[:4]}, "
                                 f"{self.storage.data.shape[1]} bytes)")
        return self.storage.row(threads), offsets // elem.itemsize


# ------------------------------------------------------------------------------ windows
@lru_cache(maxsize=512)
def _axes(buffer: BufferType) -> dict[str, np.ndarray]:
    """Every element's value on each axis of the window's layout (memory before the swizzle),
    and the layout's replica shifts."""
    layout = buffer.layout
    values = dict(layout.replace(swizzle=None).evaluate_all(buffer.shape))
    values.setdefault("m", np.zeros(buffer.shape, np.int64))
    return values


def _replica_shifts(buffer: BufferType) -> list[dict[str, int]]:
    iters = buffer.layout.replica
    shifts = []
    for digits in itertools.product(*(range(it.extent) for it in iters)):
        shift: dict[str, int] = {}
        for it, d in zip(iters, digits):
            shift[it.axis] = shift.get(it.axis, 0) + d * it.stride
        shifts.append(shift)
    return shifts


def _decompose(src: BufferType, dim: int, index: np.ndarray, axis: str) -> np.ndarray:
    """What a dynamic slice offset `index` (per thread) along `dim` of `src` adds on `axis`
    (lowering/addresses.py: dynamic_offset, vectorised over threads): the outermost digit is
    not reduced modulo its extent, so that an offset below 0 (a masked window that starts
    before its buffer) stays below it."""
    group = src.layout.replace(offset={}).group(src.shape)[dim]
    total = np.zeros_like(index)
    inner = 1
    for k, it in enumerate(reversed(group)):
        digit = index // inner
        if k < len(group) - 1:
            digit = digit % it.extent
        if it.axis == axis:
            total = total + digit * it.stride
        inner *= it.extent
    return total


@dataclass
class Window:
    """A buffer value resolved for the interpreter: its root, its own type, and per thread
    the offsets its dynamic slices (and the views above them) add on each axis."""
    ref: BufferRef
    root: Root
    base: dict[str, np.ndarray]                # axis -> per-thread offset
    # per dim, the per-thread start of a window that tile.slice ops alone cut from a root of
    # its rank (a TMA box of a global buffer): where it starts even past the buffer's edge
    starts: list[np.ndarray] | None = None

    @property
    def type(self) -> BufferType:
        return self.ref.type

    @property
    def scope(self) -> str:
        return self.ref.scope

    def axis_base(self, axis: str) -> np.ndarray:
        return self.base.get(axis, np.zeros_like(self.base["m"]))


def window(value: ir.Value, roots: dict, env: dict, threads: int) -> Window:
    ref = resolve(value)
    root = roots.get(ref.root)
    if root is None:
        raise InterpretError("a buffer whose root op has not run")
    base = {"m": np.full(threads, ref.static_base, np.int64)}
    for axis, off in view_offsets(ref).items():
        if axis != "m":
            base[axis] = np.full(threads, off, np.int64)
    for src, dim, index in ref.dynamic:
        per_thread = np.asarray(env[index], np.int64)
        for axis in {"m"} | {it.axis for it in src.layout.shard}:
            base[axis] = base.get(axis, np.zeros(threads, np.int64)) + \
                _decompose(src, dim, per_thread, axis)
    return Window(ref, root, base, _slice_starts(value, ref, env, threads))


def _slice_starts(value: ir.Value, ref: BufferRef, env: dict, threads: int):
    """Window.starts: None unless the window is tile.slice ops alone, each keeping the root's
    rank."""
    rank = len(parse_buffer_type(ref.root.type).shape)
    if len(ref.type.shape) != rank:
        return None
    starts = [np.zeros(threads, np.int64) for _ in range(rank)]
    for op in window_ops(value):
        if op.name != "tile.slice" or len(parse_buffer_type(op.results[0].type).shape) != rank:
            return None
        dynamic = iter(list(op.operands)[1:])
        for d, offset in enumerate(ir.DenseI64ArrayAttr(op.attributes["static_offsets"])):
            starts[d] = starts[d] + (np.asarray(env[next(dynamic)], np.int64)
                                     if offset == DYNAMIC_OFFSET else offset)
    return starts


def _uniform(values: np.ndarray, what: str) -> int:
    first = values[0]
    if np.any(values != first):
        raise InterpretError(f"{what} differs across the threads executing the op "
                             f"({sorted(set(values.tolist()))[:4]}...): a cooperative primitive "
                             f"needs one window for its whole scope")
    return int(first)


@dataclass
class Placement:
    """Where each element of a window lives for one group of threads: storage rows and
    element indices (registers and memory), or TMEM lanes and columns, and which elements
    the group holds at all."""
    rows: np.ndarray
    index: np.ndarray
    held: np.ndarray                           # bool, the window's shape


def _holders(w: Window, group: np.ndarray, axes: dict, shift: dict) -> tuple[np.ndarray, np.ndarray]:
    """The thread of `group` holding each element of a register window (and a held mask)."""
    thread_axes = [a for a in THREAD_AXES if a in axes]
    shape = w.type.shape
    if not thread_axes:
        if len(group) != 1:
            raise InterpretError(f"a register buffer with layout {w.type.layout} is not spread "
                                 f"over threads, but {len(group)} threads execute the op: each "
                                 f"would use its own copy")
        return np.full(shape, group[0]), np.ones(shape, bool)
    # Each thread's and each element's values on the thread axes, numbered in one mixed radix:
    # the element's holder is the thread of the same number.
    thread_keys = np.stack([THREAD_AXES[a](group) for a in thread_axes])
    element_keys = np.stack([np.broadcast_to(axes[a] + shift.get(a, 0) + w.axis_base(a)[group[0]],
                                             shape).reshape(-1) for a in thread_axes])
    if element_keys.min(initial=0) < 0:
        raise InterpretError(f"a register window of {w.type.describe()} names a negative thread")
    radix = np.maximum(thread_keys.max(axis=1), element_keys.max(axis=1)) + 1
    thread_codes = np.ravel_multi_index(tuple(thread_keys), radix)
    if len(np.unique(thread_codes)) != len(group):
        raise InterpretError(f"the layout {w.type.layout} names threads by "
                             f"{', '.join(thread_axes)} only, which does not tell apart the "
                             f"{len(group)} threads executing the op")
    lookup = np.full(int(np.prod(radix)), -1, np.int64)
    lookup[thread_codes] = group
    holder = lookup[np.ravel_multi_index(tuple(element_keys), radix)].reshape(shape)
    return np.where(holder < 0, group[0], holder), holder >= 0


def place(w: Window, group: np.ndarray, shift: dict | None = None,
          valid: np.ndarray | None = None) -> Placement:
    """The placement of every element of `w` for the threads `group` (one replica: `shift`);
    in memory, only the elements `valid` selects (a masked copy's window may hang past the
    buffer's edge)."""
    axes = _axes(w.type)
    shift = shift or {}
    shape = w.type.shape
    if w.scope == "tmem":
        address = _uniform(w.root.tmem_address[group], "the tensor-memory address")
        lane = (address >> 16) + axes.get("TLane", 0) + _uniform(
            w.axis_base("TLane")[group], "the TMEM lane")
        col = (address & 0xFFFF) + axes.get("TCol", 0) + _uniform(
            w.axis_base("TCol")[group], "the TMEM column")
        lane, col = np.broadcast_to(lane, shape), np.broadcast_to(col, shape)
        if np.any(lane >= TMEM_LANES) or np.any(col >= TMEM_COLUMNS):
            raise InterpretError(f"a tensor-memory window reaches lane {int(lane.max())}, column "
                                 f"{int(col.max())} ({TMEM_LANES} x {TMEM_COLUMNS})")
        return Placement(lane, col, np.ones(shape, bool))
    if w.scope == "local":
        holder, held = _holders(w, group, axes, shift)
        linear = w.base["m"][holder] + axes["m"] + shift.get("m", 0)
    else:
        holder = np.zeros(shape, np.int64)
        held = np.ones(shape, bool) if valid is None else np.asarray(valid, bool)
        linear = _uniform(w.base["m"][group], f"the {w.scope} window's offset") + axes["m"] \
            + shift.get("m", 0)
    sw = w.type.layout.swizzle
    m = sw.apply(linear) if sw is not None else linear
    elem = w.root.elem
    index = w.root.byte_base // elem.itemsize + m
    limit = w.root.byte_base // elem.itemsize + w.root.elements
    inside = (m >= 0) & (index < limit)
    if not np.all(inside | ~held):
        raise InterpretError(f"a {w.scope} window of {w.type.describe()} reaches element "
                             f"{int(m[held].max())} of a buffer of {w.root.elements}")
    rows = w.root.storage.row(holder)
    return Placement(rows, np.where(held, index, 0), held)


def inside_edges(w: Window, group: np.ndarray) -> np.ndarray | None:
    """For a window of a global buffer: which of its elements lie inside the buffer's edges
    (a TMA box may hang past them: its loads read zeros there, its stores skip them). None when
    every element does. The buffer's leading extent is what its storage holds (a run-time
    extent's type only bounds it)."""
    if w.scope != "global" or len(w.type.shape) != len(w.root.type.shape):
        return None
    root_shape = list(w.root.type.shape)
    inner = int(np.prod(root_shape[1:], dtype=np.int64))
    root_shape[0] = w.root.elements // inner if inner else 0
    if w.starts is not None:            # a box may start past an edge: none of it is inside
        coords = [_uniform(s[group], "the global window's offset") for s in w.starts]
    else:
        start = _uniform(w.base["m"][group], "the global window's offset")
        coords, rest = [], int(start)
        for d in range(len(root_shape)):
            stride = int(np.prod(root_shape[d + 1:], dtype=np.int64))
            coords.append(rest // stride if d == 0 else rest // stride % root_shape[d])
            rest = rest % stride if d else rest - coords[0] * stride
    inside = np.ones(w.type.shape, bool)
    for index, first, extent in zip(np.indices(w.type.shape), coords, root_shape):
        inside &= (first + index) < extent
    return None if inside.all() else inside


def gather(w: Window, group: np.ndarray,
           valid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(the window's elements as its compute type, the held mask) for the threads `group`."""
    p = place(w, group, valid=valid)
    if w.scope == "tmem":
        cells = w.root.storage.data.view(np.float32 if w.root.elem.name == "f32" else np.uint32)
        return cells[p.rows, p.index].astype(w.root.elem.compute), p.held
    stored = w.root.storage.typed(w.root.elem)[p.rows, p.index]
    return w.root.elem.to_compute(stored), p.held


def scatter(w: Window, group: np.ndarray, values: np.ndarray, where: np.ndarray | None = None,
            valid: np.ndarray | None = None) -> None:
    """Writes `values` (the window's shape) into the window for the threads `group`: only the
    elements the group holds (and `where` selects), to every replica of each."""
    values = np.broadcast_to(np.asarray(values), w.type.shape)
    for shift in (_replica_shifts(w.type) if w.scope == "local" else [{}]):
        p = place(w, group, shift, valid)
        mask = p.held if where is None else p.held & where
        if w.scope == "tmem":
            if w.root.elem.name != "f32":
                raise InterpretError("the interpreter keeps only f32 in tensor memory")
            w.root.storage.data.view(np.float32)[p.rows[mask], p.index[mask]] = \
                values[mask].astype(np.float32)
            continue
        w.root.storage.typed(w.root.elem)[p.rows[mask], p.index[mask]] = \
            w.root.elem.to_storage(values[mask])


buffer_type_of = parse_buffer_type


# ------------------------------------------------------------------------------ tiles of a scope
@dataclass
class Tile:
    """An operand as the threads of one scope see it: `values` is [1, *shape] (one tile for the
    group: memory, or registers spread over the group's threads) or [threads, *shape] (each
    thread's own copy: registers whose layout names no thread); `held` the elements the group
    holds (a thread-scope op on a spread-out register tile holds only its own)."""
    values: np.ndarray
    held: np.ndarray

    def aligned(self, ndim: int) -> "Tile":
        """Dims of extent 1 put in front, so that it broadcasts against an `ndim`-d tile."""
        extra = ndim - (self.values.ndim - 1)
        if extra <= 0:
            return self
        values = self.values.reshape(self.values.shape[:1] + (1,) * extra + self.values.shape[1:])
        return Tile(values, self.held.reshape((1,) * extra + self.held.shape))


def _private(w: Window, group: np.ndarray) -> bool:
    return w.scope == "local" and len(group) > 1 and \
        not any(a in THREAD_AXES for a in w.type.layout.axes())


def _private_places(w: Window, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, element indices) of each thread's own copy of a register window: [threads, *shape]."""
    shape = w.type.shape
    lead = (-1,) + (1,) * len(shape)
    m = w.base["m"][group].reshape(lead) + _axes(w.type)["m"][None]
    if np.any(m < 0) or np.any(m >= w.root.elements):
        raise InterpretError(f"a register window of {w.type.describe()} reaches slot "
                             f"{int(m.max())} of {w.root.elements}")
    return np.broadcast_to(group.reshape(lead), m.shape), m


def read(w: Window, group: np.ndarray, valid: np.ndarray | None = None) -> Tile:
    if _private(w, group):
        rows, index = _private_places(w, group)
        stored = w.root.storage.typed(w.root.elem)[rows, index]
        return Tile(w.root.elem.to_compute(stored), np.ones(w.type.shape, bool))
    values, held = gather(w, group, valid)
    return Tile(values[None], held)


def write(w: Window, group: np.ndarray, values: np.ndarray, where: np.ndarray | None = None,
          valid: np.ndarray | None = None) -> None:
    """Writes `values` ([1 or threads, *shape], broadcastable) into the window for the threads
    `group`: each thread's copy of a private register window gets its row, an element of a
    spread-out register window the row of the thread holding it; memory takes the one value
    all threads agree on."""
    shape = w.type.shape
    values = np.asarray(values)
    where = np.ones(shape, bool) if where is None else np.broadcast_to(where, shape)
    if _private(w, group):
        rows, index = _private_places(w, group)
        values = np.broadcast_to(values, (len(group),) + shape)
        mask = np.broadcast_to(where, values.shape)
        w.root.storage.typed(w.root.elem)[rows[mask], index[mask]] = \
            w.root.elem.to_storage(values[mask])
        return
    values = np.broadcast_to(values, values.shape[:1] + shape)
    if values.shape[0] == 1:
        scatter(w, group, values[0], where, valid)
        return
    if w.scope != "local":
        if np.any(values != values[:1]):
            raise InterpretError(f"the threads of the scope hold different values for the "
                                 f"{w.scope} tile they all write ({w.type.describe()})")
        scatter(w, group, values[0], where, valid)
        return
    for shift in _replica_shifts(w.type):
        p = place(w, group, shift)
        mask = p.held & where
        position = (p.rows - group[0])[mask]
        flat = np.flatnonzero(mask.reshape(-1))
        w.root.storage.typed(w.root.elem)[p.rows[mask], p.index[mask]] = w.root.elem.to_storage(
            values.reshape(values.shape[0], -1)[position, flat])
