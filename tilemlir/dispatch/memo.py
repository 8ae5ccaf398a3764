"""Dispatch decided and built once per op signature, then replayed.

Big kernels repeat themselves: an unrolled loop issues the same copy, fill, cast or gemm over
and over on fragments and windows of the same types, under the same branches. Dispatch reads
only what an op's *signature* holds, so ops with one signature get one decision (the variant,
or the diagnostic listing every variant and its reason) and the same replacement IR up to the
values it reads. The first op of a signature is dispatched as usual, its replacement built in a
scratch block and kept as a *template* (the values it read from outside turned into block
arguments); every later op of that signature gets a clone of the template with its own values
and its own location, a few C++ calls instead of Python building op after op.

The signature is conservative. It holds:
  - the op's name, attributes and result types;
  - per operand, its provenance: through tile dialect ops (tile.slice, tile.view, the root
    buffers, tile.addr ...) their names, attributes, types and operands, recursively; below
    that each scalar value's type, its defining op's name and attributes (or, for a block
    argument, its owner and position) and its value-analysis facts (granularity, thread period,
    elected, known multiple, per-thread values); values that appear twice are marked as the
    same value;
  - the op's enclosing ops up to its function and which of their regions holds it: an scf.if
    by its condition (described like a scalar operand: which threads reach the op), any other
    op as itself (the function, so the launch shape, included).
The values a template reads must all be among the operands' provenance values, which are
mapped position by position; a replacement that reads anything else, changes the enclosing
function (a TMA copy adds a kernel parameter) or places ops at another location is not kept as
a template, and every op of that signature is dispatched on its own. A rejection is repeated at
the ops of its signature under the same enclosing ops (its diagnostic names their branches).
"""

from __future__ import annotations

import math

from mlir import ir

from tilemlir.analysis.values import ValueAnalysis
from tilemlir.ir.kernel_abi import block_size

_FUNCTION_OPS = ("gpu.func", "func.func")
# How many defining ops deep a scalar value (a dynamic offset, a branch condition) is described.
SCALAR_DEPTH = 8


def _attributes(op: ir.Operation) -> tuple:
    attrs = op.attributes
    return tuple((name, attrs[name]) for name in attrs)


class Describer:
    """Describes values for signatures, per run: the provenance of a tile value is pure structure
    and is described once; scalar values carry value-analysis facts (one analysis per gpu.func).
    Everything here is keyed by values, so `forget` drops it when values go away."""

    def __init__(self):
        self._analyses: dict = {}
        self._described: dict = {}
        self._scalars: dict = {}
        self._blocks: dict = {}
        self._ids: dict = {}

    def forget(self) -> None:
        self._analyses.clear()
        self._described.clear()
        self._scalars.clear()
        self._blocks.clear()
        self._ids.clear()

    def _intern(self, description: tuple) -> int:
        """A number per distinct description: signatures hold numbers, cheap to hash."""
        return self._ids.setdefault(description, len(self._ids))

    def where(self, block: ir.Block) -> tuple[tuple, tuple, object]:
        """(the ancestors part of a signature, the enclosing ops, the function) of the ops of
        `block` (dispatch only visits ops of blocks that were there before it started)."""
        known = self._blocks.get(block)
        if known is not None:
            return known
        path = []
        func = None
        child, parent = block, block.owner
        while parent is not None:
            parent = parent.operation
            region = child.region
            index = next(i for i, r in enumerate(parent.regions) if r == region)
            path.append((parent, index))
            if parent.name in _FUNCTION_OPS:
                func = parent
                break
            child, parent = parent.block, parent.parent
        # Of the enclosing ops dispatch reads the scf.if conditions (which threads reach the
        # op) and the function (its launch shape): a branch counts by its condition, any other
        # op as itself.
        ancestors = tuple((p.name, index, self.scalar(p.operands[0], func))
                          if p.name == "scf.if" else (p, index) for p, index in path)
        found = self._blocks[block] = (self._intern(ancestors), tuple(p for p, _ in path), func)
        return found

    def describe(self, v: ir.Value, func) -> tuple[int, tuple]:
        """(the number of v's description, provenance values in the order the description
        reaches them)."""
        known = self._described.get(v)
        if known is not None:
            return known
        owner = v.owner
        if not isinstance(owner, ir.Block) and owner.name.startswith("tile."):
            results = owner.results
            index = 0 if len(results) == 1 else next(i for i, r in enumerate(results) if r == v)
            parts = [self.describe(o, func) for o in owner.operands]
            found = (self._intern(("tile", owner.name, index, v.type, _attributes(owner),
                                   tuple(d for d, _ in parts))),
                     (v,) + tuple(leaf for _, leaves in parts for leaf in leaves))
        else:
            found = (self._intern(self.scalar(v, func)), (v,))
        self._described[v] = found
        return found

    def scalar(self, v: ir.Value, func, depth: int = SCALAR_DEPTH) -> tuple:
        """A scalar value: its facts, and how it is computed (defining op, attributes, operands)
        down to `depth` ops; below that the value itself (only that value matches)."""
        if depth == 0:
            return ("this", v)
        if depth == SCALAR_DEPTH:
            known = self._scalars.get(v)
            if known is None:
                known = self._scalars[v] = self._scalar(v, func, depth)
            return known
        return self._scalar(v, func, depth)

    def _scalar(self, v: ir.Value, func, depth: int) -> tuple:
        owner = v.owner
        if isinstance(owner, ir.Block):
            parent = owner.owner
            return ("arg", v.type, parent.name if parent is not None else None, v.arg_number,
                    self._facts(func, v))
        return ("value", v.type, owner.name, _attributes(owner), self._facts(func, v),
                tuple(self.scalar(o, func, depth - 1) for o in owner.operands))

    def _facts(self, func, v: ir.Value) -> tuple:
        t = v.type
        if not isinstance(t, (ir.IntegerType, ir.IndexType)):
            return ()
        pair = self._analyses.get(func)
        if pair is None:
            # dispatch asks both: alignment with no launch shape, the rest with the func's
            pair = self._analyses[func] = (ValueAnalysis(block_size(func)), ValueAnalysis())
        a, plain = pair
        values = a.values(v)
        g = a.granularity(v)
        return (g if g != math.inf else "uniform", a.thread_period(v), a.elected(v),
                a.multiple(v), plain.multiple(v),
                None if values is None else values.tobytes())


class Signature:
    """An op's signature (`key`, hashable), its provenance values (`leaves`, in the order the
    key names them: a template's block arguments) and its enclosing ops (`places`)."""

    __slots__ = ("key", "leaves", "places")

    def __init__(self, op: ir.Operation, describer: Describer):
        ancestors, self.places, func = describer.where(op.block)
        parts = [describer.describe(v, func) for v in op.operands]
        self.leaves = [leaf for _, leaves in parts for leaf in leaves]
        # which provenance values are one value (gemm's C and D, one root behind two windows)
        first: dict = {}
        same = tuple(first.setdefault(v, i) for i, v in enumerate(self.leaves))
        self.key = (op.name, _attributes(op), tuple(r.type for r in op.results),
                    tuple(d for d, _ in parts), same, ancestors)


class Template:
    """The replacement IR of one op, in the block of a detached holder op whose arguments stand
    for the op's provenance values."""

    def __init__(self, holder: ir.Operation, used: list[int], nested: list[bool]):
        self.holder = holder
        self.used = used          # the block arguments the replacement reads
        self.nested = nested      # per top-level op: has regions (its inner ops need the location)

    def instantiate(self, op: ir.Operation, leaves: list[ir.Value]) -> None:
        """Puts a copy of the replacement right before `op`, reading `leaves`, at op's location."""
        copy = self.holder.clone(ip=False)
        block = copy.regions[0].blocks[0]
        args = block.arguments
        for i in self.used:
            args[i].replace_all_uses_with(leaves[i])
        location = op.location

        def relocate(o):
            o.location = location
            return ir.WalkResult.ADVANCE

        for inner, nested in zip(list(block.operations), self.nested):
            if nested:
                inner.operation.walk(relocate)
            else:
                inner.location = location
            inner.move_before(op)
        copy.erase()


def new_holder(types: list[ir.Type], location: ir.Location) -> tuple[ir.Operation, ir.Block]:
    """A detached op with one block (arguments of `types`) to build a replacement in."""
    holder = ir.Operation.create("scf.execute_region", regions=1, loc=location, ip=False)
    block = holder.regions[0].blocks.append(*types, arg_locs=[location] * len(types))
    return holder, block


def make_template(built: ir.Operation, leaves: list[ir.Value], op: ir.Operation,
                  func_before) -> Template | None:
    """A template from `built` (a holder whose block holds op's replacement, reading op's real
    values), or None when the replacement cannot be replayed from the leaves alone."""
    if func_before is not None and func_before != function_state(op):
        return None
    location = op.location
    holder = built.clone(ip=False)
    block = holder.regions[0].blocks[0]
    position = {v: i for i, v in enumerate(leaves)}
    args = block.arguments
    used: set[int] = set()
    ok = True

    def visit(o):
        nonlocal ok
        if o == holder:
            return ir.WalkResult.ADVANCE
        if o.location != location or any(len(b.arguments) for r in o.regions for b in r.blocks):
            ok = False
            return ir.WalkResult.INTERRUPT
        for v in list(o.operands):
            i = position.get(v)
            if i is not None:
                o.replace_uses_of_with(v, args[i])
                used.add(i)
        return ir.WalkResult.ADVANCE

    holder.walk(visit)
    if ok:
        ok = _closed(holder, block)
    if not ok:
        holder.erase()
        return None
    nested = [len(o.operation.regions) > 0 for o in block.operations]
    return Template(holder, sorted(used), nested)


def _closed(holder: ir.Operation, block: ir.Block) -> bool:
    """Every value the holder's ops read is defined inside it or is one of its arguments."""
    defined = set(block.arguments)
    ok = True

    def visit(o):
        nonlocal ok
        if o == holder:
            return ir.WalkResult.ADVANCE
        for v in o.operands:
            if v not in defined:
                ok = False
                return ir.WalkResult.INTERRUPT
        defined.update(o.results)
        return ir.WalkResult.ADVANCE

    holder.walk(visit, walk_order=ir.WalkOrder.PRE_ORDER)
    return ok


def function_state(op: ir.Operation):
    """What a replacement must not change about op's function: its arguments and attributes."""
    parent = op.parent
    while parent is not None and parent.name not in _FUNCTION_OPS:
        parent = parent.parent
    if parent is None:
        return None
    entry = parent.regions[0].blocks[0]
    return len(entry.arguments), _attributes(parent)
