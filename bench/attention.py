"""FlashAttention forward: tilemlir's kernel (tilemlir.kernels.attention.attention) against
torch.nn.functional.scaled_dot_product_attention with each fused backend, same process, same
inputs.

    python bench/attention.py --out results/attention.md
    python bench/attention.py --seq 4096 --head-dim 128 --dtype float16 --causal both
    python bench/attention.py --suite general --out results/attention-general.md
    python bench/attention.py --quick                      # one shape, for a smoke run

O = softmax(Q K^T / sqrt(D) [+ causal mask]) V, Q and O of shape [B, H, Sq, D], K and V of
[B, Hkv, Skv, D] (contiguous, random normal), in the input type. The default sweep is
B x H x S x S x D with Hkv = H; `--suite general` is the shapes outside it (GENERAL below):
grouped K/V heads (GQA, MQA), lengths that are no multiple of 128, head dims 96 and 256, and
fewer queries than keys with the causal mask aligned to the end (torch's causal_lower_right,
FlashAttention's) or to the start (is_causal). Peers, on the same tensors, each under
torch.nn.attention.sdpa_kernel(<backend>) so that no other backend stands in for it:
  - flash:     SDPBackend.FLASH_ATTENTION
  - cudnn:     SDPBackend.CUDNN_ATTENTION
  - efficient: SDPBackend.EFFICIENT_ATTENTION (memory-efficient attention)
A backend that refuses a shape or dtype is skipped with torch's reason; "best torch" is the
fastest that ran. Ours: attention(q, k, v, ...) with the same arguments as the peers' (is_causal,
attn_mask, enable_gqa) returning a new [B, H, Sq, D] tensor; if
tilemlir.kernels.attention cannot be imported, only the peers are measured (the reason printed).

For every case: correctness first, against a float32 reference (torch's math on q.float() etc.,
computed a few heads at a time): max abs and relative (Frobenius) error of ours and of each
peer; every element of ours must be finite and ours must be within --tolerance (else it is not
timed). Then all are timed by tilemlir.testing.do_bench_alternating, the same way: L2 flushed
and a GPU spin before each timed call, median of --reps CUDA-event timings in alternating
blocks, each after its own warm-up. FLOPs = 4 B H D x the (query, key) pairs a mask lets
through (Sq Skv without one, about half that causal); ours / X is the ratio of TFLOP/s (above
1: ours is faster).

Batch 8 at S = 16384 as well: the default run (24 cases, peers only) takes about 50 s on an
H200, with about 6 GiB of tensors at most (results/2026-12-01-bench-dobench/attention-sdpa-peers.md).
`--suite general` is 28 cases.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.report import environment, heading, publish  # noqa: E402
from tilemlir.testing import do_bench_alternating  # noqa: E402

PEERS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
         "efficient": SDPBackend.EFFICIENT_ATTENTION}
TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}
CAUSAL = {"true": ["is_causal"], "false": [None], "both": [None, "is_causal"]}
MASKS = {None: "no", "is_causal": "yes", "lower_right": "lower right"}
# --suite general: (B, H, Hkv, Sq, Skv, D, mask), each in float16 and bfloat16. The issue's
# anchors (GQA B4 H32 Hkv8 S4096 D128, causal at S2048; S=1000; D=256) and their neighbours.
GENERAL = [
    (4, 32, 8, 4096, 4096, 128, None),            # GQA 4
    (4, 32, 8, 2048, 2048, 128, "is_causal"),
    (2, 32, 4, 4096, 4096, 128, None),            # GQA 8
    (2, 32, 4, 4096, 4096, 128, "is_causal"),
    (8, 16, 1, 2048, 2048, 64, None),             # MQA
    (8, 16, 16, 1000, 1000, 128, None),           # ragged S
    (8, 16, 16, 1000, 1000, 128, "is_causal"),
    (8, 16, 16, 1000, 1000, 64, None),
    (4, 32, 8, 3000, 3000, 128, "is_causal"),     # ragged S with GQA
    (2, 16, 16, 8000, 8000, 64, None),
    (8, 16, 16, 4096, 4096, 256, None),           # D 256
    (8, 16, 16, 4096, 4096, 256, "is_causal"),
    (8, 16, 16, 4096, 4096, 96, None),            # D 96
    (4, 32, 8, 512, 4096, 128, "lower_right"),    # a chunk of queries after a prefix
]
REFERENCE_CHUNK_BYTES = 2 << 30          # float32 scores of this many bytes per reference step
# Largest relative error of ours against the float32 reference, about 10x what torch's own
# backends show on these inputs (H200, torch 2.11: 2.9e-4 float16, 2.3e-3 bfloat16).
TOLERANCE = {"float16": 3e-3, "bfloat16": 2e-2}


def load_ours():
    """(attention function, None) or (None, why it cannot be measured)."""
    try:
        from tilemlir.kernels.attention import attention
    except Exception as err:  # ImportError, or the module failing while it loads
        return None, f"tilemlir.kernels.attention could not be imported: {type(err).__name__}: {err}"
    return attention, None


def parse_config(text: str) -> dict:
    """--config "PIPELINE=0,STAGES=3" -> {"PIPELINE": 0, "STAGES": 3} (flash_attention's
    keyword arguments)."""
    config = {}
    for item in filter(None, text.split(",")):
        name, _, value = item.partition("=")
        config[name] = int(value) if value.lstrip("-").isdigit() else value
    return config


def hidden_keys(Sq: int, Skv: int, mask, device) -> torch.Tensor | None:
    """The (query, key) pairs a mask hides (True), or None without a mask."""
    if mask is None:
        return None
    diagonal = Skv - Sq if mask == "lower_right" else 0
    return torch.ones(Sq, Skv, device=device, dtype=torch.bool).triu(diagonal + 1)


def visible_pairs(Sq: int, Skv: int, mask) -> int:
    """(query, key) pairs the mask lets through: the FLOPs count 4 D of them per head."""
    if mask is None:
        return Sq * Skv
    diagonal = Skv - Sq if mask == "lower_right" else 0
    return sum(min(Skv, max(0, i + diagonal + 1)) for i in range(Sq))


def reference(q, k, v, mask) -> torch.Tensor:
    """O in float32 with IEEE float32 matmuls (no TF32), K and V repeated over each group of
    query heads, a few (batch, head) pairs at a time so that the Sq x Skv scores stay within
    REFERENCE_CHUNK_BYTES."""
    B, H, Sq, D = q.shape
    Skv = k.shape[2]
    group = H // k.shape[1]
    k, v = (t.repeat_interleave(group, dim=1) if group > 1 else t for t in (k, v))
    qf, kf, vf = (t.reshape(B * H, -1, D) for t in (q, k, v))
    out = torch.empty(B * H, Sq, D, device=q.device, dtype=torch.float32)
    step = max(1, REFERENCE_CHUNK_BYTES // (Sq * Skv * 4))
    hidden = hidden_keys(Sq, Skv, mask, q.device)
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        for i in range(0, B * H, step):
            scores = torch.bmm(qf[i:i + step].float(), kf[i:i + step].float().transpose(1, 2))
            scores *= 1.0 / math.sqrt(D)
            if hidden is not None:
                scores.masked_fill_(hidden, float("-inf"))
            out[i:i + step] = torch.bmm(torch.softmax(scores, dim=-1), vf[i:i + step].float())
            del scores
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
    return out.reshape(B, H, Sq, D)


def sdpa_masking(mask, Sq: int, Skv: int) -> dict:
    """scaled_dot_product_attention's keyword arguments for `mask`."""
    if mask == "is_causal":
        return dict(is_causal=True)
    if mask == "lower_right":
        from torch.nn.attention.bias import causal_lower_right
        return dict(attn_mask=causal_lower_right(Sq, Skv))
    return {}


def errors(out: torch.Tensor, ref: torch.Tensor) -> dict:
    diff = out.float() - ref
    return dict(max_abs=diff.abs().max().item(), rel=(diff.norm() / ref.norm()).item())


def peer_fn(backend, q, k, v, masking: dict):
    gqa = dict(enable_gqa=True) if k.shape[1] != q.shape[1] else {}

    def run():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, **masking, **gqa)
    return run


def fixed_shape_fn(q, k, v, dtype: str, mask, config: dict):
    """flash_attention compiled for this case's B, H and lengths (the kernel the front door ran
    before run-time shapes; for today's shapes, exactly it), or None where fixed shapes cannot
    say the mask (torch's is_causal with Sq != Skv: fixed shapes align causal to the end)."""
    import tilemlir
    from tilemlir.kernels.attention import flash_attention
    B, H, Sq, D = q.shape
    Hkv, Skv = k.shape[1], k.shape[2]
    if mask == "is_causal" and Sq != Skv:
        return None
    kernel = tilemlir.compile(flash_attention(B, H, Sq, D, dtype, causal=mask is not None,
                                              S_kv=Skv, group=H // Hkv, **config))
    out = torch.empty_like(q)

    def run():
        kernel(q.view(-1, D), k.view(-1, D), v.view(-1, D), out.view(-1, D))
        return out
    return run


def try_peer(fn) -> tuple[torch.Tensor | None, str | None]:
    """The peer's output, or None and torch's reason why the backend cannot run this case."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn()
            torch.cuda.synchronize()
            return out, None
        except RuntimeError as err:
            reasons = [str(w.message).strip() for w in caught]
            return None, " / ".join(reasons + [str(err).strip()])[:300]


def run_case(B, H, Hkv, Sq, Skv, D, dtype, mask, ours_fn, args) -> dict:
    t = TORCH_DTYPES[dtype]
    q = torch.randn(B, H, Sq, D, device="cuda", dtype=t)
    k, v = (torch.randn(B, Hkv, Skv, D, device="cuda", dtype=t) for _ in range(2))
    ref = reference(q, k, v, mask)
    masking = sdpa_masking(mask, Sq, Skv)
    heads = f"{H}" if Hkv == H else f"{H}/{Hkv}"
    seq = f"{Sq}" if Sq == Skv else f"{Sq}/{Skv}"
    row = dict(shape=f"{B}x{heads}x{seq}x{D}", dtype=dtype, mask=mask, ms={}, err={},
               skipped={}, ours_error=None, ours_first_s=None)
    gqa = dict(enable_gqa=True) if Hkv != H else {}
    fns, out = {}, None
    if ours_fn is not None:
        try:
            start = time.perf_counter()
            out = ours_fn(q, k, v, **masking, **gqa)
            torch.cuda.synchronize()
            row["ours_first_s"] = time.perf_counter() - start
            if tuple(out.shape) != (B, H, Sq, D) or out.dtype != t:
                raise AssertionError(f"returned {tuple(out.shape)} {out.dtype}, expected "
                                     f"{(B, H, Sq, D)} {t}")
            bad = int((~torch.isfinite(out)).sum())
            if bad:
                raise AssertionError(f"{bad} output elements are NaN or infinite (not written?)")
            row["err"]["ours"] = errors(out, ref)
            tolerance = args.tolerance or TOLERANCE[dtype]
            if not row["err"]["ours"]["rel"] < tolerance:
                raise AssertionError(f"relative error {row['err']['ours']['rel']:.2e} >= "
                                     f"{tolerance}")
            fns["ours"] = lambda: ours_fn(q, k, v, **masking, **gqa)
        except Exception as err:  # one failing case must not hide the peers' numbers
            row["ours_error"] = f"{type(err).__name__}: {err}"[:300]
        out = None
    if args.fixed_shapes:
        try:
            fixed = fixed_shape_fn(q, k, v, dtype, mask, args.config)
            if fixed is not None:
                out = fixed()
                torch.cuda.synchronize()
                row["err"]["fixed"] = errors(out, ref)
                fns["fixed"] = fixed
        except Exception as err:
            row["skipped"]["fixed"] = f"{type(err).__name__}: {err}"[:300]
        out = None
    for name, backend in PEERS.items():
        fn = peer_fn(backend, q, k, v, masking)
        out, why = try_peer(fn)
        if out is None:
            row["skipped"][name] = why
            continue
        row["err"][name] = errors(out, ref)
        fns[name] = fn
        out = None
    del ref
    if fns:
        timings = do_bench_alternating(list(fns.values()), blocks=args.blocks, reps=args.reps,
                                       warmup_ms=args.warmup_ms, spin_us=args.spin_us)
        row["ms"] = {name: timing.median for name, timing in zip(fns, timings)}
        row["spread"] = {name: (timing.quantile(0.2), timing.quantile(0.8))
                         for name, timing in zip(fns, timings)}
    flops = 4.0 * B * H * D * visible_pairs(Sq, Skv, mask)
    row["tflops"] = {name: flops / (ms * 1e-3) / 1e12 for name, ms in row["ms"].items()}
    peers = [name for name in PEERS if name in row["ms"]]
    row["best"] = min(peers, key=lambda name: row["ms"][name]) if peers else None
    return row


def ratio(row, peer) -> str:
    if "ours" not in row["ms"] or peer not in row["ms"]:
        return "-"
    return f"{row['ms'][peer] / row['ms']['ours']:.3f}"


def tflops(row, name) -> str:
    if name in row["tflops"]:
        return f"{row['tflops'][name]:.1f}"
    return "skipped" if name in row["skipped"] else "-"


def ours_cells(row) -> list[str]:
    if row["ours_error"]:
        return [f"FAILED: {row['ours_error']}".replace("|", "/"), "-", "-", "-"]
    if "ours" not in row["err"]:
        return ["-", "-", "-", "-"]
    e = row["err"]["ours"]
    return [tflops(row, "ours"), f"{row['ms']['ours']:.3f}", f"{e['max_abs']:.1e}",
            f"{e['rel']:.1e}"]


def markdown(env: dict, rows: list[dict], args, ours_missing: str | None) -> str:
    lines = heading("FlashAttention forward: tilemlir vs torch scaled_dot_product_attention "
                    "(flash, cuDNN, efficient)", env) + [
        "- O = softmax(Q K^T / sqrt(D) [+ causal mask]) V, Q [B, H, Sq, D], K and V [B, Hkv, "
        "Skv, D], contiguous, random normal inputs, the same tensors for every implementation "
        "(shape B x H[/Hkv] x S[q/Skv] x D; causal: yes = is_causal, lower right = "
        "causal_lower_right, GQA with enable_gqa=True); peers: "
        "`F.scaled_dot_product_attention` under `sdpa_kernel(SDPBackend.FLASH_ATTENTION / "
        "CUDNN_ATTENTION / EFFICIENT_ATTENTION)`; best torch = the fastest backend that ran",
        f"- timing: tilemlir.testing.do_bench_alternating, the same for every implementation: "
        f"L2 flushed (256 MiB overwritten) and a {args.spin_us:g} us GPU spin before each timed "
        f"call (the events time the GPU work, not the host's launch), median of {args.reps} "
        f"CUDA-event timings in {args.blocks} blocks per implementation, alternating, each "
        f"block after {args.warmup_ms:g} ms of warm-up calls",
        "- TFLOP/s = 4 B H D x the (query, key) pairs the mask lets through / t; ours / X = "
        "ratio of TFLOP/s (above 1: ours faster)",
        "- correctness before timing: float32 reference (torch math, no TF32); ours must be "
        "finite everywhere and within relative (Frobenius) error "
        + (f"{args.tolerance:g}" if args.tolerance else
           ", ".join(f"{v:g} ({k})" for k, v in TOLERANCE.items())),
    ]
    if ours_missing:
        lines.append(f"- ours not measured: {ours_missing}")
    fixed = any("fixed" in r["ms"] for r in rows)
    if fixed:
        lines.append("- fixed: flash_attention compiled for each case's B, H and lengths (the "
                     "kernel the front door ran before run-time shapes), timed beside ours")
    lines += ["", "| B x H x S x D | dtype | causal | ours TFLOP/s | flash TFLOP/s | "
              "cuDNN TFLOP/s | efficient TFLOP/s | best torch | ours / best | ours / flash | "
              "ours / cuDNN | ours / efficient | ours ms | ours max abs err | ours rel err | "
              "peers' max rel err |" + (" fixed TFLOP/s | ours / fixed |" if fixed else ""),
              "|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
              + ("---:|---:|" if fixed else "")]
    for r in rows:
        ours = ours_cells(r)
        peer_err = max((r["err"][p]["rel"] for p in PEERS if p in r["err"]), default=None)
        lines.append(
            f"| {r['shape']} | {r['dtype']} | {MASKS[r['mask']]} | {ours[0]} | "
            f"{tflops(r, 'flash')} | {tflops(r, 'cudnn')} | {tflops(r, 'efficient')} | "
            f"{r['best'] or '-'} | {ratio(r, r['best']) if r['best'] else '-'} | "
            f"{ratio(r, 'flash')} | {ratio(r, 'cudnn')} | {ratio(r, 'efficient')} | {ours[1]} | "
            f"{ours[2]} | {ours[3]} | {'-' if peer_err is None else f'{peer_err:.1e}'} |"
            + (f" {tflops(r, 'fixed')} | {ratio(r, 'fixed')} |" if fixed else ""))
    skipped = [(r, name, why) for r in rows for name, why in r["skipped"].items()]
    if skipped:
        lines += ["", "Skipped peers:"] + [
            f"- {r['shape']} {r['dtype']} causal={MASKS[r['mask']]}: {name}: {why}"
            for r, name, why in skipped]
    both = [r for r in rows if "ours" in r["ms"] and r["best"]]
    if both:
        geo = math.exp(sum(math.log(r["ms"][r["best"]] / r["ms"]["ours"]) for r in both)
                       / len(both))
        lines += ["", f"Geometric mean of ours / best torch over {len(both)} cases: {geo:.3f}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    ints = lambda s: [int(v) for v in s.split(",")]  # noqa: E731
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", default="1024,4096,16384", type=ints)
    p.add_argument("--head-dim", default=None, type=ints,
                   help="the sweep's head dims (default 64,128); with --suite general, only "
                        "the cases of these (default: all)")
    p.add_argument("--dtype", default="float16,bfloat16", type=lambda s: s.split(","))
    p.add_argument("--causal", default="both", choices=sorted(CAUSAL))
    p.add_argument("--reps", type=int, default=20, help="timed calls per implementation")
    p.add_argument("--blocks", type=int, default=2)
    p.add_argument("--warmup-ms", type=float, default=100.0,
                   help="warm-up before each timed block, in milliseconds")
    p.add_argument("--spin-us", type=float, default=50.0)
    p.add_argument("--tolerance", type=float, default=None,
                   help="largest relative error of ours against the float32 reference "
                        "(default: 3e-3 float16, 2e-2 bfloat16)")
    p.add_argument("--peers-only", action="store_true", help="do not import or time ours")
    p.add_argument("--suite", default="sweep", choices=("sweep", "general"),
                   help="sweep: --batch x --heads x --seq x --head-dim (the default); general: "
                        "the GQA, ragged-length, D 96 / 256 and Sq != Skv cases (GENERAL)")
    p.add_argument("--fixed-shapes", action="store_true",
                   help="also time flash_attention compiled for each case's shapes (the "
                        "front door's kernel before run-time shapes): column ours / fixed")
    p.add_argument("--quick", action="store_true",
                   help="one case (seq 4096, head dim 128, float16, not causal), 10 reps")
    p.add_argument("--config", type=parse_config, default={},
                   help="ours: flash_attention keyword arguments, e.g. PIPELINE=0,STAGES=3")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    if args.quick:
        args.seq, args.head_dim, args.dtype, args.causal, args.reps = [4096], [128], \
            ["float16"], "false", 10
    for dtype in args.dtype:
        if dtype not in TORCH_DTYPES:
            p.error(f"--dtype {dtype}: expected one of {', '.join(TORCH_DTYPES)}")
    ours_fn, ours_missing = (None, "--peers-only") if args.peers_only else load_ours()
    if ours_fn is not None and args.config:
        ours_fn = functools.partial(ours_fn, config=args.config)
    if ours_missing:
        print(f"ours not measured: {ours_missing}", flush=True)
    if args.suite == "general":
        cases = [case for case in GENERAL if args.head_dim is None or case[5] in args.head_dim]
    else:
        cases = [(args.batch, args.heads, args.heads, S, S, D, mask) for S in args.seq
                 for D in args.head_dim or (64, 128) for mask in CAUSAL[args.causal]]
    rows = []
    for B, H, Hkv, Sq, Skv, D, mask in cases:
        for dtype in args.dtype:
            r = run_case(B, H, Hkv, Sq, Skv, D, dtype, mask, ours_fn, args)
            rows.append(r)
            found = ", ".join(f"{n} {tf:.1f}" for n, tf in r["tflops"].items())
            errs = ", ".join(f"{n} {e['max_abs']:.1e}/{e['rel']:.1e}" for n, e in r["err"].items())
            print(f"{r['shape']:>22} {dtype:>8} causal={MASKS[mask]:11}: TFLOP/s {found}; "
                  f"max abs/rel err {errs}"
                  + (f"; ours FAILED {r['ours_error']}" if r["ours_error"] else "")
                  + "".join(f"; {n} skipped: {why}" for n, why in r["skipped"].items()),
                  flush=True)
            torch.cuda.empty_cache()
    text = markdown(environment(), rows, args, ours_missing)
    publish(text, args.out)


if __name__ == "__main__":
    main()
