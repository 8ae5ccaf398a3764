"""`T.print`: printf from the device, each line prefixed with the kernel's Python file and line.

    if tid == 0:
        T.print("tid", tid, "x =", x)           # [kernel.py:42] tid 0 x = 1.5
        T.print(f"tid={tid} x={x:.3f}")          # [kernel.py:43] tid=0 x=1.500

Arguments print as Python's print would put them, separated by `sep` and ended by `end`:
strings and other Python values (ints, floats, shapes) are formatted while the kernel is built;
device scalars become printf conversions (%d for integers up to 32 bits, %lld for 64-bit ones and
index values, %g for floats, all of which vprintf receives as doubles). An f-string holding
device values keeps them as conversions; its format specs (`{x:.3f}`, `{i:08x}`) become the
printf ones. Builds `gpu.printf`, which convert-gpu-to-nvvm lowers to a `vprintf` call with the
format as a global string: every thread that reaches it prints (guard it with `if tid == 0:`), in
no defined order between threads, and the output appears when the host synchronises.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu

from tilemlir.dsl.buffers import TileBuffer
from tilemlir.dsl.builder import current
from tilemlir.dsl.values import KernelError, Scalar
from tilemlir.ir import emit

# A Python format spec printf can express: flags, width, precision, conversion.
_SPEC = re.compile(r"(?P<flags>[-+ #0]*)(?P<width>\d*)(?:\.(?P<precision>\d+))?(?P<type>[a-zA-Z]?)")
_INT_TYPES = {"": "d", "d": "d", "i": "d", "u": "u", "x": "x", "X": "X", "o": "o", "c": "c"}
_FLOAT_TYPES = {"": "g", "g": "g", "G": "G", "e": "e", "E": "E", "f": "f", "F": "F", "a": "a",
                "A": "A"}


@dataclass(frozen=True)
class DeviceFormat:
    """An f-string holding device values: literal text and (scalar, format spec) pieces."""
    parts: tuple

    def _unusable(self, *_):
        raise KernelError("an f-string with device values can only be printed (T.print); "
                          "its values are known on the GPU only")

    __str__ = __format__ = __add__ = __radd__ = __mod__ = __len__ = __iter__ = _unusable


def device_fstring(pieces: list) -> str | DeviceFormat:
    """What an f-string evaluates to: `pieces` are its literal strings and (value, spec)
    pairs. Python values are formatted now; a device value keeps the string on the device."""
    if not any(isinstance(p, tuple) and isinstance(p[0], Scalar) for p in pieces):
        return "".join(p if isinstance(p, str) else format(*p) for p in pieces)
    parts = []
    for p in pieces:
        if isinstance(p, str):
            parts.append(p)
        elif isinstance(p[0], Scalar):
            _conversion(p[0].type, p[1])            # a bad spec fails on its own line
            parts.append(p)
        else:
            parts.append(format(*p))
    return DeviceFormat(tuple(parts))


def _conversion(t: ir.Type, spec: str) -> str:
    """The printf conversion of a device value of type `t` with Python format spec `spec`."""
    m = _SPEC.fullmatch(spec)
    is_int = isinstance(t, (ir.IntegerType, ir.IndexType))
    kinds = _INT_TYPES if is_int else _FLOAT_TYPES
    if m is None or m["type"] not in kinds:
        raise KernelError(f"format spec {spec!r} cannot print a device {t}: T.print takes "
                          f"flags, width, precision and one of "
                          f"{', '.join(k for k in kinds if k)} (printf's subset of Python's)")
    length = "ll" if is_int and _int_bits(t) == 64 else ""
    precision = f".{m['precision']}" if m["precision"] is not None else ""
    return f"%{m['flags']}{m['width']}{precision}{length}{kinds[m['type']]}"


def _int_bits(t: ir.Type) -> int:
    return 64 if isinstance(t, ir.IndexType) else ir.IntegerType(t).width


def _printf_argument(s: Scalar) -> ir.Value:
    """`s` widened the way printf's varargs take it: 32-bit or 64-bit ints, doubles."""
    t = s.type
    if isinstance(t, ir.IndexType):
        return arith.index_cast(emit.i64(), s.value)
    if isinstance(t, ir.IntegerType):
        width = ir.IntegerType(t).width
        if width == 1:
            return arith.extui(emit.i32(), s.value)
        if width < 32:
            return arith.extsi(emit.i32(), s.value)
        if width in (32, 64):
            return s.value
        raise KernelError(f"T.print cannot print a device i{width}")
    if isinstance(t, (ir.F16Type, ir.BF16Type, ir.F32Type)):
        return arith.extf(ir.F64Type.get(), s.value)
    if isinstance(t, ir.F64Type):
        return s.value
    raise KernelError(f"T.print cannot print a device value of type {t}")


def device_print(*values, sep: str = " ", end: str = "\n") -> None:
    """`T.print(*values, sep=" ", end="\\n")`: see the module docstring."""
    if not isinstance(sep, str) or not isinstance(end, str):
        raise KernelError("T.print: sep and end must be Python strings")
    builder = current()
    text = [f"[{os.path.basename(builder.file)}:{builder.line}] "]
    args = []

    def literal(s: str) -> None:
        text.append(s.replace("%", "%%"))

    def device(s: Scalar, spec: str) -> None:
        text.append(_conversion(s.type, spec))
        args.append(_printf_argument(s))

    for i, v in enumerate(values):
        if i:
            literal(sep)
        if isinstance(v, DeviceFormat):
            for p in v.parts:
                literal(p) if isinstance(p, str) else device(*p)
        elif isinstance(v, Scalar):
            device(v, "")
        elif isinstance(v, (TileBuffer, ir.Value)):
            raise KernelError(f"T.print prints scalars and Python values, not a "
                              f"{type(v).__name__}: print its elements (e.g. buf[i, j]) instead")
        else:
            literal(str(v))
    literal(end)
    gpu.printf(ir.StringAttr.get("".join(text)), *args)
