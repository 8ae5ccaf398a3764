"""Named pass pipelines, shared by the Python API and tilemlir-opt.

tilemlir's passes are Python callables; MLIR cannot register them by name, so a textual
pipeline such as

    builtin.module(tile-dispatch{chip=sm_80}, canonicalize, tile-materialize)

is split here: tilemlir pass names become Python passes, everything else is handed to MLIR as
text, and both go into one PassManager in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from mlir import ir
from mlir.passmanager import PassManager

from tilemlir.target import DEFAULT_CHIP, Target, TargetError


class PipelineError(ValueError):
    pass


@dataclass(frozen=True)
class PassInfo:
    name: str
    summary: str
    options: dict[str, str]              # option -> help
    build: Callable[[dict], list]        # options -> [("py", fn) | ("mlir", text), ...]


def _target_from_module(module: ir.Operation) -> Target | None:
    found = None

    def visit(op):
        nonlocal found
        if op.name == "gpu.module" and "targets" in op.attributes:
            m = re.search(r'chip = "(sm_\d+a?)"', str(op.attributes["targets"]))
            f = re.search(r'features = "\+ptx(\d+)"', str(op.attributes["targets"]))
            if m:
                found = Target.parse(m.group(1), int(f.group(1)) if f else None)
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


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
    return Target.parse(options["chip"], ptx)


def _dispatch_pass(options):
    fixed = _option_target(options)

    def tile_dispatch(op, pass_):
        from tilemlir.dispatch.dispatcher import run_dispatch
        target = fixed or _target_from_module(op) or Target.parse(DEFAULT_CHIP)
        _report(run_dispatch(op, target), pass_)
    return [("py", tile_dispatch)]


def _materialize_pass(options):
    def tile_materialize(op, pass_):
        from tilemlir.lowering.materialize import run_materialize
        _report(run_materialize(op), pass_)
    return [("py", tile_materialize)]


def _check_target_pass(options):
    fixed = _option_target(options)

    def tile_check_target(op, pass_):
        from tilemlir.target.chips import nvvm_requirement
        target = fixed or _target_from_module(op) or Target.parse(DEFAULT_CHIP)
        problems = []

        def visit(o):
            feature = nvvm_requirement(o.name)
            if feature and not target.supports(feature):
                problems.append((o.location, f"'{o.name}' needs a chip with "
                                             f"{target.require(feature).split(' is not')[0]}; "
                                             f"the target is {target.chip}"))
            return ir.WalkResult.ADVANCE

        op.walk(visit)
        _report(problems, pass_)
    return [("py", tile_check_target)]


def nvvm_pipeline(target: Target, opt_level: int = 3) -> str:
    """The upstream lowering of gpu/nvvm/arith/... IR to LLVM with embedded PTX."""
    return (f"gpu-lower-to-nvvm-pipeline{{cubin-chip={target.chip} "
            f"cubin-features={target.features} cubin-format=isa opt-level={opt_level}}}")


def _to_ptx_pipeline(options):
    target = _option_target(options) or Target.parse(DEFAULT_CHIP)
    opts = {"chip": target.chip, "ptx": str(target.ptx)}
    return (_dispatch_pass(opts) + [("mlir", "canonicalize"), ("mlir", "cse")]
            + _materialize_pass(opts) + _check_target_pass(opts)
            + [("mlir", nvvm_pipeline(target, int(options.get("opt-level", 3))))])


TILE_PASSES = {
    "tile-dispatch": PassInfo(
        "tile-dispatch", "replace each tile primitive by its best variant for the target",
        {"chip": "target chip, e.g. sm_80, sm_90a, sm_100a (default: the gpu.module's "
                 "#nvvm.target, else sm_90a)",
         "ptx": "PTX ISA version as an integer, e.g. 80 (default: the chip's minimum)"},
        _dispatch_pass),
    "tile-materialize": PassInfo(
        "tile-materialize", "give tile buffers storage (pointers, allocas, TMEM addresses) "
        "and remove the buffer ops", {}, _materialize_pass),
    "tile-check-target": PassInfo(
        "tile-check-target", "reject nvvm ops the target chip lacks (LLVM would abort on them)",
        {"chip": "target chip (default: the gpu.module's #nvvm.target, else sm_90a)",
         "ptx": "PTX ISA version as an integer"},
        _check_target_pass),
    "tile-to-ptx": PassInfo(
        "tile-to-ptx", "tile-dispatch, canonicalize, cse, tile-materialize, tile-check-target, "
        "then the upstream gpu-lower-to-nvvm-pipeline to LLVM with embedded PTX",
        {"chip": "target chip (default sm_90a)", "ptx": "PTX ISA version, e.g. 80",
         "opt-level": "LLVM optimisation level for the device code (default 3)"},
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
        options[key] = value
    return options


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
            steps.append(("mlir", element))
    return steps


def unknown_pass_message(element: str) -> str:
    names = ", ".join(TILE_PASSES)
    return (f"'{element}' is neither a tilemlir pass ({names}) nor a registered MLIR pass "
            f"or pipeline")


def build_pass_manager(text: str, ctx: ir.Context | None = None,
                       print_ir_after_all: bool = False) -> PassManager:
    """A PassManager running the pipeline `text` (tilemlir and upstream passes mixed)."""
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
            try:
                pm.add(step)
            except ValueError:
                raise PipelineError(unknown_pass_message(step)) from None
    if print_ir_after_all:
        # MLIR aborts when IR printing is set up on a multi-threaded context.
        (ctx or ir.Context.current).enable_multithreading(False)
        pm.enable_ir_printing(print_after_all=True, print_module_scope=True)
    return pm


def lower_to_ptx(module: ir.Module, target: Target, opt_level: int = 3,
                 dump_dir: str | None = None) -> None:
    """Runs tile-to-ptx on `module` in place; with `dump_dir`, the IR after every pass lands
    there (one file per pass, in pass order)."""
    pm = build_pass_manager(f"builtin.module(tile-to-ptx{{chip={target.chip} "
                            f"ptx={target.ptx} opt-level={opt_level}}})", module.context)
    if dump_dir is not None:
        module.context.enable_multithreading(False)
        pm.enable_ir_printing(print_after_all=True, tree_printing_dir_path=dump_dir)
    pm.run(module.operation)
