"""The compile caches: concurrent processes, damaged entries, unusable directories, dumps, the
in-memory cache, and the JSON form of signatures. CPU only: a tiny tile-IR kernel
(examples/mma_demo.mlir, one module "demo") is compiled for sm_90a."""

import dataclasses
import errno
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock
from mlir import ir

import tilemlir
from tilemlir.dsl.kernel import KernelFunction
from tilemlir.ir.context import make_context
from tilemlir.kernels.mma_demo import gemm_16x8x16
from tilemlir.runtime import compiler
from tilemlir.runtime.compiler import CacheWarning, DumpWarning, clear_memory_cache

TARGET = "sm_90a"


def _entries(root: Path) -> list[Path]:
    return [p for p in root.iterdir() if not p.name.startswith(".")]


def _debris(root: Path) -> list[Path]:
    return [p for p in root.iterdir() if p.name.startswith((".partial-", ".old-"))]


def _only_entry(root: Path) -> Path:
    (entry,) = _entries(root)
    return entry


# ---------------------------------------------------------------- concurrent processes

_WORKER = r"""
import sys, time, warnings
from pathlib import Path
from tilemlir.runtime import compiler
warnings.simplefilter("error", compiler.CacheWarning)
ready, go, source = map(Path, sys.argv[1:4])
text = source.read_text()
ready.touch()
while not go.exists():
    time.sleep(0.005)
kernel = compiler.compile(text, target="sm_90a")
print("hit" if kernel.compile_info.cache_hit else "compiled")
"""


def test_sixteen_processes_compile_one_kernel_into_an_empty_cache(tmp_path):
    """Half of them dump (TILEMLIR_DUMP=all), so an entry without passes may be replaced while
    the others read it. They start compiling at the same moment, once all have imported."""
    root, dumps, sync = tmp_path / "cache", tmp_path / "dump", tmp_path / "sync"
    sync.mkdir()
    env = {**os.environ, "TILEMLIR_CACHE_DIR": str(root), "TILEMLIR_DUMP_DIR": str(dumps),
           "PYTHONPATH": str(Path(tilemlir.__file__).resolve().parents[1])}
    source = Path(__file__).resolve().parents[2] / "examples" / "mma_demo.mlir"
    workers = [subprocess.Popen([sys.executable, "-c", _WORKER, str(sync / f"ready-{i}"),
                                 str(sync / "go"), str(source)],
                                env={**env, "TILEMLIR_DUMP": "all" if i % 2 else ""},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for i in range(16)]
    deadline = time.monotonic() + 120
    while len(list(sync.glob("ready-*"))) < 16 and time.monotonic() < deadline \
            and all(w.poll() is None for w in workers):
        time.sleep(0.01)
    (sync / "go").touch()
    said = []
    for w in workers:
        out, err = w.communicate(timeout=120)
        assert w.returncode == 0, err                       # CacheWarnings are errors there
        said.append(out.strip())
    # The lock lets one process compile; a second compile happens only when a process that
    # dumps finds the entry written without passes by one that does not.
    assert said.count("compiled") in (1, 2) and said.count("hit") == 16 - said.count("compiled")
    assert (_only_entry(root) / "passes").is_dir() and _debris(root) == []
    (dump,) = dumps.iterdir()
    assert "mma.sync" in (dump / "demo.ptx").read_text() and (dump / "input.mlir").is_file()
    assert list((dump / "passes").iterdir())
    assert list(dump.rglob(".*")) == []                     # no half-written dump files


# ---------------------------------------------------------------- damaged entries

def _rewrite_checksum(entry: Path, name: str) -> None:
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest["files"][name] = hashlib.sha256((entry / name).read_bytes()).hexdigest()
    (entry / "manifest.json").write_text(json.dumps(manifest))


def _truncate_ptx(entry):
    ptx = entry / "demo.ptx"
    ptx.write_bytes(ptx.read_bytes()[:100])


def _garbage_ptx(entry):
    (entry / "demo.ptx").write_bytes(os.urandom(256))


def _bad_json(entry):
    (entry / "signatures.json").write_text('[{"module": "demo", ')


def _wrong_type_in_signatures(entry):
    """Well-formed JSON with a matching checksum, but a block size that is a string."""
    sigs = json.loads((entry / "signatures.json").read_text())
    sigs[0]["block"] = "32,1,1"
    (entry / "signatures.json").write_text(json.dumps(sigs))
    _rewrite_checksum(entry, "signatures.json")


def _wrong_type_in_manifest(entry):
    (entry / "manifest.json").write_text(json.dumps({"files": ["demo.ptx"]}))


def _missing_file(entry):
    (entry / "demo.ptx").unlink()


def _missing_manifest(entry):
    (entry / "manifest.json").unlink()


@pytest.mark.parametrize("damage", [_truncate_ptx, _garbage_ptx, _bad_json,
                                    _wrong_type_in_signatures, _wrong_type_in_manifest,
                                    _missing_file, _missing_manifest])
def test_a_damaged_entry_is_rebuilt_with_a_warning(isolated_cache, demo_text, damage):
    root = isolated_cache / "cache"
    good = tilemlir.compile(demo_text, target=TARGET)
    damage(_only_entry(root))
    clear_memory_cache()
    with pytest.warns(CacheWarning, match="is damaged"):
        rebuilt = tilemlir.compile(demo_text, target=TARGET)
    assert not rebuilt.compile_info.cache_hit and rebuilt.ptx == good.ptx
    assert rebuilt.signature == good.signature
    clear_memory_cache()
    again = tilemlir.compile(demo_text, target=TARGET)      # repaired: a hit, no warning
    assert again.compile_info.cache_hit and again.ptx == good.ptx
    assert len(_entries(root)) == 1 and _debris(root) == []


# ---------------------------------------------------------------- unusable directories

def _refuse_writes_below(monkeypatch, directory: Path) -> None:
    """Creating files or folders below `directory` fails with EACCES, as in a read-only
    directory: the mode bits alone do not stop root, whom the tests may run as."""
    directory.chmod(0o555)
    real_open, real_mkdir = os.open, os.mkdir

    def inside(path) -> bool:
        return Path(os.fspath(path)).resolve().is_relative_to(directory.resolve())

    def refuse(path):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))

    def open_(path, flags, *args, **kwargs):
        if flags & (os.O_CREAT | os.O_WRONLY | os.O_RDWR) and inside(path):
            refuse(path)
        return real_open(path, flags, *args, **kwargs)

    def mkdir(path, *args, **kwargs):
        if inside(path):
            refuse(path)
        return real_mkdir(path, *args, **kwargs)
    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "mkdir", mkdir)


def _unusable_directory(kind: str, tmp_path: Path, monkeypatch) -> Path:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    if kind == "a regular file":
        return blocker
    if kind == "below a regular file":
        return blocker / "cache"
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    _refuse_writes_below(monkeypatch, read_only)
    return read_only


UNUSABLE = ["a regular file", "below a regular file", "read-only"]


@pytest.mark.parametrize("kind", UNUSABLE)
def test_an_unusable_cache_directory_warns_and_compiles_without_caching(
        isolated_cache, monkeypatch, demo_text, kind):
    root = _unusable_directory(kind, isolated_cache, monkeypatch)
    monkeypatch.setenv("TILEMLIR_CACHE_DIR", str(root))
    with pytest.warns(CacheWarning, match="cannot use the cache directory"):
        kernel = tilemlir.compile(demo_text, target=TARGET)
    assert "mma.sync" in kernel.ptx and not kernel.compile_info.cache_hit
    assert not root.is_dir() or list(root.iterdir()) == []


@pytest.mark.parametrize("kind", UNUSABLE)
@pytest.mark.parametrize("cache", [True, False])
def test_an_unwritable_dump_directory_warns_and_compiles(
        isolated_cache, monkeypatch, demo_text, kind, cache):
    monkeypatch.setenv("TILEMLIR_DUMP", "all")
    monkeypatch.setenv("TILEMLIR_DUMP_DIR",
                       str(_unusable_directory(kind, isolated_cache, monkeypatch)))
    with pytest.warns(DumpWarning, match="cannot write the dump"):
        kernel = tilemlir.compile(demo_text, target=TARGET, cache=cache)
    assert "mma.sync" in kernel.ptx and kernel.compile_info.dump_dir is None


def test_a_compile_that_waits_too_long_for_the_lock_goes_on_without_the_cache(
        isolated_cache, monkeypatch, demo_text):
    root = isolated_cache / "cache"
    key = tilemlir.compile(demo_text, target=TARGET, cache=False).compile_info.key
    (root / ".locks").mkdir(parents=True)
    monkeypatch.setattr(compiler, "LOCK_TIMEOUT_S", 0.1)
    with FileLock(root / ".locks" / f"{key}.lock"):          # a compile that never finishes
        with pytest.warns(CacheWarning, match="cannot use the cache directory"):
            kernel = tilemlir.compile(demo_text, target=TARGET)
    assert "mma.sync" in kernel.ptx and _entries(root) == []


def test_dumps_are_written_without_the_cache(isolated_cache, monkeypatch, demo_text):
    monkeypatch.setenv("TILEMLIR_DUMP", "all")
    out = tilemlir.compile(demo_text, target=TARGET, cache=False).compile_info.dump_dir
    assert "tile.gemm" in (out / "input.mlir").read_text()
    assert "mma.sync" in (out / "demo.ptx").read_text()
    assert any("tile-dispatch" in p.name for p in (out / "passes").rglob("*.mlir"))
    assert not (isolated_cache / "cache").exists()


def test_the_default_cache_directory_is_the_platforms_user_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("TILEMLIR_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if sys.platform.startswith("linux"):
        assert compiler.cache_root() == tmp_path / "tilemlir"
    monkeypatch.setenv("TILEMLIR_CACHE_DIR", str(tmp_path / "mine"))
    assert compiler.cache_root() == tmp_path / "mine"


# ---------------------------------------------------------------- in-memory cache

def _forbid(*_args, **_kwargs):
    raise AssertionError("a repeat compile got past the in-memory cache")


def test_a_repeat_compile_neither_traces_nor_hashes_nor_touches_the_disk(
        isolated_cache, monkeypatch):
    traced = []
    build = KernelFunction.build
    monkeypatch.setattr(KernelFunction, "build", lambda self: traced.append(self) or build(self))
    first = tilemlir.compile(gemm_16x8x16, target=TARGET)
    for step in ("_tile_module", "tool_versions", "_read_entry", "_write_entry"):
        monkeypatch.setattr(compiler, step, _forbid)
    second = tilemlir.compile(gemm_16x8x16, target=TARGET)
    assert second is first and traced == [gemm_16x8x16]
    assert second.compile_info.memory_hit and second.compile_info.cache_hit


def test_the_in_memory_cache_keys_on_options_and_captured_objects(
        isolated_cache, monkeypatch, demo_text):
    builds = []

    def build(self):
        builds.append(self)
        with make_context():
            return ir.Module.parse(demo_text)
    monkeypatch.setattr(KernelFunction, "build", build)

    def factory():
        scale = 1

        def kernel():
            return scale

        def rescale(value):
            nonlocal scale
            scale = value
        return KernelFunction(kernel), rescale
    kernel, rescale = factory()
    first = tilemlir.compile(kernel, target=TARGET)
    assert tilemlir.compile(kernel, target=TARGET) is first and len(builds) == 1
    assert tilemlir.compile(kernel, target="sm_80") is not first and len(builds) == 2
    assert tilemlir.compile(kernel, target=TARGET, opt_level=2) is not first
    rescale(2)                                               # a captured name rebound
    rescaled = tilemlir.compile(kernel, target=TARGET)
    assert rescaled is not first and len(builds) == 4
    assert tilemlir.compile(kernel, target=TARGET) is rescaled and len(builds) == 4
    other, _ = factory()                                     # another function object
    tilemlir.compile(other, target=TARGET)
    assert len(builds) == 5
    assert tilemlir.compile(kernel, target=TARGET, cache=False) is not first


def test_texts_and_modules_are_remembered_by_their_text(isolated_cache, monkeypatch, demo_text):
    first = tilemlir.compile(demo_text, target=TARGET)
    assert tilemlir.compile(demo_text, target=TARGET) is first
    with make_context():
        module = ir.Module.parse(demo_text)
    before = str(module)
    from_module = tilemlir.compile(module, target=TARGET)
    assert tilemlir.compile(module, target=TARGET) is from_module
    assert str(module) == before                            # the caller's module is not lowered
    monkeypatch.setattr(compiler, "TEXT_MEMORY_SIZE", 1)
    tilemlir.compile(demo_text + "\n// another text\n", target=TARGET)
    again = tilemlir.compile(demo_text, target=TARGET)      # dropped from memory, on disk
    assert again.compile_info.cache_hit and not again.compile_info.memory_hit


# ---------------------------------------------------------------- signatures as JSON

@dataclasses.dataclass(frozen=True)
class Inner:
    box: tuple[int, ...]
    name: str


@dataclasses.dataclass(frozen=True)
class Outer:
    inners: tuple[Inner, ...]
    shape: tuple[int, int]
    scale: float
    flag: bool
    cluster: tuple[int, int, int] | None = None
    extra: dict[str, int] = dataclasses.field(default_factory=dict)


def _round_trip(value):
    return compiler._decode(type(value), json.loads(json.dumps(dataclasses.asdict(value))))


def test_any_dataclass_fields_round_trip_through_json():
    value = Outer((Inner((1, 2), "a"), Inner((), "b")), (3, 4), 2, True, (2, 1, 1), {"k": 1})
    assert _round_trip(value) == value
    assert _round_trip(dataclasses.replace(value, cluster=None)) == \
        dataclasses.replace(value, cluster=None)


@pytest.mark.parametrize("change", [
    {"shape": [3]}, {"shape": [3, "4"]}, {"scale": "2"}, {"flag": 1}, {"cluster": [1, 1]},
    {"inners": [{"box": [1], "name": 2}]}, {"inners": {"box": [], "name": "a"}},
    {"unknown": 1},
])
def test_wrongly_typed_json_is_refused(change):
    good = {"inners": [], "shape": [3, 4], "scale": 1.5, "flag": False}
    with pytest.raises((TypeError, ValueError)):
        compiler._decode(Outer, {**good, **change})



def test_a_captured_name_not_yet_assigned_does_not_break_the_key(
        isolated_cache, monkeypatch, demo_text):
    """A kernel may capture a name its factory assigns only on some paths (or after making
    the kernel): the closure cell is empty when compile reads it (the attention factory's)."""
    def build(self):
        with make_context():
            return ir.Module.parse(demo_text)
    monkeypatch.setattr(KernelFunction, "build", build)

    def factory(assign: bool):
        def kernel():
            return helper                                    # noqa: F821 - maybe unbound
        made = KernelFunction(kernel)
        if assign:
            helper = 1                                       # noqa: F841
        return made
    unbound = factory(False)
    with pytest.raises(ValueError):
        unbound.fn.__closure__[0].cell_contents              # the empty cell
    first = tilemlir.compile(unbound, target=TARGET)
    assert tilemlir.compile(unbound, target=TARGET) is first
    assert tilemlir.compile(factory(True), target=TARGET) is not first
