"""Whether the staged epilogue (parts.StagedStore) should be the default of the FP8 front door
(scaled_mm) and of hgemm_fused where N is not a multiple of 8, as it is the plain GEMM's: each
at its modelled configuration with EPILOGUE="direct" (today's default) and "staged", in one
process (random normal inputs, each output checked first; do_bench: L2 flushed, median, us).
Peers: torch._scaled_mm at N rounded up to 16 (it refuses odd N) and torch's fused-less
F.gelu(a @ b.T + bias) at N. Run from the tree's root."""
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path.cwd()))
from tilemlir.kernels.gemm_epilogue import hgemm_fused  # noqa: E402
from tilemlir.kernels.scaled_mm import choose_config, quantize, dequantize, scaled_mm  # noqa: E402
from tilemlir.testing import do_bench  # noqa: E402

SHAPES = [(2048, 50257, 1024), (4096, 4097, 4096), (2999, 8193, 769), (1163, 7805, 32),
          (8192, 1785, 4096), (777, 11007, 4096), (1000, 3, 128)]


def err(x, ref):
    return ((x.float() - ref).norm() / ref.norm()).item()


print("## FP8 (tensor-wise scales, e4m3, bf16 out)\n")
print("| shape | config | direct us | staged us | _scaled_mm at N16 us | staged / direct | err direct | err staged |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for m, n, k in SHAPES:
    a8, sa = quantize(torch.randn(m, k, device="cuda"), "tensor", "a")
    n16 = -(-n // 16) * 16
    b8w, sb = quantize(torch.randn(n16, k, device="cuda"), "tensor", "b")
    b8 = b8w[:n]
    ref = dequantize(a8, sa, "tensor", "a") @ dequantize(b8, sb, "tensor", "b").T
    cfg = choose_config(m, n, k, "tensor")
    direct, staged = dict(cfg, EPILOGUE="direct"), dict(cfg, EPILOGUE="staged")
    e = [err(scaled_mm(a8, b8, sa, sb, torch.bfloat16, config=c), ref) for c in (direct, staged)]
    fns = [lambda c=c: scaled_mm(a8, b8, sa, sb, torch.bfloat16, config=c) for c in (direct, staged)]
    if k % 16 == 0:
        fns.append(lambda: torch._scaled_mm(a8, b8w.t(), sa.reshape(()), sb.reshape(()), out_dtype=torch.bfloat16))
    t = [do_bench(f, rep_ms=40) * 1e3 for f in fns] + [float("nan")] * (3 - len(fns))
    short = ":".join(f"{x}={v}" for x, v in cfg.items() if x != "EPILOGUE")
    print(f"| {m}x{n}x{k} | {short} | {t[0]:.1f} | {t[1]:.1f} | {t[2]:.1f} | {t[1] / t[0]:.2f} "
          f"| {e[0]:.1e} | {e[1]:.1e} |", flush=True)

print("\n## hgemm_fused (bias + gelu_tanh, f16)\n")
print("| shape | direct us | staged us | torch us | staged / direct | err direct | err staged |")
print("|---|---:|---:|---:|---:|---:|---:|")
for m, n, k in SHAPES:
    a = (torch.randn(m, k, device="cuda") / k ** 0.25).half()
    b = (torch.randn(n, k, device="cuda") / k ** 0.25).half()
    bias = torch.randn(n, device="cuda").half()
    ref = F.gelu(a.float() @ b.float().T + bias.float(), approximate="tanh")
    kernels = [hgemm_fused(m, n, k, "float16", EPILOGUE=e) for e in ("direct", "staged")]
    outs = [torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16) for _ in kernels]
    for kern, d in zip(kernels, outs):
        kern(a, b, bias, d)
    e = [err(d, ref) for d in outs]
    fns = [lambda kern=kern, d=d: kern(a, b, bias, d) for kern, d in zip(kernels, outs)]
    fns.append(lambda: F.gelu(torch.addmm(bias, a, b.T), approximate="tanh"))
    t = [do_bench(f, rep_ms=40) * 1e3 for f in fns]
    print(f"| {m}x{n}x{k} | {t[0]:.1f} | {t[1]:.1f} | {t[2]:.1f} | {t[1] / t[0]:.2f} | {e[0]:.1e} "
          f"| {e[1]:.1e} |", flush=True)
