"""CUDA lowerings: one module per variant, grouped by primitive (`<primitive>/<variant>.py`;
one-to-one instructions in `sync.py`). Importing this package imports every module under it,
so a variant registers by existing: a new variant file needs no import line anywhere."""

import importlib
import pkgutil

for _module in sorted(m.name for m in pkgutil.walk_packages(__path__, prefix=f"{__name__}.")):
    importlib.import_module(_module)
