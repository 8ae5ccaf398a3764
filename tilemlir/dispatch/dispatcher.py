"""The tile-dispatch pass: replaces every tile primitive with its best variant's IR.

One rewrite pattern per primitive op. For an op, the variants registered for (primitive, cuda)
are tried by descending priority, then name (an op-level `dispatch = "name"` attribute keeps only
that variant). For each variant every predicate is evaluated, so a rejection lists all of its
reasons; a variant whose predicates hold may still reject from its analysis. The first variant
that accepts builds the replacement. If none does, one error diagnostic at the op's location
lists every variant tried with its priority and reasons, and the pass fails.
"""

from __future__ import annotations

import os

from mlir import ir
from mlir.rewrite import RewritePatternSet, walk_and_apply_patterns

from tilemlir.dispatch.context import DISPATCHED_OPS, DispatchContext
from tilemlir.dispatch.registry import Reject, Variant, variants_for
from tilemlir.layout import LayoutError
from tilemlir.target import Target


class DispatchFailure(Exception):
    pass


def _rejections(variant: Variant, ctx: DispatchContext) -> list[str]:
    reasons = []
    for pred in variant.predicates:
        why = pred(ctx)
        if why:
            reasons.append(f"{pred.name}: {why}")
    return reasons


def _format_failure(op_name: str, target: Target, tried: list[tuple[Variant, list[str]]]) -> str:
    lines = [f"no variant of '{op_name}' can lower this op for {target.chip}:"]
    for variant, reasons in tried:
        lines.append(f"  - {variant.name} (priority {variant.priority}): " + "; ".join(reasons))
    return "\n".join(lines)


def _check_storage(ctx: DispatchContext) -> None:
    """Every buffer operand must lead to a root buffer (not, say, a function argument)."""
    from tilemlir.ir.windows import resolve
    for name in ctx.buffers():
        try:
            resolve(ctx.operand(name))
        except LayoutError as err:
            raise DispatchFailure(f"operand {name.upper()} of '{ctx.op.name}': {err}; tile "
                                  f"buffers come from tile.global, tile.alloc_shared, "
                                  f"tile.alloc_local or tile.tmem") from None


def choose_variant(ctx: DispatchContext):
    """(variant, emitter) for the op, or raises DispatchFailure with the full explanation."""
    candidates = variants_for(ctx.primitive)
    hint = ctx.attr("dispatch")
    if hint is not None:
        names = [v.name for v in candidates]
        if hint not in names:
            raise DispatchFailure(
                f"unknown dispatch hint '{hint}' for '{ctx.op.name}'; its variants are: "
                + (", ".join(names) if names else "(none)"))
        candidates = [v for v in candidates if v.name == hint]
    if not candidates:
        raise DispatchFailure(f"no variant is registered for '{ctx.op.name}'")
    tried = []
    for variant in candidates:
        try:
            reasons = _rejections(variant, ctx)
            if not reasons:
                emitter = variant.lower(ctx)
                _check_storage(ctx)
                return variant, emitter
        except Reject as rejection:
            reasons = [rejection.reason]
        except LayoutError as err:
            reasons = [f"layout: {err}"]
        tried.append((variant, reasons))
    raise DispatchFailure(_format_failure(ctx.op.name, ctx.target, tried))


def _dispatch_one(op, rewriter, target: Target, failures: list) -> None:
    operation = op.operation
    ctx = DispatchContext(operation, target)
    try:
        variant, emit = choose_variant(ctx)
    except DispatchFailure as failure:
        failures.append((operation.location, str(failure)))
        return True  # no match: leave the op for the diagnostic
    except Exception as err:  # a bug in a variant: say where, keep the user's process alive
        if os.environ.get("TILEMLIR_DEBUG"):
            raise
        failures.append((operation.location,
                         f"internal error while dispatching '{operation.name}': "
                         f"{type(err).__name__}: {err}"))
        return True
    with rewriter.ip, operation.location:
        results = emit()
    if isinstance(results, (list, tuple)):
        rewriter.replace_op(operation, list(results))
    else:
        rewriter.erase_op(operation)
    return None


def verify_buffers(module: ir.Operation) -> list[tuple[ir.Location, str]]:
    """Every !tile.buf an op defines has a readable layout of the buffer's size."""
    from tilemlir.ir.types import is_buffer_type, parse_buffer_type
    problems = []

    def visit(op):
        for result in op.results:
            if not is_buffer_type(result.type):
                continue
            try:
                buf = parse_buffer_type(result.type)
                buf.layout.checked_shape(buf.shape)
            except (LayoutError, ValueError) as err:
                problems.append((op.location, f"invalid tile buffer type: {err}"))
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return problems


def run_dispatch(module: ir.Operation, target: Target) -> list[tuple[ir.Location, str]]:
    """Dispatches every tile primitive under `module`; returns the failures (location, message).
    Buffer types are checked first: with a malformed one nothing is dispatched."""
    failures: list = verify_buffers(module)
    if failures:
        return failures
    with module.context:
        patterns = RewritePatternSet()
        for name in DISPATCHED_OPS:
            patterns.add(name, lambda op, rw: _dispatch_one(op, rw, target, failures))
        walk_and_apply_patterns(module, patterns.freeze())
    return failures
