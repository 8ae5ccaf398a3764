"""GPU numerics of tile.iota: iota tiles of the layouts used in practice (the wgmma accumulator
in a CTA of two warpgroups, mma.sync accumulators per warp, norms.py's CTA-wide rows, private
per-thread tiles, a replicated column vector), f32 and i32, written out to global memory and
compared exactly with torch.arange; and the causal mask built from them. Outputs start
poisoned (NaN, or INT32_MIN for i32), so an element never written cannot pass."""

import pytest

from gpu_check import assert_written, run_poisoned
from iota_kernels import (COLUMN_OFFSET, MMA_COLS, MMA_ROWS, ROW_M, ROW_N, THREAD_COLS,
                          THREAD_ROWS, WARPS, WG_COLS, WG_GRID, WG_PER_CTA, WG_ROWS, WINDOW_COLS,
                          causal_mask_kernel, causal_mask_vectors_kernel, column_vector_kernel,
                          mma_sync_iota_kernel, row_iota_kernel, signed_offset_kernel,
                          thread_iota_kernel, wgmma_iota_kernel, window_kernel)

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu

DTYPES = {"float32": torch.float32, "int32": torch.int32}
POISON_I32 = -2 ** 31


def _run(kernel, shape, dtype: str, inputs=()):
    """kernel(*inputs, out) with `out` poisoned; the out, every element checked written."""
    if dtype == "float32":
        (out,) = run_poisoned(kernel, list(inputs), [(shape, torch.float32)])
        assert_written(out)
        return out
    out = torch.full(shape, POISON_I32, device="cuda", dtype=torch.int32)
    kernel(*inputs, out)
    torch.cuda.synchronize()
    assert not (out == POISON_I32).any(), "some outputs were never written"
    return out


def _grid(shape, axis: int, dtype: str, offset=0):
    """The coordinate along `axis` of every element of `shape`, plus `offset` (torch.arange)."""
    ranges = [torch.arange(n, device="cuda") for n in shape]
    return (torch.meshgrid(*ranges, indexing="ij")[axis] + offset).to(DTYPES[dtype])


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("axis", [0, 1])
def test_wgmma_accumulator_in_two_warpgroups(axis, dtype):
    shape = (WG_GRID * WG_PER_CTA * WG_ROWS, WG_COLS)
    out = _run(wgmma_iota_kernel(axis, dtype), shape, dtype)
    assert torch.equal(out, _grid(shape, axis, dtype, 0 if axis == 0 else COLUMN_OFFSET))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("axis", [0, 1])
def test_mma_sync_accumulator_per_warp(axis, dtype):
    shape = (WARPS * MMA_ROWS, MMA_COLS)
    out = _run(mma_sync_iota_kernel(axis, dtype), shape, dtype)
    assert torch.equal(out, _grid(shape, axis, dtype))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_cta_row_layout(dtype):
    out = _run(row_iota_kernel(dtype), (ROW_M, ROW_N), dtype)
    ref = torch.arange(ROW_M * ROW_N, device="cuda").reshape(ROW_M, ROW_N).to(DTYPES[dtype])
    assert torch.equal(out, ref)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("axis", [0, 1])
def test_private_tile_at_thread_scope(axis, dtype):
    shape = (32 * THREAD_ROWS, THREAD_COLS)
    out = _run(thread_iota_kernel(axis, dtype), shape, dtype)
    assert torch.equal(out, _grid(shape, axis, dtype))


def test_replicated_column_vector_broadcast():
    out = _run(column_vector_kernel(), (WG_ROWS, WG_COLS), "float32")
    assert torch.equal(out, _grid((WG_ROWS, WG_COLS), 1, "float32", COLUMN_OFFSET))


def test_window_of_the_accumulator():
    out = _run(window_kernel(), (WG_ROWS, WG_COLS), "float32")
    lo, hi = WINDOW_COLS
    ref = torch.full((WG_ROWS, WG_COLS), -1.0, device="cuda")
    ref[:, lo:hi] = torch.arange(hi - lo, device="cuda", dtype=torch.float32) + 100
    assert torch.equal(out, ref)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_signed_device_offset(dtype):
    out = _run(signed_offset_kernel(dtype), (4, 32), dtype)
    ref = _grid((4, 32), 0, dtype) + _grid((4, 32), 1, dtype) * 100 - 7
    assert torch.equal(out, ref)


@pytest.mark.parametrize("kind", ["tiles_float32", "tiles_int32", "vectors"])
def test_causal_mask_on_the_wgmma_accumulator(kind):
    """Row and column iota tiles (f32 or i32) or broadcast vectors (the accumulator's
    column_vector and row_vector layouts), compared, then -inf selected."""
    M, N = 256, 128
    x = torch.randn(M, N, generator=torch.Generator().manual_seed(7)).cuda()
    kernel = causal_mask_vectors_kernel(M, N) if kind == "vectors" \
        else causal_mask_kernel(M, N, kind.removeprefix("tiles_"))
    out = _run(kernel, (M, N), "float32", [x])
    rows = torch.arange(M, device="cuda").unsqueeze(1)
    cols = torch.arange(N, device="cuda").unsqueeze(0)
    ref = torch.where(cols > rows, torch.full_like(x, float("-inf")), x)
    assert torch.equal(out, ref)
