"""The variant registry: who can lower which tile primitive, in which order, and why not.

A *variant* lowers one primitive (gemm, copy, ...) for one target family (cuda). It has a name, a
priority and named predicates. The dispatcher tries variants by descending priority, then by
name; it evaluates every predicate of a variant so that all reasons are reported together.

A variant's `lower(ctx)` runs in two phases so that a rejection never leaves half-built IR:
it first analyses the op and either raises `Reject(reason)` or returns an *emitter*, a
zero-argument callable that builds the replacement at the op and returns a list of the values
that replace the op's results (anything else: the op has no results and is erased). Only the emitter touches the IR.

Dispatch decides ops of one signature once and replays the first one's replacement for the
others (tilemlir/dispatch/memo.py), so predicates and `lower` may read the op's operands, their
types and tile.slice / tile.view chains, attributes, the value analysis and the enclosing
branches and function, not, say, the ops around it; an emitter builds at the insertion point.
A replacement that reads values other than the op's operands and their chains, or changes the
function (TMA adds a kernel parameter), is detected and simply not replayed.

    @register("gemm", name="mma_sync", priority=10, when=[operands_in_registers])
    def lower_mma_sync(ctx):
        plan = plan_tiles(ctx)            # may raise Reject("M=20 is not a multiple of 16")
        return lambda: emit_nest(ctx, plan)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

Emitter = Callable[[], Optional[list]]


class Reject(Exception):
    """Raised by a variant's analysis: this variant cannot lower this op, and why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Predicate:
    """A named check: returns None when it holds, else the reason it does not."""
    name: str
    check: Callable[..., Optional[str]]

    def __call__(self, ctx) -> Optional[str]:
        return self.check(ctx)


def predicate(name: str):
    """Decorator: `@predicate("operands_in_registers") def f(ctx): return None or "why not"`."""
    def wrap(fn):
        return Predicate(name, fn)
    return wrap


@dataclass
class Variant:
    primitive: str
    target: str
    name: str
    priority: int
    predicates: tuple[Predicate, ...]
    lower: Callable[..., Emitter]
    doc: str = ""

    def sort_key(self):
        return (-self.priority, self.name)


@dataclass
class Registry:
    variants: dict[tuple[str, str], list[Variant]] = field(default_factory=dict)
    # Target families whose variant modules have all been imported (a lookup before then would
    # see only the variants some import happened to load).
    loaded: set[str] = field(default_factory=set)

    def add(self, variant: Variant) -> None:
        bucket = self.variants.setdefault((variant.primitive, variant.target), [])
        if any(v.name == variant.name for v in bucket):
            raise ValueError(f"variant '{variant.name}' of {variant.primitive} registered twice")
        bucket.append(variant)
        bucket.sort(key=Variant.sort_key)

    def lookup(self, primitive: str, target: str = "cuda") -> list[Variant]:
        return list(self.variants.get((primitive, target), ()))


REGISTRY = Registry()


def register(primitive: str, *, name: str, priority: int, target: str = "cuda",
             when: tuple | list = ()):
    """Registers the decorated `lower(ctx) -> emitter` as a variant of `primitive`."""
    def wrap(fn):
        REGISTRY.add(Variant(primitive, target, name, priority, tuple(when), fn,
                             (fn.__doc__ or "").strip()))
        return fn
    return wrap


def variants_for(primitive: str, target: str = "cuda") -> list[Variant]:
    """The variants of `primitive`, in the order the dispatcher tries them. The variants live
    above the registry (tilemlir/lowering/<target>/), so whoever dispatches loads them first:
    tilemlir.lowering.cuda.load_variants(), as the pipeline's tile-dispatch does."""
    if target not in REGISTRY.loaded:
        raise RuntimeError(f"the {target} variants are not loaded: call "
                           f"tilemlir.lowering.{target}.load_variants() before dispatching")
    return REGISTRY.lookup(primitive, target)
