"""tile.iota on the CPU: the thread part the variant derives reproduces, for every thread and
register slot, the coordinate the layout gives (checked against fragments.slot_table, the
layout inversion the copies use); the kernels of iota_kernels.py compile, assemble and run in
the reference interpreter to torch.arange-like results; wrong calls are refused with reasons."""

import numpy as np
import pytest

import tilemlir
import tilemlir.lang as T
from iota_kernels import (COLUMN_OFFSET, MMA_COLS, MMA_ROWS, ROW_M, ROW_N, THREAD_COLS,
                          THREAD_ROWS, WARPS, WG_COLS, WG_GRID, WG_PER_CTA, WG_ROWS, WINDOW_COLS,
                          causal_mask_kernel, causal_mask_vectors_kernel, column_vector_kernel,
                          mma_sync_iota_kernel, row_iota_kernel, signed_offset_kernel,
                          thread_iota_kernel, wgmma_iota_kernel, window_kernel)
from mlir import ir
from tilemlir.dispatch.registry import Reject
from tilemlir.dsl.values import KernelError, as_scalar
from tilemlir.ir.context import make_context
from tilemlir.ir.types import buffer_type, parse_buffer_type
from tilemlir.kernels.norms import row_plan
from tilemlir.layout import MmaSync, S, TileLayout, laneid, wgmma_accumulator_layout
from tilemlir.lowering.cuda import fragments
from tilemlir.lowering.cuda.iota.registers import plan_iota
from tilemlir.reference import InterpretError
from tilemlir.target.ptx import assemble, find_ptxas

Tx = T.tile


def _buf(shape, layout, elem="f32"):
    with make_context():
        return parse_buffer_type(buffer_type(tuple(shape), ir.Type.parse(elem), "local", layout))


def _mma_c(m, n):
    return MmaSync(16).fragments(m, n, 16)[2]


def _norms(n):
    return row_plan(n, op="rms_norm").layout()


LAYOUTS = {
    "wgmma_64x64": ((64, 64), wgmma_accumulator_layout(64, 64)),
    "wgmma_64x256": ((64, 256), wgmma_accumulator_layout(64, 256)),
    "wgmma_128x64": ((128, 64), wgmma_accumulator_layout(128, 64)),
    "mma_sync_a_16x16": ((16, 16), MmaSync(16).a_layout()),
    "mma_sync_b_16x8": ((16, 8), MmaSync(16).b_layout()),
    "mma_sync_c_32x16": ((32, 16), _mma_c(32, 16)),
    "norms_row_2048": ((1, 2048), _norms(2048)),
    "norms_row_8192": ((1, 8192), _norms(8192)),
    "norms_weight_4096": ((4096,), row_plan(4096, op="rms_norm").vector_layout()),
    "wgmma_row_vector": ((64,), wgmma_accumulator_layout(64, 64).row_vector((64, 64))),
    "wgmma_column_vector": ((64, 1), wgmma_accumulator_layout(64, 64).column_vector((64, 64))),
    "private": ((4, 8), TileLayout(S[(4, 8):(8, 1)])),
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_thread_part_reproduces_every_slot(name):
    """base[slot] + f(thread) equals the coordinate slot_table gives each holder, on every
    axis, for the threads of a CTA (f read at the thread index modulo the plan's period)."""
    shape, layout = LAYOUTS[name]
    buf = _buf(shape, layout)
    threads = 256 if name.startswith(("wgmma", "mma", "private")) else 1024
    block = (threads, 1, 1)
    if name.startswith("wgmma"):
        # slot_table numbers a warpgroup's threads; every warpgroup holds the same elements
        table = np.tile(fragments.slot_table(buf, 128), (threads // 128, 1))
    else:
        table = fragments.slot_table(buf, threads)
    held = table >= 0
    t = np.arange(threads)
    for axis in range(len(shape)):
        plan = plan_iota(buf, axis, block)
        base = dict(plan.slots)
        f = plan.thread.evaluate(t % plan.period)
        coord = np.indices(shape)[axis].reshape(-1)
        assert held.any()
        assert set(np.flatnonzero(held.any(axis=0))) <= set(base)
        for s in np.flatnonzero(held.any(axis=0)):
            who = np.flatnonzero(held[:, s])
            assert np.array_equal(base[s] + f[who], coord[table[who, s]]), (axis, s)


def test_the_thread_part_is_a_few_fields():
    """The wgmma accumulator's columns: one field (2 (t % 4)); its rows: two (t / 4 % 8 and
    16 (t / 32 % 4)); a lane-only layout needs no more than the lane."""
    buf = _buf((64, 64), wgmma_accumulator_layout(64, 64))
    cols, rows = plan_iota(buf, 1, (256, 1, 1)), plan_iota(buf, 0, (256, 1, 1))
    assert cols.period == rows.period == 128
    assert [(f.divisor, f.extent, f.weight) for f in cols.thread.fields] == [(1, 4, 2)]
    assert [(f.divisor, f.extent, f.weight) for f in rows.thread.fields] == [(4, 8, 1),
                                                                              (32, None, 16)]
    assert plan_iota(_buf((32, 16), _mma_c(32, 16)), 0, (128, 1, 1)).period == 32
    private = plan_iota(_buf((4, 8), TileLayout(S[(4, 8):(8, 1)])), 0, None)
    assert private.period == 1 and not private.thread.fields


def test_a_layout_that_is_not_digit_fields_is_refused():
    layout = TileLayout(S[(3, 8):(1 @ laneid, 3 @ laneid)])        # row = lane % 3
    with pytest.raises(Reject, match=r"S\[\(3, 8\):\(1@laneid, 3@laneid\)\] is not a per-slot "
                                     r"constant plus a sum of fields of the thread index"):
        plan_iota(_buf((3, 8), layout), 0, (32, 1, 1))
    # its columns (lane / 3) are not either, but a static axis of one extent is
    with pytest.raises(Reject):
        plan_iota(_buf((3, 8), layout), 1, (32, 1, 1))


# ------------------------------------------------------------------------------ kernels
KERNELS = {
    "wgmma_rows": lambda: wgmma_iota_kernel(0),
    "wgmma_columns": lambda: wgmma_iota_kernel(1),
    "wgmma_rows_i32": lambda: wgmma_iota_kernel(0, "int32"),
    "mma_sync_rows": lambda: mma_sync_iota_kernel(0),
    "mma_sync_columns_i32": lambda: mma_sync_iota_kernel(1, "int32"),
    "cta_row": lambda: row_iota_kernel(),
    "cta_row_i32": lambda: row_iota_kernel("int32"),
    "thread_rows": lambda: thread_iota_kernel(0),
    "thread_columns_i32": lambda: thread_iota_kernel(1, "int32"),
    "column_vector": lambda: column_vector_kernel(),
    "causal_mask": lambda: causal_mask_kernel(256, 128),
    "causal_mask_i32": lambda: causal_mask_kernel(256, 128, "int32"),
    "causal_mask_vectors": lambda: causal_mask_vectors_kernel(256, 128),
    "signed_offset": lambda: signed_offset_kernel(),
    "signed_offset_i32": lambda: signed_offset_kernel("int32"),
    "window": lambda: window_kernel(),
}


def expected(name: str) -> np.ndarray:
    """What each kernel of KERNELS writes (its last parameter), from numpy's arange."""
    dtype = np.int32 if name.endswith("i32") else np.float32
    if name.startswith("wgmma"):
        shape = (WG_GRID * WG_PER_CTA * WG_ROWS, WG_COLS)
        axis = 0 if "rows" in name else 1
        return (np.indices(shape)[axis] + (0 if axis == 0 else COLUMN_OFFSET)).astype(dtype)
    if name.startswith("mma_sync"):
        return np.indices((WARPS * MMA_ROWS, MMA_COLS))[0 if "rows" in name else 1].astype(dtype)
    if name.startswith("cta_row"):
        return np.arange(ROW_M * ROW_N).reshape(ROW_M, ROW_N).astype(dtype)
    if name.startswith("thread"):
        return np.indices((32 * THREAD_ROWS, THREAD_COLS))[0 if "rows" in name else 1] \
            .astype(dtype)
    if name == "window":
        lo, hi = WINDOW_COLS
        out = np.full((WG_ROWS, WG_COLS), -1, dtype)
        out[:, lo:hi] = np.arange(hi - lo) + 100
        return out
    if name == "column_vector":
        return np.broadcast_to(np.arange(WG_COLS, dtype=dtype) + COLUMN_OFFSET,
                               (WG_ROWS, WG_COLS)).copy()
    raise KeyError(name)


@pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found")
@pytest.mark.parametrize("chip", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernels_compile_and_assemble(name, chip):
    text = tilemlir.compile(KERNELS[name](), target=chip, cache=False).ptx
    assert ".local" not in text                  # the iota tiles stay in registers
    assemble(text, chip)


@pytest.mark.parametrize("name", sorted(n for n in KERNELS
                                         if not n.startswith(("causal", "signed"))))
def test_kernels_interpreted(name):
    ref = expected(name)
    out = np.full(ref.shape, -7, ref.dtype)
    tilemlir.interpret(KERNELS[name](), out)
    assert np.array_equal(out, ref)


@pytest.mark.parametrize("name", ["causal_mask", "causal_mask_i32", "causal_mask_vectors"])
def test_causal_mask_interpreted(name):
    x = np.random.default_rng(3).standard_normal((256, 128)).astype(np.float32)
    y = np.zeros_like(x)
    tilemlir.interpret(KERNELS[name](), x, y)
    i, j = np.indices(x.shape)
    assert np.array_equal(y, np.where(j > i, -np.inf, x))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_interpreted_offsets_are_each_threads_own(dtype):
    """A warp's lane-spread tile with the lane's own offset (negative for lane 0): each
    element gets its holder's."""
    out = np.zeros((4, 32), np.int32 if dtype == "int32" else np.float32)
    tilemlir.interpret(signed_offset_kernel(dtype), out)
    i, j = np.indices((4, 32))
    assert np.array_equal(out, i + j * 100 - 7)


# ------------------------------------------------------------------------------ wrong calls
def _kernel(body, dtype="float32", scope="local"):
    layout = TileLayout(S[(4, 32):(1, 1 @ laneid)])

    @T.prim_func
    def k(Out: T.Buffer((4, 32), dtype)):
        T.cta_id([1])
        lane = T.lane_id([32])
        if scope == "shared":
            pool = T.SMEMPool()
            x = pool.alloc((4, 32), dtype)
            pool.commit()
        else:
            x = T.alloc_local((4, 32), dtype, layout=layout)
        body(x, lane)
        Tx.warp.copy(Out, x)

    return k


@pytest.mark.parametrize("body, message", [
    (lambda x, lane: Tx.warp.iota(x, 2), r"Tx.iota: axis must be an integer in \[-2, 2\) for "
                                         r"a 2-d dst, got 2"),
    (lambda x, lane: Tx.warp.iota(x, True), r"axis must be an integer"),
    (lambda x, lane: Tx.warp.iota(3.0, 0), r"dst must be a buffer, got float"),
    (lambda x, lane: Tx.warp.iota(x, 0, offset="7"), r"offset must be a number or a device "
                                                     r"value, got str"),
])
def test_wrong_calls_raise_kernel_errors(body, message):
    with pytest.raises(KernelError, match=message):
        _kernel(body).build()


def test_a_fractional_offset_for_an_integer_tile_is_refused():
    with pytest.raises(KernelError, match="0.5 is not an integer of type i32"):
        _kernel(lambda x, lane: Tx.warp.iota(x, 0, offset=0.5), "int32").build()


def test_a_float_device_offset_for_an_integer_tile_is_refused():
    def body(x, lane):
        Tx.warp.iota(x, 0, offset=as_scalar(lane, ir.F32Type.get()))
    with pytest.raises(KernelError, match="offset is a f32 value but the tile holds i32"):
        _kernel(body, "int32").build()


def test_a_negative_axis_counts_from_the_end():
    ir_text = str(_kernel(lambda x, lane: Tx.warp.iota(x, -1, offset=lane)).build())
    assert "axis = 1 : i64" in ir_text
    assert "arith.sitofp" in ir_text                # an integer device offset, signed


def test_an_iota_into_shared_memory_is_refused_naming_the_reason():
    with pytest.raises(Exception, match=r"fills register tiles; dst is in shared"):
        tilemlir.compile(_kernel(lambda x, lane: Tx.warp.iota(x, 0), scope="shared"),
                         target="sm_90a", cache=False)


def test_the_interpreter_refuses_an_iota_into_shared_memory():
    with pytest.raises(InterpretError, match=r"iota fills register tiles; dst is in shared"):
        tilemlir.interpret(_kernel(lambda x, lane: Tx.warp.iota(x, 0), scope="shared"),
                           np.zeros((4, 32), np.float32))
