"""Contexts that know the tile dialect.

The dialect is defined once, in dialects/tile.irdl.mlir at the top of the repository, and
loaded with IRDL into every Context tilemlir makes. The package ships it as
tilemlir/dialects/tile.irdl.mlir (setup.py maps the folder), so it is found next to the package
when installed from a wheel, and next to tilemlir/ in a checkout or an editable install.
"""

from __future__ import annotations

import sys
import threading
import types
from pathlib import Path

from mlir import ir
from mlir.dialects import irdl

def _dialect_file() -> Path:
    package = Path(__file__).resolve().parent.parent
    for folder in (package / "dialects", package.parent / "dialects"):   # installed, checkout
        if (folder / "tile.irdl.mlir").is_file():
            return folder / "tile.irdl.mlir"
    raise FileNotFoundError(f"the tile dialect's tile.irdl.mlir is in neither "
                            f"{package / 'dialects'} nor {package.parent / 'dialects'}")


DIALECT_FILE = _dialect_file()
_DIALECT_TEXT = DIALECT_FILE.read_text()


def load_tile_dialect(ctx: ir.Context) -> None:
    """Registers the tile dialect (ops, types, attributes) in `ctx`."""
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(_DIALECT_TEXT))
    # Each time the bindings wrap an op they import its dialect's Python module
    # (mlir.dialects.<name>), and a failed import is retried on every op: an empty module for
    # the tile dialect turns ~65 failed imports per dispatched op into dict lookups (3-4x
    # faster tile-dispatch on large modules).
    sys.modules.setdefault("mlir.dialects.tile", types.ModuleType("mlir.dialects.tile"))


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
