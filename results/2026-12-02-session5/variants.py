"""Session 5: what the random sweep's slowest classes of GEMM cost, and what the front door's
padding would make of them. Each shape (float16): the heuristic's choice; with odd K, the same
kernel family on rows padded to a multiple of 8 (PAD_K, TMA loads); with N not a multiple of 8,
the product into a column-padded D (TMA epilogue) copied out; cuBLAS. Every variant checked
against float32 (relative Frobenius error), then all timed alternately (L2 flushed)."""
import math
import sys

import torch
import torch.nn.functional as F

from tilemlir.kernels.gemm import Gemm, candidate_configs, hgemm, padded_k
from tilemlir.testing import do_bench_alternating

SHAPES = [
    # decode (M <= 64) with odd K: the masked element-wise producer
    (1, 4610, 5313), (17, 4354, 1529), (1, 411, 1609), (31, 3352, 1755), (12, 1, 2735),
    (18, 13, 923), (1, 4096, 4095), (16, 14336, 4095),
    # K <= 64, N not a multiple of 8: the direct (register) epilogue
    (3731, 7100, 5), (7181, 2787, 2), (1482, 2261, 3), (5518, 6246, 20), (1163, 7805, 32),
    (691, 4989, 50), (352, 7048, 7), (1560, 2881, 40),
    # small N
    (516, 1, 5323), (2741, 1, 3851), (101, 8, 6080), (6645, 23, 2461),
]


def variants(m, n, k):
    out = {"heuristic": hgemm(m, n, k)}
    config = dict(out["heuristic"].config)
    if k % 2 and not config.get("PAD_K"):
        padded = [c for c in candidate_configs(m, n, k) if c.get("PAD_K")]
        if m <= 64:
            padded = [dict({key: v for key, v in config.items() if key != "PRODUCER"},
                           PAD_K=True)]
        if padded:
            out["pad_k"] = Gemm(m, n, k, "float16", padded[0])
    if config.get("SPLIT_K", 1) > 1:
        out["split_1"] = Gemm(m, n, k, "float16", dict(config, SPLIT_K=1))
    return out


def compile_all():
    """Every variant's kernel into the disk cache (no GPU needed)."""
    for m, n, k in SHAPES:
        for g in variants(m, n, k).values():
            g.kernel
        if n % 8:
            hgemm(m, -(-n // 8) * 8, k).kernel


def main():
    if sys.argv[1:] == ["--compile"]:
        return compile_all()
    rows = []
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(n, k, device="cuda", dtype=torch.float16)
        ref = a.float() @ b.float().T
        fns, names = [], []
        for name, g in variants(m, n, k).items():
            fns.append(lambda a, b, d, g=g: g(a, b, out=d))
            names.append(f"{name} [{g.config.get('KERNEL')}{' pad' if g.config.get('PAD_K') else ''}"
                         f"{' direct' if g.config.get('EPILOGUE') else ''}]")
        if n % 8:
            n8 = -(-n // 8) * 8
            g8 = hgemm(m, n8, k)

            def pad_n(a, b, d, g8=g8, n8=n8):
                wide = g8(a, F.pad(b, (0, 0, 0, n8 - b.shape[0])))
                d.copy_(wide[:, :d.shape[1]])
            fns.append(pad_n)
            names.append(f"pad_n [{g8.config.get('KERNEL')}{' pad' if g8.config.get('PAD_K') else ''}]")
        fns.append(lambda a, b, d: torch.matmul(a, b.T, out=d))
        names.append("cublas")
        errs = []
        for fn in fns:
            d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
            fn(a, b, d)
            errs.append(((d.float() - ref).norm() / ref.norm()).item())
        sets = [(torch.randn(m, k, device="cuda", dtype=torch.float16),
                 torch.randn(n, k, device="cuda", dtype=torch.float16),
                 torch.empty(m, n, device="cuda", dtype=torch.float16)) for _ in range(2)]
        times = [t.median * 1e3 for t in do_bench_alternating(fns, blocks=2, reps=20,
                                                              warmup_ms=20, args=sets)]
        for name, t, e in zip(names, times, errs):
            rows.append(f"| {m}x{n}x{k} | {name} | {t:.1f} | {times[-1] / t:.3f} | {e:.1e} |")
            print(rows[-1], flush=True)
    print("\n| shape | variant | us | vs cuBLAS | rel err |\n|---|---|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
