"""Softmax, RMSNorm and LayerNorm on the GPU through the front doors (softmax_rows,
rms_norm_rows, layer_norm_rows): a sweep of random shapes per op (row lengths from 1 to 131072,
float16 and bfloat16, M from 1 to thousands), each output NaN-poisoned and compared with torch
in float32; one compile per (op, N, dtype) for every M; leading dims, defaults and in-place
calls.

The sweep's 128 compiles (CPU work, about a second each) run first, side by side in worker
processes, into the disk cache, so that on the H200 machine (16 cores) the file should take
about a minute (estimated here, on a CPU machine).

    python -m pytest -q -m gpu test/python/test_norms_gpu.py
"""

import math
import multiprocessing
import os
import random
from concurrent.futures import ProcessPoolExecutor

import pytest

from norms_reference import ATOL, EPS, OPS, RTOL, compile_config

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu

from tilemlir.kernels import norms  # noqa: E402

TORCH = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
# every path of row_plan: rows sharing a warp, a warp per row, several warps, tiles through
# shared memory, all staged or not; 2-, 4-, 8- and 16-byte accesses; rows held shifted
SPECIAL = [1, 2, 3, 7, 31, 32, 100, 127, 257, 1000, 1024, 2048, 4096, 4097, 4100, 8192, 16383,
           16384, 16385, 32000, 50257, 50258, 65536, 128256, 131071, 131072]
BOTH_DTYPES = (32000, 50257, 128256)          # the benchmark's long rows: each dtype
MAX_ELEMENTS = 1 << 21                        # per shape: the sweep stays quick


def sweep(op: str) -> list[tuple[int, int, str]]:
    """(M, N, dtype) of op's sweep: 40 row lengths (SPECIAL and random ones, log-uniform up to
    131072), five M each (1, a few, tens to hundreds, up to MAX_ELEMENTS / N), the dtypes in
    turn, and the benchmark's long rows in the other dtype too: 209 shapes."""
    rng = random.Random(f"norms-gpu-{op}")
    lengths = SPECIAL + [int(math.exp(rng.uniform(math.log(2), math.log(131072))))
                         for _ in range(40 - len(SPECIAL))]
    shapes = []
    for i, N in enumerate(lengths):
        most = max(1, MAX_ELEMENTS // N)
        rows = [1, rng.randint(1, min(7, most)), rng.randint(1, min(300, most)),
                rng.randint(1, most), rng.randint(1, most)]
        dtype = ("float16", "bfloat16")[i % 2]
        shapes += [(m, N, dtype) for m in rows]
        if N in BOTH_DTYPES:
            other = "bfloat16" if dtype == "float16" else "float16"
            shapes += [(m, N, other) for m in rows[2:]]
    return shapes


SWEEPS = {op: sweep(op) for op in OPS}


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Every configuration of the sweeps compiled once, side by side (spawned workers)."""
    from tilemlir.runtime.compiler import resolve_target
    chip = resolve_target(None).chip
    configs = sorted({(op, N, dtype, chip) for op in OPS for _, N, dtype in SWEEPS[op]})
    workers = max(1, min(16, (os.cpu_count() or 2) - 1))
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(compile_config, configs))


def _inputs(op: str, M: int, N: int, dtype: str, seed: int):
    g = torch.Generator(device="cuda").manual_seed(seed)
    t = TORCH[dtype]
    scale, offset = (4.0, 0.0) if op == "softmax" else (2.0, 1.0)
    x = (torch.randn(M, N, device="cuda", generator=g) * scale + offset).to(t)
    w = (torch.rand(N, device="cuda", generator=g) + 0.5).to(t)
    b = torch.randn(N, device="cuda", generator=g).to(t)
    return x, w, b


def _run(op: str, x, w, b, out, cluster=1):
    if op == "softmax":
        return norms.softmax_rows(x, out=out, cluster=cluster)
    if op == "rms_norm":
        return norms.rms_norm_rows(x, w, EPS[op], out=out, cluster=cluster)
    return norms.layer_norm_rows(x, w, b, EPS[op], out=out, cluster=cluster)


def _reference(op: str, x, w, b):
    """torch in float32."""
    F = torch.nn.functional
    N = x.shape[-1]
    if op == "softmax":
        return torch.softmax(x.float(), dim=-1)
    if op == "rms_norm":
        return F.rms_norm(x.float(), (N,), w.float(), EPS[op])
    return F.layer_norm(x.float(), (N,), w.float(), b.float(), EPS[op])


def _wrong(op: str, dtype: str, y, ref) -> str | None:
    y = y.float()
    bad = ~((y - ref).abs() <= RTOL[dtype] * ref.abs() + ATOL[op, dtype])   # NaN: bad
    if not bad.any():
        return None
    r, c = (int(i) for i in bad.nonzero()[0])
    return (f"{int(bad.sum())} of {bad.numel()} off, first [{r}, {c}]: {y[r, c].item()} vs "
            f"{ref[r, c].item()}")


@pytest.mark.parametrize("op", OPS)
def test_random_shapes(op):
    failures = []
    for i, (M, N, dtype) in enumerate(SWEEPS[op]):
        x, w, b = _inputs(op, M, N, dtype, seed=i)
        y = torch.full_like(x, float("nan"))
        _run(op, x, w, b, y)
        wrong = _wrong(op, dtype, y, _reference(op, x, w, b))
        if wrong:
            failures.append(f"{op} M={M} N={N} {dtype}: {wrong}")
    torch.cuda.synchronize()
    assert len(SWEEPS[op]) >= 200
    assert not failures, f"{len(failures)} of {len(SWEEPS[op])} shapes wrong:\n" + \
        "\n".join(failures[:20])


@pytest.mark.parametrize("op", OPS)
def test_a_new_m_compiles_nothing(op, monkeypatch):
    import tilemlir
    compiles = []
    real = tilemlir.compile
    monkeypatch.setattr(tilemlir, "compile", lambda *a, **k: compiles.append(a) or real(*a, **k))
    monkeypatch.setattr(norms, "_KERNELS", {})
    for M in (3, 1000, 77, 1):
        x, w, b = _inputs(op, M, 4099, "bfloat16", seed=M)
        y = _run(op, x, w, b, None)
        assert _wrong(op, "bfloat16", y, _reference(op, x, w, b)) is None
    assert len(compiles) == 1 and len(norms._KERNELS) == 1


def test_leading_dims_defaults_and_in_place():
    F = torch.nn.functional
    x = torch.randn(2, 3, 5, 1000, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(norms.softmax_rows(x), torch.softmax(x.float(), -1).half(),
                               rtol=2e-3, atol=1e-6)
    ref = F.rms_norm(x.float(), (1000,), None, torch.finfo(torch.float16).eps).half()
    torch.testing.assert_close(norms.rms_norm_rows(x), ref, rtol=2e-3, atol=2e-3)
    ref = F.layer_norm(x.float(), (1000,)).half()
    torch.testing.assert_close(norms.layer_norm_rows(x), ref, rtol=2e-3, atol=2e-3)
    long = torch.randn(3, 70000, device="cuda", dtype=torch.bfloat16)
    w = torch.rand(70000, device="cuda", dtype=torch.bfloat16) + 0.5
    ref = F.rms_norm(long.float(), (70000,), w.float(), 1e-6).bfloat16()
    assert norms.rms_norm_rows(long, w, 1e-6, out=long) is long          # in place
    torch.testing.assert_close(long, ref, rtol=1.6e-2, atol=1.6e-2)
    empty = torch.empty(0, 64, device="cuda", dtype=torch.float16)
    assert norms.layer_norm_rows(empty).shape == (0, 64)


@pytest.mark.parametrize("op", OPS)
def test_float32_rows(op):
    """float32 in and out (softmax over fp32 logits): vocabulary-sized and odd rows, a run-time
    M, against float32 torch; NaN-poisoned outputs."""
    failures = []
    for i, (M, N) in enumerate([(3, 7), (37, 1000), (5, 4096), (2, 32000), (3, 50257),
                                (1, 128256)]):
        x, w, b = _inputs(op, M, N, "float32", seed=100 + i)
        y = torch.full_like(x, float("nan"))
        _run(op, x, w, b, y)
        wrong = _wrong(op, "float32", y, _reference(op, x, w, b))
        if wrong:
            failures.append(f"{op} M={M} N={N}: {wrong}")
    torch.cuda.synchronize()
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("op", OPS)
def test_rows_split_over_clusters(op, monkeypatch):
    """cluster=2, 4, 8, 16 (each row over a cluster, the statistics through the workspace and
    barrier.cluster): vocabulary-sized rows, a last part shorter than the others, a run-time M
    (several, one compile per configuration), both 16-bit dtypes and float32; NaN-poisoned
    outputs against float32 torch."""
    import tilemlir
    compiles = []
    real = tilemlir.compile
    monkeypatch.setattr(tilemlir, "compile", lambda *a, **k: compiles.append(a) or real(*a, **k))
    monkeypatch.setattr(norms, "_KERNELS", {})
    failures, configs = [], set()
    for i, (N, cluster, dtype) in enumerate([(32000, 2, "bfloat16"), (32000, 4, "float16"),
                                             (128256, 8, "bfloat16"), (65536, 4, "float16"),
                                             (8200, 2, "float32"), (128256, 8, "float32"),
                                             (151936, 16, "bfloat16"), (50257, 4, "float16"),
                                             (50257, 8, "bfloat16")]):
        for M in (1, 3, 133):
            x, w, b = _inputs(op, M, N, dtype, seed=300 + i + M)
            y = torch.full_like(x, float("nan"))
            _run(op, x, w, b, y, cluster)
            configs.add((N, cluster, dtype))
            wrong = _wrong(op, dtype, y, _reference(op, x, w, b))
            if wrong:
                failures.append(f"{op} M={M} N={N} cluster={cluster} {dtype}: {wrong}")
    torch.cuda.synchronize()
    assert not failures, "\n".join(failures)
    assert len(compiles) == len(configs), "a new M compiles nothing"
