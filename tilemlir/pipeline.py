"""tilemlir's pass pipelines, built from objects: a Target and PipelineOptions go to the passes
as they are. tilemlir.compile runs `tile_to_ptx(PipelineOptions(target, ...))`; tilemlir-opt
turns its textual --pass-pipeline into the same calls (tilemlir/tools/pass_pipeline.py).

tilemlir's passes are Python callables, which MLIR cannot register by name, so a pipeline here
is a list of steps: ("py", pass function) for a tilemlir pass, ("mlir", text) for upstream
passes in MLIR's own pipeline syntax. build_pass_manager puts both into one PassManager, in
order; the pass functions' names (tile_dispatch -> tile-dispatch) name them in dumps.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache

from mlir import ir
from mlir.passmanager import PassManager

from tilemlir.target import DEFAULT_CHIP, Target, TargetError

Step = tuple[str, object]           # ("py", pass function) | ("mlir", upstream pipeline text)
DEFAULT_TARGET = Target(DEFAULT_CHIP)


class PipelineError(ValueError):
    """A pass pipeline or pass option that cannot run (unknown pass or option, opt-level outside
    0-3, a bad chip or PTX version, an upstream pipeline without its target); raised before
    anything reaches MLIR, by tilemlir-opt and tilemlir.compile alike. The message names it."""


class UnknownPassError(PipelineError):
    """An upstream pass MLIR does not know (`element`: its name)."""

    def __init__(self, element: str):
        super().__init__(f"'{element}' is not a registered MLIR pass or pipeline")
        self.element = element


def check_flag(value, what: str) -> bool:
    """A boolean pass option: true/false or 1/0 (as MLIR spells them)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "false", "0"):
        return value.strip().lower() in ("true", "1")
    raise PipelineError(f"{what} must be true or false, got {value!r}")


def check_opt_level(value, what: str = "opt_level") -> int:
    """`value` as an LLVM optimisation level 0-3 (LLVM asserts on any other)."""
    if isinstance(value, str) and re.fullmatch(r"[0-3]", value.strip()):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 3:
        return value
    raise PipelineError(f"{what} must be 0, 1, 2 or 3, got {value!r}")


@dataclass(frozen=True)
class PipelineOptions:
    """What tile-to-ptx compiles for and how: the target, LLVM's optimisation level for the
    device code (0-3), and `line_info` (see nvvm_pipeline). Checked when made; plain data, so
    it crosses to the compiler process (tilemlir.runtime.compile_worker) as it is."""
    target: Target = DEFAULT_TARGET
    opt_level: int = 3
    line_info: bool = False
    check_banks: bool = False           # run tile-check-banks before tile-dispatch

    def __post_init__(self):
        if not isinstance(self.target, Target):
            raise TypeError(f"target must be a tilemlir.target.Target, got "
                            f"{type(self.target).__name__}")
        object.__setattr__(self, "opt_level", check_opt_level(self.opt_level))
        for name in ("line_info", "check_banks"):
            if not isinstance(getattr(self, name), bool):
                raise PipelineError(f"{name} must be True or False, got "
                                    f"{getattr(self, name)!r}")


# ------------------------------------------------------------------------------ targets
def _module_name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else "?"


@lru_cache(maxsize=64)
def _nvvm_target(text: str) -> tuple[Target, bool]:
    """The Target an `#nvvm.target<...>` attribute (its printed form) names, and whether it
    names the PTX version. The bindings have no accessor for its fields: read the text, once
    per distinct attribute."""
    if not text.startswith("#nvvm.target"):
        raise TargetError(f"unsupported target {text}: tilemlir compiles for #nvvm.target only")
    chip = re.search(r'chip = "([^"]*)"', text)
    ptx = re.search(r'features = "[^"]*\+ptx(\d+)', text)
    if chip is None:
        raise TargetError(f"{text} names no chip (LLVM's default sm_50 is not supported); "
                          f"add chip = \"sm_80\" or another chip")
    return Target(chip.group(1), int(ptx.group(1)) if ptx else None), ptx is not None


def declared_targets(gpu_module: ir.Operation, serialised: bool = False) -> list[Target]:
    """The targets a gpu.module declares (its `targets` list), each checked: LLVM serialises
    the module once per entry, and aborts on a chip it cannot compile for. `serialised`: the
    PTX version must be named too (LLVM's default, 6.0, is too old for every supported chip)."""
    if "targets" not in gpu_module.attributes:
        return []
    found = []
    for attr in ir.ArrayAttr(gpu_module.attributes["targets"]):
        text = str(attr)
        target, names_ptx = _nvvm_target(text)
        if serialised and not names_ptx:
            raise TargetError(f"{text} names no PTX version, and LLVM's default (6.0) is too old "
                              f"for {target.chip}: add features = \"+ptx{target.ptx}\"")
        found.append(target)
    return found


def _gpu_modules(module: ir.Operation) -> list[ir.Operation]:
    found = []

    def visit(op):
        if op.name == "gpu.module":
            found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


def _dispatch_target(gpu_module: ir.Operation, fallback: Target) -> Target:
    """A gpu.module's own chip (its #nvvm.target), else `fallback`."""
    declared = {t.chip: t for t in declared_targets(gpu_module)}
    if len(declared) > 1:
        raise TargetError(f"gpu.module @{_module_name(gpu_module)} targets several chips "
                          f"({', '.join(declared)}); tile primitives are dispatched for one: "
                          f"put each chip's kernels in their own gpu.module")
    return next(iter(declared.values()), fallback)


def _for_each_gpu_module(op: ir.Operation, fallback: Target, work) -> list:
    """work(root, target) for each gpu.module with its own chip (for `op` itself when it holds
    none); the problems of all."""
    problems = []
    gpu_modules = _gpu_modules(op)
    for gpu_module in gpu_modules:
        try:
            target = _dispatch_target(gpu_module, fallback)
        except TargetError as err:
            problems.append((gpu_module.location, str(err)))
            continue
        problems += work(gpu_module, target)
    if not gpu_modules:
        problems += work(op, fallback)
    return problems


def _report(problems, pass_) -> None:
    for loc, message in problems:
        loc.emit_error(message)
    if problems:
        pass_.signal_pass_failure()


# ------------------------------------------------------------------------------ passes
# Each returns the steps of one tilemlir pass. `target` None: each gpu.module's own
# #nvvm.target, else DEFAULT_TARGET.
def verify_pass(target: Target | None = None) -> list[Step]:
    fallback = target or DEFAULT_TARGET

    def tile_verify(op, pass_):
        from tilemlir.checks.verify import verify_tile_ir
        _report(_for_each_gpu_module(op, fallback, verify_tile_ir), pass_)
    return [("py", tile_verify)]


def dispatch_pass(target: Target | None = None) -> list[Step]:
    fallback = target or DEFAULT_TARGET

    def tile_dispatch(op, pass_):
        from tilemlir.checks.verify import verify_tile_ir
        from tilemlir.dispatch.dispatcher import run_dispatch
        from tilemlir.lowering.cuda import load_variants
        load_variants()

        def verified_dispatch(root, target):
            return verify_tile_ir(root, target) or run_dispatch(root, target)

        _report(_for_each_gpu_module(op, fallback, verified_dispatch), pass_)
    return [("py", tile_dispatch)]


def materialize_pass() -> list[Step]:
    def tile_materialize(op, pass_):
        from tilemlir.lowering.materialize import run_materialize
        _report(run_materialize(op), pass_)
    return [("py", tile_materialize)]


def check_target_pass(target: Target | None = None) -> list[Step]:
    """`target`, when given, is checked besides each gpu.module's own targets (nvvm-attach-target
    adds it next to them: both get compiled)."""
    def tile_check_target(op, pass_):
        from tilemlir.checks.nvvm_ops import unsupported_nvvm_ops
        problems = []
        gpu_modules = _gpu_modules(op)
        for gpu_module in gpu_modules:
            try:
                declared = declared_targets(gpu_module, serialised=True)
            except TargetError as err:
                problems.append((gpu_module.location, str(err)))
                continue
            targets = declared + ([target] if target else [])
            problems += unsupported_nvvm_ops(gpu_module, targets or [DEFAULT_TARGET])
        if not gpu_modules:
            problems += unsupported_nvvm_ops(op, [target or DEFAULT_TARGET])
        _report(problems, pass_)
    return [("py", tile_check_target)]


def check_async_proxy_pass() -> list[Step]:
    def tile_check_async_proxy(op, pass_):
        from tilemlir.checks.async_proxy import check_async_proxy
        _report(check_async_proxy(op), pass_)
    return [("py", tile_check_async_proxy)]


def check_banks_pass(target: Target | None = None, every: bool = False) -> list[Step]:
    """tile-check-banks: on tile IR, a warning on stderr for each shared-memory access whose
    requests take more wavefronts than the ideal (bank conflicts), as the variants tile-dispatch
    would choose make them; `every`: a remark for the accesses without conflicts too."""
    def tile_check_banks(op, pass_):
        import sys

        from tilemlir.lowering.banks import check_banks
        from tilemlir.lowering.cuda import load_variants

        load_variants()

        def report(root, chosen):
            for access in check_banks(root, chosen):
                if access.conflicts or every:
                    kind = "warning: bank conflicts" if access.conflicts else "remark: banks"
                    print(f"{access.where}: {kind}: {access.describe()}", file=sys.stderr)
            return []
        _for_each_gpu_module(op, target or DEFAULT_TARGET, report)
    return [("py", tile_check_banks)]


def kernel_abi_pass() -> list[Step]:
    def tile_kernel_abi(op, pass_):
        from tilemlir.lowering.kernel_abi import run_kernel_abi
        run_kernel_abi(op)
    return [("py", tile_kernel_abi)]


def nvvm_pipeline(options: PipelineOptions) -> list[Step]:
    """The upstream gpu-lower-to-nvvm-pipeline, pass by pass (the same passes in the same order,
    so the same PTX), with tile-kernel-abi where the kernels have just become llvm.funcs: kernel
    parameters that need LLVM argument attributes (TMA tensor maps) get them there.

    `options.line_info`: the device code keeps its locations (the upstream pipeline strips
    them) and each kernel gets a debug-info scope, so the PTX carries `.file` / `.loc`
    directives naming the source lines (a kernel's Python lines), which ptxas turns into the
    cubin's line table (ncu's source view, compute-sanitizer's reports). DebugDirectivesOnly:
    only the directives, no DWARF sections, and no `.target ..., debug`, which would make
    ptxas compile without optimisation."""
    target = options.target
    common = ("convert-nvgpu-to-nvvm,gpu-kernel-outlining,convert-vector-to-scf,"
              "convert-scf-to-cf,convert-nvvm-to-llvm,convert-func-to-llvm,"
              "expand-strided-metadata,"
              f"nvvm-attach-target{{chip={target.chip} features={target.features} "
              f"O={options.opt_level}}},"
              "lower-affine,convert-arith-to-llvm,convert-index-to-llvm,canonicalize,cse")
    device = ("gpu.module(" + ("" if options.line_info else "strip-debuginfo,")
              + "convert-gpu-to-nvvm,llvm-optimize-for-nvvm-target,"
              "canonicalize,cse,reconcile-unrealized-casts)")
    # A module pass (it walks the llvm.funcs inside the gpu.modules too)
    scopes = [("mlir", "ensure-debug-info-scope-on-llvm-func{emission-kind=DebugDirectivesOnly}")] \
        if options.line_info else []
    host = ("gpu-to-llvm,gpu-module-to-binary{format=isa},convert-math-to-llvm,canonicalize,cse,"
            "reconcile-unrealized-casts")
    return [("mlir", common), ("mlir", device)] + scopes + kernel_abi_pass() + [("mlir", host)]


def tile_to_ptx(options: PipelineOptions) -> list[Step]:
    """tile-verify, tile-check-async-proxy, [tile-check-banks,] tile-dispatch, canonicalize,
    cse, tile-materialize, tile-check-target, then nvvm_pipeline: tile IR to LLVM with embedded
    PTX."""
    target = options.target
    banks = check_banks_pass(target) if options.check_banks else []
    # The proxy check reads tile IR (after dispatch the buffers are pointer arithmetic), and
    # only IR the verifier accepted: it assumes buffer types that parse and fit.
    return (verify_pass(target) + check_async_proxy_pass() + banks + dispatch_pass(target)
            + [("mlir", "canonicalize"), ("mlir", "cse")]
            + materialize_pass() + check_target_pass(target) + nvvm_pipeline(options))


# ------------------------------------------------------------------------------ running
@contextlib.contextmanager
def captured_stderr():
    """What is written to file descriptor 2 inside the block (MLIR and LLVM write there, past
    Python's sys.stderr), as the list the block's `as` target gets, filled at its end."""
    sys.stderr.flush()
    text: list[str] = []
    saved = os.dup(2)
    with tempfile.TemporaryFile() as spool:
        os.dup2(spool.fileno(), 2)
        try:
            yield text
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            spool.seek(0)
            text.append(spool.read().decode(errors="replace"))


def add_upstream(pm: PassManager, element: str) -> None:
    """pm.add(element): UnknownPassError naming a pass MLIR does not know, PipelineError
    naming the option or the problem for the rest (LLVM prints an option value it cannot read
    to stderr, not into the error)."""
    with captured_stderr() as printed:
        try:
            pm.add(element)
            return
        except ValueError as err:
            error = str(err)
    unknown = re.search(r"'([^']*)' does not refer to a registered pass or pass pipeline", error)
    if unknown:
        raise UnknownPassError(unknown.group(1))
    lines = [re.sub(r"^(MLIR Textual PassPipeline Parser:\d+:\d+: error|<Pass-Options-Parser>)"
                    r"\s*:?\s*", "", line).strip()
             for line in (printed[0] + error).splitlines()]
    lines = [re.sub(r"^.*?for the -+(\S+) option: (?:'(.*)' value invalid for .*|Cannot find "
                    r"option named '(.*)'!)", r"option \1 cannot be '\2\3'", line) for line in lines]
    detail = "; ".join(line for line in lines if line and not line.startswith(
        ("failed to add", element.split("{")[0].split("(")[0] + "(", "^")) and line != element)
    raise PipelineError(f"pass pipeline element '{element}': {detail or 'cannot be added'}")


def build_pass_manager(steps: list[Step], ctx: ir.Context | None = None,
                       ir_printing: dict | None = None, timing: bool = False) -> PassManager:
    """A PassManager running `steps` (tilemlir and upstream passes mixed) in order.
    `ir_printing`: keyword arguments of PassManager.enable_ir_printing (the IR of the whole
    module, printed to stderr); `timing`: a timing report on stderr when the PassManager is
    deleted."""
    pm = PassManager("builtin.module", context=ctx)
    for kind, step in steps:
        if kind == "py":
            name = step.__name__.replace("_", "-")
            pm.add(step, name=name, argument=name)
        else:
            add_upstream(pm, step)
    if ir_printing:
        # MLIR aborts when IR printing is set up on a multi-threaded context.
        (ctx or ir.Context.current).enable_multithreading(False)
        pm.enable_ir_printing(**{"print_module_scope": True, "print_after_all": False,
                                 **ir_printing})
    if timing:
        pm.enable_timing()
    return pm


def lower_to_ptx(module: ir.Module, options: PipelineOptions,
                 dump_dir: str | None = None) -> None:
    """Runs tile-to-ptx on `module` in place; with `dump_dir`, the IR after every pass lands
    there (one file per pass, in pass order)."""
    pm = build_pass_manager(tile_to_ptx(options), module.context)
    if dump_dir is not None:
        module.context.enable_multithreading(False)
        pm.enable_ir_printing(print_after_all=True, tree_printing_dir_path=dump_dir)
    pm.run(module.operation)
