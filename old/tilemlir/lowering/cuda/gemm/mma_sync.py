"""gemm -> a fully unrolled nest of warp-collective mma.sync.aligned.m16n8k{16,8} (seed 001).

Before (a warp computes D[16,8] = A[16,16] . B[16,8], fragments in registers):

    "tile.gemm"(%D, %A, %B, %D) {alpha = 1.0, beta = 0.0, scope = "warp",
                                 transpose_a = false, transpose_b = false}

After (one mma per (m, n, k) atom, accumulating in SSA over k; beta = 0 starts from zeros,
beta = 1 from C's registers):

    %a0 = ... 4 x vector<2xf16> gathered from A's register slots ...
    %r = nvvm.mma.sync A[...] B[...] C[%zero, %zero, %zero, %zero]
         {shape = #nvvm.shape<m = 16, n = 8, k = 16>, ...} -> !llvm.struct<(f32, f32, f32, f32)>
    ... D's four slots stored from %r ...

The fragment layouts are checked concretely: every element of every operand is evaluated to its
(lane, warp, register slot), and the instruction is accepted only if each m16n8k atom of each
operand sits on one warp, on exactly the lanes the PTX ISA assigns, with each of the
instruction's registers in one slot across all lanes, and if all warps of the scope run the same
instruction stream. This anchors M, N and K across operands and checks the warp split without
special cases; any register order (transposed fragments included) is accepted. k16 is tried
before k8; MMA_SYNC (tilemlir.layout.instructions) is extended by adding entries.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import nvvm

from tilemlir.dispatch.registry import Reject, predicate, register
from tilemlir.ir import emit, windows
from tilemlir.layout.instructions import MMA_SYNC, MmaSync
from tilemlir.lowering import addresses
from tilemlir.lowering.cuda import fragments
from tilemlir.lowering.cuda.predicates import full_active_lanes, no_replica, target_supports


# ------------------------------------------------------------------------------ predicates
@predicate("register_operands")
def register_operands(ctx):
    wrong = [f"{n.upper()} is in {b.scope} memory" for n, b in ctx.buffers().items()
             if b.scope != "local"]
    if wrong:
        return ("mma.sync needs A, B, C, D in registers (load shared-memory operands with "
                "ldmatrix first); " + ", ".join(wrong))
    return None


@predicate("dtypes")
def dtypes(ctx):
    a, b, c, d = (str(ctx.buffer(n).elem) for n in "abcd")
    problems = []
    if a not in ("f16", "bf16"):
        problems.append(f"A is {a}, needs f16 or bf16")
    if b not in ("f16", "bf16"):
        problems.append(f"B is {b}, needs f16 or bf16")
    if a != b and a in ("f16", "bf16") and b in ("f16", "bf16"):
        problems.append(f"A is {a} but B is {b}: inputs must have one type")
    for name, t in (("C", c), ("D", d)):
        if t != "f32":
            problems.append(f"{name} is {t}, the accumulator must be f32")
    return "; ".join(problems) or None


@predicate("alpha_beta")
def alpha_beta(ctx):
    problems = []
    alpha, beta = ctx.attr("alpha"), ctx.attr("beta")
    if alpha != 1.0:
        problems.append(f"alpha must be 1.0 (mma.sync has no scaling), got {alpha:g}")
    if beta not in (0.0, 1.0):
        problems.append(f"beta must be 0.0 or 1.0, got {beta:g}")
    return "; ".join(problems) or None


def logical_dims(ctx):
    """(M, N, K) from the operands, or raises Reject naming the disagreement."""
    a, b, c, d = (ctx.buffer(n) for n in "abcd")
    for name, buf in (("A", a), ("B", b), ("C", c), ("D", d)):
        if len(buf.shape) != 2:
            raise Reject(f"{name} must be 2-D, got shape {list(buf.shape)}")
    m, n = d.shape
    am, ak = (a.shape[1], a.shape[0]) if ctx.attr("transpose_a") else a.shape
    bk, bn = (b.shape[1], b.shape[0]) if ctx.attr("transpose_b") else b.shape
    problems = []
    if am != m:
        problems.append(f"A has M={am} but D has M={m}")
    if bn != n:
        problems.append(f"B has N={bn} but D has N={n}")
    if ak != bk:
        problems.append(f"A has K={ak} but B has K={bk}")
    if tuple(c.shape) != (m, n):
        problems.append(f"C is {c.shape[0]}x{c.shape[1]} but D is {m}x{n}")
    if problems:
        raise Reject("; ".join(problems))
    return m, n, ak


@predicate("shape")
def shape(ctx):
    try:
        m, n, k = logical_dims(ctx)
    except Reject as r:
        return r.reason
    problems = [f"{name}={v} is not a multiple of {q}"
                for name, v, q in (("M", m, 16), ("N", n, 8), ("K", k, 8)) if v % q]
    return "; ".join(problems) or None


# ------------------------------------------------------------------------------ fragment tiling
@dataclass
class _Operand:
    name: str
    map: fragments.ThreadMap          # in canonical orientation: A (M,K), B (K,N), C/D (M,N)


def _canonical(ctx, name: str, transpose: bool) -> _Operand:
    tm = fragments.thread_map(ctx.buffer(name))
    if transpose:
        tm = fragments.ThreadMap(tm.lane.T, tm.warp.T, tm.slot.T)
    return _Operand(name.upper(), tm)


def _atom_slots(op: _Operand, inst: MmaSync, atom: tuple[int, int], fragment, nwarps: int):
    """{(tile_row, tile_col): (warp, slot per register position)} or raises Reject."""
    ar, ac = atom
    rows, cols = op.map.lane.shape
    tr, tc = rows // ar, cols // ac
    lane_exp, pos = fragment
    if not op.map.lanes_named:
        raise Reject(f"{inst.name}: {op.name}'s layout names no lane axis, so it is not a "
                     f"warp fragment")

    def tiles(a):
        return a.reshape(tr, ar, tc, ac).transpose(0, 2, 1, 3)

    lane, slot, warp = tiles(op.map.lane), tiles(op.map.slot), tiles(op.map.warp)
    bad = np.argwhere(lane != lane_exp)
    if len(bad):
        i, j, r, c = (int(x) for x in bad[0])
        raise Reject(f"{inst.name}: {op.name}[{i * ar + r}, {j * ac + c}] is held by lane "
                     f"{int(lane[i, j, r, c])} but the instruction expects lane "
                     f"{int(lane_exp[r, c])}")
    npos = int(pos.max()) + 1
    result = {}
    for i in range(tr):
        for j in range(tc):
            w = warp[i, j]
            if (w != w.flat[0]).any():
                raise Reject(f"{inst.name}: the {ar}x{ac} atom ({i}, {j}) of {op.name} is "
                             f"spread over several warps")
            w0 = int(w.flat[0])
            if w0 >= nwarps:
                raise Reject(f"{inst.name}: {op.name} is held by warp {w0}, outside the "
                             f"{nwarps} warp(s) of the op's scope")
            slots = []
            for p in range(npos):
                held = slot[i, j][pos == p]
                if (held != held[0]).any():
                    raise Reject(f"{inst.name}: the lanes of {op.name}'s atom ({i}, {j}) keep "
                                 f"register {p} in different slots")
                slots.append(int(held[0]))
            result[(i, j)] = (w0, tuple(slots))
    return result


@dataclass
class MmaStep:
    d_slots: tuple[int, ...]
    c_slots: tuple[int, ...] | None
    k_steps: list[tuple[tuple[int, ...], tuple[int, ...]]]   # (A half-slots, B half-slots)


@dataclass
class MmaPlan:
    inst: MmaSync
    steps: list[MmaStep]


def _plan_for(ctx, inst: MmaSync, dims, nwarps: int) -> MmaPlan:
    m, n, k = dims
    if k % inst.k:
        raise Reject(f"{inst.name}: K={k} is not a multiple of {inst.k}")
    use_c = ctx.attr("beta") == 1.0
    a = _canonical(ctx, "a", ctx.attr("transpose_a"))
    b = _canonical(ctx, "b", ctx.attr("transpose_b"))
    d = _canonical(ctx, "d", False)
    d_tiles = _atom_slots(d, inst, (16, 8), inst.c_fragment(), nwarps)
    a_tiles = _atom_slots(a, inst, (16, inst.k), inst.a_fragment(), nwarps)
    b_tiles = _atom_slots(b, inst, (inst.k, 8), inst.b_fragment(), nwarps)
    c_tiles = (_atom_slots(_canonical(ctx, "c", False), inst, (16, 8), inst.c_fragment(), nwarps)
               if use_c else None)
    kt = k // inst.k

    def owned(tile, w):
        return tile[0] in (w, -1)

    streams = []
    for w in range(nwarps):
        steps = []
        for (mt, nt), (dw, d_slots) in sorted(d_tiles.items(), key=lambda kv: kv[1][1]):
            if dw not in (w, -1):
                continue
            for other, key in (((a_tiles[(mt, x)] for x in range(kt)), "A"),
                               ((b_tiles[(x, nt)] for x in range(kt)), "B")):
                if not all(owned(t, w) for t in other):
                    raise Reject(f"{inst.name}: D's atom ({mt}, {nt}) is on warp {w} but the "
                                 f"{key} atoms it needs are on another warp")
            c_slots = None
            if c_tiles is not None:
                if not owned(c_tiles[(mt, nt)], w):
                    raise Reject(f"{inst.name}: C's atom ({mt}, {nt}) is not on warp {w}, "
                                 f"which computes D's")
                c_slots = c_tiles[(mt, nt)][1]
            steps.append(MmaStep(d_slots, c_slots,
                                 [(a_tiles[(mt, x)][1], b_tiles[(x, nt)][1]) for x in range(kt)]))
        streams.append(steps)
    if any(s != streams[0] for s in streams[1:]):
        raise Reject(f"{inst.name}: the warps of the scope would need different register slots "
                     f"(the warp split differs between operands)")
    return MmaPlan(inst, streams[0])


def plan(ctx) -> MmaPlan:
    dims = logical_dims(ctx)
    nwarps = ctx.scope_threads() // 32
    input_type = str(ctx.buffer("a").elem)
    reasons = []
    for inst in MMA_SYNC:           # k16 entries come before k8 ones
        if inst.input_type != input_type:
            continue
        try:
            return _plan_for(ctx, inst, dims, nwarps)
        except Reject as r:
            reasons.append(r.reason)
    raise Reject("; ".join(reasons) or f"no mma.sync shape takes {input_type} inputs")


# ------------------------------------------------------------------------------ emission
def _packed(values: list[ir.Value], input_type: str) -> ir.Value:
    """Two 16-bit values as one b32 operand: vector<2xf16> for f16, i32 for bf16."""
    vec = emit.build_vector(values)
    return vec if input_type == "f16" else emit.bitcast(emit.i32(), vec)


def _emit(ctx, p: MmaPlan):
    inst = p.inst
    refs = {n: windows.resolve(ctx.operand(n)) for n in "abcd"}
    base = {n: addresses.storage(r) for n, r in refs.items()}
    f32 = ir.F32Type.get()
    in_type = refs["a"].type.elem

    def load(name, slot, type_):
        return emit.load(type_, addresses.slot_pointer(refs[name], slot, base[name]))

    acc_type = emit.struct([f32] * 4)
    shape_attr = ir.Attribute.parse(f"#nvvm.shape<m = {inst.m}, n = {inst.n}, k = {inst.k}>")
    row = ir.Attribute.parse("#nvvm.mma_layout<row>")
    col = ir.Attribute.parse("#nvvm.mma_layout<col>")
    ptx_type = ir.Attribute.parse(f"#nvvm.mma_type<{inst.input_type}>")
    zero = emit.const(0.0, f32)
    for step in p.steps:
        acc = ([load("c", s, f32) for s in step.c_slots] if step.c_slots is not None
               else [zero] * 4)
        for a_slots, b_slots in step.k_steps:
            a_vals = [load("a", s, in_type) for s in a_slots]
            b_vals = [load("b", s, in_type) for s in b_slots]
            a_regs = [_packed(a_vals[i:i + 2], inst.input_type) for i in range(0, len(a_vals), 2)]
            b_regs = [_packed(b_vals[i:i + 2], inst.input_type) for i in range(0, len(b_vals), 2)]
            res = nvvm.mma_sync(acc_type, shape_attr, row, col, a_regs, b_regs, acc,
                                multiplicand_a_ptx_type=ptx_type,
                                multiplicand_b_ptx_type=ptx_type)
            acc = [emit.extract_value(res, i, f32) for i in range(4)]
        for slot, value in zip(step.d_slots, acc):
            emit.store(value, addresses.slot_pointer(refs["d"], slot, base["d"]))
    return None


@register("gemm", name="mma.m16n8k*", priority=10,
          when=[full_active_lanes, no_replica, register_operands, dtypes, alpha_beta, shape,
                target_supports("mma_sync_f16")])
def lower_mma_sync(ctx):
    """Warp-collective mma.sync m16n8k16 / m16n8k8 over register fragments."""
    p = plan(ctx)
    return lambda: _emit(ctx, p)
