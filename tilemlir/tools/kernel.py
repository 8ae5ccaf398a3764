"""tilemlir-kernel: print the tile IR of a kernel written in the language (or run a pipeline on it).

    tilemlir-kernel tilemlir.kernels.hgemm_tcgen05:hgemm_v2 128 128 256
    tilemlir-kernel tilemlir.kernels.mma_demo:gemm_16x8x16 --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80})' --emit=ptx

The first argument names a module and either a @T.prim_func function or a factory returning one;
the integers after it are the factory's arguments, NAME=VALUE its keyword arguments (an
integer, True / False, or a word taken as a string):

    tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v6 200 296 4096 SPLIT_K=3
    tilemlir-kernel tilemlir.kernels.hgemm_hopper:hgemm_v6 333 444 555 PRODUCER=cp_async
"""

from __future__ import annotations

import argparse
import importlib
import sys

from mlir import ir

from tilemlir.dsl.kernel import KernelFunction
from tilemlir.dsl.values import KernelError
from tilemlir.env import SettingError, flag as env_flag
from tilemlir.pipeline import PipelineError
from tilemlir.target.ptx import extract_ptx
from tilemlir.tools import diagnostics
from tilemlir.tools.pass_pipeline import pass_manager


def _factory_arguments(words: list[str]) -> tuple[list[int], dict[str, object]]:
    """Integers, then NAME=VALUE keywords (an integer, True / False, or a word: a string)."""
    args, kwargs = [], {}
    for word in words:
        name, eq, value = word.rpartition("=") if "=" in word else ("", "", word)
        try:
            number = int(value)
        except ValueError:
            if eq and value in ("True", "False"):
                number = value == "True"
            elif eq and value.isidentifier():
                number = value
            else:
                raise KernelError(f"factory arguments are integers or NAME=VALUE (an integer, "
                                  f"True, False or a word), got '{word}'") from None
        if eq:
            if not name.isidentifier():
                raise KernelError(f"'{name}' in '{word}' is not a parameter name")
            kwargs[name] = number
        elif kwargs:
            raise KernelError(f"positional argument '{word}' after keyword arguments")
        else:
            args.append(number)
    return args, kwargs


def _kernel(spec: str, words: list[str]) -> KernelFunction:
    module_name, _, attr = spec.partition(":")
    if not attr:
        raise KernelError(f"name the kernel as module:function, got '{spec}'")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as err:
        raise KernelError(f"cannot find {spec}: {err}") from None
    args, kwargs = _factory_arguments(words)
    try:
        kernel = obj if isinstance(obj, KernelFunction) else obj(*args, **kwargs)
    except (TypeError, ValueError) as err:          # the factory refuses its arguments
        raise KernelError(f"{spec}: {err}") from None
    if not isinstance(kernel, KernelFunction):
        raise KernelError(f"{spec} is not a kernel nor a factory of one")
    return kernel


def run(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="tilemlir-kernel", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kernel", help="module:function")
    p.add_argument("args", nargs="*",
                   help="the factory's integer arguments, then NAME=VALUE keywords")
    p.add_argument("--pass-pipeline", default="")
    p.add_argument("--emit", choices=("mlir", "ptx"), default="mlir")
    p.add_argument("--debuginfo", action="store_true", help="print source locations")
    args = p.parse_args(argv)
    try:
        module = _kernel(args.kernel, args.args).build()
        if args.pass_pipeline:
            with module.context:
                pass_manager(args.pass_pipeline, module.context).run(module.operation)
    except (KernelError, PipelineError) as err:
        print(f"tilemlir-kernel: {err}", file=sys.stderr)
        return 1
    except ir.MLIRError as err:
        for d in err.error_diagnostics:
            for diag in diagnostics.from_mlir(d):
                print(diag.render(diag_file(d)), file=sys.stderr)
        return 1
    if args.emit == "ptx":
        print("\n".join(extract_ptx(module).values()))
    else:
        print(module.operation.get_asm(enable_debug_info=args.debuginfo))
    return 0


def diag_file(d) -> str:
    loc = d.location
    return loc.filename if loc.is_a_file() else "<kernel>"


def main() -> None:
    try:
        debug = env_flag("TILEMLIR_DEBUG")
    except SettingError as err:
        print(f"tilemlir-kernel: {err}", file=sys.stderr)
        sys.exit(1)
    try:
        code = run(sys.argv[1:])
    except Exception as err:
        if debug:
            raise
        print(f"tilemlir-kernel: internal error: {type(err).__name__}: {err}", file=sys.stderr)
        code = 1
    sys.exit(code)


if __name__ == "__main__":
    main()
