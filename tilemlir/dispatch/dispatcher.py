"""The tile-dispatch pass: replaces every tile primitive with its best variant's IR.

One rewrite pattern per primitive op. For an op, the variants registered for (primitive, cuda)
are tried by descending priority, then name (an op-level `dispatch = "name"` attribute keeps only
that variant). For each variant every predicate is evaluated, so a rejection lists all of its
reasons; a variant whose predicates hold may still reject from its analysis. The first variant
that accepts builds the replacement. If none does, one error diagnostic at the op's location
lists every variant tried with its priority and reasons, and the pass fails.

Ops of one signature (tilemlir/dispatch/memo.py: op, attributes, operand types and provenance,
value-analysis facts, enclosing branches) are decided once: the first op of a signature keeps
its replacement as a template, later ones get a copy of it with their own values and location,
and a rejection's diagnostic is repeated at each op. The IR is the same as dispatching every op
on its own (`replay=False`), only built faster on big, repetitive kernels.
"""

from __future__ import annotations


from mlir import ir
from mlir.rewrite import RewritePatternSet, walk_and_apply_patterns

from tilemlir.dispatch import explain, memo
from tilemlir.dispatch.context import DISPATCHED_OPS, DispatchContext
from tilemlir.dispatch.registry import Reject, Variant, variants_for
from tilemlir.env import flag as env_flag
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


def choose_variant(ctx: DispatchContext, tried: list | None = None):
    """(variant, emitter) for the op, or raises DispatchFailure with the full explanation.
    The (variant, reasons) of the variants tried before go to `tried` (a list) if given."""
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
    tried = [] if tried is None else tried
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


_ON_ITS_OWN = object()  # a signature whose replacement cannot be replayed


class _Dispatcher:
    """Dispatches the ops of one run; ops of one signature (memo.Signature) share the decision
    and, where it can be replayed, the replacement IR (memo.Template)."""

    def __init__(self, target: Target, failures: list, replay: bool = True,
                 decisions: list | None = None):
        self.target = target
        self.replay = replay
        self.failures = failures
        self.decisions = decisions        # explain.Decision per op, when recording
        self.explained: dict = {}         # signature key -> its Decision, when recording
        self.describer = memo.Describer()
        # signature key -> its Template, or _ON_ITS_OWN (not replayable)
        self.decided: dict = {}
        self.failed: dict = {}        # (signature key, enclosing ops) -> the diagnostic
        self.templates: list = []

    def forget(self) -> None:
        """Drops everything keyed by values: an op with results was replaced, so values are
        gone and their storage may be reused by new ones."""
        self.describer.forget()
        self.decided.clear()
        self.failed.clear()
        self.explained.clear()

    def close(self) -> None:
        for template in self.templates:
            template.holder.erase()
        self.templates.clear()

    def __call__(self, op, rewriter) -> None:
        operation = op.operation
        try:
            sig = memo.Signature(operation, self.describer) if self.replay else None
        except Exception:  # a value the analysis cannot read: dispatch this op on its own
            if env_flag("TILEMLIR_DEBUG"):
                raise
            sig = None
        if sig is not None and self.failed and (sig.key, sig.places) in self.failed:
            self.failures.append((operation.location, self.failed[sig.key, sig.places]))
            self._explain_replay(sig, operation)
            return True
        known = self.decided.get(sig.key) if sig is not None else None
        if isinstance(known, memo.Template):
            self._explain_replay(sig, operation)
            known.instantiate(operation, sig.leaves)
            rewriter.erase_op(operation)
            return None
        return self._dispatch(operation, rewriter, sig if known is None else None)

    def _dispatch(self, operation, rewriter, sig):
        """Dispatches the op on its own; with its signature `sig`, keeps its replacement as the
        signature's template (or records that it cannot be replayed)."""
        ctx = DispatchContext(operation, self.target)
        tried: list = []
        try:
            variant, emit = choose_variant(ctx, tried)
        except DispatchFailure as failure:
            self._explain(sig, ctx, None, tried, None)
            self.failures.append((operation.location, str(failure)))
            if sig is not None:
                # the diagnostic names enclosing branches: shared by ops in the same places
                self.failed[sig.key, sig.places] = str(failure)
            return True  # no match: leave the op for the diagnostic
        except Exception as err:  # a bug in a variant: say where, keep the user's process alive
            if env_flag("TILEMLIR_DEBUG"):
                raise
            self.failures.append((operation.location,
                                  f"internal error while dispatching '{operation.name}': "
                                  f"{type(err).__name__}: {err}"))
            return True
        # The replacement is built in a scratch block, then moved before the op; without
        # results it is kept as the template of the op's signature where it can be replayed.
        replayable = sig is not None and not len(operation.results)
        before = memo.function_state(operation) if replayable else None
        holder, block = memo.new_holder([v.type for v in sig.leaves] if sig else [],
                                        operation.location)
        with ir.InsertionPoint(block), operation.location:
            results = emit()
        self._explain(sig, ctx, variant, tried, block)
        if replayable:
            template = memo.make_template(holder, sig.leaves, operation, before)
            if template is not None:
                self.templates.append(template)
            self.decided[sig.key] = template or _ON_ITS_OWN
        for inner in list(block.operations):
            inner.operation.move_before(operation)
        holder.erase()
        if isinstance(results, (list, tuple)):
            rewriter.replace_op(operation, list(results))
            self.forget()
        else:
            rewriter.erase_op(operation)
        return None


    def _explain(self, sig, ctx, variant, tried, block) -> None:
        if self.decisions is not None:
            decision = explain.decide(ctx, variant, tried, block)
            self.decisions.append(decision)
            if sig is not None:
                self.explained[sig.key] = decision

    def _explain_replay(self, sig, operation) -> None:
        if self.decisions is not None and sig.key in self.explained:
            self.decisions.append(explain.replayed(self.explained[sig.key], operation))


def verify_buffers(module: ir.Operation) -> list[tuple[ir.Location, str]]:
    """Every !tile.buf an op defines has a readable layout of the buffer's size."""
    from tilemlir.ir.types import is_buffer_type, parse_buffer_type
    problems = []
    checked: dict = {}               # type -> its problem (None: fine); kernels reuse few types

    def problem(t: ir.Type) -> str | None:
        if t not in checked:
            checked[t] = None
            try:
                buf = parse_buffer_type(t)
                buf.layout.checked_shape(buf.shape)
            except (LayoutError, ValueError) as err:
                checked[t] = f"invalid tile buffer type: {err}"
        return checked[t]

    def visit(op):
        for result in op.results:
            t = result.type
            if is_buffer_type(t) and problem(t):
                problems.append((op.location, checked[t]))
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return problems


def run_dispatch(module: ir.Operation, target: Target,
                 replay: bool = True) -> list[tuple[ir.Location, str]]:
    """Dispatches every tile primitive under `module`; returns the failures (location, message).
    Buffer types are checked first: with a malformed one nothing is dispatched. `replay=False`
    dispatches every op on its own (no shared decisions or templates: the reference the tests
    compare replaying with)."""
    failures: list = verify_buffers(module)
    if failures:
        return failures
    with module.context:
        dispatcher = _Dispatcher(target, failures, replay, explain.active())
        patterns = RewritePatternSet()
        for name in DISPATCHED_OPS:
            patterns.add(name, dispatcher)
        try:
            walk_and_apply_patterns(module, patterns.freeze())
        finally:
            dispatcher.close()
    return failures
