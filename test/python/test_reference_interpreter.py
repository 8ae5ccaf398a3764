"""The CPU interpreter of tile IR (tilemlir.reference, `tilemlir.interpret`): shipped kernels
(the seed-001 demo, seed 000's GEMMs, the warp-specialized Hopper GEMMs with clusters and
split-K, the fused-epilogue GEMM, FlashAttention, softmax, RMSNorm) against numpy on small
shapes, per-thread honesty (a wrong index gives a wrong result), and the errors where a kernel
cannot run as written (deadlocks name every waiting line). CPU only, a few seconds each; the
race detector has its own tests (test_interpreter_races.py)."""

import importlib.util
import io
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tilemlir
from bench import interpret_sweep
from tilemlir.kernels import (attention, gemm_epilogue, hgemm_blackwell, hgemm_hopper,
                              hgemm_tcgen05, hgemm_wgmma, mma_demo, norms, warp_gemm)
from tilemlir.reference import InterpretError
from tilemlir.reference.memory import bf16_bits

ROOT = Path(__file__).resolve().parents[2]


def _rel_error(got, ref) -> float:
    return float(np.linalg.norm(got.astype(np.float32) - ref) / np.linalg.norm(ref))


def _operands(M, N, K, seed=0, b_rows_n=True):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K) if b_rows_n else (K, N)).astype(np.float16)
    return a, b


def test_the_seed_001_demo_matches_numpy():
    a, b = _operands(16, 8, 16, b_rows_n=False)
    d = np.full((16, 8), np.nan, np.float32)            # poison: every element must be written
    tilemlir.interpret(mma_demo.gemm_16x8x16, a, b, d)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    assert not np.isnan(d).any() and _rel_error(d, ref) < 1e-6


@pytest.mark.parametrize("factory, shape", [
    (hgemm_tcgen05.hgemm_v1, (128, 128, 64)),
    (hgemm_tcgen05.hgemm_v2, (128, 128, 256)),
    (hgemm_tcgen05.hgemm_v3, (256, 256, 128)),
    (hgemm_wgmma.hgemm_wgmma_v1, (128, 128, 64)),
    (hgemm_wgmma.hgemm_wgmma_v3, (256, 256, 128)),
    (hgemm_hopper.hgemm_v4, (128, 256, 256)),
], ids=lambda x: getattr(x, "__name__", None) or "x".join(map(str, x)))
def test_seed_000_gemms_match_numpy(factory, shape):
    M, N, K = shape
    a, b = _operands(M, N, K)
    d = np.full((M, N), np.nan, np.float16)
    tilemlir.interpret(factory(M, N, K), a, b, d)
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    assert not np.isnan(d).any() and _rel_error(d, ref) < 1e-3


@pytest.mark.parametrize("ta, tb", [(False, False), (True, False), (False, True), (True, True)])
def test_transposed_warp_gemms_with_beta_match_numpy(ta, tb):
    M, N, K = 32, 16, 32
    rng = np.random.default_rng(1)
    a = rng.standard_normal((K, M) if ta else (M, K)).astype(np.float16)
    b = rng.standard_normal((N, K) if tb else (K, N)).astype(np.float16)
    c = rng.standard_normal((M, N)).astype(np.float32)
    d = np.full((M, N), np.nan, np.float32)
    tilemlir.interpret(warp_gemm.warp_gemm(M, N, K, "float16", 1.0, ta, tb), a, b, c, d)
    A = a.astype(np.float32).T if ta else a.astype(np.float32)
    B = b.astype(np.float32).T if tb else b.astype(np.float32)
    assert _rel_error(d, A @ B + c) < 1e-5


def _from_bf16(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_softmax_matches_numpy(dtype):
    M, N = 3, 512                        # 2 warps, each thread 2 chunks of 8: a CTA reduction
    rng = np.random.default_rng(2)
    x = rng.standard_normal((M, N)).astype(np.float32) * 4
    if dtype == "float16":
        x_in, y = x.astype(np.float16), np.full((M, N), np.nan, np.float16)
        x, read = x_in.astype(np.float32), lambda a: a.astype(np.float32)
    else:
        x_in, y = bf16_bits(x), np.full((M, N), 0x7FC0, np.uint16)
        x, read = _from_bf16(x_in), _from_bf16
    tilemlir.interpret(norms.softmax(M, N, dtype), x_in, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    assert not np.isnan(read(y)).any()
    assert np.abs(read(y) - ref).max() < (2e-3 if dtype == "float16" else 1e-2) * ref.max()


def test_rms_norm_matches_numpy():
    M, N = 2, 1024
    rng = np.random.default_rng(3)
    x = rng.standard_normal((M, N)).astype(np.float16)
    w = rng.standard_normal(N).astype(np.float16)
    y = np.full((M, N), np.nan, np.float16)
    tilemlir.interpret(norms.rms_norm(M, N), x, w, y)
    xf = x.astype(np.float32)
    ref = xf / np.sqrt((xf ** 2).mean(axis=1, keepdims=True) + 1e-6) * w.astype(np.float32)
    assert _rel_error(y, ref) < 1e-3


def test_elementwise_math_broadcast_compare_and_select(tmp_path):
    """One warp, a (4, 32) f32 tile spread over the lanes: unary functions, a row broadcast,
    a comparison with a scalar and a select, against numpy."""
    kernel = _load(tmp_path, "ew", textwrap.dedent("""\
        import tilemlir.lang as T
        Tx = T.tile
        L = T.TileLayout(T.S[(4, 32):(1, 1 @ T.laneid)])
        R = T.TileLayout(T.S[(1, 32):(1, 1 @ T.laneid)])

        @T.prim_func
        def k(X: T.Buffer((4, 32), "float32"), B: T.Buffer((1, 32), "float32"),
              Y: T.Buffer((4, 32), "float32")):
            T.cta_id([1])
            T.warp_id([1])
            T.lane_id([32])
            x = T.alloc_local((4, 32), "float32", layout=L)
            b = T.alloc_local((1, 32), "float32", layout=R)
            t = T.alloc_local((4, 32), "float32", layout=L)
            c = T.alloc_local((4, 32), "bool", layout=L)
            Tx.warp.copy(x, X)
            Tx.warp.copy(b, B)
            Tx.warp.gelu(t, x, approximate="tanh")
            Tx.warp.sigmoid(x, x)
            Tx.warp.add(t, t, b)
            Tx.warp.compare(c, t, ">", 0.5)
            Tx.warp.select(t, c, t, x)
            Tx.warp.copy(Y, t)
        """)).k
    rng = np.random.default_rng(4)
    x, b = rng.standard_normal((4, 32)).astype(np.float32), rng.standard_normal((1, 32)).astype(np.float32)
    y = np.zeros((4, 32), np.float32)
    tilemlir.interpret(kernel, x, b, y)
    gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    t = gelu + b
    assert np.allclose(y, np.where(t > 0.5, t, 1 / (1 + np.exp(-x))), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("producer", [False, True], ids=["two_warpgroups", "with_producer"])
@pytest.mark.parametrize("src_dtype", ["float32", "float16"])
def test_warpgroup_reductions_of_each_warpgroups_rows(src_dtype, producer):
    """Two warpgroups sum and max their own rows, spread over their 4 warps (scope
    "warpgroup"), beside a producer warpgroup on its own named barrier."""
    from elementwise_kernels import warpgroup_reduce_kernel
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 512)).astype(src_dtype)
    s, m = np.full((4, 1), np.nan, np.float32), np.full((4, 1), np.nan, np.float32)
    tilemlir.interpret(warpgroup_reduce_kernel(512, src_dtype, producer), x, s, m)
    wide = x.astype(np.float64)
    assert np.allclose(s, wide.sum(1, keepdims=True), rtol=1e-5, atol=1e-5)
    assert np.array_equal(m, wide.max(1, keepdims=True).astype(np.float32))


def _load(tmp_path, name: str, source: str):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_wrong_register_index_gives_a_wrong_result(tmp_path):
    """The demo with A's k pairs staged into the wrong registers: the mma.sync reads the lanes'
    registers as the hardware does, so D is wrong (on the GPU too)."""
    source = Path(mma_demo.__file__).read_text()
    right = "kp, rM, kHi = s % 2, (s // 2) % 2, s // 4"
    assert right in source
    wrong = _load(tmp_path, "wrong_demo", source.replace(right, "rM, kp, kHi = s % 2, (s // 2) % 2, s // 4"))
    a, b = _operands(16, 8, 16, b_rows_n=False)
    d = np.zeros((16, 8), np.float32)
    tilemlir.interpret(wrong.gemm_16x8x16, a, b, d)
    assert _rel_error(d, a.astype(np.float32) @ b.astype(np.float32)) > 0.1


def test_a_wrong_fragment_layout_gives_a_wrong_result(tmp_path):
    """D's fragment layout with lanes' row and column roles swapped: the registers land in the
    wrong elements."""
    source = Path(mma_demo.__file__).read_text()
    right = "D_FRAG = TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)])"
    assert right in source
    wrong = _load(tmp_path, "wrong_layout", source.replace(
        right, "D_FRAG = TileLayout(S[(2, 8, 4, 2):(2, 1 @ laneid, 8 @ laneid, 1)])"))
    a, b = _operands(16, 8, 16, b_rows_n=False)
    d = np.zeros((16, 8), np.float32)
    tilemlir.interpret(wrong.gemm_16x8x16, a, b, d)
    assert _rel_error(d, a.astype(np.float32) @ b.astype(np.float32)) > 0.1


def _kernel(tmp_path, body: str, name="k"):
    source = textwrap.dedent("""\
        import tilemlir.lang as T
        Tx = T.tile

        @T.prim_func
        def k(X: T.Buffer((64,), "float32"), Y: T.Buffer((64,), "float32")):
            T.cta_id([1])
            tid = T.thread_id([64])
        """) + textwrap.indent(textwrap.dedent(body), "    ")
    return _load(tmp_path, name, source).k


def test_per_thread_scalars_branches_and_loops(tmp_path):
    kernel = _kernel(tmp_path, """\
        acc: T.float32 = 0.0
        for i in T.serial(4):
            acc = acc + X[(tid + i) % 64]
        if tid % 2 == 0:
            Y[tid] = acc
        else:
            Y[tid] = -acc
        """)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    tilemlir.interpret(kernel, x, y)
    sums = np.array([sum(x[(t + i) % 64] for i in range(4)) for t in range(64)])
    assert np.array_equal(y, np.where(np.arange(64) % 2 == 0, sums, -sums))


def test_print_writes_what_the_gpu_prints(tmp_path):
    spec = importlib.util.spec_from_file_location("debug_kernels",
                                                  ROOT / "test" / "Inputs" / "debug_kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = io.StringIO()
    tilemlir.interpret(module.show, (np.arange(64) * 0.5 + 1.5).astype(np.float32), 7, out=out)
    # The same lines as test_debug_print_gpu.py expects from the device.
    assert out.getvalue().splitlines() == [
        "[debug_kernels.py:15] tid 0 x = 1.5 n% 7",
        "[debug_kernels.py:15] tid 1 x = 2 n% 7",
        "[debug_kernels.py:16] tid=0 x=1.500 hex=0000 shape=(2, 3)",
        "[debug_kernels.py:16] tid=1 x=2.000 hex=00ff shape=(2, 3)",
        "[debug_kernels.py:18] last: 66!",
    ]


@pytest.mark.parametrize("body, message", [
    ("if tid < 32:\n    T.cuda.cta_sync()\n",
     "wait in the CTA barrier (bar.sync 0) (32 of 64 threads arrived)\n"
     "  CTA (0, 0, 0), threads 32-63: returned"),
    ("Y[tid] = X[tid + 1]\n", "index (64,) is out of the buffer's shape (64,) (thread 63)"),
    ("pool = T.SMEMPool()\nbar = pool.alloc((1,), 'uint64')\npool.commit()\n"
     "if tid == 0:\n    T.ptx.mbarrier.init(bar.ptr_to([0]), 2)\n"
     "    T.ptx.mbarrier.arrive(bar.ptr_to([0]))\n"
     "T.cuda.cta_sync()\nT.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0)\n",
     "threads 0-63: at {k}:15: wait for the phase of parity 0 of the mbarrier at byte 0 of the "
     "shared memory of CTA (0, 0, 0), which still expects 1 of 2 arrivals"),
    ("if tid == 0:\n    Tx.warp.fill(Y[0:32], 1.0)\n",
     "a warp-scope tile.fill reached by 1 of the 32 threads of its warp"),
])
def test_what_would_hang_or_fault_on_a_gpu_is_an_error_naming_the_line(tmp_path, body, message):
    kernel = _kernel(tmp_path, body)
    with pytest.raises(InterpretError) as err:
        tilemlir.interpret(kernel, np.zeros(64, np.float32), np.zeros(64, np.float32))
    assert message.format(k=tmp_path / "k.py") in str(err.value)
    assert str(err.value).startswith(str(tmp_path / "k.py") + ":")


@pytest.mark.parametrize("dec, inc, hangs", [(96, 208, True), (96, 200, False),
                                              (40, 232, False)])
def test_setmaxnreg_waits_for_registers_the_cta_holds(tmp_path, dec, inc, hangs):
    """A CTA of 3 warpgroups holds 168 x 384 registers from launch: the consumers' .inc takes
    what the producer's .dec gave back, and waits forever when that is not enough (96 + 2 x
    208 > 3 x 168: the hang of the cp.async GEMMs on the H200). Run without tile-verify,
    which refuses such a kernel before it runs."""
    source = textwrap.dedent(f"""\
        import tilemlir.lang as T

        @T.prim_func
        def k(Y: T.Buffer((384,), "float32")):
            T.cta_id([1])
            wg = T.warpgroup_id([3])
            warp = T.warp_id_in_wg([4])
            lane = T.lane_id([32])
            if wg == 0:
                T.ptx.setmaxnreg({dec}, increase=False)
            else:
                T.ptx.setmaxnreg({inc}, increase=True)
            Y[wg * 128 + warp * 32 + lane] = 1.0
        """)
    kernel, y = _load(tmp_path, "k", source).k, np.zeros(384, np.float32)
    if not hangs:
        tilemlir.interpret(kernel, y)
        assert (y == 1.0).all()
        return
    with pytest.raises(InterpretError) as err:
        tilemlir.interpret(kernel, y)
    assert "deadlock" in str(err.value)
    assert (f"threads 128-383: at {tmp_path / 'k.py'}:12: setmaxnreg.inc to 208 registers per "
            f"thread, which takes 10240 more registers than these warps hold; the CTA's pool "
            f"holds 9216 (the CTA got 168 per thread at launch, 64512 in all)") in str(err.value)


def test_loops_with_per_thread_bounds_run_per_thread(tmp_path):
    kernel = _kernel(tmp_path, """\
        acc: T.float32 = 0.0
        for i in T.serial(tid % 5):
            acc = acc + X[i]
        Y[tid] = acc
        """)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    tilemlir.interpret(kernel, x, y)
    assert np.array_equal(y, [x[:t % 5].sum() for t in range(64)])


def test_a_lane_may_wait_for_lanes_past_its_branch(tmp_path):
    """Independent thread scheduling: thread 0 waits inside a branch for an mbarrier that the
    other threads arrive on in the other branch; on the GPU they go on, and so they do here."""
    kernel = _kernel(tmp_path, """\
        pool = T.SMEMPool()
        bar = pool.alloc((1,), 'uint64')
        pool.commit()
        if tid == 0:
            T.ptx.mbarrier.init(bar.ptr_to([0]), 63)
        T.cuda.cta_sync()
        if tid == 0:
            T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0)
            Y[0] = 1.0
        else:
            T.ptx.mbarrier.arrive(bar.ptr_to([0]))
        """)
    y = np.zeros(64, np.float32)
    tilemlir.interpret(kernel, np.zeros(64, np.float32), y)
    assert y[0] == 1.0


def _gemm(kernel, M, N, K, *extra):
    a, b = _operands(M, N, K)
    d = np.full((M, N), np.nan, np.float16)
    tilemlir.interpret(kernel, a, b, d, *extra)
    assert not np.isnan(d).any()
    assert _rel_error(d, a.astype(np.float32) @ b.astype(np.float32).T) < 1e-3


@pytest.mark.parametrize("name", ["hgemm_v5", "hgemm_v6", "hgemm_v7"])
def test_warp_specialized_gemms_match_numpy(name):
    """Producer and consumer warpgroups handing stages over through mbarriers, named barriers
    per consumer, persistent CTAs with TMA stores (v6), 2-CTA clusters with B multicast and
    stages freed in both CTAs through mapa (v7)."""
    _gemm(getattr(hgemm_hopper, name)(256, 256, 128), 256, 256, 128)


@pytest.mark.parametrize("name", ["hgemm_v4", "hgemm_v5", "hgemm_v6"])
def test_blackwell_warp_specialized_gemms_match_numpy(name):
    """Blackwell (tcgen05): a TMA ring with MMAs committing to mbarriers (v4), warp roles (v5),
    double-buffered TMEM accumulators handed over by barrier pairs (v6). v7's CTA pairs
    (cta_group=2) are not modelled."""
    _gemm(getattr(hgemm_blackwell, name)(256, 256, 128), 256, 256, 128)


@pytest.mark.parametrize("path", ["shared", "shared_async", "registers"])
def test_masked_copies_move_what_is_in_range_and_fill_the_rest(path):
    """copy_masked / copy_async_masked over 64 x 64 tiles hanging past a 100 x 70 matrix:
    D = A, and the tile past both edges holds the fill (cp.async: zeros) out of range."""
    from masked_kernels import through_registers, through_shared
    M, N = 100, 70
    dtype = np.float32 if path == "registers" else np.float16
    a = np.random.default_rng(8).standard_normal((M, N)).astype(dtype)
    d, seen = np.zeros((M, N), dtype), np.full((4 * 64, 64), 7, dtype)
    kernel = through_registers(M, N, fill=-2.0) if path == "registers" else \
        through_shared(M, N, fill=-1.0, asynchronous=path == "shared_async")
    tilemlir.interpret(kernel, a, d, seen)
    assert np.array_equal(d, a)
    r, c = np.indices((64, 64))
    past = (r >= M - 64) | (c >= N - 64)
    fill = {"shared": -1.0, "shared_async": 0.0, "registers": -2.0}[path]
    assert (seen[-64:][past] == fill).all()
    assert np.array_equal(seen[-64:][~past], a[64:, 64:].reshape(-1))


def test_split_k_gemms_match_numpy():
    """v6's split-K (fp32 partials, an atomic counter, bar.red deciding who sums) and v8's
    reduction across the two CTAs of a cluster (peer mbarriers through mapa)."""
    M = N = K = 256
    _gemm(hgemm_hopper.hgemm_v6(M, N, K, SPLIT_K=2), M, N, K,
          np.zeros(hgemm_hopper.split_k_workspace_shape(M, N, 128, 256, 2), np.float32),
          np.zeros(hgemm_hopper.split_k_counters_shape(M, N, 128, 256), np.int32))
    _gemm(hgemm_hopper.hgemm_v8(M, N, K, SPLIT_K=2), M, N, K,
          np.zeros(hgemm_hopper.split_k_workspace_shape(M, N, 128, 256, 2), np.float32))


STAGED = [  # (kernel, M, N, K, config): N odd or even, tiles past M and N, a run-time M
    ("hgemm_v6", 70, 131, 64, dict(BM=64, BN=128, STAGES=4, EPI_N=64, SMS=3)),
    ("hgemm_v6", 130, 263, 40, dict(PRODUCER="cp_async", SMS=2)),
    ("hgemm_v6", 129, 262, 256, dict(SPLIT_K=2, SMS=3)),
    ("hgemm_v7", 200, 301, 72, dict(SMS=4)),
    ("hgemm_v7", None, 77, 64, dict(SMS=2, BN=128, EPI_N=64)),
]


@pytest.mark.parametrize("name, M, N, K, config", STAGED,
                         ids=[f"{c[0]}-{c[1]}x{c[2]}x{c[3]}" for c in STAGED])
def test_the_staged_epilogue_stores_rows_of_any_alignment(name, M, N, K, config):
    """EPILOGUE="staged" (parts.StagedStore): each row's 16-byte units of D read realigned
    from the padded staging rows, stored whole inside the row, element by element at its two
    ends; every element written (NaN-poisoned), none outside D (the interpreter's bounds)."""
    factory = getattr(hgemm_hopper, name)
    kernel = factory(M if M is not None else tilemlir.lang.dynamic("M"), N, K,
                     EPILOGUE="staged", **config)
    for rows in ([M] if M is not None else [1, 63, 200]):
        extra = interpret_sweep.split_k_arrays(kernel, rows) \
            if config.get("SPLIT_K", 1) > 1 else []
        a, b = _operands(rows, N, K)
        d = np.full((rows, N), np.nan, np.float16)
        tilemlir.interpret(kernel, a, b, d, *extra)
        assert not np.isnan(d).any()
        assert _rel_error(d, a.astype(np.float32) @ b.astype(np.float32).T) < 1e-3


SWAPPED = [  # (M, N, K, config): hgemm_decode(SWAP=True), N <= 64 on the narrow side
    (300, 7, 128, dict(SMS=3)), (130, 64, 200, dict(SMS=2, PRODUCER="cp_async")),
    (200, 1, 512, dict(SMS=4, SPLIT_K=2)), (None, 13, 64, dict(SMS=3, BN=64, STAGES=12)),
]


@pytest.mark.parametrize("M, N, K, config", SWAPPED,
                         ids=[f"{c[0]}x{c[1]}x{c[2]}" for c in SWAPPED])
def test_the_swapped_decode_kernel_matches_numpy(M, N, K, config):
    """M and N exchanged: A's rows on wgmma's 64-row side, B's N rows padded to MPAD, D's tile
    stored as the accumulator holds it (masked past M and N); split K, cp.async loads for odd
    K, a run-time M (one kernel for 1, 65 and 190 rows); NaN-poisoned output."""
    from tilemlir.kernels.gemm_decode import hgemm_decode
    kernel = hgemm_decode(M if M is not None else tilemlir.lang.dynamic("M"), N, K, SWAP=True,
                          **config)
    for rows in ([M] if M is not None else [1, 65, 190]):
        extra = interpret_sweep.split_k_arrays(kernel, rows) \
            if config.get("SPLIT_K", 1) > 1 else []
        a, b = _operands(rows, N, K)
        d = np.full((rows, N), np.nan, np.float16)
        tilemlir.interpret(kernel, a, b, d, *extra)
        assert not np.isnan(d).any()
        assert _rel_error(d, a.astype(np.float32) @ b.astype(np.float32).T) < 1e-3


@pytest.mark.parametrize("M, N, K, dtype, SMS", interpret_sweep.cases(24, seed=21))
def test_the_front_door_matches_numpy_at_random_shapes(M, N, K, dtype, SMS):
    """The GEMM front door's own configuration for each shape, as it runs on the GPU (the
    kernel compiled for a run-time M), with 2-4 workers; NaN-poisoned output
    (bench/interpret_sweep.py runs more)."""
    got, ref, config = interpret_sweep.run_case(M, N, K, dtype, SMS)
    assert interpret_sweep.problem(got, ref) is None, config


@pytest.mark.parametrize("case", interpret_sweep.fp8_cases(9, seed=22),
                         ids=lambda c: "{}x{}x{}-{}-fast{}-sms{}".format(*c))
def test_the_fp8_gemm_matches_numpy_at_random_shapes(case):
    """scaled_mm's kernel and configuration: tensor, row and block scales, masked edges."""
    got, ref, config = interpret_sweep.run_fp8(*case)
    assert interpret_sweep.problem(got, ref) is None, config


@pytest.mark.parametrize("case", interpret_sweep.fused_cases(8, seed=22),
                         ids=lambda c: "{}x{}x{}-{}-bias{}-res{}-BM{}-BN{}-sms{}".format(*c))
def test_hgemm_fused_matches_numpy_at_random_shapes(case):
    """The fused epilogue (bias, activation, residual) at ragged shapes, cp.async and direct
    stores where K and N need them, 2 or 3 warpgroups."""
    assert interpret_sweep.problem(*interpret_sweep.run_fused(*case)) is None


@pytest.mark.parametrize("case", [(130, 263, 200, "gelu_tanh", True, True, 128, 256, 2),
                                  (70, 77, 64, "silu", True, False, 64, 128, 3),
                                  (200, 301, 555, "relu", False, True, 64, 256, 2)],
                         ids=lambda c: "{}x{}x{}-{}".format(*c))
def test_hgemm_fused_with_the_staged_epilogue_matches_numpy(case):
    """EPILOGUE="staged" (odd N): bias and residual by masked loads, D through the staging
    rows in 16-byte stores; every element written (NaN-poisoned)."""
    assert interpret_sweep.problem(*interpret_sweep.run_fused(*case, EPILOGUE="staged")) is None


@pytest.mark.parametrize("case", interpret_sweep.attention_cases(6, seed=22),
                         ids=lambda c: "B{}H{}Hkv{}Sq{}Skv{}D{}-{}-SMS{}".format(*c))
def test_the_attention_kernel_matches_numpy_at_random_shapes(case):
    """The run-time-shape kernel the attention front door compiles: GQA, ragged lengths,
    every head dim, both causal alignments, 2 to 4 CTAs taking several items each
    (bench/interpret_sweep.py runs more)."""
    got, ref = interpret_sweep.run_attention(*case)
    assert interpret_sweep.attention_problem(got, ref) is None


@pytest.mark.parametrize("case", interpret_sweep.norm_cases(12, seed=22),
                         ids=lambda c: "{}-{}x{}-{}".format(*c))
def test_the_norm_kernels_match_numpy_at_random_shapes(case):
    """Softmax, RMSNorm and LayerNorm for a run-time M at random N, both dtypes."""
    assert interpret_sweep.norm_problem(*interpret_sweep.run_norm(*case)) is None


def test_fused_epilogue_gemm_matches_numpy():
    """hgemm_fused: bias, gelu_tanh and a residual loaded by TMA into the staging buffer."""
    M, N, K = 256, 256, 128
    rng = np.random.default_rng(5)
    a, b = _operands(M, N, K)
    bias = rng.standard_normal(N).astype(np.float16)
    residual = rng.standard_normal((M, N)).astype(np.float16)
    d = np.full((M, N), np.nan, np.float16)
    tilemlir.interpret(gemm_epilogue.hgemm_fused(M, N, K, residual=True), a, b, bias, residual, d)
    x = a.astype(np.float32) @ b.astype(np.float32).T + bias.astype(np.float32)
    ref = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))) \
        + residual.astype(np.float32)
    assert _rel_error(d, ref) < 1e-3


@pytest.mark.parametrize("causal, H, S, SMS", [(False, 1, 256, 132), (True, 1, 256, 132),
                                               (True, 3, 384, 2)],
                         ids=["full", "causal", "causal-dealt"])
def test_flash_attention_matches_numpy(causal, H, S, SMS):
    """Two consumer warpgroups taking turns through named barriers (bar.sync / bar.arrive),
    Q K^T and P V pipelined, P from registers as wgmma's A operand; fixed shapes, and 9 causal
    items over 2 CTAs (rounds dealt back to front, a partial last one)."""
    D = 64
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((H, S, D)).astype(np.float16) for _ in range(3))
    o = np.full((H, S, D), np.nan, np.float16)
    tilemlir.interpret(attention.flash_attention(1, H, S, D, causal=causal, SMS=SMS),
                       q.reshape(-1, D), k.reshape(-1, D), v.reshape(-1, D), o.reshape(-1, D))
    s = q.astype(np.float32) @ k.astype(np.float32).transpose(0, 2, 1) / np.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    ref = p / p.sum(axis=-1, keepdims=True) @ v.astype(np.float32)
    assert not np.isnan(o).any() and np.abs(o - ref).max() < 2e-3


@pytest.mark.parametrize("args, message", [
    ((np.zeros((16, 16), np.float32), np.zeros((16, 8), np.float16), np.zeros((16, 8), np.float32)),
     "argument 'A_g' must be an array of 256 float16"),
    ((np.zeros((16, 16), np.float16), np.zeros((16, 8), np.float16)),
     "the kernel takes 3 arguments (A_g, B_g, D_g), got 2"),
])
def test_wrong_arguments_name_the_parameter(args, message):
    with pytest.raises(TypeError) as err:
        tilemlir.interpret(mma_demo.gemm_16x8x16, *args)
    assert message in str(err.value)


def test_tile_ir_text_runs_too():
    text = (ROOT / "examples" / "mma_demo.mlir").read_text()
    a, b = _operands(16, 8, 16, b_rows_n=False)
    d = np.zeros((16, 8), np.float32)
    tilemlir.interpret(text, a, b, d)
    assert _rel_error(d, a.astype(np.float32) @ b.astype(np.float32)) < 1e-6


def test_warp_ids_may_be_taken_under_a_branch_on_the_lane(tmp_path):
    """T.warp_id and T.warpgroup_id read their index from lane 0 with a warp-wide shuffle
    (ptxas then keeps their code uniform), built once at the top of the kernel: taken under a
    branch on the lane, a shuffle there would be reached by one lane of each warp."""
    kernel = _load(tmp_path, "warp_ids", textwrap.dedent("""\
        import tilemlir.lang as T

        @T.prim_func
        def k(Y: T.Buffer((256,), "int32")):
            T.cta_id([1])
            lane = T.lane_id([32])
            if lane == 0:
                w = T.warp_id([8])
                g = T.warpgroup_id([2])
                Y[w * 32] = w + 100 * g
            else:
                v = T.warp_id([8])
                Y[v * 32 + lane] = -v
        """)).k
    y = np.zeros(256, np.int32)
    tilemlir.interpret(kernel, y)
    warp, lane = np.arange(256) // 32, np.arange(256) % 32
    assert np.array_equal(y, np.where(lane == 0, warp + 100 * (warp // 4), -warp))
    ptx = tilemlir.compile(kernel, target="sm_90a").ptx
    body = ptx[ptx.index(".entry"):]
    assert body.count("shfl.sync.idx") == 2, body           # one per index, not per call
    assert body.index("shfl.sync.idx") < body.index("bra"), body   # before the lane branch
