"""Contexts that know the tile dialect.

The dialect is defined once, in dialects/tile.irdl.mlir, and loaded with IRDL into every
Context tilemlir makes. The file is looked up next to the package (a source checkout or an
editable install); a wheel carries a copy under tilemlir/_data.
"""

from __future__ import annotations

import threading
from pathlib import Path

from mlir import ir
from mlir.dialects import irdl

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def _find_dialect_file() -> Path:
    for candidate in (_PACKAGE_DIR.parent / "dialects" / "tile.irdl.mlir",
                      _PACKAGE_DIR / "_data" / "tile.irdl.mlir"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("tile.irdl.mlir not found next to the tilemlir package")


DIALECT_FILE = _find_dialect_file()
_DIALECT_TEXT = DIALECT_FILE.read_text()


def load_tile_dialect(ctx: ir.Context) -> None:
    """Registers the tile dialect (ops, types, attributes) in `ctx`."""
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(_DIALECT_TEXT))


def make_context() -> ir.Context:
    """A new Context with the upstream dialects and the tile dialect loaded."""
    ctx = ir.Context()
    ctx.load_all_available_dialects()
    load_tile_dialect(ctx)
    return ctx


_shared = threading.local()


def shared_context() -> ir.Context:
    """One Context per thread for building kernels: making a Context (dialects, IRDL) costs
    ~10 ms, a large share of a cache hit. Modules built in it stay independent."""
    ctx = getattr(_shared, "context", None)
    if ctx is None:
        ctx = _shared.context = make_context()
    return ctx
