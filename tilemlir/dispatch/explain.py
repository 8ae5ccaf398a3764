"""What tile-dispatch decided for each tile op, and why.

While `recording()` is active, every tile-dispatch run appends a `Decision` per tile op: where
the op is (its Python line for kernels written in the language), the variant chosen, each
variant tried before it with the reasons it lost, the ops the chosen variant emitted (counted
by name, nested ones included: a static count, a loop body once), and the bytes the op moves
through global, shared or tensor memory per thread and per CTA.

Ops of one signature are decided once (tilemlir/dispatch/memo.py); the later ones get the first
one's Decision at their own location, marked `replayed_from`.

    with recording() as decisions:
        pm.run(module)
    print(render(decisions))

`tilemlir.explain(kernel, target=...)` and `tilemlir-opt --explain-dispatch` are built on this.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field

from mlir import ir

# Memory that ops move data through (registers, scope "local", are not counted).
MEMORY_SCOPES = ("global", "shared", "tmem")
# Operands that carry the data an op reads or writes (barriers, counts, scratch do not).
WRITTEN = ("dst", "d")
READ = ("src", "a", "b", "c", "accum", "lhs", "rhs", "cond", "on_true", "on_false")

_decisions: ContextVar[list | None] = ContextVar("tilemlir_dispatch_decisions", default=None)


@contextlib.contextmanager
def recording():
    """Collects the Decisions of every tile-dispatch run inside (a list, filled as they run)."""
    decisions: list[Decision] = []
    token = _decisions.set(decisions)
    try:
        yield decisions
    finally:
        _decisions.reset(token)


def active() -> list | None:
    """The list Decisions go to, or None when nothing is recording."""
    return _decisions.get()


@dataclass(frozen=True)
class Rejection:
    variant: str
    priority: int
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Traffic:
    """One operand's bytes, for one execution of the op by its scope."""
    operand: str
    access: str                 # "read" | "write"
    space: str                  # global | shared | tmem
    bytes: int


@dataclass(frozen=True)
class Decision:
    op: str                                 # tile.copy ...
    location: str                           # file:line:col, or MLIR's form of the location
    variant: str | None                     # None: no variant could lower the op
    priority: int | None
    rejected: tuple[Rejection, ...]         # the variants tried before, in order
    instructions: tuple[tuple[str, int], ...] = ()   # (op name, count) in the replacement
    traffic: tuple[Traffic, ...] = ()
    scope: str | None = None                # who executes the op: thread, warp, warpgroup, cta
    scope_threads: int | None = None
    cta_threads: int | None = None
    branch: str | None = None               # a thread-dependent branch the op sits under
    hint: str | None = None                 # the op's `dispatch` attribute, if any
    replayed_from: str | None = field(default=None, compare=False)

    def bytes(self, access: str) -> int:
        return sum(t.bytes for t in self.traffic if t.access == access)

    def per_thread(self, access: str) -> float | None:
        if not self.scope_threads:
            return None
        return self.bytes(access) / self.scope_threads

    def per_cta(self, access: str) -> int | None:
        """Bytes for the CTA when each of its scope-sized groups runs the op once; None when the
        op sits under a thread-dependent branch (not every group need run it)."""
        if not self.scope_threads or not self.cta_threads or self.branch:
            return None
        return self.bytes(access) * (self.cta_threads // self.scope_threads)

    def render(self) -> str:
        scope = f" ({self.scope} scope)" if self.scope else ""
        lines = [f"{self.op} at {self.location}{scope}"]
        if self.replayed_from:
            lines.append(f"  same signature as the op at {self.replayed_from}: decided once")
        if self.hint:
            lines.append(f"  dispatch hint: only '{self.hint}' is tried")
        for r in self.rejected:
            lines.append(f"  rejected {r.variant} (priority {r.priority}): "
                         + "; ".join(r.reasons))
        if self.variant is None:
            lines.append("  chosen: none (dispatch fails here)")
            return "\n".join(lines)
        lines.append(f"  chosen {self.variant} (priority {self.priority})")
        if self.instructions:
            lines.append("  emits " + ", ".join(f"{n} {name}" for name, n in self.instructions))
        lines.append("  " + self._memory())
        return "\n".join(lines)

    def _memory(self) -> str:
        if not self.traffic:
            return "memory: none moved (registers, barriers or control only)"
        moved = ", ".join(f"{t.access}s {t.operand.upper()} {t.bytes} B ({t.space})"
                          for t in self.traffic)
        parts = [f"memory: {moved}"]
        for label, value in (("per thread", self.per_thread), ("per CTA", self.per_cta)):
            read, written = value("read"), value("write")
            if read is None:
                continue
            parts.append(f"{label}: read {_number(read)} B, written {_number(written)} B")
        if self.branch:
            parts.append(f"per CTA: as many times as groups pass the branch at {self.branch}")
        return "; ".join(parts)


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:.2f}"


def where(loc: ir.Location) -> str:
    """file:line:col of the first file location inside `loc`, else MLIR's form."""
    if loc.is_a_file():
        return f"{loc.filename}:{loc.start_line}:{loc.start_col}"
    if loc.is_a_name():
        return where(loc.child_loc)
    if loc.is_a_callsite():
        return where(loc.callee)
    if loc.is_a_fused():
        for inner in loc.locations:
            if inner.is_a_file():
                return where(inner)
    return str(loc)


def count_ops(block: ir.Block) -> tuple[tuple[str, int], ...]:
    """(op name, count) of every op in `block`, nested ones included, the most frequent first
    (nvvm and llvm ops before the others at equal counts)."""
    counts: Counter = Counter()

    def visit(op):
        counts[op.name] += 1
        return ir.WalkResult.ADVANCE

    for op in block.operations:
        op.operation.walk(visit)
    return tuple(sorted(counts.items(), key=lambda item: (
        -item[1], not item[0].startswith(("nvvm.", "llvm.")), item[0])))


def traffic(ctx) -> tuple[Traffic, ...]:
    """The bytes each data operand of the op (a DispatchContext) moves through memory."""
    moved = []
    for name, buffer in ctx.buffers().items():
        access = "write" if name in WRITTEN else "read" if name in READ else None
        if access is None or buffer.scope not in MEMORY_SCOPES:
            continue
        moved.append(Traffic(name, access, buffer.scope, buffer.size * buffer.elem_bits // 8))
    return tuple(moved)


def decide(ctx, variant, tried, block: ir.Block | None) -> Decision:
    """The Decision for the op of `ctx`: `variant` (None: none could lower it) after the
    (variant, reasons) pairs in `tried`; `block` holds the replacement built."""
    size = ctx.block_size
    branches = ctx.branches
    return Decision(
        op=ctx.op.name, location=where(ctx.op.location),
        variant=variant.name if variant else None,
        priority=variant.priority if variant else None,
        rejected=tuple(Rejection(v.name, v.priority, tuple(reasons)) for v, reasons in tried),
        instructions=count_ops(block) if block is not None else (),
        traffic=traffic(ctx), scope=ctx.scope, scope_threads=ctx.scope_threads(),
        cta_threads=size[0] * size[1] * size[2] if size else None,
        branch=_file_line(branches[0].location) if branches else None,
        hint=ctx.attr("dispatch"))


_PRINTED_FILE_LOCATION = re.compile(r'^loc\("(.*)":(\d+):(\d+)\)$')


def _file_line(printed: str) -> str:
    """file:line:col of a printed file location (`loc("k.py":3:5)`), else the text as it is."""
    found = _PRINTED_FILE_LOCATION.match(printed)
    return ":".join(found.groups()) if found else printed


def replayed(decision: Decision, op: ir.Operation) -> Decision:
    """`decision`, made for an op of the same signature, at `op`."""
    return dataclasses.replace(decision, location=where(op.location),
                               replayed_from=decision.replayed_from or decision.location)


def render(decisions: list[Decision]) -> str:
    if not decisions:
        return "no tile op was dispatched"
    return "\n\n".join(d.render() for d in decisions)


class Explanation(list):
    """The Decisions of one kernel, in dispatch order; str() renders them all. `errors` holds
    the diagnostics of a dispatch that failed (the failing ops' Decisions have variant None)."""

    def __init__(self, decisions=(), errors=()):
        super().__init__(decisions)
        self.errors = list(errors)

    def __str__(self) -> str:
        text = render(self)
        if self.errors:
            text += "\n\ndispatch failed:\n" + "\n".join(self.errors)
        return text

    def at(self, line: int) -> list[Decision]:
        """The Decisions of the ops on source line `line` (of any file)."""
        return [d for d in self if re.search(rf":{line}:\d+$", d.location)]
