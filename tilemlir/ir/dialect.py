"""The tile dialect's vocabulary, read from its IRDL file when tilemlir is imported.

The IRDL file is the one definition of the ops: their names, operand names (in IR order, with
their variadicity) and attribute names come from it, so Python cannot drift from it.

    OPS["copy_async"].operands        ("dst", "src", "barrier")
    OPS["copy_async"].optional        ("barrier",)
    DISPATCHED                        every primitive tile-dispatch lowers, in file order
    build("copy", {"dst": d, "src": s}, {"scope": cta})    creates "tile.copy"(%d, %s)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlir import ir

from tilemlir.ir.context import DIALECT_FILE

# The ops that make buffers and windows of them, and address their elements: tile-materialize
# gives them storage and removes them. Every other op of the dialect is a primitive that
# tile-dispatch replaces with a variant.
BUFFER_OPS = ("global", "alloc_local", "alloc_shared", "tmem", "slice", "view", "storage", "addr")
# tile.slice's `static_offsets` entry for "the next dynamic offset operand" (as in memref.subview)
DYNAMIC_OFFSET = -(2 ** 63)


@dataclass(frozen=True)
class OpSpec:
    name: str                          # without the dialect prefix: "copy"
    operands: tuple[str, ...]          # in IR order
    variadicity: tuple[str, ...]       # "single", "optional" or "variadic", per operand
    attributes: tuple[str, ...]
    results: tuple[str, ...]

    @property
    def full_name(self) -> str:
        return f"tile.{self.name}"

    @property
    def optional(self) -> tuple[str, ...]:
        return tuple(n for n, v in zip(self.operands, self.variadicity) if v == "optional")


def _strings(attr: ir.Attribute) -> tuple[str, ...]:
    return tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(attr))


def _op_spec(op: ir.Operation) -> OpSpec:
    operands = variadicity = attributes = results = ()
    for inner in op.regions[0].blocks[0].operations:
        inner = inner.operation
        if inner.name == "irdl.operands":
            operands = _strings(inner.attributes["names"])
            # no Python accessor for #irdl<variadicity_array[...]>: read its printed form
            listed = str(inner.attributes["variadicity"]).partition("[")[2]
            variadicity = tuple(re.findall(r"single|optional|variadic", listed))
        elif inner.name == "irdl.attributes":
            attributes = _strings(inner.attributes["attributeValueNames"])
        elif inner.name == "irdl.results":
            results = _strings(inner.attributes["names"])
    return OpSpec(ir.StringAttr(op.attributes["sym_name"]).value, operands, variadicity,
                  attributes, results)


def read_ops(irdl_text: str) -> dict[str, OpSpec]:
    """{op name: OpSpec} of the `irdl.dialect @tile` in `irdl_text`, in file order."""
    with ir.Context():
        module = ir.Module.parse(irdl_text)
        dialect = next(op.operation for op in module.body.operations
                       if op.operation.name == "irdl.dialect")
        return {spec.name: spec for spec in
                (_op_spec(op.operation) for op in dialect.regions[0].blocks[0].operations
                 if op.operation.name == "irdl.operation")}


OPS: dict[str, OpSpec] = read_ops(DIALECT_FILE.read_text())
DISPATCHED: tuple[OpSpec, ...] = tuple(s for s in OPS.values() if s.name not in BUFFER_OPS)


def build(name: str, operands: dict | None = None, attributes: dict | None = None,
          results=()) -> ir.Operation:
    """Creates `tile.<name>` at the current insertion point, with its operands given by their
    IRDL names (an absent optional one left out or None, a variadic one as a list) and its
    attributes by name ("dispatch" too, the discardable one that pins a variant). A name the
    IRDL file does not declare for the op is a ValueError here, not a verifier error later."""
    if name not in OPS:
        raise ValueError(f"the tile dialect has no op '{name}'")
    spec, operands, attributes = OPS[name], operands or {}, attributes or {}
    unknown = [n for n in operands if n not in spec.operands] + \
        [n for n in attributes if n not in spec.attributes and n != "dispatch"]
    if unknown:
        raise ValueError(f"{spec.full_name} declares no operand or attribute "
                         f"{', '.join(map(repr, unknown))}; its operands are "
                         f"{', '.join(spec.operands) or 'none'}, its attributes "
                         f"{', '.join(spec.attributes) or 'none'}")
    ordered = []
    for operand, variadicity in zip(spec.operands, spec.variadicity):
        value = operands.get(operand)
        if variadicity == "variadic":
            ordered += list(value or ())
        elif value is not None:
            ordered.append(value)
        elif variadicity == "single":
            raise ValueError(f"{spec.full_name} needs operand '{operand}'")
    return ir.Operation.create(spec.full_name, results=list(results), operands=ordered,
                               attributes=attributes)
