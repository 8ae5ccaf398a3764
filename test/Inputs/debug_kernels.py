"""Kernels for the debugging-aid tests (T.print, line info); their line numbers are checked.

test/Language/print.mlir and test/Target/line-info.mlir check these lines: edit with care.
"""

import tilemlir.lang as T


@T.prim_func
def show(X: T.Buffer((64,), "float32"), n: T.int32):
    T.cta_id([1])
    tid = T.thread_id([64])
    x = X[tid]
    if tid < 2:
        T.print("tid", tid, "x =", x, "n%", n)
        T.print(f"tid={tid} x={x:.3f} hex={tid * 255:04x} shape={(2, 3)}")
    if tid == 63:
        T.print("last", X[tid] * 2.0, sep=": ", end="!\n")
