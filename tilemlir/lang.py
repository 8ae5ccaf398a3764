"""The kernel language, seed style:

    import tilemlir.lang as T
    Tx = T.tile

    @T.prim_func
    def kernel(A: T.Buffer((M, K), "float16"), ...):
        bx, by = T.cta_id([M // 128, N // 128])
        warp_id = T.warp_id_in_wg([4])
        lane_id = T.lane_id([32])
        ...
        Tx.cta.copy(Asmem[:, :], A[m:m + 128, k:k + 64])
        if lane_id == 0:
            T.print("warp", warp_id, "k", k)         # device printf: "[file.py:12] warp 0 k 64"
"""

from tilemlir.dsl.buffers import TileBuffer
from tilemlir.dsl.debug import device_print as print  # noqa: A001 (T.print, on the device)
from tilemlir.dsl.dims import DimExpr, ceildiv, dynamic
from tilemlir.dsl.dims import maximum as max  # noqa: A001 (T.max: of ints and run-time dims)
from tilemlir.dsl.dims import minimum as min  # noqa: A001 (T.min)
from tilemlir.dsl.intrinsics import (Buffer, ScalarType, SMEMPool, address_of, alloc_buffer,
                                     alloc_local, bfloat16, boolean, cluster_shape, cta_id,
                                     decl_buffer, float16, float32, int32, int64, lane_id,
                                     meta_var, min_ctas_per_sm, serial, thread_id, uint32,
                                     uint64, unroll, warp_id, warp_id_in_wg, warpgroup_id)
from tilemlir.dsl.interpreter import Macro, macro
from tilemlir.dsl.kernel import KernelFunction
from tilemlir.dsl.primitives import cuda, ptx, tile
from tilemlir.dsl.values import KernelError, dtype_bits
from tilemlir.layout import (MmaSync, R, S, TCol, Tcgen05Mma, TileLayout, TLane, Wgmma, laneid,
                             tcgen05_accumulator_layout, tid_in_wg, warpid, wgid,
                             wgmma_a_layout, wgmma_accumulator_layout, wid_in_wg)
from tilemlir.layout import mma_shared_layout as _mma_shared_layout
from tilemlir.layout import plot_layout as _plot_layout
from tilemlir.runtime.compiler import compile_kernel


class CallableKernel(KernelFunction):
    """A `@T.prim_func` function: calling it compiles (cached) and runs it."""

    def __call__(self, *args, target: str | None = None):
        """Compiles for `target` (default: the GPU's chip) and runs on `args`."""
        return compile_kernel(self, target=target)(*args)


def prim_func(fn) -> CallableKernel:
    """Makes a kernel of a Python function (TIRx's name): its parameters are the kernel's
    (`T.Buffer` global tensors, `T.int32`-style scalars), its body the code every thread runs.

        @T.prim_func
        def scale(X: T.Buffer((128,), "float32"), Y: T.Buffer((128,), "float32")):
            T.cta_id([1])
            tid = T.thread_id([128])
            Y[tid] = X[tid] * 2.0

    The function is traced when it is compiled (`tilemlir.compile`) or interpreted
    (`tilemlir.interpret`); calling it directly compiles for the GPU present and runs it."""
    return CallableKernel(fn)


class SwizzleMode:
    """Shared-memory swizzle modes of the MMA operand layouts (seed spelling)."""
    SWIZZLE_128B_ATOM = "128B"
    SWIZZLE_64B_ATOM = "64B"
    SWIZZLE_32B_ATOM = "32B"
    SWIZZLE_NONE = "none"


def mma_shared_layout(dtype, swizzle_mode: str, shape) -> TileLayout:
    """The K-major shared layout the tensor cores read, for a dtype ("float16", ...) or bit width."""
    bits = dtype if isinstance(dtype, int) else dtype_bits(dtype)
    return _mma_shared_layout(bits, swizzle_mode, shape)


def plot_layout(layout, shape, dtype="float16", *, kind=None, path=None, format="auto") -> str:
    """Which thread and register holds each element of a register layout, or which bank each
    element of a shared-memory layout of `dtype` uses: an SVG when matplotlib is installed
    (format="auto"), else a text table; returned, and written to `path` when given. See
    tilemlir.layout.plot."""
    bits = dtype if isinstance(dtype, int) else dtype_bits(dtype)
    return _plot_layout(layout, shape, bits, kind=kind, path=path, format=format)


__all__ = [
    "Buffer", "DimExpr", "KernelError", "KernelFunction", "MmaSync", "R", "S", "SMEMPool", "ScalarType",
    "TCol", "TLane", "Tcgen05Mma", "TileBuffer", "TileLayout", "Wgmma", "address_of",
    "alloc_buffer", "alloc_local", "bfloat16",
    "boolean", "ceildiv", "cluster_shape", "cta_id", "cuda", "decl_buffer", "dtype_bits", "dynamic", "float16", "float32", "int32",
    "int64",
    "lane_id", "laneid", "Macro", "macro", "max", "meta_var", "min", "min_ctas_per_sm",
    "mma_shared_layout", "plot_layout",
    "prim_func", "print", "ptx",
    "SwizzleMode", "serial", "tcgen05_accumulator_layout", "thread_id", "tid_in_wg", "tile", "uint32",
    "uint64", "unroll", "warp_id", "warp_id_in_wg", "warpgroup_id", "warpid", "wgid",
    "wgmma_a_layout", "wgmma_accumulator_layout", "wid_in_wg",
]
