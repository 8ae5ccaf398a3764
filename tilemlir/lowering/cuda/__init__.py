"""CUDA lowerings: one module per variant, grouped by primitive (`<primitive>/<variant>.py`;
one-to-one instructions in `sync.py`). `load_variants()` imports every module under this
package, so a variant registers by existing: a new variant file needs no import line anywhere.
The registry (tilemlir/dispatch/registry.py) sits below and never imports this package: the
pipeline's tile-dispatch calls load_variants() before dispatching."""

import importlib
import pkgutil

from tilemlir.dispatch.registry import REGISTRY


def load_variants() -> None:
    """Registers every CUDA variant (once; later calls return at once)."""
    if "cuda" in REGISTRY.loaded:
        return
    for module in sorted(m.name for m in pkgutil.walk_packages(__path__, prefix=f"{__name__}.")):
        importlib.import_module(module)
    REGISTRY.loaded.add("cuda")
