"""Elementwise math on register tiles, shared by tile.unary, tile.binary and tile.select.

Before (a warp adds a per-row bias, held by every lane, to its m16n8 accumulator, in f16):

    "tile.binary"(%d, %d, %bias) {fn = "add", scope = "warp"}
        : (!tile.buf<[16, 8], f16, "local", S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]>,
           !tile.buf<[16, 8], f16, "local", S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]>,
           !tile.buf<[16, 1], f16, "local", S[(16, 1):(1, 1)]>) -> ()

After: every element stays with its thread. For each destination slot the layouts give, the
same for every thread, one slot of each buffer operand (a broadcast operand repeats its slot);
two neighbouring f16 / bf16 slots whose operands are neighbouring slots too (or one repeated
slot, or a scalar) are one packed instruction:

    %a = llvm.load %d[0] : vector<2xf16>           %b = splat of %bias[row slot]
    %s = arith.addf %a, %b : vector<2xf16>         (add.rn.f16x2)
    llvm.store %s, %d[0] : vector<2xf16>

Broadcasting is numpy's: an operand's shape, right-aligned with dst's, has dst's extent or 1 in
every dim. Accepted when every element of an operand that dst's element (i, j) reads is held by
the thread that holds dst (i, j) (or by every thread: a layout that names no lane / warp axis;
or by one of its copies: a replicated layout, e.g. a GEMM epilogue's bias row, whose columns
follow the accumulator's and whose replicas cover the lanes of the accumulator's rows),
and each destination slot reads one operand slot for every thread. f16 / bf16 math that has no
packed instruction is computed in f32 and rounded back (pairs with cvt.rn.f16x2.f32, sm_80+).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np
from mlir import ir
from mlir.dialects import arith

from tilemlir.dispatch.registry import Reject, predicate
from tilemlir.ir import emit, windows
from tilemlir.ir.types import BufferType, is_buffer_type, parse_buffer_type
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import fragments
from tilemlir.lowering.cuda.cast.elementwise import PACKED, PACKED_MIN_SM

HALF = ("f16", "bf16")
FLOATS = ("f16", "bf16", "f32")


def operand_type(ctx, name: str) -> ir.Type:
    """The element type of operand `name`: a buffer's element type or the scalar's type."""
    value = ctx.operand(name)
    return parse_buffer_type(value.type).elem if is_buffer_type(value.type) else value.type


def buffer_operands(ctx, names) -> list[str]:
    return [n for n in names if is_buffer_type(ctx.operand(n).type)]


@predicate("registers")
def registers(ctx):
    wrong = [f"{n} is in {b.scope}" for n, b in ctx.buffers().items() if b.scope != "local"]
    if wrong:
        return ("computes on registers (copy memory operands into register tiles first); "
                + ", ".join(wrong))
    return None


@functools.lru_cache(maxsize=1024)
def _broadcast_slots(dst: BufferType, src: BufferType, name: str) -> tuple[tuple[int, int], ...]:
    """(dst slot, src slot) pairs, the same for every thread, or raises Reject."""
    ds, ss = tuple(dst.shape), tuple(src.shape)
    lead = len(ds) - len(ss)
    if lead < 0 or any(e not in (1, ds[lead + i]) for i, e in enumerate(ss)):
        raise Reject(f"{name} is {list(ss)}, which does not broadcast to dst's {list(ds)}")
    index = np.indices(ds)
    src_index = tuple(index[lead + i] if e != 1 else np.zeros(ds, np.int64)
                      for i, e in enumerate(ss))
    dmap, smap = fragments.thread_map(dst), fragments.thread_map(src)
    # A replicated operand is held by several threads: dst's holder must be one of them.
    held = np.zeros(ds, dtype=bool)
    for copy in fragments.holder_maps(src):
        lane, warp = copy.lane[src_index], copy.warp[src_index]
        held |= ((lane == dmap.lane) | (lane == -1)) & ((warp == dmap.warp) | (warp == -1))
    bad = np.argwhere(~held)
    if len(bad):
        at = tuple(int(i) for i in bad[0])
        coord = [int(x[at]) for x in src_index]
        for what, d, s in (("lane", dmap.lane, smap.lane[src_index]),
                           ("warp", dmap.warp, smap.warp[src_index])):
            if s[at] != d[at] and s[at] != -1:
                break
        holder = f"{what} {int(d[at])}" if d[at] >= 0 else f"every {what}"
        copies = " (and its replicas)" if src.layout.is_replicated() else ""
        raise Reject(f"dst{list(at)} is held by {holder} but {name}{coord} by {what} "
                     f"{int(s[at])}{copies}: elementwise math keeps every element in its "
                     f"thread")
    d_slot, s_slot = dmap.slot.reshape(-1), smap.slot[src_index].reshape(-1)
    mapping: dict[int, int] = {}
    for flat, (d, s) in enumerate(zip(d_slot.tolist(), s_slot.tolist())):
        if mapping.setdefault(d, s) != s:
            coord = [int(i) for i in np.unravel_index(flat, ds)]
            raise Reject(f"dst slot {d} reads {name} slot {mapping[d]} for one element but slot "
                         f"{s} for dst{coord}: the threads would need different code")
    return tuple(sorted(mapping.items()))


@dataclass(frozen=True)
class Source:
    name: str
    slots: tuple[int, ...] | None      # per destination slot; None: a scalar operand


@dataclass
class Plan:
    dst_slots: list[int]
    sources: list[Source]
    packed: list[int]                  # indices i of dst_slots: slots i, i + 1 as one pair


def plan(ctx, names, packable: bool) -> Plan:
    """Which operand slot each destination slot reads; `packable`: f16/bf16 pairs allowed."""
    dst = fragments.register_ref(ctx, "dst").type
    d_slots = [int(s) for s in np.unique(fragments.thread_map(dst).slot)]
    sources = []
    for name in names:
        if not is_buffer_type(ctx.operand(name).type):
            sources.append(Source(name, None))
            continue
        src = fragments.register_ref(ctx, name).type
        mapping = dict(_broadcast_slots(dst, src, name))
        sources.append(Source(name, tuple(mapping[d] for d in d_slots)))
    packed = []
    if packable and str(dst.elem) in HALF:
        i = 0
        while i + 1 < len(d_slots):
            if d_slots[i + 1] == d_slots[i] + 1 and d_slots[i] % 2 == 0 and all(
                    s.slots is None or s.slots[i + 1] - s.slots[i] in (0, 1) for s in sources):
                packed.append(i)
                i += 2
            else:
                i += 1
    return Plan(d_slots, sources, packed)


Compute = Callable[[list[ir.Value]], ir.Value]


def emit_plan(ctx, p: Plan, compute: Compute) -> None:
    """dst[slot] = compute(operand values) for every destination slot; `compute` takes scalars
    or, for a packed pair, vector<2> values of the operands' types."""
    dst = windows.resolve(ctx.operand("dst"))
    d_base = addresses.storage(dst)
    refs = {}
    for s in p.sources:
        if s.slots is not None:
            ref = windows.resolve(ctx.operand(s.name))
            refs[s.name] = (ref, addresses.storage(ref))

    def load(s: Source, i: int, pair: bool) -> ir.Value:
        if s.slots is None:
            value = ctx.operand(s.name)
            return emit.build_vector([value, value]) if pair else value
        ref, base = refs[s.name]
        elem = ref.type.elem
        if pair and s.slots[i + 1] == s.slots[i] + 1:
            return emit.load(emit.vector_type(2, elem),
                             addresses.slot_pointer(ref, s.slots[i], base), align=2)
        value = emit.load(elem, addresses.slot_pointer(ref, s.slots[i], base))
        return emit.build_vector([value, value]) if pair else value

    pairs = set(p.packed)
    skip = {i + 1 for i in p.packed}
    # Every result before any store: dst may be an operand too, read through other slots.
    results = [(d, i in pairs, compute([load(s, i, i in pairs) for s in p.sources]))
               for i, d in enumerate(p.dst_slots) if i not in skip]
    for d, pair, result in results:
        emit.store(result, addresses.slot_pointer(dst, d, d_base), align=2 if pair else None)


# ------------------------------------------------------------------------------ float helpers
def elem_name(value: ir.Value) -> str:
    t = value.type
    return str(t.element_type if isinstance(t, ir.VectorType) else t)


def halves(value: ir.Value) -> list[ir.Value]:
    if isinstance(value.type, ir.VectorType):
        return [emit.extract_element(value, 0), emit.extract_element(value, 1)]
    return [value]


def through_f32(ctx, fn: Callable[..., ir.Value], args: list[ir.Value]) -> ir.Value:
    """fn on f32 values for each half of the (scalar or pair) arguments, rounded back to the
    arguments' element type; a pair with one packed conversion where the chip has it."""
    elem = args[0].type.element_type if isinstance(args[0].type, ir.VectorType) else args[0].type
    f32 = ir.F32Type.get()
    per_half = list(zip(*(halves(a) for a in args)))
    results = [fn(*[v if v.type == f32 else arith.extf(f32, v) for v in vals])
               for vals in per_half]
    if elem == f32:
        return results[0]
    if len(results) == 2 and str(elem) in PACKED and ctx.target.sm >= PACKED_MIN_SM:
        rn = ir.Attribute.parse("#nvvm.fp_rnd_mode<rn>")
        return PACKED[str(elem)](emit.vector_type(2, elem), results[1], results[0], rnd=rn)
    narrowed = [arith.truncf(elem, r) for r in results]
    return narrowed[0] if len(narrowed) == 1 else emit.build_vector(narrowed)
