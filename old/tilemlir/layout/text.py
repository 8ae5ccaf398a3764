"""Parsing the text form of a layout, and its MLIR attribute spelling.

``str(layout)`` prints, and ``parse_layout`` reads, this grammar (spaces
between tokens are free)::

    layout  := "S" iters [ "R" iters ] [ "+" offset ] [ "o" swizzle ]
    iters   := "[" tuple ":" tuple "]"              extents : strides
    tuple   := "(" [ item { "," item } [ "," ] ")" | item
    extent  := INT
    stride  := INT [ "@" AXIS ]                     a bare INT is on axis "m"
    offset  := "{" AXIS ":" INT { "," AXIS ":" INT } "}"
    swizzle := "Sw" "<" INT "," INT "," INT ">"     bits, base, shift

The offset is added before the swizzle ("o" reads "after").  Example::

    S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)] R[(4):(1@warpid)] + {laneid: 12} o Sw<3,3,3>

The MLIR attribute is ``#tile.layout<"TEXT">``, the text as an MLIR string
literal.
"""

import re

from .axes import AXIS_ORDER, Iter
from .errors import LayoutError
from .swizzle import Swizzle
from .tile_layout import TileLayout

_INT = re.compile(r"\d+")
_NAME = re.compile(r"[A-Za-z_]\w*")
_ATTR_OPEN, _ATTR_CLOSE = '#tile.layout<"', '>'


def parse_layout(text: str) -> TileLayout:
    """The layout ``text`` spells; LayoutError with ``column`` set on bad text.

    >>> str(parse_layout("S[8 : 4@laneid] + {m: 2}"))
    'S[(8):(4@laneid)] + {m: 2}'
    """
    return _Parser(text).layout()


def to_attr_text(layout: TileLayout) -> str:
    """The MLIR attribute ``#tile.layout<"TEXT">`` of a layout.

    >>> to_attr_text(parse_layout("S[8:1]"))
    '#tile.layout<"S[(8):(1)]">'
    """
    return f"{_ATTR_OPEN}{_escape(str(layout))}\"{_ATTR_CLOSE}"


def from_attr_text(text: str) -> TileLayout:
    """The layout of a ``#tile.layout<"TEXT">`` attribute (inverse of to_attr_text)."""
    stripped = text.strip()
    if not stripped.startswith(_ATTR_OPEN):
        raise LayoutError(f"expected an attribute starting with {_ATTR_OPEN!r}, got {text!r}")
    body, end = _unescape(stripped, len(_ATTR_OPEN))
    if stripped[end:] != _ATTR_CLOSE:
        raise LayoutError(f"expected {_ATTR_CLOSE!r} after the string of {text!r}")
    return parse_layout(body)


_PLAIN = re.compile(r'[ !#-\[\]-~]*')          # printable ASCII but '"' and '\\'


def _escape(text: str) -> str:
    """An MLIR string-literal body, escaped as MLIR prints it (``\\\\`` and ``\\XX``)."""
    if _PLAIN.fullmatch(text):
        return text                                 # nothing to escape (every layout's text)
    out = []
    for byte in text.encode():
        char = chr(byte)
        if char == "\\":
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and char != '"':
            out.append(char)
        else:
            out.append(f"\\{byte:02X}")
    return "".join(out)


def _unescape(text: str, start: int) -> tuple[str, int]:
    """The MLIR string literal body from ``start`` up to its closing quote, and the index after it."""
    simple = {'"': b'"', "\\": b"\\", "n": b"\n", "t": b"\t"}
    out, pos = bytearray(), start
    while pos < len(text):
        char = text[pos]
        if char == '"':
            return out.decode(), pos + 1
        if char != "\\":
            out += char.encode()
            pos += 1
        elif text[pos + 1:pos + 2] in simple:
            out += simple[text[pos + 1]]
            pos += 2
        elif re.fullmatch(r"[0-9A-Fa-f]{2}", text[pos + 1:pos + 3]):
            out.append(int(text[pos + 1:pos + 3], 16))
            pos += 3
        else:
            raise LayoutError(f"bad escape at column {pos + 1} of {text!r}", column=pos + 1)
    raise LayoutError(f"unterminated string in {text!r}")


class _Parser:
    """Recursive descent over ``text``; ``pos`` is the next unread character."""

    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def layout(self) -> TileLayout:
        self.keyword("S")
        shard = self.iters()
        replica = self.iters() if self.accept_keyword("R") else ()
        offset = self.offset() if self.accept("+") else None
        swizzle = self.swizzle() if self.accept_keyword("o") else None
        if self.here() != len(self.text):
            self.fail("'R[', '+', 'o Sw<...>' or the end")
        try:
            return TileLayout(shard, replica, offset, swizzle)
        except LayoutError as error:
            raise LayoutError(f"bad layout text at column 1: {error}\n  {self.text}", column=1) from None

    def iters(self) -> tuple[Iter, ...]:
        self.expect("[")
        extents = self.items(self.extent)
        self.expect(":")
        strides_at = self.here()
        strides = self.items(self.stride)
        if len(strides) != len(extents):
            self.fail(f"{len(extents)} strides to match the extents, not {len(strides)}", strides_at)
        self.expect("]")
        return tuple(Iter(extent, *stride) for extent, stride in zip(extents, strides))

    def items(self, item) -> list:
        if not self.accept("("):
            return [item()]
        items = []
        while not self.accept(")"):
            items.append(item())
            if not self.accept(",") and not self.peek(")"):
                self.fail("',' or ')'")
        return items

    def extent(self) -> int:
        at = self.here()
        value = self.integer()
        if value < 1:
            self.fail("an extent >= 1", at)
        return value

    def stride(self) -> tuple[int, str]:
        value = self.integer()
        return (value, self.axis()) if self.accept("@") else (value, "m")

    def offset(self) -> dict[str, int]:
        self.expect("{")
        values = {}
        while True:
            at = self.here()
            axis = self.axis()
            if axis in values:
                self.fail(f"each axis once, but {axis} repeats", at)
            self.expect(":")
            values[axis] = self.integer()
            if self.accept("}"):
                return values
            self.expect(",")

    def swizzle(self) -> Swizzle:
        at = self.here()
        self.keyword("Sw")
        self.expect("<")
        bits = self.integer()
        self.expect(",")
        base = self.integer()
        self.expect(",")
        shift = self.integer()
        self.expect(">")
        try:
            return Swizzle(bits, base, shift)
        except LayoutError as error:
            self.fail(f"a valid swizzle ({error})", at)

    # -- tokens -------------------------------------------------------------
    def axis(self) -> str:
        at = self.here()
        name = self.match(_NAME, "an axis name")
        if name not in AXIS_ORDER:
            self.fail(f"an axis name ({', '.join(AXIS_ORDER)})", at)
        return name

    def integer(self) -> int:
        return int(self.match(_INT, "an integer"))

    def keyword(self, word: str) -> None:
        if not self.accept_keyword(word):
            self.fail(f"'{word}'")

    def accept_keyword(self, word: str) -> bool:
        found = _NAME.match(self.text, self.here())
        if found is None or found.group() != word:
            return False
        self.pos = found.end()
        return True

    def match(self, pattern, expected: str) -> str:
        found = pattern.match(self.text, self.here())
        if found is None:
            self.fail(expected)
        self.pos = found.end()
        return found.group()

    def expect(self, token: str) -> None:
        if not self.accept(token):
            self.fail(f"'{token}'")

    def accept(self, token: str) -> bool:
        if not self.peek(token):
            return False
        self.pos += len(token)
        return True

    def peek(self, token: str) -> bool:
        return self.text.startswith(token, self.here())

    def here(self) -> int:
        """Skip spaces; the position of the next token."""
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1
        return self.pos

    def fail(self, expected: str, at: int | None = None):
        at = self.here() if at is None else at
        found = repr(self.text[at]) if at < len(self.text) else "the end"
        raise LayoutError(f"bad layout text at column {at + 1}: expected {expected}, found {found}\n"
                          f"  {self.text}\n  {' ' * at}^", column=at + 1)
