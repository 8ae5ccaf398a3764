"""Textual pass pipelines (--pass-pipeline of tilemlir-opt and tilemlir-kernel), such as

    builtin.module(tile-dispatch{chip=sm_80}, canonicalize, tile-materialize)

turned into the objects of tilemlir/pipeline.py: each tilemlir pass's options become a Target
or PipelineOptions handed to the same pass builders tilemlir.compile uses; every other element
is handed to MLIR as text. This is the only place tilemlir reads pipeline text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from mlir import ir
from mlir.passmanager import PassManager

from tilemlir import pipeline
from tilemlir.pipeline import (DEFAULT_TARGET, PipelineError, PipelineOptions, Step,
                               UnknownPassError, check_flag, check_opt_level)
from tilemlir.target import Target, TargetError


@dataclass(frozen=True)
class PassInfo:
    name: str
    summary: str
    options: dict[str, str]                      # option -> help
    build: Callable[[dict[str, str]], list[Step]]  # the options as written -> steps


def _target_option(options: dict[str, str]) -> Target | None:
    """The target `chip=` and `ptx=` name, or None."""
    if "chip" not in options:
        if "ptx" in options:
            raise PipelineError("option ptx needs chip as well")
        return None
    try:
        ptx = int(options["ptx"]) if "ptx" in options else None
    except ValueError:
        raise PipelineError(f"ptx must be an integer such as 80, got '{options['ptx']}'") from None
    try:
        return Target(options["chip"], ptx)
    except TargetError as err:
        raise PipelineError(str(err)) from None


def _to_ptx_options(options: dict[str, str]) -> PipelineOptions:
    return PipelineOptions(
        _target_option(options) or DEFAULT_TARGET,
        check_opt_level(options.get("opt-level", "3"), "option opt-level of tile-to-ptx"),
        check_flag(options.get("line-info", "false"), "option line-info of tile-to-ptx"),
        check_flag(options.get("check-banks", "false"), "option check-banks of tile-to-ptx"))


_TARGET_HELP = "target chip (default: the gpu.module's #nvvm.target, else sm_90a)"
_PTX_HELP = "PTX ISA version as an integer"

TILE_PASSES = {
    "tile-dispatch": PassInfo(
        "tile-dispatch", "replace each tile primitive by its best variant for the target",
        {"chip": "target chip, e.g. sm_80, sm_90a, sm_100a (default: the gpu.module's "
                 "#nvvm.target, else sm_90a)",
         "ptx": "PTX ISA version as an integer, e.g. 80 (default: the chip's minimum)"},
        lambda o: pipeline.dispatch_pass(_target_option(o))),
    "tile-verify": PassInfo(
        "tile-verify", "check tile IR before anything reads it: slice and view bounds, shared "
        "memory per chip, block and grid extents, TMEM columns, buffer types (tile-dispatch "
        "runs it first as well)",
        {"chip": _TARGET_HELP, "ptx": _PTX_HELP},
        lambda o: pipeline.verify_pass(_target_option(o))),
    "tile-materialize": PassInfo(
        "tile-materialize", "give tile buffers storage (pointers, allocas, TMEM addresses) "
        "and remove the buffer ops", {}, lambda o: pipeline.materialize_pass()),
    "tile-check-target": PassInfo(
        "tile-check-target", "reject nvvm ops the target chip lacks (LLVM would abort on them)",
        {"chip": _TARGET_HELP, "ptx": _PTX_HELP},
        lambda o: pipeline.check_target_pass(_target_option(o))),
    "tile-check-async-proxy": PassInfo(
        "tile-check-async-proxy", "on tile IR: reject an async-proxy read of shared memory "
        "(wgmma / tcgen05.mma operands, TMA store sources) that generic-proxy writes reach "
        "with no fence.proxy.async between them", {},
        lambda o: pipeline.check_async_proxy_pass()),
    "tile-check-banks": PassInfo(
        "tile-check-banks", "on tile IR: warn (on stderr) of every shared-memory access of a "
        "copy or reduction whose requests take more wavefronts than the ideal (bank "
        "conflicts), as the variants tile-dispatch chooses would make it",
        {"chip": _TARGET_HELP, "ptx": _PTX_HELP,
         "all": "true: a remark for every access without conflicts too (default false)"},
        lambda o: pipeline.check_banks_pass(
            _target_option(o),
            check_flag(o.get("all", "false"), "option all of tile-check-banks"))),
    "tile-kernel-abi": PassInfo(
        "tile-kernel-abi", "on lowered llvm.func kernels: TMA tensor-map parameters become "
        "64-byte-aligned by-value grid constants", {}, lambda o: pipeline.kernel_abi_pass()),
    "tile-to-ptx": PassInfo(
        "tile-to-ptx", "tile-verify, tile-check-async-proxy, tile-dispatch, canonicalize, cse, "
        "tile-materialize, tile-check-target, "
        "then the passes of the upstream gpu-lower-to-nvvm-pipeline (with tile-kernel-abi after "
        "convert-gpu-to-nvvm) to LLVM with embedded PTX",
        {"chip": "target chip (default sm_90a)", "ptx": "PTX ISA version, e.g. 80",
         "opt-level": "LLVM optimisation level for the device code (default 3)",
         "line-info": "true: the PTX carries .file/.loc directives naming the source lines "
                      "of the ops' locations, for ncu's source view (default false)",
         "check-banks": "true: run tile-check-banks before tile-dispatch (default false)"},
        lambda o: pipeline.tile_to_ptx(_to_ptx_options(o))),
}


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
    return options


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
        return Target(options["cubin-chip"], int(ptx.group(1)))
    except TargetError as err:
        raise PipelineError(f"{_UPSTREAM_NVVM}: {err}") from None


def parse_pipeline(text: str) -> list[Step]:
    """The steps of a `builtin.module(...)` pipeline (see tilemlir/pipeline.py)."""
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
                steps.extend(pipeline.check_target_pass(_upstream_nvvm_target(em.group(2) or "")))
            steps.append(("mlir", element))
    return steps


def unknown_pass_message(element: str) -> str:
    names = ", ".join(TILE_PASSES)
    return (f"'{element}' is neither a tilemlir pass ({names}) nor a registered MLIR pass "
            f"or pipeline")


def pass_manager(text: str, ctx: ir.Context | None = None, ir_printing: dict | None = None,
                 timing: bool = False) -> PassManager:
    """A PassManager running the pipeline `text` (tilemlir and upstream passes mixed);
    `ir_printing` and `timing` as pipeline.build_pass_manager takes them."""
    try:
        return pipeline.build_pass_manager(parse_pipeline(text), ctx, ir_printing, timing)
    except UnknownPassError as err:
        raise PipelineError(unknown_pass_message(err.element)) from None


def pass_names() -> list[str]:
    """The tilemlir passes that run as passes of their own (tile-to-ptx is a pipeline of them
    and upstream passes): the names IR dumps and timings show."""
    return [name for name in TILE_PASSES if name != "tile-to-ptx"]


def check_pass_name(name: str, ctx: ir.Context | None = None) -> None:
    """PipelineError unless `name` is a pass whose IR a dump can show: a tilemlir pass or a
    registered upstream pass."""
    if name in pass_names():
        return
    if name == "tile-to-ptx":
        raise PipelineError("tile-to-ptx is a pipeline, not a pass: name one of the passes it "
                            "runs, e.g. tile-dispatch, tile-materialize, convert-gpu-to-nvvm")
    if not re.fullmatch(r"[\w.-]+", name):
        raise PipelineError(f"'{name}' is not a pass name")
    try:
        pipeline.add_upstream(PassManager("builtin.module", context=ctx), f"any({name})")
    except PipelineError:
        raise PipelineError(unknown_pass_message(name)) from None
