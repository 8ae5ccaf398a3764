"""Timing and autotuning kernels built by factories.

    from tilemlir.testing import do_bench
    ms = do_bench(lambda: kernel(a, b, d))          # median of CUDA-event timings, L2 flushed

    gemm = tilemlir.autotune(hgemm_v6, configs=[dict(STAGES=4), dict(STAGES=3, EPI_N=256)])
    kernel = gemm(M, N, K, "float16", args=(a, b, d))   # times each config once per key
    kernel(a, b, d)

`autotune` compiles the factory's kernel for each configuration, times it on the given
arguments with `do_bench`, and keeps the fastest. The choice is remembered in memory and
persisted under the compile cache (`<cache>/autotune/<factory>.json`, written atomically under a
lock), keyed by the factory's positional and keyword arguments, the target and tilemlir's
sources: a second process compiles only the chosen configuration and times nothing.
Configurations a factory refuses (it raises ValueError, e.g. a shared-memory budget) or that
fail to compile are skipped with the reason kept in `tuned.rejected[key]`. A results file that
cannot be read as such a table is ignored with a CacheWarning and rewritten at the next save.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import threading
import warnings
from pathlib import Path

from filelock import FileLock

from tilemlir.runtime.args import ArgumentError
from tilemlir.runtime.compiler import (CacheWarning, cache_root, compile, replace_file,
                                       resolve_target, tool_versions)
from tilemlir.testing import do_bench  # the one timing routine (CUDA events, L2 flushed, median)


class Autotuned:
    """A kernel factory with its configurations; calling it returns the fastest kernel."""

    def __init__(self, factory, configs, *, target=None, bench=None):
        if not callable(factory):
            raise ArgumentError(f"autotune: factory must be a kernel factory (a callable such "
                                f"as hgemm_v6), got {type(factory).__name__}")
        if bench is not None and not callable(bench):
            raise ArgumentError(f"autotune: bench must be a callable bench(kernel, args) -> "
                                f"milliseconds, got {type(bench).__name__}")
        self.factory = factory
        self.name, self._identity = _describe(factory)
        self.configs = _check_configs(self.name, configs)
        self.target = target
        self._bench = bench or _default_bench
        self._chosen: dict[str, dict] = {}
        self.rejected: dict[str, list[tuple[dict, str]]] = {}
        self._lock = threading.Lock()

    @property
    def _store(self) -> Path:
        return cache_root() / "autotune" / f"{self.name}.json"

    def _key(self, args, kwargs, target) -> str:
        text = json.dumps([self._identity, repr(args),
                           sorted((k, repr(v)) for k, v in kwargs.items()),
                           target.chip, target.ptx, self.configs, tool_versions()],
                          sort_keys=True, default=repr)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def __call__(self, *factory_args, args=(), **factory_kwargs):
        """The compiled kernel of the fastest configuration for these factory arguments;
        `args` are the kernel arguments to time on (only needed when the key is new)."""
        config = self.choose(*factory_args, args=args, **factory_kwargs)
        return compile(self.factory(*factory_args, **factory_kwargs, **config),
                       target=resolve_target(self.target))

    def choose(self, *factory_args, args=(), **factory_kwargs) -> dict:
        """The fastest configuration (one of `configs`) for these factory arguments, timed on
        `args` when the key is new."""
        target = resolve_target(self.target)
        key = self._key(factory_args, factory_kwargs, target)
        with self._lock:
            config = self._chosen.get(key) or self._load(key)
            if config is None:
                if not args:
                    raise ValueError(f"autotune({self.name}): no configuration is known for "
                                     f"these arguments yet; pass args=(...) to time the "
                                     f"kernels on")
                if not isinstance(args, (tuple, list)):
                    raise ArgumentError(f"autotune({self.name}): args must be a tuple of the "
                                        f"kernel's arguments, got {type(args).__name__}")
                if self._bench is _default_bench:      # before compiling anything
                    from tilemlir.runtime.cuda import require_torch_cuda
                    require_torch_cuda(f"autotune({self.name}) with its default bench (do_bench)")
                config = self._tune(key, factory_args, factory_kwargs, target, args)
            self._chosen[key] = config
        return dict(config)

    def _tune(self, key, factory_args, factory_kwargs, target, args) -> dict:
        timed, rejected = [], []
        for config in self.configs:
            try:
                kernel = compile(self.factory(*factory_args, **factory_kwargs, **config),
                                 target=target)
            except Exception as err:        # a configuration the factory or compiler refuses
                rejected.append((config, f"{type(err).__name__}: {err}"))
                continue
            ms = self._bench(kernel, args)
            if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not math.isfinite(ms) \
                    or ms < 0:
                raise ArgumentError(f"autotune({self.name}): bench returned {ms!r} for "
                                    f"{config}; it must return the kernel's time in "
                                    f"milliseconds (a finite number >= 0)")
            timed.append((float(ms), config))
        self.rejected[key] = rejected
        if not timed:
            reasons = "; ".join(f"{c}: {why}" for c, why in rejected)
            raise ValueError(f"autotune({self.name}): every configuration was refused: "
                             f"{reasons}")
        best = min(timed, key=lambda t: t[0])[1]
        self._save(key, best, timed)
        return best

    def _load(self, key) -> dict | None:
        store = self._store
        try:
            table = json.loads(store.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            table = err
        if not isinstance(table, dict):
            why = table if isinstance(table, Exception) else \
                f"it holds a JSON {type(table).__name__}, not a table of results"
            warnings.warn(f"autotune({self.name}): ignoring the results file {store} ({why}); "
                          f"it is rewritten when this tuning is saved", CacheWarning,
                          stacklevel=4)
            return None
        entry = table.get(key)
        config = entry.get("config") if isinstance(entry, dict) else None
        return config if config in self.configs else None

    def _save(self, key, best, timed) -> None:
        store = self._store
        try:
            store.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(store) + ".lock", timeout=60):
                try:
                    table = json.loads(store.read_text())
                    table = table if isinstance(table, dict) else {}
                except (OSError, ValueError):
                    table = {}
                table[key] = {"config": best, "timings_ms": [[t, c] for t, c in timed]}
                replace_file(store, json.dumps(table, indent=1).encode())
        except OSError as err:
            warnings.warn(f"autotune results not saved to {store}: {err}", CacheWarning,
                          stacklevel=3)


def _default_bench(kernel, args) -> float:
    return do_bench(lambda: kernel(*args))


def _describe(factory) -> tuple[str, str]:
    """(name, identity) of a factory: the name (module.qualname) names its results file and
    its messages; the identity, in every key, tells apart partials of one function."""
    identity = ""
    while isinstance(factory, functools.partial):
        identity += repr((factory.args, sorted(factory.keywords.items())))
        factory = factory.func
    module = getattr(factory, "__module__", None) or type(factory).__module__
    qualname = getattr(factory, "__qualname__", None) or type(factory).__qualname__
    name = f"{module}.{qualname}".replace("<", "").replace(">", "")
    return name, identity


def _check_configs(name: str, configs) -> list[dict]:
    if isinstance(configs, dict) or not isinstance(configs, (list, tuple)):
        raise ArgumentError(f"autotune({name}): configs must be a list of dicts (each the "
                            f"factory's keyword arguments), got a {type(configs).__name__}"
                            + (" (one configuration? pass configs=[{...}])"
                               if isinstance(configs, dict) else ""))
    if not configs:
        raise ValueError(f"autotune({name}) needs at least one configuration")
    for i, config in enumerate(configs):
        if not isinstance(config, dict) or not all(isinstance(k, str) for k in config):
            raise ArgumentError(f"autotune({name}): configs[{i}] must be a dict of keyword "
                                f"arguments, got {config!r}")
    return [dict(c) for c in configs]


def autotune(factory, configs, *, target=None, bench=None) -> Autotuned:
    """`factory` (a kernel factory such as hgemm_v6) tuned over `configs` (dicts of its keyword
    parameters); `bench(kernel, args) -> ms` replaces do_bench (for tests)."""
    return Autotuned(factory, configs, target=target, bench=bench)
