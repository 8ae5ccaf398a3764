"""Masked copies without a GPU: which variant takes each path, what their PTX holds, that
ptxas takes it, that constant bounds covering the tile leave the unmasked code, and what is
refused (with the reason)."""

import re

import pytest
from mlir import ir

import tilemlir
import tilemlir.lang as T
from masked_kernels import through_registers, through_shared
from tilemlir.lang import KernelError
from tilemlir.target.ptx import assemble, find_ptxas

Tx = T.tile
needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found")


def _ptx(kernel, chip="sm_90a"):
    return tilemlir.compile(kernel, target=chip, cache=False, line_info=False).ptx


@needs_ptxas
@pytest.mark.parametrize("make,args", [
    (through_shared, (100, 40)), (through_shared, (1, 13)), (through_shared, (65, 127, "float32")),
    (through_registers, (100, 40)), (through_registers, (7, 200, "float16")),
])
@pytest.mark.parametrize("chip", ["sm_80", "sm_90a"])
def test_masked_kernels_assemble(make, args, chip):
    assemble(_ptx(make(*args), chip), chip)


@needs_ptxas
@pytest.mark.parametrize("shape", [(100, 40), (1, 13)])
def test_cp_async_zero_fill(shape):
    ptx = _ptx(through_shared(*shape, asynchronous=True))
    assemble(ptx, "sm_90a")
    if shape[1] * 2 % 4 == 0:                  # rows 4-byte aligned: cp.async with a source size
        assert re.search(r"cp\.async\.c[ag]\.shared\.global \[[^]]+\], \[[^]]+\], \d+, %r\d+;",
                         ptx)
    else:                                      # 26-byte rows: a synchronous masked load
        assert not re.search(r"cp\.async\.c[ag]\.", ptx) and "ld.global" in ptx


def test_out_of_range_stores_are_skipped_and_loads_clamped():
    ptx = _ptx(through_shared(100, 40))
    assert "selp.b64" in ptx                   # the load address falls back to the buffer start
    assert re.search(r"@%p\d+ bra", ptx)       # stores to global memory under a branch


def _copy_pair(bounds):
    """Two kernels copying one whole 64 x 64 tile through shared memory, with and without
    `bounds`."""
    def make(masked):
        @T.prim_func
        def k(A: T.Buffer((64, 64), "float16"), D: T.Buffer((64, 64), "float16")):
            T.thread_id([128])
            pool = T.SMEMPool()
            S = pool.alloc((64, 64), "float16")
            pool.commit()
            if masked:
                Tx.cta.copy(S, A[:, :], bounds=bounds)
                Tx.cta.copy(D[:, :], S, bounds=bounds)
            else:
                Tx.cta.copy(S, A[:, :])
                Tx.cta.copy(D[:, :], S)
        return k
    return _ptx(make(True)), _ptx(make(False))


def test_constant_bounds_covering_the_tile_emit_the_unmasked_code():
    masked, plain = _copy_pair((64, 100))
    assert masked == plain
    masked, plain = _copy_pair((64, 63))
    assert masked != plain


def test_a_window_past_the_edge_needs_bounds():
    @T.prim_func
    def k(A: T.Buffer((100, 40), "float16"), D: T.Buffer((100, 40), "float16")):
        T.thread_id([128])
        pool = T.SMEMPool()
        S = pool.alloc((64, 64), "float16")
        pool.commit()
        Tx.cta.copy(S, A[0:64, 0:64])
        if store:
            Tx.cta.copy(D[0:64, 0:64], S)
    store = False
    with pytest.raises(ir.MLIRError) as err:
        _ptx(k)
    assert "inside_buffers: SRC hangs past its global buffer's edge ([0, 64) of dim 1, whose " \
           "extent is 40): copy it with bounds=... or by TMA" in str(err.value)
    store = True
    with pytest.raises(ir.MLIRError) as err:
        _ptx(k)
    assert "tile.copy writes a window hanging past its global buffer's edge ([0, 64) of dim 1, " \
           "whose extent is 40): store it with bounds=... or by TMA" in str(err.value)


def test_a_slice_starting_past_the_edge_is_still_refused():
    @T.prim_func
    def k(A: T.Buffer((100, 40), "float16")):
        T.thread_id([128])
        A[100:164, 0:64]
    with pytest.raises(KernelError, match=r"slice \[100:164\] is out of dim 0 \(size 100\)"):
        k.build()


@pytest.mark.parametrize("call,message", [
    (lambda S, A: Tx.cta.copy(S, A[0:64, 0:64], bounds=(1,)),
     "copy: bounds gives the valid extent of each of the window's 2 dims"),
    (lambda S, A: Tx.cta.copy(S, A[0:64, 0:64], bounds=(1, 2.5)),
     r"copy: bounds\[1\] must be an int or a device integer"),
    (lambda S, A: Tx.cta.copy(S, A[0:64, 0:64], fill=1.0),
     "copy: fill is the value of elements out of bounds; pass bounds too"),
    (lambda S, A: Tx.cta.copy(S, A[0:64, 0:64], bounds=(1, 2), fill="x"),
     "copy: fill must be a number"),
    (lambda S, A: Tx.copy_async(S, A[0:64, 0:64], None, bounds=(1, 2), multicast=1),
     "copy_async: bounds mask cp.async copies"),
])
def test_bad_bounds_and_fills_name_the_problem(call, message):
    @T.prim_func
    def k(A: T.Buffer((100, 40), "float16")):
        T.thread_id([128])
        pool = T.SMEMPool()
        S = pool.alloc((64, 64), "float16")
        pool.commit()
        call(S, A)
    with pytest.raises(KernelError, match=message):
        k.build()


# ------------------------------------------------------------------ lower bounds, split runs

@pytest.mark.parametrize("M,N,fill", [(9, 301, -1.0), (5, 1, 0.0), (4, 1030, 2.0), (3, 8, 0.0)])
def test_shifted_rows_interpreted(M, N, fill):
    """(lower, upper) bounds: a window that starts before its row (and before W) reads the fill
    there and writes nothing there."""
    import numpy as np
    from masked_kernels import expected_shifted, shifted_rows
    from tilemlir.reference import interpret
    rng = np.random.default_rng(N)
    x = rng.standard_normal((M, N)).astype(np.float16)
    w = rng.standard_normal(N).astype(np.float16)
    width = -(-(N + 7) // 256) * 256
    y = np.full((M, N), np.nan, np.float16)
    seen, v = (np.full((M, width), np.nan, np.float16) for _ in range(2))
    interpret(shifted_rows(M, N, "float16", fill), x, w, y, seen, v)
    want_seen, want_v = expected_shifted(x, w, fill)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(seen, want_seen)
    np.testing.assert_array_equal(v, want_v)


@needs_ptxas
def test_shifted_rows_keep_16_byte_accesses():
    """The row's loads and stores stay 16 bytes wide (split element by element only where a
    bound cuts a run), the weight's loads are realigned 4-byte words; ptxas takes it."""
    from masked_kernels import shifted_rows
    ptx = _ptx(shifted_rows(9, 301, "float16", -1.0))
    assemble(ptx, "sm_90a")
    assert len(re.findall(r"ld\.global\.v4\.b32", ptx)) == 2       # 2 runs a thread
    assert len(re.findall(r"st\.global\.v4\.b32", ptx)) == 3 * 2     # Y, Seen and V
    assert len(re.findall(r"ld\.global\.b32", ptx)) == 2 * 5         # 5 words a run
    assert "prmt.b32" in ptx                                          # the funnel shift
    assert len(re.findall(r"st\.global\.b16", ptx)) <= 2 * 8         # a cut run's elements


@pytest.mark.parametrize("bounds, message", [
    ((1, (1, 2, 3)), r"bounds\[1\] is an extent or a \(lower, upper\) pair"),
    ((1, ("a", 2)), r"bounds\[1\]\[0\] must be an int or a device integer"),
])
def test_bad_lower_bounds_name_the_problem(bounds, message):
    @T.prim_func
    def bad(A: T.Buffer((4, 64), "float16")):
        T.cta_id([1])
        T.lane_id([32])
        x = T.alloc_local((1, 64), "float16",
                          layout=T.TileLayout(T.S[(1, 32, 2):(1, 1 @ T.laneid, 1)]))
        Tx.warp.copy(x, A[0:1, :], bounds=bounds)

    with pytest.raises(KernelError, match=message):
        tilemlir.compile(bad, target="sm_90a", cache=False)


def test_min_ctas_per_sm():
    @T.prim_func
    def two(A: T.Buffer((64,), "float32")):
        T.cta_id([1])
        T.thread_id([64])
        T.min_ctas_per_sm(2)
        A[0] = A[1]

    assert re.search(r"\.minnctapersm\s+2", _ptx(two))
    with pytest.raises(KernelError, match="T.min_ctas_per_sm takes an integer from 1 to 32"):
        @T.prim_func
        def zero(A: T.Buffer((64,), "float32")):
            T.cta_id([1])
            T.thread_id([64])
            T.min_ctas_per_sm(0)

        tilemlir.compile(zero, target="sm_90a", cache=False)
