"""Run-time dims (T.dynamic): a buffer's leading extent, a grid extent and device values known
only at launch, one compile for every value; the kernel ABI that carries them, the interpreter
running them, the GEMM front door compiling once per configuration, and the errors."""

import numpy as np
import pytest

import tilemlir
import tilemlir.lang as T
from run_time_dims_kernels import scale_rows, stats
from tilemlir.ir.kernel_abi import DYNAMIC_EXTENT, evaluate_extent
from tilemlir.kernels import gemm
from tilemlir.kernels.hgemm_hopper import hgemm_v6, hgemm_v7
from tilemlir.lang import KernelError
from tilemlir.runtime import args as argcheck
from tilemlir.runtime.args import ArgumentError

M = T.dynamic("M")


def test_a_run_time_dim_is_a_hidden_parameter_read_off_the_arguments():
    kernel = tilemlir.compile(scale_rows(), target="sm_90a", cache=False)
    sig = kernel.signature
    assert [p.describe() for p in sig.params] == ["X: Mx128xf32", "Y: Mx128xf32"]
    assert sig.dims == ("M",) and sig.params[0].shape == (DYNAMIC_EXTENT, 128)
    assert argcheck.run_time_dims(sig, {0: (37, 128), 1: (37, 128)}) == {"M": 37}
    assert argcheck.launch_grid(sig, {"M": 37}) == (10, 1, 1)
    with pytest.raises(ArgumentError, match="argument 'Y' has 36 rows but 'X' has 37: both "
                                            "are M"):
        argcheck.run_time_dims(sig, {0: (37, 128), 1: (36, 128)})
    text = scale_rows().ir()
    assert 'tile.dims = [{arg = 2 : i64, name = "M"}]' in text
    assert "tile.grid_exprs" in text and '"tile.global"' in text


def test_an_extent_expression_is_checked_against_the_dims():
    sig = tilemlir.compile(stats(), target="sm_90a", cache=False).signature
    assert [p.describe() for p in sig.params] == ["X: Mx64xf32", "S: (M * 2)x1xf32"]
    with pytest.raises(ArgumentError, match=r"argument 'S' must have 10 rows \(\(M \* 2\) "
                                            r"with M=5\), got 9"):
        argcheck.run_time_dims(sig, {0: (5, 64), 1: (9, 1)})


def test_extents_are_parsed_once_and_evaluate_every_operation():
    # The launcher evaluates the extents at every call: each is built into a function once
    # (per extent text; a kernel keeps the plan of its signature), which must agree with
    # apply_dim_op on every operation.
    import itertools
    import json

    from tilemlir.ir.kernel_abi import DIM_OPS, apply_dim_op, extent_function
    for op, (m, c) in itertools.product(DIM_OPS, [(1, 1), (37, 8), (130, 128), (7, 3)]):
        text = json.dumps([op, ["dim", "M"], c])
        assert extent_function(text) is extent_function(text)
        assert evaluate_extent(text, {"M": m}) == apply_dim_op(op, m, c)
        nested = json.dumps(["add", [op, c, ["dim", "M"]], ["mul", ["dim", "M"], 2]])
        assert evaluate_extent(nested, {"M": m}) == apply_dim_op(op, c, m) + 2 * m
    for bad in ('["pow", ["dim", "M"], 2]', '["dim"]', '"M"', "true", '[1, 2, 3, 4]'):
        with pytest.raises(ValueError):
            extent_function(bad)
    kernel = tilemlir.compile(stats(), target="sm_90a", cache=False)
    sig = kernel.signature
    assert argcheck.run_time_dims(sig, {0: (5, 64), 1: (10, 1)}) == {"M": 5}
    # a kernel builds its plan at the first launch and keeps it
    block = kernel._block()
    kernel._set_dims(block, {0: (5, 64), 1: (10, 1)})
    plan = kernel._dims_plan
    assert plan is not None
    kernel._set_dims(block, {0: (7, 64), 1: (14, 1)})
    assert kernel._dims_plan is plan


@pytest.mark.parametrize("rows", [1, 4, 37, 100])
def test_the_interpreter_runs_one_kernel_at_every_m(rows):
    x = np.random.default_rng(rows).standard_normal((rows, 128)).astype(np.float32)
    y = np.full_like(x, np.nan)
    tilemlir.interpret(scale_rows(), x, y)
    np.testing.assert_array_equal(y, 2 * x)
    s = np.full((2 * rows, 1), np.nan, np.float32)
    tilemlir.interpret(stats(), x[:, :64].copy(), s)
    np.testing.assert_allclose(s[::2, 0], x[:, :64].sum(1), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(s[::2], s[1::2])


@pytest.mark.parametrize("factory,config", [
    (hgemm_v6, dict(SMS=2)), (hgemm_v7, dict(SMS=4)),
    (hgemm_v6, dict(SMS=3, PRODUCER="cp_async", EPILOGUE="direct")),
    (hgemm_v6, dict(SMS=2, SPLIT_K=2))])
def test_hopper_gemms_with_a_run_time_m(factory, config):
    """One kernel object, run by the interpreter at M below a tile, ragged and over tiles;
    TMA boxes past the last row read zeros and store nothing there."""
    kernel = factory(M, 256, 128, **config)
    rng = np.random.default_rng(0)
    for rows in (1, 130, 300):
        a = rng.standard_normal((rows, 128)).astype(np.float16)
        b = rng.standard_normal((256, 128)).astype(np.float16)
        d = np.full((rows, 256), np.nan, np.float16)
        extra = []
        if config.get("SPLIT_K", 1) > 1:
            sig = tilemlir.compile(kernel, target="sm_90a").signature
            extra = [np.zeros((evaluate_extent(p.leading, {"M": rows}),) + p.shape[1:],
                              np.float32 if p.dtype == "f32" else np.int32)
                     for p in sig.params[3:]]
        tilemlir.interpret(kernel, a, b, d, *extra)
        ref = a.astype(np.float32) @ b.astype(np.float32).T
        np.testing.assert_allclose(d.astype(np.float32), ref, atol=0.05, rtol=0.01)


def test_the_gemm_front_door_compiles_once_for_every_m():
    """A new M with the configuration of an earlier one compiles nothing (the kernel object
    is the one compiled before); a fresh build of the same kernel hits the disk cache."""
    first, second = gemm.hgemm(5000, 4096, 4096, target="sm_90a"), \
        gemm.hgemm(7936, 4096, 4096, target="sm_90a")
    assert first.config == second.config and first is not second
    assert first.kernel is second.kernel
    again = tilemlir.compile(hgemm_v6(T.dynamic("M"), 512, 256), target="sm_90a")
    rebuilt = tilemlir.compile(hgemm_v6(T.dynamic("M"), 512, 256), target="sm_90a")
    assert rebuilt.compile_info.cache_hit or rebuilt.compile_info.memory_hit
    assert rebuilt.compile_info.key == again.compile_info.key


def test_run_time_dim_errors_name_the_problem():
    with pytest.raises(KernelError, match="M is known only when the kernel runs; only a global "
                                          "buffer parameter's leading extent may be"):
        T.Buffer((4, M), "float32")
    with pytest.raises(KernelError, match="T.dynamic takes a name"):
        T.dynamic("not a name")
    with pytest.raises(KernelError, match="M is known only when the kernel runs: it has no "
                                          "Python truth value"):
        bool(M)
    with pytest.raises(KernelError, match="cannot be used where Python needs a number"):
        range(M)

    @T.prim_func
    def only_in_an_expression(X: T.Buffer((M + 1, 4), "float32")):
        T.thread_id([32])
    with pytest.raises(KernelError, match="run-time dim\\(s\\) M lead no buffer parameter's "
                                          "shape"):
        only_in_an_expression.build()

    @T.prim_func
    def unknown_dim(X: T.Buffer((M, 4), "float32")):
        T.cta_id([T.dynamic("R")])
        T.thread_id([32])
    with pytest.raises(KernelError, match="T.dynamic\\('R'\\) sizes none of the kernel's "
                                          "buffer parameters"):
        unknown_dim.build()


def test_narrow_n_compiles_a_bounded_set_for_every_m():
    """N up to 64 (the swapped decode kernel, M on its tiles' side, at run time): the split
    the model picks moves with M, but over every M the configurations are a few (BN 64 / 128
    x SPLIT_K 1-16 at most), and a new M with an earlier configuration reuses its kernel."""
    configs = {tuple(sorted(gemm.choose_config(m, 8, 4096).items()))
               for m in range(65, 40000, 37)}
    assert all(dict(c)["KERNEL"] == "hgemm_decode" and dict(c)["SWAP"] for c in configs)
    assert len(configs) <= 32
    first, second = gemm.hgemm(3000, 8, 4096, target="sm_90a"), \
        gemm.hgemm(3100, 8, 4096, target="sm_90a")
    assert first.config == second.config and first.kernel is second.kernel
