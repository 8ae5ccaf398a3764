"""A Python function that becomes a tile-dialect kernel (what `@T.prim_func` makes; tilemlir.lang
adds the call that compiles and runs it, so that the language does not import the runtime)."""

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
        """The kernel's name: the Python function's."""
        return self.fn.__name__

    def build(self) -> ir.Module:
        """Traces the function into a fresh tile-IR module (one gpu.func)."""
        return Interpreter(self.fn).build().module

    def ir(self) -> str:
        """The tile IR as text, with the Python source locations."""
        return self.build().operation.get_asm(enable_debug_info=True)

    def __repr__(self) -> str:
        return f"<tilemlir kernel {self.name}>"

