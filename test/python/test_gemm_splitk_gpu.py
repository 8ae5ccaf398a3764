"""Split-K in hgemm_v6, hgemm_v7 and hgemm_v8 and the GEMM front door (tilemlir.kernels.gemm) on
the H200, against torch in float32, with NaN-poisoned outputs and fresh inputs: ragged M, N and
K, several splits, several units per CTA, repeated launches on the same workspace and counters
(the kernel must leave the counters zero), and the sum's order fixed (bitwise repeatable)."""

import pytest

from tilemlir.kernels.gemm import Gemm, candidate_configs, hgemm, matmul_nt, tuned_hgemm

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from gpu_check import assert_matches, assert_written, poisoned  # noqa: E402  (needs torch)

DTYPES = {torch.float16: "float16", torch.bfloat16: "bfloat16"}


@pytest.fixture(autouse=True)
def _sm90():
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("TMA + wgmma kernels need an sm_90a GPU (Hopper)")


def _inputs(m, n, k, dtype):
    return (torch.randn(m, k, device="cuda", dtype=dtype),
            torch.randn(n, k, device="cuda", dtype=dtype))


def _check(gemm, m, n, k, dtype, launches=2):
    for _ in range(launches):                     # fresh inputs, the same workspace
        a, b = _inputs(m, n, k, dtype)
        d = gemm(a, b, out=poisoned((m, n), dtype))
        torch.cuda.synchronize()
        assert_written(d)
        assert_matches(d.float(), a.float() @ b.float().T, rtol=2e-2, atol=2e-2 * k ** 0.5)
    return a, b


SPLIT_CASES = [
    ((200, 296, 4096), dict(SPLIT_K=2)),          # 1000x1000x8192 scaled down: ragged M, N
    ((200, 296, 4096), dict(SPLIT_K=3)),          # 64 k-tiles in runs of 21, 21, 22
    ((200, 296, 4096), dict(SPLIT_K=4)),
    ((300, 264, 4000), dict(SPLIT_K=3)),          # ragged K too (zero-filled last k-tile)
    ((200, 296, 4096), dict(SPLIT_K=3, SMS=5)),   # several units per CTA, the ring wraps
    ((520, 520, 2048), dict(BM=128, BN=128, STAGES=6, SPLIT_K=2)),
    ((256, 512, 192), dict(SPLIT_K=3)),           # one k-tile per split
    # hgemm_v7: clusters of 2 share each split's B loads, each CTA fixes up its own tile
    ((200, 296, 4096), dict(KERNEL="hgemm_v7", SPLIT_K=2)),
    ((384, 768, 320), dict(KERNEL="hgemm_v7", SPLIT_K=2)),          # an odd pair: row 3 of 3
    ((200, 296, 4096), dict(KERNEL="hgemm_v7", SPLIT_K=3, SMS=4)),  # 2 clusters, 12 units
    ((1000, 1000, 8192), dict(KERNEL="hgemm_v7", SPLIT_K=4)),
    # hgemm_v7 TAIL_SPLIT: whole pairs first, then the partial last wave's pairs split
    ((384, 768, 320), dict(KERNEL="hgemm_v7", TAIL_SPLIT=2, SMS=8)),   # 4 whole, 2 split (odd)
    ((1000, 1000, 2000), dict(KERNEL="hgemm_v7", TAIL_SPLIT=3, SMS=20)),  # ragged, 10 + 6 x 3
    ((1536, 4096, 4096), dict(KERNEL="hgemm_v7", TAIL_SPLIT=2)),       # 66 whole + 30 x 2
    ((1024, 5120, 4096), dict(KERNEL="hgemm_v7", TAIL_SPLIT=4)),       # 66 whole + 14 x 4
    ((700, 1400, 576), dict(KERNEL="hgemm_v7", BN=320, STAGES=3, EPI_N=64, SMS=8,
                            TAIL_SPLIT=2)),                         # 128 x 320: 12 whole + 3 x 2
    ((256, 2048, 256), dict(KERNEL="hgemm_v7", TAIL_SPLIT=4, SMS=6)),  # 6 + 2 x 4, a k-tile each
    # hgemm_v7 STREAM_K: the last waves' k-tiles dealt out in even runs, pairs in pieces
    ((640, 384, 320), dict(KERNEL="hgemm_v7", BN=128, EPI_N=64, SMS=8, STREAM_K=True)),
    ((1280, 4096, 4096), dict(KERNEL="hgemm_v7", STREAM_K=True)),   # 80 pairs in runs of 78
    ((448, 5120, 5120), dict(KERNEL="hgemm_v7", BN=320, STAGES=3, EPI_N=64, STREAM_K=True)),
    ((384, 4096, 4096), dict(KERNEL="hgemm_v7", STREAM_K=True)),    # 32 pairs: 3 pieces each
    # hgemm_v8: clusters of 2 CTAs, one or two per tile, each CTA reducing half the columns
    ((1000, 1000, 8192), dict(KERNEL="hgemm_v8", SPLIT_K=4)),     # two clusters per tile
    ((1000, 1000, 8192), dict(KERNEL="hgemm_v8", BM=128, BN=128, STAGES=6, SPLIT_K=2)),
    ((200, 296, 4096), dict(KERNEL="hgemm_v8", SPLIT_K=4)),       # a half past N
    ((200, 296, 4096), dict(KERNEL="hgemm_v8", SPLIT_K=2)),
    ((300, 264, 4000), dict(KERNEL="hgemm_v8", SPLIT_K=4)),       # ragged K
    ((136, 200, 4096), dict(KERNEL="hgemm_v8", BM=64, BN=128, STAGES=8, SPLIT_K=4)),
    ((256, 512, 256), dict(KERNEL="hgemm_v8", SPLIT_K=4)),        # one k-tile per split
    ((2048, 2048, 1024), dict(KERNEL="hgemm_v8", SPLIT_K=4)),     # 512 CTAs: four waves
]


@pytest.mark.parametrize("dtype", list(DTYPES), ids=["f16", "bf16"])
@pytest.mark.parametrize("shape, config", SPLIT_CASES,
                         ids=[f"{'x'.join(map(str, s))}-{'-'.join(f'{k}{v}' for k, v in c.items())}"
                              for s, c in SPLIT_CASES])
def test_split_k_matches_torch(shape, config, dtype):
    m, n, k = shape
    gemm = Gemm(m, n, k, DTYPES[dtype], config)
    a, b = _check(gemm, m, n, k, dtype)
    spaces = gemm._workspace(a.device)
    if len(spaces) == 2:                          # v6 and v7 count units; v8 has no counters
        assert int(spaces[1].abs().sum()) == 0, "the last unit of each tile resets its counter"
    # The partials are summed in split order, whichever unit finishes last.
    first, second = gemm(a, b), gemm(a, b)
    torch.cuda.synchronize()
    assert torch.equal(first, second)


FRONT_DOOR = [(1000, 1000, 8192), (1000, 1000, 1000), (2048, 2048, 2048), (4096, 4096, 512),
              (3000, 5120, 2056), (500, 504, 8192), (64, 64, 8192), (1536, 4096, 4096),
              (2048, 5120, 2048),
              # smaller than a tile in M, N or K: the windows hang past the edges
              (1, 4096, 4096), (16, 4096, 4096), (7, 1000, 512), (64, 64, 8), (128, 128, 16),
              (2192, 4296, 40), (33, 72, 24),
              # rows that are not whole 16-byte units: cp.async loads (K), direct stores (N)
              (3333, 4444, 5552), (1000, 3, 128), (333, 444, 555), (2999, 8193, 769),
              (1, 4096, 4095), (7, 1000, 513), (1785, 131, 77)]


@pytest.mark.parametrize("dtype", list(DTYPES), ids=["f16", "bf16"])
@pytest.mark.parametrize("shape", FRONT_DOOR, ids=["x".join(map(str, s)) for s in FRONT_DOOR])
def test_front_door_matches_torch(shape, dtype):
    m, n, k = shape
    _check(hgemm(m, n, k, DTYPES[dtype]), m, n, k, dtype)


STAGED = [  # odd N, D's rows stored through the staging rows (parts.StagedStore)
    ((2999, 8193, 769), {}), ((7181, 2787, 2), {}), ((1163, 7805, 32), {}),   # the door's own
    ((2048, 4100, 16), {}), ((5518, 6246, 20), {}),     # even N at K <= 64: the door's own too
    ((333, 447, 555), dict(KERNEL="hgemm_v6", SPLIT_K=2, PRODUCER="cp_async")),
    ((200, 301, 4096), dict(KERNEL="hgemm_v7", SPLIT_K=2)),
    ((1000, 1001, 2000), dict(KERNEL="hgemm_v7", TAIL_SPLIT=3, SMS=20)),
    ((100, 77, 64), dict(KERNEL="hgemm_v6", BM=64, BN=64, STAGES=8, EPI_N=64)),
    ((300, 65, 320), dict(KERNEL="hgemm_v6", BM=64, BN=128, STAGES=8)),
]


@pytest.mark.parametrize("shape, config", STAGED, ids=["x".join(map(str, s)) + "-" +
                                                       "-".join(f"{k}{v}" for k, v in c.items())
                                                       for s, c in STAGED])
def test_staged_epilogue_matches_torch(shape, config):
    """EPILOGUE="staged": every element of D written, none past it (the poison around a
    narrower view of a wider buffer stays), at ragged edges, split-K and cp.async loads."""
    m, n, k = shape
    config = dict(config or candidate_configs(m, n, k)[0], EPILOGUE="staged")
    gemm = Gemm(m, n, k, "bfloat16", config)
    _check(gemm, m, n, k, torch.bfloat16)
    a, b = _inputs(m, n, k, torch.bfloat16)
    wide = poisoned((m + 1, n + 9), torch.bfloat16)
    d = gemm(a, b, out=wide.view(-1)[:m * n].view(m, n))
    torch.cuda.synchronize()
    assert_matches(d.float(), a.float() @ b.float().T, rtol=2e-2, atol=2e-2 * k ** 0.5)
    assert torch.isnan(wide.view(-1)[m * n:]).all(), "stored past D"


SWAPPED = [  # N <= 64: hgemm_decode with M and N exchanged (A's rows on the 64-row side)
    ((516, 1, 5323), dict(SPLIT_K=3)), ((4300, 41, 347), dict(BN=64, STAGES=12)),
    ((300, 64, 256), dict(SPLIT_K=2)), ((1000, 8, 4096), dict(SPLIT_K=4)),
    ((65, 13, 64), {}), ((2048, 60, 2048), dict(BN=64, STAGES=12, SPLIT_K=2)),
]


@pytest.mark.parametrize("shape, config", SWAPPED, ids=["x".join(map(str, s)) + "-" +
                                                        "-".join(f"{k}{v}" for k, v in c.items())
                                                        for s, c in SWAPPED])
def test_swapped_decode_matches_torch(shape, config):
    """hgemm_decode(SWAP=True) for a narrow D: split K, cp.async loads for odd K, ragged M,
    one compile for every M (the door's run-time M: a second M reuses the kernel)."""
    from tilemlir.kernels.gemm_decode import mpad_for
    m, n, k = shape
    config = dict(KERNEL="hgemm_decode", MPAD=mpad_for(n), SWAP=True, **config)
    if k % 8:
        config["PRODUCER"] = "cp_async"
    gemm = Gemm(m, n, k, "float16", config)
    _check(gemm, m, n, k, torch.float16)
    other = Gemm(m + 37, n, k, "float16", config)
    _check(other, m + 37, n, k, torch.float16)
    assert other.kernel is gemm.kernel


UNALIGNED_K = [(333, 444, 555), (2999, 8193, 769), (1785, 131, 77), (65, 300, 3),
               (1000, 1000, 1002)]


@pytest.mark.parametrize("producer", ["pad_k", "cp_async"])
@pytest.mark.parametrize("shape", UNALIGNED_K, ids=["x".join(map(str, s)) for s in UNALIGNED_K])
def test_unaligned_k_padded_and_cp_async_match_torch(shape, producer):
    """K not a multiple of 8: the first padded candidate (rows padded with zeros by the front
    door, TMA kernels) and the first masked cp.async one, on strided operands too."""
    m, n, k = shape
    configs = candidate_configs(m, n, k)
    config = next(c for c in configs if bool(c.get("PAD_K")) == (producer == "pad_k"))
    gemm = Gemm(m, n, k, "float16", config)
    _check(gemm, m, n, k, torch.float16)
    a = torch.randn(k, m, device="cuda", dtype=torch.float16).T       # strided views
    b = torch.randn(n, k + 5, device="cuda", dtype=torch.float16)[:, 5:]
    d = gemm(a, b, out=poisoned((m, n), torch.float16))
    torch.cuda.synchronize()
    assert_matches(d.float(), a.float() @ b.float().T, rtol=2e-2, atol=2e-2 * k ** 0.5)


def test_padded_front_door_names_a_wrong_operand():
    from tilemlir.runtime.args import ArgumentError
    gemm = hgemm(333, 444, 555, "float16")
    assert gemm.config.get("PAD_K")
    a, b = _inputs(333, 444, 555, torch.float16)
    with pytest.raises(ArgumentError, match=r"hgemm: b must be 444 x 555, got \[444, 554\]"):
        gemm(a, b[:, :554])
    with pytest.raises(ArgumentError, match=r"hgemm: a must be 333 x 555, got \[333, 556\]"):
        gemm(torch.randn(333, 556, device="cuda", dtype=torch.float16), b)


def test_matmul_nt_allocates_the_output():
    a, b = _inputs(1000, 1000, 8192, torch.float16)
    d = matmul_nt(a, b)
    torch.cuda.synchronize()
    assert d.shape == (1000, 1000) and d.dtype == torch.float16
    assert_matches(d.float(), a.float() @ b.float().T, rtol=2e-2, atol=2e-2 * 8192 ** 0.5)


def test_matmul_nt_takes_any_strides_and_sizes():
    """Transposed and sliced operands (contiguous copies), a non-contiguous out (written
    through a contiguous one), K = 0 (zeros) and M = 0 (empty), as torch.matmul does."""
    a = torch.randn(300, 777, device="cuda", dtype=torch.float16)
    bt = torch.randn(777, 515, device="cuda", dtype=torch.float16)     # b = bt.T: strided
    out = torch.full((515, 300), float("nan"), device="cuda", dtype=torch.float16).T
    d = matmul_nt(a[:, ::1], bt.T, out)
    torch.cuda.synchronize()
    assert d is out and not out.isnan().any()
    assert_matches(out.float(), a.float() @ bt.float(), rtol=2e-2, atol=2e-2 * 777 ** 0.5)
    zeros = matmul_nt(a[:, :0], bt.T[:, :0])
    empty = matmul_nt(a[:0], bt.T)
    torch.cuda.synchronize()
    assert zeros.shape == (300, 515) and not zeros.any() and empty.shape == (0, 515)


def test_tuned_front_door_picks_a_candidate_and_is_correct(isolated_cache):
    m, n, k = 1000, 1000, 2048                 # 16 candidates, split-K among them
    tuned = tuned_hgemm(m, n, k, "float16")
    assert tuned.config in candidate_configs(m, n, k)
    _check(tuned, m, n, k, torch.float16)
    m, n, k = 700, 900, 1001                   # K not a multiple of 8: padded and cp.async
    tuned = tuned_hgemm(m, n, k, "float16")
    assert tuned.config in candidate_configs(m, n, k)
    _check(tuned, m, n, k, torch.float16)
