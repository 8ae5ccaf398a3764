"""Register fragments seen concretely: which lane and warp hold each element, in which slot.

A register layout may name the holder through any thread axis (laneid, wid_in_wg, tid_in_wg,
warpid, wgid, tx). This module evaluates the layout on every element of the tile (numpy, so a
128x256 tile costs a few milliseconds) and turns those axes into one linear thread index in the
CTA, then into (lane, warp) — the two coordinates warp-level instructions care about. Axes the
layout does not name are *free*: every thread along them holds its own copy (marked -1).
"""

from __future__ import annotations

import functools
import itertools

from dataclasses import dataclass

import numpy as np

from tilemlir.dispatch.registry import Reject
from tilemlir.ir import windows
from tilemlir.ir.types import BufferType
from tilemlir.layout import LayoutError

# Each thread axis as a multiple of the linear thread index inside the CTA.
THREAD_AXIS_WEIGHT = {"laneid": 1, "tid_in_wg": 1, "tx": 1, "wid_in_wg": 32, "warpid": 32,
                      "wgid": 128}
LANE_AXES = ("laneid", "tid_in_wg", "tx")
WARP_AXES = ("wid_in_wg", "warpid", "wgid", "tid_in_wg", "tx")


@dataclass
class ThreadMap:
    """Per element of a tile (arrays of the tile's shape): holder lane, warp and register slot."""
    lane: np.ndarray   # 0..31, or -1 when no lane axis is named
    warp: np.ndarray   # warp index in the CTA, or -1 when no warp axis is named
    slot: np.ndarray   # memory-axis value: the register slot in the per-thread storage

    @property
    def lanes_named(self) -> bool:
        return bool((self.lane >= 0).all())

    @property
    def warps_named(self) -> bool:
        return bool((self.warp >= 0).all())


def _thread_ids(buf: BufferType) -> tuple[dict, np.ndarray]:
    """The layout evaluated over the buffer's shape, and each element's (base) holder as one
    thread index (lane + 32 * warp ...) from the holder axes' weights."""
    values = buf.layout.evaluate_all(buf.shape)
    tid = np.zeros(tuple(buf.shape), dtype=np.int64)
    for axis, weight in THREAD_AXIS_WEIGHT.items():
        if axis in values:
            tid = tid + np.asarray(values[axis], dtype=np.int64) * weight
    return values, tid


@functools.lru_cache(maxsize=1024)
def thread_map(buf: BufferType) -> ThreadMap:
    """Cached per buffer type (a pure function of its layout and shape); the arrays are
    read-only, as they are shared."""
    values, tid = _thread_ids(buf)
    shape = tuple(buf.shape)
    lane = tid % 32 if any(a in values for a in LANE_AXES) else np.full(shape, -1)
    warp = tid // 32 if any(a in values for a in WARP_AXES) else np.full(shape, -1)
    slot = np.asarray(values.get("m", np.zeros(shape, dtype=np.int64)), dtype=np.int64)
    for array in (lane, warp, slot):
        array.flags.writeable = False
    return ThreadMap(lane, warp, slot)


@functools.lru_cache(maxsize=1024)
def holder_maps(buf: BufferType) -> tuple[ThreadMap, ...]:
    """One ThreadMap per copy of a replicated layout (the base holders moved by each
    combination of replica digits); (thread_map(buf),) when the layout has no replicas."""
    base = thread_map(buf)
    if not buf.layout.is_replicated():
        return (base,)
    _, tid = _thread_ids(buf)
    shape = tuple(buf.shape)
    named = {it.axis for it in buf.layout.shard + buf.layout.replica}
    lanes, warps = any(a in named for a in LANE_AXES), any(a in named for a in WARP_AXES)
    maps = []
    for digits in itertools.product(*(range(it.extent) for it in buf.layout.replica)):
        shift = sum(d * it.stride * THREAD_AXIS_WEIGHT[it.axis]
                    for d, it in zip(digits, buf.layout.replica))
        t = tid + shift
        lane = t % 32 if lanes else np.full(shape, -1)
        warp = t // 32 if warps else np.full(shape, -1)
        lane.flags.writeable = warp.flags.writeable = False      # cached, hence shared
        maps.append(ThreadMap(lane, warp, base.slot))
    return tuple(maps)


def first_mismatch(actual: np.ndarray, expected: np.ndarray):
    """Index of the first element where the arrays differ, or None."""
    diff = np.argwhere(actual != expected)
    return tuple(int(i) for i in diff[0]) if len(diff) else None


def slot_table(buf: BufferType, threads: int) -> np.ndarray:
    """(threads, slots) array: the flat (row-major) index of the element thread t keeps in
    register slot s, -1 where it keeps none. Threads are numbered lane + 32 * warp; an axis the
    layout does not name gives every thread along it the same elements, and so do a replicated
    layout's replicas. Raises LayoutError when a thread would keep two elements in one slot.
    Cached per (buffer type, threads), like thread_map: the array is read-only, as it is
    shared."""
    table, error = _slot_table(buf, threads)
    if error is not None:
        raise LayoutError(error)
    return table


@functools.lru_cache(maxsize=1024)
def _slot_table(buf: BufferType, threads: int) -> tuple[np.ndarray | None, str | None]:
    try:
        table = _build_slot_table(buf, threads)
    except LayoutError as err:
        return None, str(err)
    table.flags.writeable = False
    return table, None


def _build_slot_table(buf: BufferType, threads: int) -> np.ndarray:
    flat = np.arange(buf.size, dtype=np.int64)
    slot = thread_map(buf).slot.reshape(-1)
    table = np.full((threads, int(slot.max()) + 1 if slot.size else 0), -1, dtype=np.int64)
    t = np.arange(threads)
    for tm in holder_maps(buf):             # a replicated layout: each copy's holders too
        lane, warp = tm.lane.reshape(-1), tm.warp.reshape(-1)
        for ln, wp in {(int(a), int(b)) for a, b in zip(lane, warp)}:
            holders = t[((t % 32 == ln) | (ln < 0)) & ((t // 32 == wp) | (wp < 0))]
            mine = (lane == ln) & (warp == wp)
            for h in holders:
                row = table[h]
                if (row[slot[mine]] >= 0).any() or len(np.unique(slot[mine])) < int(mine.sum()):
                    raise LayoutError(f"{buf.layout}: thread {int(h)} would keep two elements "
                                      f"in one register slot")
                row[slot[mine]] = flat[mine]
    return table


def register_ref(ctx, name: str):
    """The resolved register operand `name`; rejects a window at a dynamic offset, because
    register slots are static (every access names its slot at compile time)."""
    ref = windows.resolve(ctx.operand(name))
    if ref.has_dynamic_offset:
        raise Reject(f"{name} is sliced at a dynamic offset; register slots must be static")
    return ref
