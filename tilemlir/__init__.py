"""tilemlir: tile primitives on MLIR, dispatched to gpu/nvvm, compiled to PTX, run from Python.

    import tilemlir
    import tilemlir.lang as T
    kernel = tilemlir.compile(my_kernel, target="sm_90a")
    tilemlir.interpret(my_kernel, a, b, d)        # the same kernel on the CPU, in numpy
    print(tilemlir.explain(my_kernel, target="sm_90a"))  # which variant lowers each tile op
    print(tilemlir.check_banks(my_kernel))        # shared-memory bank conflicts, predicted

The functions below load on first use, so that `import tilemlir` stays light (no MLIR):
`compile`, `interpret`, `autotune`, `explain`, `check_banks`, `torch_op`. The kernel language is
`tilemlir.lang`, the shipped kernels `tilemlir.kernels`.
"""

from importlib import import_module as _import_module

# name -> the module that defines it, imported on first access.
_LAZY = {
    "__version__": "tilemlir.version",
    "compile": "tilemlir.runtime.compiler",
    "autotune": "tilemlir.runtime.tuning",
    "interpret": "tilemlir.reference",
    "explain": "tilemlir.tools.explain",
    "check_banks": "tilemlir.tools.banks",
    "torch_op": "tilemlir.runtime.torch_ops",
}

__all__ = list(_LAZY)


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tilemlir' has no attribute '{name}'")
    return getattr(_import_module(module), name)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
