"""Reading MLIR source text safely: what the parser would crash or choke on is rejected first.

MLIR's parser recurses once per nesting level (regions, brackets, types), so very deep nesting
overflows the C++ stack and kills the process; a dense array of an element type without a bit
width (`array<index: 1>`), a stray '@' closing a tile type's parameters (`...">@>`) and a
string literal left open after a dialect type (`!llvm.ptr "`) fail assertions inside MLIR or its
Python bindings; binary data and MLIR bytecode give unreadable errors. All are caught here,
before the text reaches MLIR.

Every way text enters tilemlir parses it with `parse_source`: tilemlir-opt, tilemlir.compile,
Executable.from_text and tilemlir.interpret; the worst bad text gets is a SourceError.
This module loads MLIR only when `parse_source` is called (tilemlir-opt's launcher imports none).
"""

from __future__ import annotations

import functools
import re

# Deeper than any real IR, well below the depth (a few thousand) that overflows the parser.
MAX_NESTING = 256

BYTECODE_MAGIC = b"ML\xefR"

# Brackets outside string literals and comments; `->`, `>=` and `<=` are not angle brackets.
_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|>=|<=|[\[\](){}<>]')
_OPENING = {"(": ")", "[": "]", "{": "}", "<": ">"}


# `array<T: ...>` (a DenseArrayAttr) parses only these element types; others abort the parser.
DENSE_ARRAY_ELEMENTS = ("i1", "i8", "i16", "i32", "i64", "f32", "f64")
_DENSE_ARRAY = re.compile(r"(?<![\w.!])array<\s*([^\s:>,]*)")


# Lexer errors that trip an assertion of the Python bindings when they follow a dialect type:
# a string literal not closed on its line, and '@' not starting a symbol name (@name, @"name").
_LEXICAL = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|(?P<open>")|(?P<at>@(?![A-Za-z_"]))')


# References to the tile dialect's types and attributes (outside strings and comments): MLIR's
# parser says only "expected dynamic type" for a name the dialect lacks.
_TILE_NAMES = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|(?<![\w.$-])(?P<kind>[!#])tile\.'
                         r'(?P<name>[\w.$-]*)')


@functools.lru_cache(maxsize=1)
def _tile_vocabulary() -> dict[str, tuple[str, ...]]:
    """{"!": the dialect's type names, "#": its attribute names}, from its IRDL file."""
    from tilemlir.ir.context import DIALECT_FILE
    text = DIALECT_FILE.read_text()
    return {"!": tuple(re.findall(r"irdl\.type @(\w+)", text)),
            "#": tuple(re.findall(r"irdl\.attribute @(\w+)", text))}


class SourceError(ValueError):
    """Input that is not MLIR text tilemlir can parse; the message names the input."""


def decode(data: bytes, name: str) -> str:
    """The text of `data` (read from `name`), or SourceError for bytecode and binary data."""
    if data.startswith(BYTECODE_MAGIC):
        raise SourceError(f"{name}: MLIR bytecode is not accepted; give the textual form "
                          f"(mlir-opt --emit-bytecode=false, or print the module)")
    nul = data.find(b"\0")
    if nul >= 0:
        raise SourceError(f"{name}: binary data (a NUL byte at offset {nul}), not MLIR text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SourceError(f"{name}: not UTF-8 text (byte {data[err.start]:#04x} at offset "
                          f"{err.start})") from None
    return text


def parse_source(text: str, name: str = "<string>", first_line: int = 1, context=None):
    """`text` (whose first line is line `first_line` of `name`) parsed into an ir.Module in
    `context` (default: the current one), after check_source: MLIR's parse errors are raised
    as ir.MLIRError, and what would crash the parser as SourceError."""
    from mlir import ir
    if not isinstance(text, str):
        raise TypeError(f"MLIR source text must be a str, got {type(text).__name__}")
    check_source(text, name, first_line)
    return ir.Module.parse("\n" * (first_line - 1) + text, context=context)


def check_source(text: str, name: str, first_line: int = 1) -> None:
    """SourceError for text that would crash MLIR's parser instead of getting a diagnostic, or
    that it would read only in part (a NUL character ends its input)."""
    nul = text.find("\0")
    if nul >= 0:
        line = first_line + text.count("\n", 0, nul)
        raise SourceError(f"{name}:{line}: a NUL character (offset {nul}): binary data, not "
                          f"MLIR text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        line = first_line + text.count("\n", 0, err.start)
        raise SourceError(f"{name}:{line}: not UTF-8 text (the lone surrogate "
                          f"{text[err.start]!a} at offset {err.start})") from None
    check_nesting(text, name, first_line)
    for m in _TILE_NAMES.finditer(text):
        if m.group("kind") and m.group("name") not in _tile_vocabulary()[m.group("kind")]:
            line = first_line + text.count("\n", 0, m.start())
            what = "type" if m.group("kind") == "!" else "attribute"
            known = ", ".join(f"{m.group('kind')}tile.{n}"
                              for n in _tile_vocabulary()[m.group("kind")])
            raise SourceError(f"{name}:{line}: '{m.group('kind')}tile.{m.group('name')}' is not "
                              f"a{'n' if what == 'attribute' else ''} {what} of the tile "
                              f"dialect (its {what}s: {known})")
    for m in _DENSE_ARRAY.finditer(text):
        if m.group(1) not in DENSE_ARRAY_ELEMENTS:
            line = first_line + text.count("\n", 0, m.start())
            raise SourceError(f"{name}:{line}: array<{m.group(1)}: ...> is not a dense array; "
                              f"its elements are one of {', '.join(DENSE_ARRAY_ELEMENTS)}")
    for m in _LEXICAL.finditer(text):
        if m.lastgroup:
            line = first_line + text.count("\n", 0, m.start())
            if m.lastgroup == "open":
                raise SourceError(f"{name}:{line}: a string literal is not closed on its line")
            raise SourceError(f"{name}:{line}: '@' must start a symbol name (@name or @\"name\")")


def check_nesting(text: str, name: str, first_line: int = 1) -> None:
    """SourceError when brackets nest deeper than MAX_NESTING (the parser would overflow)."""
    depth = 0
    for m in _TOKENS.finditer(text):
        token = m.group()
        if token in _OPENING:
            depth += 1
            if depth > MAX_NESTING:
                line = first_line + text.count("\n", 0, m.start())
                raise SourceError(f"{name}:{line}: nesting deeper than {MAX_NESTING} levels "
                                  f"(brackets, regions, types); tilemlir refuses it because "
                                  f"MLIR's parser would overflow its stack")
        elif token in ")]}>":
            depth = max(depth - 1, 0)
