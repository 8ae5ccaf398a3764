"""What a variant sees of the op it is asked to lower."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from mlir import ir

from tilemlir.analysis import threads
from tilemlir.ir import kernel_abi
from tilemlir.ir.dialect import DISPATCHED
from tilemlir.ir.types import BufferType, is_buffer_type, parse_buffer_type
from tilemlir.target import Target

# Operand names of each dispatched op in IR order (optional operands last), from the IRDL file.
OPERANDS = {spec.name: spec.operands for spec in DISPATCHED}
DISPATCHED_OPS = tuple(spec.full_name for spec in DISPATCHED)
_OPERAND_INDEX = {op: {n: i for i, n in enumerate(names)} for op, names in OPERANDS.items()}


@dataclass
class DispatchContext:
    op: ir.Operation
    target: Target

    @functools.cached_property
    def primitive(self) -> str:
        return self.op.name.removeprefix("tile.")

    # ------------------------------------------------------------------ operands and attributes
    @functools.cached_property
    def _operands(self) -> list[ir.Value]:
        # read once: predicates and lowerings ask for operands by name many times per op
        return list(self.op.operands)

    def operand(self, name: str) -> ir.Value | None:
        i = _OPERAND_INDEX[self.primitive].get(name)
        if i is None:
            raise ValueError(f"'{self.op.name}' has no operand '{name}'; its operands are "
                             f"{', '.join(OPERANDS[self.primitive]) or 'none'}")
        ops = self._operands
        return ops[i] if i < len(ops) else None

    def buffer(self, name: str) -> BufferType:
        """The tile buffer type of operand `name`."""
        return parse_buffer_type(self.operand(name).type)

    def buffers(self) -> dict[str, BufferType]:
        return {n: self.buffer(n) for n in OPERANDS[self.primitive]
                if self.operand(n) is not None and is_buffer_type(self.operand(n).type)}

    def attr(self, name: str, default=None):
        """An attribute as a Python value (bool, int, float, str), or `default`."""
        if name not in self.op.attributes:
            return default
        a = self.op.attributes[name]
        if isinstance(a, ir.BoolAttr):
            return ir.BoolAttr(a).value
        if isinstance(a, ir.IntegerAttr):
            return ir.IntegerAttr(a).value
        if isinstance(a, ir.FloatAttr):
            return ir.FloatAttr(a).value
        if isinstance(a, ir.StringAttr):
            return ir.StringAttr(a).value
        return a

    @property
    def scope(self) -> str | None:
        return self.attr("scope")

    # ------------------------------------------------------------------ threads
    @functools.cached_property
    def func(self):
        return threads.enclosing(self.op, "gpu.func")

    @functools.cached_property
    def block_size(self) -> tuple[int, int, int] | None:
        return kernel_abi.block_size(self.func)

    @functools.cached_property
    def branches(self) -> list[threads.Branch]:
        return threads.thread_dependent_branches(self.op)

    def scope_threads(self) -> int | None:
        return threads.scope_threads(self.scope, self.block_size)

    def narrowing_reason(self) -> str | None:
        """Why not every thread of the op's scope reaches it, or None when all do."""
        need = self.scope_threads()
        if need is None:
            return f"the enclosing gpu.func declares no known_block_size, so the extent of " \
                   f"scope '{self.scope}' is unknown"
        if self.block_size is not None:
            total = self.block_size[0] * self.block_size[1] * self.block_size[2]
            if total % need:
                return f"a block of {total} threads is not made of whole {self.scope}s " \
                       f"({need} threads)"
        for b in self.branches:
            if b.granularity < need:
                grain = "a single thread" if b.granularity == 1 else f"groups of {int(b.granularity)} threads"
                return (f"the op sits under a branch at {b.location} whose condition varies "
                        f"between {grain}, so not all {need} threads of the {self.scope} reach it")
        return None
