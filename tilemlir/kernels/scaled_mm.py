"""The FP8 GEMM front door: torch._scaled_mm's job on the shipped FP8 kernel (fp8_gemm).

    from tilemlir.kernels.scaled_mm import scaled_mm
    d = scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16)    # d = (a @ b.T) scaled

a (M x K) and b (N x K) are torch CUDA tensors of float8_e4m3fn or float8_e5m2 (b stored N x K,
as the f16 front door takes it: d = a @ b.T); the scales are float32 CUDA tensors whose shapes
say their kind (or name it with scaling=):

    tensor   scale_a and scale_b of one element each
    row      scale_a (M, 1) or (M,), scale_b (N,), (N, 1) or (1, N)
    block    scale_a (M, ceil(K / 128)), scale_b (ceil(N / 128), ceil(K / 128)) (any strides)

with d[m, n] = sum_k (scale_a . a)[m, k] (scale_b . b)[n, k], each scale multiplying the
elements it covers (block: a's 1 x 128 and b's 128 x 128 blocks). out_dtype is torch.bfloat16 or
torch.float16. As torch._scaled_mm, each k-tile's products (128 of them) are summed by the
tensor cores and promoted into fp32 registers, 128 columns at a time, unless
use_fast_accum=True (tensor and row scales) lets the tensor cores sum all of K.

Any M, N, K: K not a multiple of 16 loads the k-tiles with masked cp.async, N not a multiple of
8 stores D through staging rows in 16-byte units (an odd N from 64 columns, an even one at K up
to 64) or with masked stores (fp8_gemm's PRODUCER and EPILOGUE, as parts.unaligned_epilogue
picks). Each configuration is compiled once for every M (a run-time M); the configuration is
chosen per shape by the f16 front door's wave model (tilemlir.kernels.gemm.estimate; an FP8
k-tile of 128 moves the bytes of an f16 one of 64 and takes about its time at twice the rate,
so the model sees K / 2).

The same function as a torch custom op (for torch.compile(fullgraph=True)):

    op = scaled_mm_op()           # torch.ops.tilemlir.scaled_mm, registered once
    d = op(a, b, scale_a, scale_b, torch.bfloat16, False)        # ..., use_fast_accum
"""

from __future__ import annotations

import math
import threading

from tilemlir.kernels import gemm
from tilemlir.kernels.fp8_gemm import SCALE_BLOCK, SCALINGS, fp8_gemm
from tilemlir.kernels.parts import ShapeError, unaligned_epilogue

_TORCH_F8 = {"torch.float8_e4m3fn": "float8_e4m3fn", "torch.float8_e5m2": "float8_e5m2"}
_TORCH_OUT = {"torch.bfloat16": "bfloat16", "torch.float16": "float16"}
SMS = gemm.SMS
# Tile shapes tried, biggest first (promotion takes a 256-wide tile 128 columns at a time).
# Block scales keep 128-wide tiles: 256-wide ones, whose consumers spill a few registers in
# the k-loop there, ran 0.74-0.92x their speed (results/2026-12-03-session13/run2).
TILES = ((128, 256), (128, 128), (64, 128))
BLOCK_TILES = ((128, 128), (64, 128))


def candidate_configs(M: int, N: int, K: int, scaling: str, use_fast_accum: bool = False,
                      sms: int = SMS) -> list[dict]:
    """fp8_gemm configurations for this shape, best modelled first: each tile shape that fits
    M x N, in 2x1 clusters sharing B (where K allows TMA) and alone; masked cp.async loads
    where K is not a multiple of 16, parts.unaligned_epilogue's stores where N is not one of
    8. Block scales, and the others without use_fast_accum, promote the accumulator every
    k-tile."""
    promote = scaling == "block" or not use_fast_accum
    configs = []
    for BM, BN in BLOCK_TILES if scaling == "block" else TILES:
        if BM > 64 and BM >= 2 * M or BN > 128 and BN >= 2 * N:
            continue                # a smaller tile covers M x N with as few tiles
        if promote and BM == 64 and M > 64:
            # one consumer warpgroup: no other's MMAs run while it promotes (block scales at
            # 0.67-0.68x torch against 0.78-0.89x for 128 rows, which the wave model missed;
            # results/2026-12-03-session13/run8)
            continue
        for cluster in (True, False):
            if cluster and K % 16:
                continue            # cp.async loads (any K) do not multicast
            config = dict(BM=BM, BN=BN, CLUSTER=cluster)
            if promote and scaling != "block":
                config["PROMOTE"] = True
            if K % 16:
                config["PRODUCER"] = "cp_async"
            if N % 8:
                config["EPILOGUE"] = unaligned_epilogue(N, K)
            configs.append(config)

    def modelled(c):
        kernel = "hgemm_v7" if c["CLUSTER"] else "hgemm_v6"
        return gemm.estimate(M, N, math.ceil(K / 2), dict(KERNEL=kernel, BM=c["BM"], BN=c["BN"]),
                             sms, few_waves=False)
    return sorted(configs, key=lambda c: (modelled(c), -c["BM"] * c["BN"], not c["CLUSTER"]))


def choose_config(M: int, N: int, K: int, scaling: str, use_fast_accum: bool = False,
                  sms: int = SMS) -> dict:
    """The modelled best of candidate_configs."""
    return candidate_configs(M, N, K, scaling, use_fast_accum, sms)[0]


_COMPILED: dict = {}            # (N, K, dtypes, scaling, configuration, target) -> kernel
_COMPILED_LOCK = threading.Lock()
# A call's kernel by everything the call asked (shape, dtypes, scales, accumulation, config,
# target): choosing a configuration costs about 20 us of host time, about a 2048^3 GEMM's GPU
# time, and a server asks for the same shapes again and again.
_CALLS: dict = {}


def fp8_kernel(N: int, K: int, a_dtype: str, b_dtype: str, out_dtype: str, scaling: str,
               config: dict, target: str | None = None):
    """fp8_gemm compiled for a run-time M (once per the rest of its arguments)."""
    key = (N, K, a_dtype, b_dtype, out_dtype, scaling, tuple(sorted(config.items())), target)
    with _COMPILED_LOCK:
        compiled = _COMPILED.get(key)
    if compiled is None:
        import tilemlir
        import tilemlir.lang as T
        compiled = tilemlir.compile(fp8_gemm(T.dynamic("M"), N, K, a_dtype, b_dtype, out_dtype,
                                             scaling, **config), target=target)
        with _COMPILED_LOCK:
            compiled = _COMPILED.setdefault(key, compiled)
    return compiled


def scales_fit(scaling: str, M: int, N: int, K: int, scale_a_shape, scale_b_shape) -> bool:
    """Whether scales of these shapes are of kind `scaling` for a (M x K) and b (N x K)."""
    sa, sb = tuple(scale_a_shape), tuple(scale_b_shape)
    if scaling == "tensor":
        return math.prod(sa) == 1 and math.prod(sb) == 1 and len(sa) <= 2 and len(sb) <= 2
    if scaling == "row":
        return sa in ((M, 1), (M,)) and sb in ((N, 1), (1, N), (N,))
    k_blocks = math.ceil(K / SCALE_BLOCK)
    return sa == (M, k_blocks) and sb == (math.ceil(N / SCALE_BLOCK), k_blocks)


def infer_scaling(M: int, N: int, K: int, scale_a_shape, scale_b_shape) -> str | None:
    """The first kind of scales ("tensor", "row", "block") these shapes fit, or None. Shapes
    that fit two kinds mean the same product (with K at most 128, a's (M, 1) scales are per
    row and per 1 x 128 block alike)."""
    return next((s for s in SCALINGS if scales_fit(s, M, N, K, scale_a_shape, scale_b_shape)),
                None)


def _scale_views(scaling: str, M: int, N: int, scale_a, scale_b):
    """The scales as the kernel takes them: (1,), (1,) / (M, 1), (N,) / row-major blocks."""
    if scaling == "tensor":
        return scale_a.reshape(1), scale_b.reshape(1)
    if scaling == "row":
        return scale_a.reshape(M, 1).contiguous(), scale_b.reshape(N).contiguous()
    return scale_a.contiguous(), scale_b.contiguous()


def scaled_mm(a, b, scale_a, scale_b, out_dtype=None, use_fast_accum: bool = False,
              scaling: str | None = None, out=None, config: dict | None = None,
              target: str | None = None):
    """(a @ b.T) with its scales (see the module docstring), as a new out_dtype tensor (default
    torch.bfloat16) or into `out`, on the current stream. use_fast_accum (torch._scaled_mm's
    flag): the tensor cores accumulate all of K, whose FP8 accumulation keeps about 14 bits
    (DeepSeek-V3), instead of each k-tile's 128 products being promoted into fp32 registers
    (block scales always are). config: fp8_gemm keyword arguments instead of the modelled
    choice. ArgumentError names a wrong argument."""
    import torch

    from tilemlir.runtime.args import ArgumentError
    out_dtype = torch.bfloat16 if out_dtype is None else out_dtype
    for name, t in (("a", a), ("b", b), ("scale_a", scale_a), ("scale_b", scale_b)):
        if not isinstance(t, torch.Tensor) or not t.is_cuda:
            where = f" on {t.device}" if isinstance(t, torch.Tensor) else ""
            raise ArgumentError(f"scaled_mm: {name} must be a torch CUDA tensor, got "
                                f"{type(t).__name__}{where}")
    for name, t in (("a", a), ("b", b)):
        if t.dim() != 2:
            raise ArgumentError(f"scaled_mm: {name} must be 2-D, got shape {list(t.shape)}")
        if str(t.dtype) not in _TORCH_F8:
            raise ArgumentError(f"scaled_mm: {name} has dtype {t.dtype}; torch.float8_e4m3fn "
                                f"or torch.float8_e5m2 needed")
        if not t.is_contiguous():
            raise ArgumentError(f"scaled_mm: {name} must be contiguous (row-major; b is N x K)")
    (M, K), (N, Kb) = a.shape, b.shape
    if K != Kb:
        raise ArgumentError(f"scaled_mm: a is {M} x {K} and b is {N} x {Kb}: b must be N x K "
                            f"(d = a @ b.T), with a's K")
    for name, t in (("scale_a", scale_a), ("scale_b", scale_b)):
        if t.dtype != torch.float32:
            raise ArgumentError(f"scaled_mm: {name} must be float32, got {t.dtype}")
    if str(out_dtype) not in _TORCH_OUT:
        raise ArgumentError(f"scaled_mm: out_dtype must be torch.bfloat16 or torch.float16, got "
                            f"{out_dtype}")
    if scaling is not None and scaling not in SCALINGS:
        raise ArgumentError(f"scaled_mm: scaling must be one of {SCALINGS}, got {scaling!r}")
    if scaling is None:
        kind = infer_scaling(M, N, K, scale_a.shape, scale_b.shape)
    else:
        kind = scaling if scales_fit(scaling, M, N, K, scale_a.shape, scale_b.shape) else None
    if kind is None:
        raise ArgumentError(
            f"scaled_mm: scale_a {list(scale_a.shape)} and scale_b {list(scale_b.shape)} are no "
            f"kind of scales for a {M} x {K} and b {N} x {K}: one element each (tensor), (M, 1) "
            f"and (N,) (row), or (M, {math.ceil(K / SCALE_BLOCK)}) and "
            f"({math.ceil(N / SCALE_BLOCK)}, {math.ceil(K / SCALE_BLOCK)}) (block)")
    for name, t in (("b", b), ("scale_a", scale_a), ("scale_b", scale_b)):
        if t.device != a.device:
            raise ArgumentError(f"scaled_mm: {name} is on {t.device} but a is on {a.device}")
    if out is None:
        out = torch.empty((M, N), dtype=out_dtype, device=a.device)
    elif tuple(out.shape) != (M, N) or out.dtype != out_dtype or not out.is_contiguous():
        raise ArgumentError(f"scaled_mm: out must be a contiguous {M} x {N} {out_dtype} tensor, "
                            f"got {list(out.shape)} {out.dtype}")
    if not isinstance(use_fast_accum, bool):
        raise ArgumentError(f"scaled_mm: use_fast_accum must be True or False, got "
                            f"{use_fast_accum!r}")
    dtypes = (_TORCH_F8[str(a.dtype)], _TORCH_F8[str(b.dtype)], _TORCH_OUT[str(out_dtype)])
    try:
        asked = (M, N, K, dtypes, kind, use_fast_accum,
                 None if config is None else tuple(sorted(config.items())), target)
        kernel = _CALLS.get(asked)
    except (TypeError, AttributeError):     # not hashable, or no dict: fp8_gemm says
        asked, kernel = None, None
    if kernel is None:
        chosen = dict(config) if config is not None else choose_config(M, N, K, kind,
                                                                       use_fast_accum)
        try:
            kernel = fp8_kernel(N, K, *dtypes, kind, chosen, target)
        except (ShapeError, TypeError) as err:
            raise ArgumentError(str(err)) from None
        if asked is not None:
            with _COMPILED_LOCK:
                _CALLS[asked] = kernel
    from tilemlir.runtime.args import kernel_input, kernel_output
    scales = map(kernel_input, _scale_views(kind, M, N, scale_a, scale_b))
    target = kernel_output(out)              # any alignment: through aligned copies
    kernel(kernel_input(a), kernel_input(b), *scales, target)
    if target is not out:
        out.copy_(target)
    return out


_OP = None
_OP_LOCK = threading.Lock()


def scaled_mm_op():
    """scaled_mm as the torch custom op torch.ops.tilemlir.scaled_mm(a, b, scale_a, scale_b,
    out_dtype, use_fast_accum=False) -> Tensor (registered at the first call; functional: the
    result is a new tensor), which torch.compile(fullgraph=True) traces without running it."""
    global _OP
    with _OP_LOCK:
        if _OP is not None:
            return _OP
        import torch

        @torch.library.custom_op("tilemlir::scaled_mm", mutates_args=(), schema=(
            "(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, ScalarType out_dtype, "
            "bool use_fast_accum=False) -> Tensor"))
        def op(a, b, scale_a, scale_b, out_dtype, use_fast_accum=False):
            return scaled_mm(a, b, scale_a, scale_b, out_dtype, use_fast_accum)

        @op.register_fake
        def _(a, b, scale_a, scale_b, out_dtype, use_fast_accum=False):
            return a.new_empty((a.shape[0], b.shape[0]), dtype=out_dtype)

        _OP = torch.ops.tilemlir.scaled_mm
        return _OP


def quantize(x, scaling: str, operand: str = "a", dtype=None):
    """(x8, scale): the float tensor x (rows x K) as 8-bit floats (dtype: torch.float8_e4m3fn by
    default) and the float32 scales scaled_mm takes for it as operand "a" or "b" (b stored
    N x K), each scale the amax of what it covers over the format's largest value (so that x ~
    scale . x8, nothing saturates): one for the tensor ("tensor"), one per row ("row": (M, 1)
    for a, (N,) for b), or per 1 x 128 block of a and 128 x 128 block of b ("block"). A helper
    for tests and benchmarks, in plain torch."""
    import torch
    dtype = torch.float8_e4m3fn if dtype is None else dtype
    if scaling not in SCALINGS or operand not in ("a", "b"):
        raise ValueError(f"quantize: scaling must be one of {SCALINGS} and operand 'a' or 'b', "
                         f"got {scaling!r}, {operand!r}")
    largest = torch.finfo(dtype).max
    x = x.float()
    rows, k = x.shape
    if scaling == "tensor":
        amax = x.abs().amax().reshape(1)
        expanded = amax
    elif scaling == "row":
        amax = x.abs().amax(dim=1, keepdim=True)
        expanded = amax
    else:
        kb, rb = math.ceil(k / SCALE_BLOCK), math.ceil(rows / SCALE_BLOCK)
        block_rows = 1 if operand == "a" else SCALE_BLOCK
        padded = torch.nn.functional.pad(x.abs(), (0, kb * SCALE_BLOCK - k,
                                                   0, (rb * SCALE_BLOCK - rows) * (operand == "b")))
        amax = padded.reshape(-1, block_rows, kb, SCALE_BLOCK).amax(dim=(1, 3))
        expanded = amax.repeat_interleave(block_rows, 0)[:rows].repeat_interleave(
            SCALE_BLOCK, 1)[:, :k]
    scale = torch.where(amax > 0, amax / largest, torch.ones_like(amax))
    expanded = torch.where(expanded > 0, expanded / largest, torch.ones_like(expanded))
    x8 = (x / expanded).clamp(-largest, largest).to(dtype)
    if scaling == "row" and operand == "b":
        scale = scale.reshape(rows)
    return x8, scale.float().contiguous()


def dequantize(x8, scale, scaling: str, operand: str = "a"):
    """quantize's inverse: scale . x8 as a float32 tensor (what scaled_mm multiplies)."""
    x = x8.float()
    rows, k = x.shape
    if scaling == "tensor":
        return x * scale.reshape(())
    if scaling == "row":
        return x * scale.reshape(rows, 1)
    block_rows = 1 if operand == "a" else SCALE_BLOCK
    expanded = scale.repeat_interleave(block_rows, 0)[:rows].repeat_interleave(
        SCALE_BLOCK, 1)[:, :k]
    return x * expanded
