"""The front doors' kernels at random shapes in the CPU interpreter (tilemlir.interpret),
against numpy: no GPU needed.

    python bench/interpret_sweep.py --suite gemm --count 400 --seed 8 --out results/i-gemm.md
    python bench/interpret_sweep.py --suite attention --count 80
    python bench/interpret_sweep.py --suite norms --count 300
    python bench/interpret_sweep.py --suite fp8 --count 200
    python bench/interpret_sweep.py --suite fused --count 150

gemm: each case draws M, N and K from 1..400 (half of them from 1..70: decode's swap-AB, one k-tile,
masked edges), with no alignment (cp.async producers, direct stores, split-K), takes the front
door's own configuration for the shape with 2 to 4 persistent workers (so that CTAs take
several units and the stage rings wrap), builds the kernel as the front door compiles it (for a
run-time M), runs it on NaN-poisoned output and compares with numpy in float32 (relative
Frobenius error below 1e-2, every element written). test_reference_interpreter.py runs 24 of
these in CI.

fused: hgemm_fused for a run-time M (bias, activation none / relu / gelu_tanh / silu,
residual, in turn), M, N, K as gemm's, BM 64 or 128, BN 128 or 256, 2-4 clusters; against
numpy in float32 (relative Frobenius error below 1e-2, every element written).

attention: the run-time-shape kernel the attention front door compiles (one per head dim,
causal or not and GQA group), B 1-2, Hkv 1-2, groups 1 / 2 / 4, head dims 64 / 96 / 128 / 256,
Sq and Skv from 1..300 (half from 1..40), no mask / is_causal / causal_lower_right, float16, on
a persistent grid of 2 to 4 CTAs (so that CTAs take several items and the Q, K and V rings
wrap); against float32 attention in numpy (largest error below 3e-3, every element written).

fp8: the FP8 GEMM (scaled_mm's kernel, for a run-time M) with scaled_mm's own configuration
for the shape and 2 to 4 workers: M, N, K as gemm's, e4m3 operands, tensor, row and 1 x 128 /
128 x 128 block scales in turn (use_fast_accum at random where it applies), bfloat16 out;
against the dequantized product in float32 (relative Frobenius error below 1e-2).

norms: softmax, RMSNorm and LayerNorm for a run-time M (the front doors' kernels), N
log-uniform in 1..20000 (--long: 16000..131072), M 1..8, float16, bfloat16 and float32 in
turn; against float64, per element within one ulp of the output type plus 4e-3 (float16) /
2e-2 (bfloat16). --clusters: each row split over the most CTAs of 2, 4, 8 and 16 that
norms.cluster_plan takes (cases it takes none of are drawn again).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
from tilemlir.reference.memory import bf16_bits  # noqa: E402


def cases(count: int, seed: int) -> list[tuple[int, int, int, str, int]]:
    """gemm: (M, N, K, dtype, SMS) at random, the dtypes in turn."""
    rng = np.random.default_rng(seed)
    return [(*(int(rng.choice([rng.integers(1, 71), rng.integers(1, 401)])) for _ in range(3)),
             ("float16", "bfloat16")[i % 2], int(rng.integers(2, 5))) for i in range(count)]


def split_k_arrays(kernel, M: int) -> list:
    """The arrays a GEMM kernel takes after (A, B, D), zeroed and sized for M rows as its
    signature says (a split-K kernel's workspace and counters; none otherwise): numpy's twin
    of tilemlir.kernels.gemm.split_k_buffers."""
    from tilemlir.ir.kernel_abi import evaluate_extent
    arrays = []
    for p in tilemlir.compile(kernel, target="sm_90a").signature.params[3:]:
        shape = (evaluate_extent(p.leading, {"M": M}), *p.shape[1:]) if p.leading else p.shape
        arrays.append(np.zeros(shape, np.float32 if p.dtype == "f32" else np.int32))
    return arrays


def run_case(M: int, N: int, K: int, dtype: str, SMS: int):
    """gemm: (ours, numpy's, configuration) of one case, both float32 arrays."""
    from tilemlir.kernels.gemm import Gemm, choose_config, padded_k
    config = dict(choose_config(M, N, K, dtype, target="sm_90a"))
    config["SMS"] = SMS if config["KERNEL"] != "hgemm_v7" else 2 * SMS      # v7: pairs
    kernel = Gemm(M, N, K, dtype, config, target="sm_90a").factory_kernel
    rng = np.random.default_rng(M * N * K)
    encode, widen = _bits(dtype)
    A, B = encode(rng.standard_normal((M, K))), encode(rng.standard_normal((N, K)))
    D = encode(np.full((M, N), np.nan))
    # PAD_K: the kernel takes A and B in rows padded with zeros, as the front door copies them
    a, b = (np.pad(t, ((0, 0), (0, padded_k(K) - K))) if config.get("PAD_K") else t
            for t in (A, B))
    extra = split_k_arrays(kernel, M)       # SPLIT_K, TAIL_SPLIT, STREAM_K: W and C
    tilemlir.interpret(kernel, a, b, D, *extra)
    return widen(D), widen(A) @ widen(B).T, config


def _unwritten(got: np.ndarray) -> str | None:
    """NaN left in an output that started as NaN: elements the kernel never wrote."""
    count = int(np.isnan(got).sum())
    return f"{count} outputs unwritten" if count else None


def problem(got: np.ndarray, ref: np.ndarray) -> str | None:
    """Why `got` is wrong (relative Frobenius error), or None."""
    err = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30))
    return _unwritten(got) or (None if err < 1e-2 else f"relative error {err:.2e}")


def _bits(dtype: str):
    """(to the kernel's storage, back to float32) for float16, bfloat16 (as uint16 bits) or
    float32."""
    if dtype == "bfloat16":
        return bf16_bits, lambda x: (x.astype(np.uint32) << 16).view(np.float32)
    store = np.float32 if dtype == "float32" else np.float16
    return (lambda x: x.astype(store)), (lambda x: x.astype(np.float32))


def fp8_cases(count: int, seed: int) -> list[tuple[int, int, int, str, bool, int]]:
    """(M, N, K, scaling, use_fast_accum, SMS) at random, the scalings in turn."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        M, N, K = (int(rng.choice([rng.integers(1, 71), rng.integers(1, 401)])) for _ in "mnk")
        scaling = ("tensor", "row", "block")[i % 3]
        out.append((M, N, K, scaling, scaling != "block" and bool(rng.integers(0, 2)),
                    int(rng.integers(2, 5))))
    return out


def run_fp8(M, N, K, scaling, fast, SMS):
    """(ours, the dequantized product in float32, configuration) of one FP8 case."""
    import math

    import ml_dtypes

    import tilemlir.lang as T
    from tilemlir.kernels.fp8_gemm import SCALE_BLOCK, fp8_gemm, scale_shapes
    from tilemlir.kernels.scaled_mm import choose_config
    config = dict(choose_config(M, N, K, scaling, fast))
    config["SMS"] = 2 * SMS if config.get("CLUSTER") else SMS       # clusters: pairs
    rng = np.random.default_rng(M * N * K)
    e4m3 = ml_dtypes.float8_e4m3fn
    a, b = ((rng.standard_normal(shape) * 2).astype(e4m3) for shape in ((M, K), (N, K)))
    sa, sb = ((rng.random(shape) + 0.5).astype(np.float32)
              for shape in scale_shapes(M, N, K, scaling))
    encode, widen = _bits("bfloat16")                                  # the output's type
    d = encode(np.full((M, N), np.nan))
    kernel = fp8_gemm(T.dynamic("M"), N, K, "float8_e4m3fn", "float8_e4m3fn", "bfloat16",
                      scaling, **config)
    tilemlir.interpret(kernel, a, b, sa, sb, d)
    af, bf = a.astype(np.float32), b.astype(np.float32)
    if scaling == "tensor":
        ref = af @ bf.T * sa[0] * sb[0]
    elif scaling == "row":
        ref = af @ bf.T * sa.reshape(M, 1) * sb.reshape(1, N)
    else:
        ref = np.zeros((M, N), np.float32)
        for kb in range(math.ceil(K / SCALE_BLOCK)):
            ks = slice(kb * SCALE_BLOCK, (kb + 1) * SCALE_BLOCK)
            ref += af[:, ks] @ bf[:, ks].T * sa[:, kb:kb + 1] * \
                np.repeat(sb[:, kb], SCALE_BLOCK)[None, :N]
    return widen(d), ref, config


_ACTIVATIONS = {None: lambda x: x, "relu": lambda x: np.maximum(x, 0),
                "gelu_tanh": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi)
                                                              * (x + 0.044715 * x ** 3))),
                "silu": lambda x: x / (1 + np.exp(-np.clip(x, -80, 80)))}


def fused_cases(count: int, seed: int) -> list[tuple]:
    """(M, N, K, activation, bias, residual, BM, BN, SMS) at random."""
    rng = np.random.default_rng(seed)
    return [(*(int(rng.choice([rng.integers(1, 71), rng.integers(1, 401)])) for _ in "mnk"),
             (None, "relu", "gelu_tanh", "silu")[i % 4], bool(i // 2 % 2), bool(i % 2),
             int(rng.choice([64, 128])), int(rng.choice([128, 256])), int(rng.integers(2, 5)))
            for i in range(count)]


def run_fused(M, N, K, activation, bias, residual, BM, BN, SMS, EPILOGUE=None):
    """(ours, numpy's in float32) of one hgemm_fused case (EPILOGUE: the kernel's default, or
    the one named)."""
    import tilemlir.lang as T
    from tilemlir.kernels.gemm_epilogue import hgemm_fused
    rng = np.random.default_rng(M * N * K)
    a, b = (rng.standard_normal(shape).astype(np.float16) for shape in ((M, K), (N, K)))
    bias_v = rng.standard_normal(N).astype(np.float16)
    res_v = rng.standard_normal((M, N)).astype(np.float16)
    d = np.full((M, N), np.nan, np.float16)
    kernel = hgemm_fused(T.dynamic("M"), N, K, bias=bias, activation=activation,
                         residual=residual, BM=BM, BN=BN, STAGES=3, SMS=2 * SMS,
                         EPILOGUE=EPILOGUE)
    tilemlir.interpret(kernel, a, b, *([bias_v] if bias else []),
                       *([res_v] if residual else []), d)
    x = a.astype(np.float32) @ b.astype(np.float32).T
    if bias:
        x = x + bias_v.astype(np.float32)
    ref = _ACTIVATIONS[activation](x) + (res_v.astype(np.float32) if residual else 0)
    return d.astype(np.float32), ref


def attention_cases(count: int, seed: int) -> list[tuple]:
    """(B, H, Hkv, Sq, Skv, D, mask, SMS) at random; SMS, the persistent grid, 2 to 4 in turn."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        D, group = int(rng.choice([64, 96, 128, 256])), int(rng.choice([1, 2, 4]))
        Hkv, B = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        Sq, Skv = (int(rng.choice([rng.integers(1, 41), rng.integers(1, 301)])) for _ in "qk")
        mask = [None, "is_causal", "lower_right"][int(rng.integers(0, 3))]
        if mask == "lower_right" and Sq > Skv:
            Sq, Skv = Skv, Sq
        out.append((B, Hkv * group, Hkv, Sq, Skv, D, mask, 2 + i % 3))
    return out


def run_attention(B, H, Hkv, Sq, Skv, D, mask, SMS=132):
    """(ours, numpy's in float32) of one attention case: O of [B, H, Sq, D], on SMS CTAs."""
    from tilemlir.kernels.attention import flash_attention
    group, rng = H // Hkv, np.random.default_rng(B * H * Sq * Skv * D)
    q = rng.standard_normal((B, H, Sq, D)).astype(np.float16)
    k, v = (rng.standard_normal((B, Hkv, Skv, D)).astype(np.float16) for _ in "kv")
    o = np.full((B, H, Sq, D), np.nan, np.float16)
    diagonal = () if mask is None else (Skv - Sq if mask == "lower_right" else 0,)
    kernel = flash_attention(None, None, None, D, "float16", mask is not None, None, group=group,
                             SMS=SMS)
    tilemlir.interpret(kernel, q.reshape(-1, D), k.reshape(-1, D), v.reshape(-1, D),
                       o.reshape(-1, D), Sq, Skv, *diagonal)
    kr, vr = (np.repeat(t, group, axis=1).astype(np.float32) for t in (k, v))
    s = q.astype(np.float32) @ kr.transpose(0, 1, 3, 2) / np.sqrt(D)
    if diagonal:
        s = np.where(np.arange(Skv)[None, :] <= np.arange(Sq)[:, None] + diagonal[0], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return o.astype(np.float32), (p / p.sum(-1, keepdims=True)) @ vr


def norm_cases(count: int, seed: int, long: bool = False,
               clusters: bool = False) -> list[tuple[str, int, int, str, int]]:
    """(op, M, N, dtype, CTAs per row) at random, the ops and dtypes in turn."""
    from tilemlir.kernels import norms
    rng = np.random.default_rng(seed)
    low, high = (16000, 131072) if long else (1, 20000)
    out = []
    while len(out) < count:
        i = len(out)
        op, dtype = ("softmax", "rms_norm", "layer_norm")[i % 3], \
            ("float16", "bfloat16", "float32")[i // 3 % 3]
        N = int(np.exp(rng.uniform(np.log(low), np.log(high))))
        M = int(rng.integers(1, max(2, min(9, 40000 // N))))
        cluster = 1
        if clusters:
            fits = [c for c in (16, 8, 4, 2) if _splits(norms, N, dtype, c, op)]
            if not fits:
                continue
            cluster = fits[0]
        out.append((op, M, N, dtype, cluster))
    return out


def _splits(norms, N: int, dtype: str, cluster: int, op: str) -> bool:
    try:
        norms.cluster_plan(N, dtype, cluster, op=op)
        return True
    except ValueError:
        return False


def run_norm(op: str, M: int, N: int, dtype: str, cluster: int = 1):
    """(ours, float64 reference, per-element tolerance) of one norm case (rows split over
    `cluster` CTAs where it is more than 1)."""
    import tilemlir.lang as T
    from tilemlir.kernels import norms
    rng = np.random.default_rng(M * N)
    encode, decode = _bits(dtype)
    shift, scale = (0.0, 4.0) if op == "softmax" else (1.0, 1.0)
    X = encode(rng.standard_normal((M, N)) * scale + shift)
    W, B = encode(rng.random(N) + 0.5), encode(rng.standard_normal(N))
    Y = encode(np.full((M, N), np.nan))
    kernel = getattr(norms, op)(T.dynamic("M"), N, dtype, cluster=cluster)
    workspace = [np.full((M, norms.workspace_slots(op, cluster)), np.nan, np.float32)] \
        if cluster > 1 else []
    tilemlir.interpret(kernel, *{"softmax": (X, Y), "rms_norm": (X, W, Y),
                                 "layer_norm": (X, W, B, Y)}[op], *workspace)
    x, w, b = (decode(t).astype(np.float64) for t in (X, W, B))
    if op == "softmax":
        e = np.exp(x - x.max(1, keepdims=True))
        ref = e / e.sum(1, keepdims=True)
    elif op == "rms_norm":
        ref = x / np.sqrt((x ** 2).mean(1, keepdims=True) + 1e-6) * w
    else:
        centred = x - x.mean(1, keepdims=True)
        ref = centred / np.sqrt((centred ** 2).mean(1, keepdims=True) + 1e-5) * w + b
    ulp, floor = {"bfloat16": (2.0 ** -7, 2e-2), "float16": (2.0 ** -10, 4e-3),
                  "float32": (2.0 ** -20, 1e-6)}[dtype]
    return decode(Y).astype(np.float64), ref, floor + ulp * np.abs(ref)


def attention_problem(got, ref) -> str | None:
    """Why `got` is wrong (largest error), or None."""
    err = float(np.abs(got - ref).max())
    return _unwritten(got) or (None if err < 3e-3 else f"largest error {err:.2e}")


def norm_problem(got, ref, tolerance) -> str | None:
    """Why `got` is wrong (an element past its tolerance), or None."""
    worst = float((np.abs(got - ref) / tolerance).max())
    return _unwritten(got) or (None if worst <= 1.0 else f"{worst:.2f}x the tolerance")


def _suite(args):
    """[(label, check)] of the suite: check() returns (what ran, the problem or None)."""
    if args.suite == "gemm":
        def gemm(case):
            got, ref, config = run_case(*case)
            return config["KERNEL"], problem(got, ref)
        return [("{}x{}x{} {} SMS={}".format(*c), lambda c=c: gemm(c))
                for c in cases(args.count, args.seed)]
    if args.suite == "fp8":
        def fp8(case):
            got, ref, config = run_fp8(*case)
            return f"{case[3]} BM={config['BM']} BN={config['BN']}", problem(got, ref)
        return [("{}x{}x{} {} fast={} SMS={}".format(*c), lambda c=c: fp8(c))
                for c in fp8_cases(args.count, args.seed)]
    if args.suite == "fused":
        def fused(case):
            return f"{case[3]} BM={case[6]} BN={case[7]}", problem(*run_fused(*case))
        return [("{}x{}x{} act={} bias={} residual={} BM={} BN={} SMS={}".format(*c),
                 lambda c=c: fused(c)) for c in fused_cases(args.count, args.seed)]
    if args.suite == "attention":
        def attend(case):
            return f"D{case[5]} group {case[1] // case[2]}", attention_problem(
                *run_attention(*case))
        return [("B{} H{} Hkv{} Sq{} Skv{} D{} {} SMS={}".format(*c), lambda c=c: attend(c))
                for c in attention_cases(args.count, args.seed)]

    def norm(case):
        return case[0], norm_problem(*run_norm(*case))
    return [("{} {}x{} {} cluster={}".format(*c), lambda c=c: norm(c))
            for c in norm_cases(args.count, args.seed, args.long, args.clusters)]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default="gemm",
                   choices=("gemm", "fp8", "fused", "attention", "norms"))
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--seed", type=int, default=21)
    p.add_argument("--long", action="store_true", help="norms: rows of 16000..131072")
    p.add_argument("--clusters", action="store_true",
                   help="norms: each row split over a cluster of CTAs")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    start, wrong, kinds = time.perf_counter(), [], {}
    todo = _suite(args)
    for label, check in todo:
        try:
            kind, why = check()
            kinds[kind] = kinds.get(kind, 0) + 1
        except Exception as err:  # one case must not hide the others
            why = f"{type(err).__name__}: {err}"[:300]
        if why:
            wrong.append(f"- {label}: {why}")
            print(wrong[-1], flush=True)
    seconds = time.perf_counter() - start
    text = "\n".join([
        f"# The {args.suite} front door's kernels at random shapes in the CPU interpreter", "",
        f"- command: `python {' '.join(sys.argv)}`",
        f"- {len(todo)} cases (seed {args.seed}), {len(todo) - len(wrong)} correct, "
        f"{len(wrong)} wrong or failed, {seconds:.0f} s",
        f"- cases by kind: {', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}",
        *([""] + wrong if wrong else [])]) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
