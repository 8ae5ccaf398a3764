"""What a tile.reduce's layouts say about who combines what (shared by its variants).

dst has src's shape with extent 1 at `axis`; each dst element is the reduction of one *row*
of src (the elements along `axis`). From the register layouts, for the threads of the scope:

- which src slots each thread folds into each of its dst slots (the same for every thread,
  else the threads would need different code);
- whether one thread holds whole rows (variant `thread`), or a row is spread over lanes whose
  indices differ in a fixed set of bits (butterfly shuffles over those bits: `warp_shuffle`),
  and over how many warps (partials through shared memory: `cross_warp`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith

from tilemlir.dispatch.registry import Reject, predicate
from tilemlir.ir import emit, windows
from tilemlir.ir.types import BufferType
from tilemlir.layout import LayoutError
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import fragments
from tilemlir.lowering.cuda.predicates import eight_bit_floats


@dataclass(frozen=True)
class Rows:
    threads: int                          # threads the tables cover (the scope's)
    dst_slots: tuple[int, ...]
    src_slots: tuple[tuple[int, ...], ...]  # per dst slot: the src slots each thread folds in
    whole_rows: bool                      # every thread holds every element of its rows
    lane_mask: int                        # lane-index bits a row is spread over (0: none)
    warps: int                            # warps a row is spread over
    owner: np.ndarray | None              # (threads, dst slots): dst flat index each holds
    warp_rank: np.ndarray | None          # (threads, dst slots): rank of t's warp in its row's
    problem: str | None                   # why the rows cannot be combined across threads


def _threads(ctx, src: BufferType) -> int:
    """The scope's threads; at thread scope, those the layout names (each folds its own)."""
    if ctx.scope != "thread":
        n = ctx.scope_threads()
        if n is None:
            raise Reject(f"the extent of scope '{ctx.scope}' is unknown (no known_block_size)")
        return n
    tm = fragments.thread_map(src)
    return (32 if tm.lanes_named else 1) * (int(tm.warp.max()) + 1 if tm.warps_named else 1)


def rows(ctx) -> Rows:
    axis = ctx.attr("axis")
    dst, src = ctx.buffer("dst"), ctx.buffer("src")
    if not 0 <= axis < len(src.shape):
        raise Reject(f"axis {axis} is out of src's {len(src.shape)} dims")
    want = tuple(1 if i == axis else e for i, e in enumerate(src.shape))
    if tuple(dst.shape) != want:
        raise Reject(f"dst is {list(dst.shape)}; reducing src {list(src.shape)} over axis "
                     f"{axis} gives {list(want)}")
    for name in ("dst", "src"):
        fragments.register_ref(ctx, name)
    return _rows(dst, src, axis, _threads(ctx, src))


@functools.lru_cache(maxsize=256)
def _rows(dst: BufferType, src: BufferType, axis: int, threads: int) -> Rows:
    try:
        S = fragments.slot_table(src, threads)
        D = fragments.slot_table(dst, threads)
    except LayoutError as err:
        raise Reject(str(err))
    if (S < 0).all(axis=0).all() or (D < 0).all():
        raise Reject("the layouts give the scope's threads no elements")
    held_d = D >= 0
    if (held_d != held_d[0]).any():
        raise Reject("the threads keep different dst register slots (a partial layout)")
    d_slots = np.flatnonzero(held_d[0])
    missing = np.setdiff1d(np.arange(src.size), S[S >= 0])
    if len(missing):
        coord = list(np.unravel_index(int(missing[0]), src.shape))
        raise Reject(f"src{[int(c) for c in coord]} is held by no thread of the scope")
    # the dst element (flat) each src element reduces into
    coords = list(np.unravel_index(np.arange(src.size), src.shape))
    coords[axis] = np.zeros_like(coords[axis])
    into = np.ravel_multi_index(coords, dst.shape)
    key = np.where(S >= 0, into[np.maximum(S, 0)], -1)               # (threads, src slots)
    owner = D[:, d_slots]                                            # (threads, dst slots)
    folds = key[:, None, :] == owner[:, :, None]                     # (threads, d, s)
    if (folds != folds[0]).any():
        t = int(np.argwhere((folds != folds[0]).any(axis=(1, 2)))[0][0])
        raise Reject(f"thread {t} folds other src slots into its dst slots than thread 0: the "
                     f"threads would need different code")
    stray = (key >= 0) & ~folds.any(axis=1)
    if stray.any():
        t, s = (int(i) for i in np.argwhere(stray)[0])
        raise Reject(f"thread {t} holds src slot {s}, whose row's result goes to a dst element "
                     f"it does not hold")
    src_slots = tuple(tuple(int(s) for s in np.flatnonzero(folds[0, i]))
                      for i in range(len(d_slots)))
    extent = src.shape[axis]
    whole = all(len(s) == extent for s in src_slots)
    common = dict(threads=threads, dst_slots=tuple(int(d) for d in d_slots),
                  src_slots=src_slots, whole_rows=whole)
    if whole:
        return Rows(**common, lane_mask=0, warps=1, owner=None, warp_rank=None, problem=None)
    problem, mask, warps, rank = _spread(S, into, owner, threads, dst.size)
    return Rows(**common, lane_mask=mask, warps=warps, owner=owner, warp_rank=rank,
                problem=problem)


def _spread(S, into, owner, threads, dst_size):
    """(problem, lane mask, warps per row, warp rank per (thread, dst slot)) of rows spread
    over threads."""
    counts = np.bincount(S[S >= 0], minlength=len(into))
    if (counts > 1).any():
        return ("src elements are held by several threads (a layout without a lane or warp "
                "axis where the row is spread): combining would count them twice", 0, 1, None)
    t_of = np.zeros(len(into), np.int64)
    t_of[S[S >= 0]] = np.nonzero(S >= 0)[0]
    mask, warps, contributors, warp_sets = None, None, {}, {}
    for f in range(dst_size):
        ts = np.unique(t_of[into == f])
        lanes, wps = np.unique(ts % 32), np.unique(ts // 32)
        if len(ts) != len(lanes) * len(wps):
            return (f"the threads holding row {f} are not the same lanes in each of their warps",
                    0, 1, None)
        m = int(np.bitwise_or.reduce(lanes ^ lanes[0]))
        if len(lanes) != 1 << bin(m).count("1"):
            return (f"the lanes holding row {f} ({lanes.tolist()}) do not differ in a fixed set "
                    f"of lane-index bits, so butterfly shuffles cannot combine them", 0, 1, None)
        if (mask is not None and m != mask) or (warps is not None and len(wps) != warps):
            return ("rows are spread over different lane bits or numbers of warps", 0, 1, None)
        mask, warps = m, len(wps)
        contributors[f], warp_sets[f] = ts, wps
    rank = np.zeros(owner.shape, np.int64)
    for t in range(threads):
        for i, f in enumerate(owner[t]):
            if t not in contributors[int(f)]:
                return (f"thread {t} holds dst element {int(f)} but none of its row", 0, 1, None)
            rank[t, i] = int(np.searchsorted(warp_sets[int(f)], t // 32))
    return None, mask, warps, rank


# ------------------------------------------------------------------------------ predicates
def _cached(ctx) -> Rows | None:
    """rows(ctx) once per op; None when it rejected (the `rows` predicate says why)."""
    if "_rows" not in ctx.__dict__:
        try:
            ctx.__dict__["_rows"] = rows(ctx)
        except Reject as rejection:
            ctx.__dict__["_rows"], ctx.__dict__["_rows_problem"] = None, rejection.reason
    return ctx.__dict__["_rows"]


@predicate("register_tiles")
def register_tiles(ctx):
    wrong = [f"{n} is in {ctx.buffer(n).scope}" for n in ("dst", "src")
             if ctx.buffer(n).scope != "local"]
    if wrong:
        return "reduces register tiles (copy memory into registers first); " + ", ".join(wrong)
    return None


@predicate("rows")
def rows_known(ctx):
    """The shapes and layouts say which thread folds what (see `rows`)."""
    if ctx.buffer("dst").scope != "local" or ctx.buffer("src").scope != "local":
        return None                      # register_tiles says why
    return None if _cached(ctx) is not None else ctx.__dict__["_rows_problem"]


@predicate("types")
def types(ctx):
    dst, src = ctx.buffer("dst").elem, ctx.buffer("src").elem
    narrow = eight_bit_floats(ctx)
    if narrow:
        return narrow
    kinds = [isinstance(t, ir.FloatType) for t in (dst, src)]
    ints = [isinstance(t, ir.IntegerType) and ir.IntegerType(t).width > 1 for t in (dst, src)]
    if all(kinds) or all(ints):
        if ctx.attr("fn") == "sum" and _width(dst) < _width(src):
            return f"sums {src} into {dst}, a narrower type (accumulate in {src} or wider)"
        return None
    return f"reduces floats into floats or integers into integers; dst holds {dst}, src {src}"


def _width(t: ir.Type) -> int:
    return ir.FloatType(t).width if isinstance(t, ir.FloatType) else ir.IntegerType(t).width


# ------------------------------------------------------------------------------ emitting
def combine(fn: str, a: ir.Value, b: ir.Value) -> ir.Value:
    if isinstance(a.type, ir.FloatType):
        return {"sum": arith.addf, "max": arith.maximumf, "min": arith.minimumf}[fn](a, b)
    return {"sum": arith.addi, "max": arith.maxsi, "min": arith.minsi}[fn](a, b)


def tree(fn: str, values: list[ir.Value]) -> ir.Value:
    """Pairwise: log2(n) dependent steps instead of n (and a smaller rounding error)."""
    while len(values) > 1:
        values = [combine(fn, values[i], values[i + 1]) if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]


def _widen(value: ir.Value, to: ir.Type) -> ir.Value:
    if value.type == to:
        return value
    if isinstance(to, ir.FloatType):
        return arith.extf(to, value)
    return arith.extsi(to, value)


def fold_own(ctx, r: Rows) -> list[ir.Value]:
    """Each thread folds its own src slots: one value (dst's type) per dst slot."""
    src = windows.resolve(ctx.operand("src"))
    base = addresses.storage(src)
    to, fn = ctx.buffer("dst").elem, ctx.attr("fn")
    loaded: dict[int, ir.Value] = {}

    def value(s):
        if s not in loaded:
            loaded[s] = _widen(emit.load(src.type.elem, addresses.slot_pointer(src, s, base)), to)
        return loaded[s]
    return [tree(fn, [value(s) for s in slots]) for slots in r.src_slots]


def store_dst(ctx, r: Rows, values: list[ir.Value]) -> None:
    dst = windows.resolve(ctx.operand("dst"))
    base = addresses.storage(dst)
    for d, v in zip(r.dst_slots, values):
        emit.store(v, addresses.slot_pointer(dst, d, base))
