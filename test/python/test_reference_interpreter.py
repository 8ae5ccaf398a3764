"""The CPU interpreter of tile IR (tilemlir.reference, `tilemlir.interpret`): shipped kernels
(the seed-001 demo, seed 000's GEMMs, softmax, RMSNorm) against numpy on small shapes, per-thread honesty (a wrong index gives a wrong result), and the
errors where a kernel cannot run as written. CPU only, a few seconds each."""

import importlib.util
import io
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tilemlir
from tilemlir.kernels import (hgemm_hopper, hgemm_tcgen05, hgemm_wgmma, mma_demo, norms,
                              warp_gemm)
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
     "a CTA barrier reached by 32 of the 64 threads"),
    ("Y[tid] = X[tid + 1]\n", "index (64,) is out of the buffer's shape (64,) (thread 63)"),
    ("pool = T.SMEMPool()\nbar = pool.alloc((1,), 'uint64')\npool.commit()\n"
     "if tid == 0:\n    T.ptx.mbarrier.init(bar.ptr_to([0]), 2)\n"
     "    T.ptx.mbarrier.arrive(bar.ptr_to([0]))\n"
     "T.cuda.cta_sync()\nT.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0)\n",
     "thread 0 waits for the mbarrier phase of parity 0, which still expects 1 of 2 arrivals"),
    ("for i in T.serial(tid):\n    Y[tid] = X[i]\n", "the loop bound differs across threads"),
    ("if tid == 0:\n    Tx.warp.fill(Y[0:32], 1.0)\n",
     "a warp-scope tile.fill reached by 1 of the 32 threads of its warp"),
])
def test_what_would_hang_or_fault_on_a_gpu_is_an_error_naming_the_line(tmp_path, body, message):
    kernel = _kernel(tmp_path, body)
    with pytest.raises(InterpretError) as err:
        tilemlir.interpret(kernel, np.zeros(64, np.float32), np.zeros(64, np.float32))
    assert message in str(err.value)
    assert str(err.value).startswith(str(tmp_path / "k.py") + ":")


def test_a_wait_before_the_arrivals_of_another_role_is_reported():
    """hgemm_v5's producer waits for stages the consumers release later in program order."""
    M, N, K = 256, 256, 1024
    a, b = _operands(M, N, K)
    with pytest.raises(InterpretError, match="roles that hand off through barriers are not "
                                             "modelled"):
        tilemlir.interpret(hgemm_hopper.hgemm_v5(M, N, K), a, b, np.zeros((M, N), np.float16))


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
