"""Every public name of the kernel language has a docstring: the names `tilemlir.lang` exports,
the methods and properties of its classes, and everything reachable through its namespace
objects (`T.tile` and its scopes `Tx.cta`, `Tx.wg`, ..., `T.ptx.mbarrier`, `T.cuda`, `T.S`)."""

import inspect

import tilemlir.lang as T


def _ours(obj) -> bool:
    """Defined by tilemlir (not a builtin or a standard-library helper)."""
    module = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", "")
    return module.startswith("tilemlir")


def _doc(obj) -> str:
    if isinstance(obj, property):
        obj = obj.fget
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    return (getattr(obj, "__doc__", None) or "").strip()


def _members(cls):
    """(name, member) of the public functions, properties and objects `cls` defines or
    inherits from tilemlir classes."""
    seen = set()
    for klass in cls.__mro__:
        if not _ours(klass):
            continue
        for name, member in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            yield name, member


def _walk(path: str, obj, visited: set, found: list) -> None:
    """Appends (path, object) for `obj` and everything public reachable from it."""
    if id(obj) in visited:
        return
    visited.add(id(obj))
    if inspect.isclass(obj):
        found.append((path, obj))
        for name, member in _members(obj):
            if isinstance(member, (property, staticmethod, classmethod)) or \
                    inspect.isfunction(member):
                found.append((f"{path}.{name}", member))
            elif _ours(member) and not isinstance(member, (str, int, float, tuple)):
                _walk(f"{path}.{name}", member, visited, found)
    elif inspect.isfunction(obj):
        found.append((path, obj))
    elif _ours(obj) and callable(obj) or _ours(type(obj)) and not isinstance(obj, type):
        # A namespace or value object (T.tile, T.ptx, T.S, T.int32, T.laneid): its own
        # docstring, then its class's members and the objects it holds.
        found.append((path, obj))
        for name, member in _members(type(obj)):
            if inspect.isfunction(member) or isinstance(member, property):
                found.append((f"{path}.{name}", member))
            elif _ours(type(member)):
                _walk(f"{path}.{name}", member, visited, found)
        for name, member in vars(obj).items() if hasattr(obj, "__dict__") else ():
            if not name.startswith("_") and _ours(type(member)) and \
                    not isinstance(member, (str, int, float, tuple)):
                _walk(f"{path}.{name}", member, visited, found)


def _public_names():
    found, visited = [], set()
    for name in T.__all__:
        _walk(f"T.{name}", getattr(T, name), visited, found)
    return found


def test_the_walk_reaches_the_primitives_and_escapes():
    paths = {path for path, _ in _public_names()}
    for expected in ("T.prim_func", "T.tile.copy", "T.tile.cta.gemm_async", "T.tile.wg.sum",
                     "T.tile.warp.exp", "T.ptx.mbarrier.try_wait", "T.ptx.tcgen05.wait.ld",
                     "T.ptx.bulk.commit_group", "T.cuda.bar_sync", "T.SMEMPool.alloc",
                     "T.TileBuffer.view", "T.TileLayout.row_vector", "T.S", "T.R",
                     "T.serial", "T.thread_id", "T.MmaSync.fragments"):
        assert expected in paths, f"the docstring walk does not reach {expected}"


def test_every_public_name_of_the_language_has_a_docstring():
    first_path = {}                     # a Scope method is reached through every scope: once
    for path, obj in _public_names():
        first_path.setdefault(id(obj), (path, obj))
    missing = sorted(path for path, obj in first_path.values() if not _doc(obj))
    assert not missing, "no docstring: " + ", ".join(missing)
