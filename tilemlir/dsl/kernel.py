"""`@T.kernel` (alias `@T.prim_func`): a Python function that becomes a tile-dialect kernel."""

from __future__ import annotations

import functools

from mlir import ir

from tilemlir.dsl.interpreter import Interpreter


class KernelFunction:
    """A kernel written in the language; `build()` gives its tile IR (a fresh module each time)."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn

    @property
    def name(self) -> str:
        return self.fn.__name__

    def build(self) -> ir.Module:
        return Interpreter(self.fn).build().module

    def ir(self) -> str:
        """The tile IR as text, with the Python source locations."""
        return self.build().operation.get_asm(enable_debug_info=True)

    def __call__(self, *args, target: str | None = None):
        """Compiles (cached) for `target` (default: the GPU's chip) and runs on `args`."""
        from tilemlir.runtime.compiler import compile_kernel
        return compile_kernel(self, target=target)(*args)

    def __repr__(self) -> str:
        return f"<tilemlir kernel {self.name}>"


def kernel(fn) -> KernelFunction:
    return KernelFunction(fn)


prim_func = kernel
