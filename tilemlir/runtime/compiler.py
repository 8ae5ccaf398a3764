"""`tilemlir.compile`: a kernel (language function, tile-IR text or module) -> a callable Kernel.

Two caches answer a repeat compile:

- In memory: compiling the same kernel function object (its body capturing the same objects: a
  factory's compile-time arguments), or the same tile-IR text, for the same target and options
  returns the Kernel compiled before, without tracing, hashing or touching the disk.
- On disk, under TILEMLIR_CACHE_DIR (default: the platform's user cache directory, e.g.
  ~/.cache/tilemlir): entries keyed by the tile IR, the target, the options and the tool
  versions (tilemlir's own sources included, so editing a lowering invalidates the cache). An
  entry holds the PTX, the kernel signatures, the input tile IR and a manifest of their sha256
  sums. Entries appear by an atomic rename under a per-key file lock, so
  concurrent processes compile once and never see half an entry; a damaged entry is rebuilt
  with a CacheWarning, and an unusable cache directory gives a CacheWarning and no caching.

A compile that misses both caches traces the kernel here and lowers it in a compiler process
(tilemlir.runtime.compile_worker), so that a fatal error inside MLIR or LLVM cannot end the
caller's process.

Dumps: TILEMLIR_DUMP=ir,ptx (or "all") writes, under TILEMLIR_DUMP_DIR (default
./tilemlir-dump)/<kernel>-<key>/, the input tile IR with Python source locations, the IR after
every pass (passes/) and the PTX — on a disk-cache hit too (the entry keeps them), and with
cache=False. A compile that dumps skips the in-memory cache, so every such compile writes its
dump.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import operator
import os
import shutil
import tempfile
import threading
import time
import types
import typing
import uuid
import warnings
import weakref
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

import platformdirs
from filelock import FileLock
from mlir import ir

from tilemlir.dsl.kernel import KernelFunction
from tilemlir.ir.context import DIALECT_FILE, make_context
from tilemlir.ir.source import parse_source
from tilemlir.pipeline import PipelineOptions
from tilemlir.runtime.compile_worker import lower
from tilemlir.runtime.executable import Executable, Kernel
from tilemlir.runtime.signature import KernelSignature
from tilemlir.target import DEFAULT_CHIP, Target
from tilemlir.version import package_versions

CACHE_FORMAT = 2
MANIFEST = "manifest.json"
# Waiting longer than this for another process's compile of the same kernel means that process
# is stuck: compile without the cache rather than hang.
LOCK_TIMEOUT_S = 600
# Line info costs nothing at run time (the SASS is the same, the line table is a cubin section
# the GPU never reads) and makes ncu's source view work without a rebuild.
LINE_INFO_DEFAULT = True
PACKAGE_DIR = Path(__file__).resolve().parent.parent     # tilemlir/
TEXT_MEMORY_SIZE = 64       # tile-IR texts whose kernels stay in memory (least recent dropped)


class CacheWarning(UserWarning):
    """The compile cache could not be used as it is; the kernel was compiled anyway."""


class DumpWarning(UserWarning):
    """A dump (TILEMLIR_DUMP) could not be written; the kernel was compiled anyway."""


def cache_root() -> Path:
    return Path(os.environ.get("TILEMLIR_CACHE_DIR")
                or platformdirs.user_cache_path("tilemlir", appauthor=False))


def dump_request() -> set[str]:
    spec = os.environ.get("TILEMLIR_DUMP")
    if not spec:                # the common case, on every compile: nothing to parse
        return set()
    wanted = {w.strip() for w in spec.split(",") if w.strip()}
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
    for path in sorted(PACKAGE_DIR.rglob("*.py")) + [DIALECT_FILE]:
        digest.update(str(path.relative_to(PACKAGE_DIR.parent)).encode())
        digest.update(path.read_bytes())
    versions = [f"{name}={version}" for name, version in package_versions().items()]
    return ";".join(versions + [f"tilemlir-src={digest.hexdigest()[:16]}", f"fmt={CACHE_FORMAT}"])


def resolve_target(target) -> Target:
    if isinstance(target, Target):
        return target
    if target is None:
        from tilemlir.runtime.cuda import device_chip, driver_available
        target = device_chip() if driver_available() else DEFAULT_CHIP
    return Target(target)


# ---------------------------------------------------------------- signatures <-> JSON

def _signatures_from_json(items) -> dict[str, KernelSignature]:
    if not isinstance(items, list):
        raise TypeError(f"expected a list of signatures, got {type(items).__name__}")
    signatures = [_decode(KernelSignature, item) for item in items]
    return {s.name: s for s in signatures}


@lru_cache(maxsize=None)
def _field_types(cls) -> dict[str, object]:
    return typing.get_type_hints(cls)


def _decode(hint, value):
    """`value` (as json.loads gives it) rebuilt as `hint`: dataclasses from objects, tuples from
    lists, scalars checked. Raises TypeError (or ValueError) when it does not fit, so that any
    field a dataclass gains round-trips without changes here."""
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise TypeError(f"{hint.__name__}: expected an object, got {type(value).__name__}")
        types_ = _field_types(hint)
        # An unknown or missing field makes the constructor raise TypeError.
        return hint(**{name: _decode(types_.get(name), v) for name, v in value.items()})
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple:
        if not isinstance(value, list):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v) for v in value)
        if len(args) != len(value):
            raise ValueError(f"expected {len(args)} items, got {len(value)}")
        return tuple(_decode(a, v) for a, v in zip(args, value))
    if origin in (typing.Union, types.UnionType):
        for option in args:
            try:
                return _decode(option, value)
            except (TypeError, ValueError):
                continue
        raise TypeError(f"{value!r} fits none of {hint}")
    if hint is type(None) or hint in (int, str, bool, float):
        # JSON has one number type: a float field may hold an int; bool is not an int here.
        if type(value) is hint or (hint is float and type(value) is int):
            return value
        raise TypeError(f"expected {getattr(hint, '__name__', hint)}, got {value!r}")
    return value     # a kind of field this decoder does not check (e.g. dict[str, int])


# ---------------------------------------------------------------- cache entries

class _BadEntry(Exception):
    """A cache entry that cannot be used (damaged, incomplete, or not what this version wrote)."""


def _has_passes(files: dict[str, bytes]) -> bool:
    return any(name.startswith("passes/") for name in files)


def _write_entry(root: Path, key: str, files: dict[str, bytes]) -> None:
    """Publishes `files` as entry `key` by one rename, so a reader sees all of it or none (no
    fsync: a file that a crash leaves short fails its checksum and is rebuilt). Call it holding
    the key's lock: an entry already there (damaged, or without the passes a dump asks for) is
    moved aside first."""
    stage = Path(tempfile.mkdtemp(prefix=".partial-", dir=root))
    aside = None
    try:
        for name, data in files.items():
            path = stage / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        sums = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
        (stage / MANIFEST).write_text(json.dumps({"files": sums}))
        entry = root / key
        if entry.exists():
            aside = Path(tempfile.mkdtemp(prefix=".old-", dir=root))
            os.replace(entry, aside / key)
        os.replace(stage, entry)
    finally:
        for leftover in (stage, aside):
            if leftover is not None:
                shutil.rmtree(leftover, ignore_errors=True)


def _read_entry(entry: Path) -> dict[str, bytes] | None:
    """The files of an entry, each checked against the manifest; None when there is no entry."""
    try:
        manifest = json.loads((entry / MANIFEST).read_bytes())
    except FileNotFoundError:
        if entry.exists():
            raise _BadEntry(f"{MANIFEST} is missing") from None
        return None
    except (OSError, ValueError) as e:
        raise _BadEntry(f"{MANIFEST} is unreadable: {e}") from None
    sums = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(sums, dict) or not all(
            isinstance(name, str) and isinstance(digest, str) and ".." not in Path(name).parts
            and not Path(name).is_absolute() for name, digest in sums.items()):
        raise _BadEntry(f"{MANIFEST} is not a manifest")
    files = {}
    for name, digest in sums.items():
        try:
            data = (entry / name).read_bytes()
        except OSError as e:
            raise _BadEntry(f"{name}: {e.strerror}") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise _BadEntry(f"{name} does not match its checksum")
        files[name] = data
    return files


def _executable(files: dict[str, bytes], target: Target) -> Executable:
    try:
        signatures = _signatures_from_json(json.loads(files["signatures.json"]))
        ptx = {s.module: files[f"{s.module}.ptx"].decode() for s in signatures.values()}
    except KeyError as e:
        raise _BadEntry(f"{e.args[0]} is missing") from None
    except (ValueError, TypeError) as e:
        raise _BadEntry(f"signatures.json does not hold signatures: {e}") from None
    return Executable(target, signatures, ptx)


def _through_disk_cache(key: str, target: Target, need_passes: bool, build):
    """(executable, entry files, hit) for `key`, from the cache or from build()."""
    root = cache_root()
    entry = root / key
    # Without the lock first: a published entry never changes, and this is every hit's path.
    try:
        files = _read_entry(entry)
        if files is not None and (_has_passes(files) or not need_passes):
            return _executable(files, target), files, True
    except _BadEntry:
        pass        # judged again under the lock, where a writer cannot be half-way
    try:
        root.mkdir(parents=True, exist_ok=True)
        (root / ".locks").mkdir(exist_ok=True)
        lock = FileLock(root / ".locks" / f"{key}.lock", timeout=LOCK_TIMEOUT_S)
        lock.acquire()
    except OSError as e:        # filelock's Timeout is one too
        _warn_uncached(root, e)
        lock = None
    if lock is None:            # outside the except: a kernel's error is not shown as its sequel
        return *build(), False
    try:
        try:
            files = _read_entry(entry)      # another process may have compiled it meanwhile
            if files is not None and (_has_passes(files) or not need_passes):
                return _executable(files, target), files, True
        except _BadEntry as bad:
            warnings.warn(f"tilemlir: the cache entry {entry} is damaged ({bad}); rebuilding it",
                          CacheWarning, stacklevel=3)
        exe, files = build()
        try:
            _write_entry(root, key, files)
        except OSError as e:
            _warn_uncached(root, e)
        return exe, files, False
    finally:
        lock.release()


def _warn_uncached(root: Path, error: OSError) -> None:
    warnings.warn(f"tilemlir: cannot use the cache directory {root} ({error}); compiling "
                  f"without caching (set TILEMLIR_CACHE_DIR to a writable directory)",
                  CacheWarning, stacklevel=4)


# ---------------------------------------------------------------- dumps

def _write_dump(name: str | None, key: str, files: dict[str, bytes],
                wanted: set[str]) -> Path | None:
    out = Path(os.environ.get("TILEMLIR_DUMP_DIR") or "tilemlir-dump") / \
        f"{name or 'module'}-{key[:12]}"
    chosen = {n: data for n, data in files.items()
              if ("ir" in wanted and (n == "input.mlir" or n.startswith("passes/")))
              or ("ptx" in wanted and n.endswith(".ptx"))}
    try:
        for rel, data in chosen.items():
            replace_file(out / rel, data)
    except OSError as e:
        warnings.warn(f"tilemlir: cannot write the dump to {out} ({e})", DumpWarning,
                      stacklevel=3)
        return None
    return out


def replace_file(path: Path, data: bytes) -> None:
    """Writes `path` by a rename, so processes dumping the same kernel never see a torn file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


# ---------------------------------------------------------------- in-memory cache

_by_function: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# ^ kernel function -> {(target, opt_level, line_info): (captured objects, Kernel)}
_by_text: OrderedDict = OrderedDict()       # (tile-IR text, target, options) -> Kernel
_memory_lock = threading.Lock()


_UNBOUND = object()      # a captured name its factory had not (or never) assigned


def _captured(fn) -> tuple:
    """The objects a kernel function's body captured: a factory's compile-time arguments.
    A name the factory assigns only on some paths (or after the kernel) leaves an empty cell,
    which reading would raise on: it counts as _UNBOUND."""
    def contents(cell):
        try:
            return cell.cell_contents
        except ValueError:
            return _UNBOUND
    return tuple(contents(cell) for cell in fn.__closure__ or ())


def _memory_key(kernel, options: tuple):
    """(kernel function or None, options or text + options, captured objects), or None for
    what cannot be compiled."""
    if isinstance(kernel, KernelFunction):
        return kernel, options, _captured(kernel.fn)
    if isinstance(kernel, str):
        return None, (kernel, *options), ()
    if isinstance(kernel, ir.Module):
        return None, (kernel.operation.get_asm(), *options), ()
    return None


def _remembered(memory_key) -> Kernel | None:
    function, key, captured = memory_key
    if function is not None:
        known = _by_function.get(function, {}).get(key)
        # Captured objects compare by identity: a name rebound to another object misses (and
        # the disk cache answers if the value is equal), but no layout is compared by value.
        if known is not None and len(known[0]) == len(captured) and \
                all(map(operator.is_, known[0], captured)):
            return known[1]
        return None
    with _memory_lock:
        found = _by_text.get(key)
        if found is not None:
            _by_text.move_to_end(key)
    return found


def _remember(memory_key, compiled: Kernel) -> None:
    function, key, captured = memory_key
    with _memory_lock:
        if function is not None:
            _by_function.setdefault(function, {})[key] = (captured, compiled)
        else:
            _by_text[key] = compiled
            if len(_by_text) > TEXT_MEMORY_SIZE:
                _by_text.popitem(last=False)


def clear_memory_cache() -> None:
    """Forgets the kernels compiled in this process (the disk cache stays): the next compile
    traces again, e.g. after changing a global that a kernel body reads."""
    with _memory_lock:
        _by_function.clear()
        _by_text.clear()


# ---------------------------------------------------------------- compile

@dataclasses.dataclass
class CompileInfo:
    key: str
    cache_hit: bool             # the disk or the in-memory cache answered
    seconds: float
    dump_dir: Path | None
    memory_hit: bool = False    # the in-memory cache answered


def compile(kernel, target=None, opt_level: int = 3, cache: bool = True,
            line_info: bool = LINE_INFO_DEFAULT) -> Kernel:
    """Compiles `kernel` (a @T.prim_func function, tile-IR text, or an ir.Module) for `target`
    (a chip name such as "sm_90a"; default: the GPU's, else sm_90a) and returns the Kernel.
    `kernel.compile_info` says which cache answered, if any, and how long it took. A repeat
    compile in the same process returns the same Kernel, its compile_info updated.
    `cache=False` skips both caches. `line_info`: the PTX maps each instruction to its
    kernel's Python line (`.file` / `.loc`), for ncu's source view; the SASS is the same."""
    start = time.perf_counter()
    if not isinstance(line_info, bool):
        raise TypeError(f"line_info must be True or False, got {line_info!r}")
    wanted = dump_request()
    memory_key = _memory_key(kernel, (target, opt_level, line_info)) \
        if cache and not wanted else None
    if memory_key is not None:
        found = _remembered(memory_key)
        if found is not None:
            found.compile_info = CompileInfo(found.compile_info.key, True,
                                             time.perf_counter() - start, None, memory_hit=True)
            return found
    options = PipelineOptions(resolve_target(target), opt_level, line_info)
    module, name = _tile_module(kernel)
    key = hashlib.sha256(b"\n".join([_key_ir(module, line_info), *(
        part.encode() for part in (options.target.chip, str(options.target.ptx),
                                   f"O{options.opt_level}", f"line_info={line_info}",
                                   tool_versions()))])).hexdigest()

    def build() -> tuple[Executable, dict[str, bytes]]:
        # Lowered in the compiler process (compile_worker), as files of a cache entry.
        files = lower(module.operation.get_asm(enable_debug_info=True), options, "ir" in wanted)
        return _executable(files, options.target), files

    if cache:
        exe, files, hit = _through_disk_cache(key, options.target, "ir" in wanted, build)
    else:
        (exe, files), hit = build(), False
    dump_dir = _write_dump(name, key, files, wanted) if wanted else None
    compiled = exe.kernel(name if name in exe.signatures else None)
    compiled.compile_info = CompileInfo(key, hit, time.perf_counter() - start, dump_dir)
    if memory_key is not None:
        _remember(memory_key, compiled)
    return compiled


def _key_ir(module: ir.Module, line_info: bool) -> bytes:
    """The module as the cache key sees it. With line info the PTX names the source lines, so
    the locations belong to the key: the module's bytecode, which holds them and is written in
    a tenth of the time the text with locations takes to print (6.5 against 0.6 ms for
    hgemm_v8, a disk hit's largest cost after tracing). Without line info, the text without
    locations: a kernel moved to other lines keeps its key."""
    if not line_info:
        return module.operation.get_asm(enable_debug_info=False).encode()
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def _tile_module(kernel) -> tuple[ir.Module, str | None]:
    if isinstance(kernel, KernelFunction):
        return kernel.build(), kernel.name
    if isinstance(kernel, ir.Module):
        # A copy: lowering works in place, and the caller's module stays theirs.
        copy = parse_source(kernel.operation.get_asm(enable_debug_info=True), "the module",
                            context=kernel.context)
        return copy, None
    if isinstance(kernel, str):
        ctx = make_context()
        with ctx:
            return parse_source(kernel), None
    raise TypeError(f"cannot compile a {type(kernel).__name__}: pass a @T.prim_func function, "
                    f"tile IR text or an ir.Module")


compile_kernel = compile
