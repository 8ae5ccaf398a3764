"""The tile buffer type, `!tile.buf<shape, elem, scope, layout>`, seen from Python.

IRDL types have no Python accessors for their parameters, so a type is read back from its
(deterministic) printed form, cached per type; code that builds a type from a BufferType keeps
that BufferType instead of reading the type back.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from mlir import ir

from tilemlir.layout import TileLayout, from_attr_text, to_attr_text

SCOPES = ("global", "shared", "local", "tmem")

_BUF_RE = re.compile(
    r'^!tile\.buf<array<i64(?::\s*(?P<shape>[-0-9,\s]*))?>,\s*(?P<elem>.+?),\s*'
    r'"(?P<scope>global|shared|local|tmem)",\s*(?P<layout>#tile\.layout<.*>)>$')


@dataclass(frozen=True)
class BufferType:
    """A tile of `shape` elements of `elem`, living in `scope`, placed by `layout`."""
    shape: tuple[int, ...]
    elem: ir.Type
    scope: str
    layout: TileLayout

    @property
    def elem_bits(self) -> int:
        return element_bits(self.elem)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def describe(self) -> str:
        """Short human form for diagnostics: `16x8xf32 in local`."""
        return "x".join(str(d) for d in self.shape) + f"x{self.elem} in {self.scope}"

    def mlir_type(self) -> ir.Type:
        """`!tile.buf<...>` in the current Context."""
        return _buffer_mlir_type(self, ir.Context.current)


@functools.lru_cache(maxsize=4096)
def _buffer_mlir_type(buffer: BufferType, context: ir.Context) -> ir.Type:
    # Cached per Context (which the cached type keeps alive): printing the layout and parsing
    # the type cost more than the op that uses it, and a build makes the same few types often.
    if buffer.scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}, got {buffer.scope!r}")
    dims = ", ".join(str(d) for d in buffer.shape)
    shape_text = f"array<i64: {dims}>" if dims else "array<i64>"
    return ir.Type.parse(f'!tile.buf<{shape_text}, {buffer.elem}, "{buffer.scope}", '
                         f'{to_attr_text(buffer.layout)}>', context=context)


# The 8-bit floats: LLVM has no type for them, so memory and registers hold their bits as i8
# (llvm_type), and only the conversions (nvvm.convert.*f8x2*) and the tensor cores read them.
F8_TYPES = (ir.Float8E4M3FNType, ir.Float8E5M2Type)
# Their numpy types (ml_dtypes'), by MLIR name: for constants' bits and the interpreter.
F8_NUMPY_DTYPES = {"f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
                   "f8E5M2": np.dtype(ml_dtypes.float8_e5m2)}


def is_f8(t: ir.Type) -> bool:
    """Whether `t` is f8E4M3FN or f8E5M2."""
    return isinstance(t, F8_TYPES)


def f8_bits(value: float, t: ir.Type) -> int:
    """The bits of `value` rounded to the 8-bit float type `t` (nearest even), as a signed
    int8: what LLVM holds for it."""
    return int(np.array(value, np.float32).astype(F8_NUMPY_DTYPES[str(t)]).view(np.int8))


def llvm_type(t: ir.Type) -> ir.Type:
    """The type LLVM holds an element of `t` in: i8 for the 8-bit floats, `t` itself else."""
    if isinstance(t, F8_TYPES):
        return ir.IntegerType.get_signless(8)
    if isinstance(t, ir.VectorType) and isinstance(ir.VectorType(t).element_type, F8_TYPES):
        return ir.VectorType.get(ir.VectorType(t).shape, ir.IntegerType.get_signless(8))
    return t


def element_bits(t: ir.Type) -> int:
    if isinstance(t, ir.IntegerType):
        return ir.IntegerType(t).width
    if isinstance(t, ir.FloatType):
        return ir.FloatType(t).width
    if isinstance(t, ir.IndexType):
        return 64
    raise ValueError(f"no bit width for element type {t}")


@functools.lru_cache(maxsize=4096)
def is_buffer_type(t: ir.Type) -> bool:
    return str(t).startswith("!tile.buf<")


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> tuple:
    m = _BUF_RE.match(text)
    if m is None:
        raise ValueError(f"not a tile buffer type: {text}")
    shape = tuple(int(x) for x in m.group("shape").split(",")) if m.group("shape") else ()
    return shape, m.group("elem"), m.group("scope"), from_attr_text(m.group("layout"))


@functools.lru_cache(maxsize=4096)
def parse_buffer_type(t: ir.Type) -> BufferType:
    # Cached on the uniqued type itself (printing it is most of the cost; dispatch asks for the
    # same few types thousands of times). A cached type keeps its Context alive, so an entry
    # can never be answered for another Context's type.
    shape, elem, scope, layout = _parse(str(t))
    with t.context:
        return BufferType(shape, ir.Type.parse(elem), scope, layout)


def buffer_type(shape, elem: ir.Type, scope: str, layout: TileLayout) -> ir.Type:
    """Builds `!tile.buf<...>` in the current Context."""
    return BufferType(tuple(int(d) for d in shape), elem, scope, layout).mlir_type()
