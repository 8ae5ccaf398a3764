"""Float32 references of the row-wise norms (test_norms.py on numpy, test_norms_gpu.py on torch
tensors moved to numpy) and the tolerances their f16 / bf16 / f32 outputs are held to."""

import numpy as np

OPS = ("softmax", "rms_norm", "layer_norm")
EPS = {"rms_norm": 1e-6, "layer_norm": 1e-5}
# |y - ref| <= RTOL * |ref| + ATOL: one rounding to the output type, a little f32 error
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5}
ATOL = {("softmax", "float16"): 1e-6, ("softmax", "bfloat16"): 1e-5, ("softmax", "float32"): 1e-7,
        ("rms_norm", "float16"): 2e-3, ("rms_norm", "bfloat16"): 1.6e-2,
        ("rms_norm", "float32"): 1e-5, ("layer_norm", "float16"): 2e-3,
        ("layer_norm", "bfloat16"): 1.6e-2, ("layer_norm", "float32"): 1e-5}


def reference(op: str, x: np.ndarray, w: np.ndarray | None = None,
              b: np.ndarray | None = None) -> np.ndarray:
    """op over the rows of x (float32 arrays; float64 sums)."""
    x = x.astype(np.float64)
    if op == "softmax":
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    if op == "rms_norm":
        y = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS[op]) * w
        return y.astype(np.float32)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return ((x - mean) / np.sqrt(var + EPS[op]) * w + b).astype(np.float32)


def mismatches(op: str, dtype: str, got: np.ndarray, ref: np.ndarray) -> str | None:
    """None when `got` (float32 values of the kernel's output) is within tolerance of `ref` and
    has no NaN (the outputs start poisoned), else where it is not."""
    bad = ~(np.abs(got - ref) <= RTOL[dtype] * np.abs(ref) + ATOL[op, dtype])
    if not bad.any():
        return None
    r, c = (int(i) for i in np.argwhere(bad)[0])
    return (f"{int(bad.sum())} of {bad.size} elements off, first [{r}, {c}]: got {got[r, c]}, "
            f"expected {ref[r, c]}")


def compile_config(config: tuple) -> str:
    """Compiles row_kernel(op, N, dtype, eps, target=chip) for config (op, N, dtype, chip),
    into the disk cache (a worker process's share of test_norms_gpu.py's compiles)."""
    from tilemlir.kernels import norms
    op, N, dtype, chip = config
    norms.row_kernel(op, N, dtype, eps=EPS.get(op), target=chip)
    return f"{op} {N} {dtype}"
