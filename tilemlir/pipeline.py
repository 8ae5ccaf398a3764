"""Named pass pipelines, shared by the Python API and tilemlir-opt.

tilemlir's passes are Python callables; MLIR cannot register them by name, so a textual
pipeline such as

    builtin.module(tile-dispatch{chip=sm_80}, canonicalize, tile-materialize)

is split here: tilemlir pass names become Python passes, everything else is handed to MLIR as
text, and both go into one PassManager in order.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable

from mlir import ir
from mlir.passmanager import PassManager

from tilemlir.target import DEFAULT_CHIP, Target, TargetError


class PipelineError(ValueError):
    """A pass pipeline or pass option that cannot run (unknown pass or option, opt-level outside
    0-3, a bad chip or PTX version, an upstream pipeline without its target); raised before
    anything reaches MLIR, by tilemlir-opt and tilemlir.compile alike. The message names it."""


@dataclass(frozen=True)
class PassInfo:
    name: str
    summary: str
    options: dict[str, str]              # option -> help
    build: Callable[[dict], list]        # options -> [("py", fn) | ("mlir", text), ...]


def _module_name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else "?"


def _declared_targets(gpu_module: ir.Operation, serialised: bool = False) -> list[Target]:
    """The targets a gpu.module declares (its `targets` list), each checked: LLVM serialises
    the module once per entry, and aborts on a chip it cannot compile for. `serialised`: the
    PTX version must be named too (LLVM's default, 6.0, is too old for every supported chip)."""
    if "targets" not in gpu_module.attributes:
        return []
    found = []
    for attr in ir.ArrayAttr(gpu_module.attributes["targets"]):
        text = str(attr)
        if not text.startswith("#nvvm.target"):
            raise TargetError(f"unsupported target {text}: tilemlir compiles for #nvvm.target only")
        chip = re.search(r'chip = "([^"]*)"', text)
        ptx = re.search(r'features = "[^"]*\+ptx(\d+)', text)
        if chip is None:
            raise TargetError(f"{text} names no chip (LLVM's default sm_50 is not supported); "
                              f"add chip = \"sm_80\" or another chip")
        target = Target.parse(chip.group(1), int(ptx.group(1)) if ptx else None)
        if serialised and ptx is None:
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
    declared = {t.chip: t for t in _declared_targets(gpu_module)}
    if len(declared) > 1:
        raise TargetError(f"gpu.module @{_module_name(gpu_module)} targets several chips "
                          f"({', '.join(declared)}); tile primitives are dispatched for one: "
                          f"put each chip's kernels in their own gpu.module")
    return next(iter(declared.values()), fallback)


def _report(problems, pass_) -> None:
    for loc, message in problems:
        loc.emit_error(message)
    if problems:
        pass_.signal_pass_failure()


def _option_target(options: dict) -> Target | None:
    """The target the options name (checked when the pipeline is built), or None."""
    if "chip" not in options:
        if "ptx" in options:
            raise PipelineError("option ptx needs chip as well")
        return None
    try:
        ptx = int(options["ptx"]) if "ptx" in options else None
    except ValueError:
        raise PipelineError(f"ptx must be an integer such as 80, got '{options['ptx']}'") from None
    try:
        return Target.parse(options["chip"], ptx)
    except TargetError as err:
        raise PipelineError(str(err)) from None


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


def _verify_pass(options):
    fallback = _option_target(options) or Target.parse(DEFAULT_CHIP)

    def tile_verify(op, pass_):
        from tilemlir.dispatch.verify import verify_tile_ir
        _report(_for_each_gpu_module(op, fallback, verify_tile_ir), pass_)
    return [("py", tile_verify)]


def _dispatch_pass(options):
    fallback = _option_target(options) or Target.parse(DEFAULT_CHIP)

    def tile_dispatch(op, pass_):
        from tilemlir.dispatch.dispatcher import run_dispatch
        from tilemlir.dispatch.verify import verify_tile_ir

        def verified_dispatch(root, target):
            return verify_tile_ir(root, target) or run_dispatch(root, target)

        _report(_for_each_gpu_module(op, fallback, verified_dispatch), pass_)
    return [("py", tile_dispatch)]


def _materialize_pass(options):
    def tile_materialize(op, pass_):
        from tilemlir.lowering.materialize import run_materialize
        _report(run_materialize(op), pass_)
    return [("py", tile_materialize)]


# NVVM's kernel attributes (on a gpu.func or llvm.func) that LLVM turns into PTX directives:
# extents (1 to 3 positive integers) and counts (positive). Zero or missing extents fail
# assertions in LLVM's NVPTX printer; the others give PTX that ptxas or the driver refuses.
NVVM_KERNEL_EXTENTS = ("nvvm.cluster_dim", "nvvm.reqntid", "nvvm.maxntid")
NVVM_KERNEL_COUNTS = ("nvvm.maxnreg", "nvvm.minctasm", "nvvm.cluster_max_blocks")
MAX_CLUSTER_CTAS = 16


def _kernel_attribute_problems(func: ir.Operation, targets: list[Target]) -> list[str]:
    problems = []
    for name in NVVM_KERNEL_EXTENTS:
        if name not in func.attributes:
            continue
        attr = func.attributes[name]
        dims = list(ir.DenseI32ArrayAttr(attr)) if isinstance(attr, ir.DenseI32ArrayAttr) \
            else None
        if dims is None or not 1 <= len(dims) <= 3 or min(dims) < 1:
            problems.append(f"{name} must be 1 to 3 positive extents (array<i32: ...>), "
                            f"got {attr}")
            continue
        if name == "nvvm.maxntid" and "known_block_size" in func.attributes:
            problems.append("nvvm.maxntid and known_block_size both set the block size "
                            "(convert-gpu-to-nvvm makes nvvm.maxntid of known_block_size): "
                            "give known_block_size only")
        if name == "nvvm.cluster_dim":
            if math.prod(dims) > MAX_CLUSTER_CTAS:
                problems.append(f"nvvm.cluster_dim {dims} has {math.prod(dims)} CTAs; a "
                                f"cluster has at most {MAX_CLUSTER_CTAS}")
            for target in targets:
                if not target.has_hardware_for("clusters"):
                    problems.append(f"nvvm.cluster_dim: thread-block clusters need sm_90 or "
                                    f"newer, the target is {target.chip}")
    for name in NVVM_KERNEL_COUNTS:
        if name in func.attributes:
            attr = func.attributes[name]
            if not isinstance(attr, ir.IntegerAttr) or ir.IntegerAttr(attr).value < 1:
                problems.append(f"{name} must be a positive integer, got {attr}")
    return problems


def _unsupported_nvvm_ops(root: ir.Operation, targets: list[Target]) -> list:
    """(location, message) for every nvvm or nvgpu op under `root` some target cannot
    compile."""
    from tilemlir.target.chips import NVVM_VARIANTS, feature_description, nvvm_requirement
    problems = []
    # Only ops the table tells apart by their attributes need them printed; the verdict is
    # the same for every op of one (name, attributes): a big kernel has few of those.
    by_attributes = tuple(prefix for prefix, _, _ in NVVM_VARIANTS)
    verdicts: dict = {}

    def verdict(name: str, attributes: str) -> str | None:
        feature = nvvm_requirement(name, attributes)
        if feature is None:
            return (f"'{name}' is not in tilemlir's table of nvvm/nvgpu ops and what each "
                    f"needs (tilemlir/target/chips.py)")
        for target in targets:
            if not target.has_hardware_for(feature):
                return (f"'{name}' needs a chip with {feature_description(feature)}; the "
                        f"target is {target.chip}")
            why = target.require(feature)
            if why:
                return f"'{name}': {why}"
        return None

    def visit(o):
        name = o.name
        if name in ("gpu.func", "llvm.func"):
            problems.extend((o.location, why) for why in _kernel_attribute_problems(o, targets))
        if not name.startswith(("nvvm.", "nvgpu.")):
            return ir.WalkResult.ADVANCE
        attributes = " ".join(f"{key} = {o.attributes[key]}" for key in o.attributes) \
            if name.startswith(by_attributes) else ""
        key = (name, attributes)
        if key not in verdicts:
            verdicts[key] = verdict(name, attributes)
        if verdicts[key] is not None:
            problems.append((o.location, verdicts[key]))
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return problems


def _check_target_pass(options):
    fixed = _option_target(options)

    def tile_check_target(op, pass_):
        problems = []
        gpu_modules = _gpu_modules(op)
        for gpu_module in gpu_modules:
            try:
                declared = _declared_targets(gpu_module, serialised=True)
            except TargetError as err:
                problems.append((gpu_module.location, str(err)))
                continue
            # A pass chip is attached next to the module's own targets: both get compiled.
            targets = declared + ([fixed] if fixed else [])
            problems += _unsupported_nvvm_ops(gpu_module,
                                              targets or [Target.parse(DEFAULT_CHIP)])
        if not gpu_modules:
            problems += _unsupported_nvvm_ops(op, [fixed or Target.parse(DEFAULT_CHIP)])
        _report(problems, pass_)
    return [("py", tile_check_target)]


def nvvm_pipeline(target: Target, opt_level: int = 3,
                  line_info: bool = False) -> list[tuple[str, object]]:
    """The upstream gpu-lower-to-nvvm-pipeline, pass by pass (the same passes in the same order,
    so the same PTX), with tile-kernel-abi where the kernels have just become llvm.funcs: kernel
    parameters that need LLVM argument attributes (TMA tensor maps) get them there.

    `line_info`: the device code keeps its locations (the upstream pipeline strips them) and
    each kernel gets a debug-info scope, so the PTX carries `.file` / `.loc` directives naming
    the source lines (a kernel's Python lines), which ptxas turns into the cubin's line table
    (ncu's source view, compute-sanitizer's reports). DebugDirectivesOnly: only the
    directives, no DWARF sections, and no `.target ..., debug`, which would make ptxas
    compile without optimisation."""
    common = ("convert-nvgpu-to-nvvm,gpu-kernel-outlining,convert-vector-to-scf,"
              "convert-scf-to-cf,convert-nvvm-to-llvm,convert-func-to-llvm,"
              "expand-strided-metadata,"
              f"nvvm-attach-target{{chip={target.chip} features={target.features} O={opt_level}}},"
              "lower-affine,convert-arith-to-llvm,convert-index-to-llvm,canonicalize,cse")
    device = ("gpu.module(" + ("" if line_info else "strip-debuginfo,")
              + "convert-gpu-to-nvvm,llvm-optimize-for-nvvm-target,"
              "canonicalize,cse,reconcile-unrealized-casts)")
    # A module pass (it walks the llvm.funcs inside the gpu.modules too)
    scopes = [("mlir", "ensure-debug-info-scope-on-llvm-func{emission-kind=DebugDirectivesOnly}")] \
        if line_info else []
    host = ("gpu-to-llvm,gpu-module-to-binary{format=isa},convert-math-to-llvm,canonicalize,cse,"
            "reconcile-unrealized-casts")
    return [("mlir", common), ("mlir", device)] + scopes + _kernel_abi_pass({}) + [("mlir", host)]


def _kernel_abi_pass(options):
    def tile_kernel_abi(op, pass_):
        from tilemlir.lowering.kernel_abi import run_kernel_abi
        run_kernel_abi(op)
    return [("py", tile_kernel_abi)]


def _check_async_proxy_pass(options):
    def tile_check_async_proxy(op, pass_):
        from tilemlir.dispatch.async_proxy import check_async_proxy
        _report(check_async_proxy(op), pass_)
    return [("py", tile_check_async_proxy)]


def _to_ptx_pipeline(options):
    target = _option_target(options) or Target.parse(DEFAULT_CHIP)
    opts = {"chip": target.chip, "ptx": str(target.ptx)}
    # The proxy check reads tile IR (after dispatch the buffers are pointer arithmetic), and
    # only IR the verifier accepted: it assumes buffer types that parse and fit.
    return (_verify_pass(opts) + _check_async_proxy_pass(opts) + _dispatch_pass(opts)
            + [("mlir", "canonicalize"), ("mlir", "cse")]
            + _materialize_pass(opts) + _check_target_pass(opts)
            + nvvm_pipeline(target, int(options.get("opt-level", 3)),
                            check_flag(options.get("line-info", "false"),
                                       "option line-info of tile-to-ptx")))


TILE_PASSES = {
    "tile-dispatch": PassInfo(
        "tile-dispatch", "replace each tile primitive by its best variant for the target",
        {"chip": "target chip, e.g. sm_80, sm_90a, sm_100a (default: the gpu.module's "
                 "#nvvm.target, else sm_90a)",
         "ptx": "PTX ISA version as an integer, e.g. 80 (default: the chip's minimum)"},
        _dispatch_pass),
    "tile-verify": PassInfo(
        "tile-verify", "check tile IR before anything reads it: slice and view bounds, shared "
        "memory per chip, block and grid extents, TMEM columns, buffer types (tile-dispatch "
        "runs it first as well)",
        {"chip": "target chip (default: the gpu.module's #nvvm.target, else sm_90a)",
         "ptx": "PTX ISA version as an integer"},
        _verify_pass),
    "tile-materialize": PassInfo(
        "tile-materialize", "give tile buffers storage (pointers, allocas, TMEM addresses) "
        "and remove the buffer ops", {}, _materialize_pass),
    "tile-check-target": PassInfo(
        "tile-check-target", "reject nvvm ops the target chip lacks (LLVM would abort on them)",
        {"chip": "target chip (default: the gpu.module's #nvvm.target, else sm_90a)",
         "ptx": "PTX ISA version as an integer"},
        _check_target_pass),
    "tile-check-async-proxy": PassInfo(
        "tile-check-async-proxy", "on tile IR: reject an async-proxy read of shared memory "
        "(wgmma / tcgen05.mma operands, TMA store sources) that generic-proxy writes reach "
        "with no fence.proxy.async between them", {}, _check_async_proxy_pass),
    "tile-kernel-abi": PassInfo(
        "tile-kernel-abi", "on lowered llvm.func kernels: TMA tensor-map parameters become "
        "64-byte-aligned by-value grid constants", {}, _kernel_abi_pass),
    "tile-to-ptx": PassInfo(
        "tile-to-ptx", "tile-verify, tile-check-async-proxy, tile-dispatch, canonicalize, cse, "
        "tile-materialize, tile-check-target, "
        "then the passes of the upstream gpu-lower-to-nvvm-pipeline (with tile-kernel-abi after "
        "convert-gpu-to-nvvm) to LLVM with embedded PTX",
        {"chip": "target chip (default sm_90a)", "ptx": "PTX ISA version, e.g. 80",
         "opt-level": "LLVM optimisation level for the device code (default 3)",
         "line-info": "true: the PTX carries .file/.loc directives naming the source lines "
                      "of the ops' locations, for ncu's source view (default false)"},
        _to_ptx_pipeline),
}


# ------------------------------------------------------------------------------ parsing
def _split_top(text: str) -> list[str]:
    """Splits `a, b{x=1,y=2}, c(d, e)` at the commas outside braces and parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"unbalanced '{ch}' in pass pipeline: {text}")
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if depth:
        raise PipelineError(f"unbalanced brackets in pass pipeline: {text}")
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return [p for p in parts if p]


def _parse_options(name: str, text: str, info: PassInfo) -> dict[str, str]:
    options = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep:
            raise PipelineError(f"option '{item}' of {name} needs a value (key=value)")
        if key not in info.options:
            known = ", ".join(info.options) or "none"
            raise PipelineError(f"unknown option '{key}' for {name}; its options: {known}")
        if key in options:
            raise PipelineError(f"option '{key}' of {name} is given twice")
        options[key] = value
    if "opt-level" in options:
        check_opt_level(options["opt-level"], f"option opt-level of {name}")
    if "line-info" in options:
        check_flag(options["line-info"], f"option line-info of {name}")
    return options


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


_UPSTREAM_NVVM = "gpu-lower-to-nvvm-pipeline"


def _upstream_nvvm_target(options_text: str) -> Target:
    """The target of an upstream gpu-lower-to-nvvm-pipeline element, checked: its defaults
    (sm_50, PTX 6.0) are unsupported or too old, so chip and PTX version must be spelled out."""
    options = dict(item.partition("=")[::2] for item in options_text.split())
    fix = (f"spell out cubin-chip=<chip> and cubin-features=+ptxNN (e.g. "
           f"{_UPSTREAM_NVVM}{{cubin-chip=sm_90a cubin-features=+ptx80}}), or use tile-to-ptx")
    if "cubin-chip" not in options:
        raise PipelineError(f"{_UPSTREAM_NVVM} without cubin-chip compiles for sm_50, which "
                            f"tilemlir does not support: {fix}")
    ptx = re.search(r"\+ptx(\d+)", options.get("cubin-features", ""))
    if ptx is None:
        raise PipelineError(f"{_UPSTREAM_NVVM} without a +ptxNN cubin-feature uses PTX 6.0, "
                            f"too old for every supported chip (LLVM aborts): {fix}")
    if "opt-level" in options:
        check_opt_level(options["opt-level"], f"option opt-level of {_UPSTREAM_NVVM}")
    try:
        return Target.parse(options["cubin-chip"], int(ptx.group(1)))
    except TargetError as err:
        raise PipelineError(f"{_UPSTREAM_NVVM}: {err}") from None


def parse_pipeline(text: str) -> list[tuple[str, object]]:
    """[("py", fn) | ("mlir", element_text)] for a `builtin.module(...)` pipeline."""
    text = text.strip()
    m = re.fullmatch(r"builtin\.module\s*\((.*)\)", text, re.S)
    body = m.group(1) if m else text
    steps = []
    for element in _split_top(body):
        em = re.fullmatch(r"([\w.-]+)\s*(?:\{(.*)\})?", element, re.S)
        name = em.group(1) if em else None
        if name in TILE_PASSES:
            info = TILE_PASSES[name]
            steps.extend(info.build(_parse_options(name, em.group(2) or "", info)))
        else:
            nested = re.fullmatch(r"[\w.]+\s*\((.*)\)", element, re.S)
            if nested and any(re.search(rf"(^|[\s,(]){re.escape(n)}\b", nested.group(1))
                              for n in TILE_PASSES):
                raise PipelineError(f"tilemlir passes run on builtin.module only: {element}")
            if name == _UPSTREAM_NVVM:
                # Its nvvm ops are checked for its chip first: LLVM aborts on what a chip lacks.
                target = _upstream_nvvm_target(em.group(2) or "")
                steps.extend(_check_target_pass({"chip": target.chip, "ptx": str(target.ptx)}))
            steps.append(("mlir", element))
    return steps


def unknown_pass_message(element: str) -> str:
    names = ", ".join(TILE_PASSES)
    return (f"'{element}' is neither a tilemlir pass ({names}) nor a registered MLIR pass "
            f"or pipeline")


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


def _add_upstream(pm: PassManager, element: str) -> None:
    """pm.add(element), its errors as PipelineError naming the pass, the option or the
    problem (LLVM prints an option value it cannot read to stderr, not into the error)."""
    with captured_stderr() as printed:
        try:
            pm.add(element)
            return
        except ValueError as err:
            error = str(err)
    unknown = re.search(r"'([^']*)' does not refer to a registered pass or pass pipeline", error)
    if unknown:
        raise PipelineError(unknown_pass_message(unknown.group(1)))
    lines = [re.sub(r"^(MLIR Textual PassPipeline Parser:\d+:\d+: error|<Pass-Options-Parser>)"
                    r"\s*:?\s*", "", line).strip()
             for line in (printed[0] + error).splitlines()]
    lines = [re.sub(r"^.*?for the -+(\S+) option: (?:'(.*)' value invalid for .*|Cannot find "
                    r"option named '(.*)'!)", r"option \1 cannot be '\2\3'", line) for line in lines]
    detail = "; ".join(line for line in lines if line and not line.startswith(
        ("failed to add", element.split("{")[0].split("(")[0] + "(", "^")) and line != element)
    raise PipelineError(f"pass pipeline element '{element}': {detail or 'cannot be added'}")


def python_pass_names() -> list[str]:
    """The tilemlir passes that run as passes of their own (tile-to-ptx is a pipeline of them
    and upstream passes): the names IR dumps and timings show."""
    return [name for name in TILE_PASSES if name != "tile-to-ptx"]


def check_pass_name(name: str, ctx: ir.Context | None = None) -> None:
    """PipelineError unless `name` is a pass whose IR a dump can show: a tilemlir pass or a
    registered upstream pass."""
    if name in python_pass_names():
        return
    if name == "tile-to-ptx":
        raise PipelineError("tile-to-ptx is a pipeline, not a pass: name one of the passes it "
                            "runs, e.g. tile-dispatch, tile-materialize, convert-gpu-to-nvvm")
    if not re.fullmatch(r"[\w.-]+", name):
        raise PipelineError(f"'{name}' is not a pass name")
    try:
        _add_upstream(PassManager("builtin.module", context=ctx), f"any({name})")
    except PipelineError:
        raise PipelineError(unknown_pass_message(name)) from None


def build_pass_manager(text: str, ctx: ir.Context | None = None,
                       ir_printing: dict | None = None, timing: bool = False) -> PassManager:
    """A PassManager running the pipeline `text` (tilemlir and upstream passes mixed).
    `ir_printing`: keyword arguments of PassManager.enable_ir_printing (the IR of the whole
    module, printed to stderr); `timing`: a timing report on stderr when the PassManager is
    deleted."""
    pm = PassManager("builtin.module", context=ctx)
    try:
        steps = parse_pipeline(text)
    except TargetError as err:
        raise PipelineError(str(err)) from None
    for kind, step in steps:
        if kind == "py":
            name = step.__name__.replace("_", "-")
            pm.add(step, name=name, argument=name)
        else:
            _add_upstream(pm, step)
    if ir_printing:
        # MLIR aborts when IR printing is set up on a multi-threaded context.
        (ctx or ir.Context.current).enable_multithreading(False)
        pm.enable_ir_printing(**{"print_module_scope": True, "print_after_all": False,
                                 **ir_printing})
    if timing:
        pm.enable_timing()
    return pm


def lower_to_ptx(module: ir.Module, target: Target, opt_level: int = 3,
                 dump_dir: str | None = None, line_info: bool = False) -> None:
    """Runs tile-to-ptx on `module` in place; with `dump_dir`, the IR after every pass lands
    there (one file per pass, in pass order); `line_info`: see nvvm_pipeline."""
    pm = build_pass_manager(f"builtin.module(tile-to-ptx{{chip={target.chip} "
                            f"ptx={target.ptx} opt-level={opt_level} "
                            f"line-info={str(bool(line_info)).lower()}}})", module.context)
    if dump_dir is not None:
        module.context.enable_multithreading(False)
        pm.enable_ir_printing(print_after_all=True, tree_printing_dir_path=dump_dir)
    pm.run(module.operation)
