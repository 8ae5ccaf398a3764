"""Diagnostics as a user reads them (`file:line:col: error: ...`) and --verify-diagnostics.

The verifier follows mlir-opt's conventions: a comment `// expected-error {{text}}` expects a
diagnostic of that severity whose message contains `text` on the comment's line; `@+N`, `@-N`,
`@above` and `@below` move the expected line. Every expected diagnostic must be produced and
every produced one must be expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tilemlir.env import flag as env_flag

if TYPE_CHECKING:  # tilemlir-opt's launcher imports this module without loading MLIR
    from mlir import ir

REPORT_HINT = "a bug in tilemlir: please report it with the input and the command line"


def debug_enabled() -> bool:
    """TILEMLIR_DEBUG=1: show raw tracebacks of internal errors (the only way to get one)."""
    return env_flag("TILEMLIR_DEBUG")


def internal_error(tool: str, err: BaseException) -> str:
    """The one-line report of an unexpected exception: says it is ours and how to report it."""
    detail = str(err).splitlines()[0] if str(err) else ""
    return (f"{tool}: internal error: {type(err).__name__}: {detail} ({REPORT_HINT}; "
            f"TILEMLIR_DEBUG=1 shows the Python traceback)")


SEVERITIES = {"DiagnosticSeverity.ERROR": "error", "DiagnosticSeverity.WARNING": "warning",
              "DiagnosticSeverity.NOTE": "note", "DiagnosticSeverity.REMARK": "remark"}


@dataclass
class Diagnostic:
    severity: str
    line: int | None
    col: int | None
    message: str

    def render(self, filename: str) -> str:
        where = f"{filename}:{self.line}:{self.col}: " if self.line is not None else f"{filename}: "
        return f"{where}{self.severity}: {self.message}"


def _file_location(loc: ir.Location):
    """(line, col) of the first file location inside `loc`, or (None, None)."""
    if loc.is_a_file():
        return loc.start_line, loc.start_col
    if loc.is_a_name():
        return _file_location(loc.child_loc)
    if loc.is_a_callsite():
        return _file_location(loc.callee)
    if loc.is_a_fused():
        for inner in loc.locations:
            line, col = _file_location(inner)
            if line is not None:
                return line, col
    return None, None


def from_mlir(diag) -> list[Diagnostic]:
    """A Diagnostic (or DiagnosticInfo) and its notes as flat Diagnostics."""
    line, col = _file_location(diag.location)
    out = [Diagnostic(SEVERITIES.get(str(diag.severity), "error"), line, col, str(diag.message))]
    for note in diag.notes:
        out.extend(from_mlir(note))
    return out


_EXPECT = re.compile(r"//\s*expected-(error|warning|note|remark)(@[+-]\d+|@above|@below)?\s*"
                     r"\{\{(.*?)\}\}")


@dataclass
class Expectation:
    severity: str
    line: int
    text: str
    source_line: int
    matched: bool = False


def expectations(text: str, first_line: int) -> list[Expectation]:
    """The expected-* comments of a chunk whose first line is `first_line` in the file."""
    found = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        for m in _EXPECT.finditer(line):
            lineno = first_line + i
            target = lineno
            where = m.group(2)
            if where == "@above":
                target = lineno - 1
            elif where == "@below":
                target = lineno + 1
            elif where:
                target = lineno + int(where[1:])
            found.append(Expectation(m.group(1), target, m.group(3), lineno))
    return found


def verify(expected: list[Expectation], produced: list[Diagnostic], filename: str) -> list[str]:
    """Mismatches between expected and produced diagnostics, as messages (empty: all good)."""
    problems = []
    # mlir-opt does not attach the op to diagnostics under --verify-diagnostics; ignore it too.
    produced = [d for d in produced
                if not (d.severity == "note" and d.message.startswith("see current operation"))]
    for d in produced:
        hit = next((e for e in expected if not e.matched and e.severity == d.severity
                    and e.line == d.line and e.text in d.message), None)
        if hit is None:
            problems.append(f"{filename}:{d.line}:{d.col}: error: unexpected {d.severity}: "
                            f"{d.message}")
        else:
            hit.matched = True
    for e in expected:
        if not e.matched:
            problems.append(f"{filename}:{e.source_line}: error: expected {e.severity} "
                            f"\"{e.text}\" was not produced")
    return problems
