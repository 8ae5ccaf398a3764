"""The Python line of an op: the kernel language gives every op the file location of the source
line that made it, possibly inside name, call-site or fused locations."""

from __future__ import annotations

from mlir import ir


def python_line(op) -> str:
    """`file:line` of the op's first file location, or "" when it has none."""
    loc = op.location if not isinstance(op, ir.Location) else op
    while True:
        if loc.is_a_file():
            return f"{loc.filename}:{loc.start_line}"
        if loc.is_a_name():
            loc = loc.child_loc
        elif loc.is_a_callsite():
            loc = loc.callee
        elif loc.is_a_fused() and loc.locations:
            loc = loc.locations[0]
        else:
            return ""
