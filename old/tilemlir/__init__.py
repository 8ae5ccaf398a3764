"""tilemlir: tile primitives on MLIR, dispatched to gpu/nvvm, compiled to PTX, run from Python.

    import tilemlir
    import tilemlir.lang as T
    kernel = tilemlir.compile(my_kernel, target="sm_90a")
    tilemlir.interpret(my_kernel, a, b, d)        # the same kernel on the CPU, in numpy
"""

__version__ = "0.1.0"


def __getattr__(name):
    # Keep `import tilemlir` light: the compiler (and MLIR) load on first use.
    if name == "compile":
        from tilemlir.runtime.compiler import compile
        return compile
    if name == "autotune":
        from tilemlir.runtime.tuning import autotune
        return autotune
    if name == "interpret":
        from tilemlir.reference import interpret
        return interpret
    if name == "torch_op":
        from tilemlir.runtime.torch_ops import torch_op
        return torch_op
    raise AttributeError(f"module 'tilemlir' has no attribute '{name}'")
