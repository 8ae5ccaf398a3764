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
fail to compile are skipped with the reason kept in `tuned.rejected[key]`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

from filelock import FileLock

from tilemlir.runtime.compiler import (CacheWarning, cache_root, compile, replace_file,
                                       resolve_target, tool_versions)
from tilemlir.testing import do_bench  # the one timing routine (CUDA events, L2 flushed, median)


class Autotuned:
    """A kernel factory with its configurations; calling it returns the fastest kernel."""

    def __init__(self, factory, configs, *, target=None, bench=None):
        configs = [dict(c) for c in configs]
        if not configs:
            raise ValueError("autotune needs at least one configuration")
        self.factory = factory
        self.configs = configs
        self.target = target
        self._bench = bench or (lambda kernel, args: do_bench(lambda: kernel(*args)))
        self._chosen: dict[str, dict] = {}
        self.rejected: dict[str, list[tuple[dict, str]]] = {}
        self._lock = threading.Lock()

    @property
    def _store(self) -> Path:
        name = f"{self.factory.__module__}.{self.factory.__qualname__}"
        return cache_root() / "autotune" / f"{name}.json"

    def _key(self, args, kwargs, target) -> str:
        text = json.dumps([repr(args), sorted((k, repr(v)) for k, v in kwargs.items()),
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
                    raise ValueError(f"autotune({self.factory.__name__}): no configuration is "
                                     f"known for these arguments yet; pass args=(...) to time "
                                     f"the kernels on")
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
            timed.append((self._bench(kernel, args), config))
        self.rejected[key] = rejected
        if not timed:
            reasons = "; ".join(f"{c}: {why}" for c, why in rejected)
            raise ValueError(f"autotune({self.factory.__name__}): every configuration was "
                             f"refused: {reasons}")
        best = min(timed, key=lambda t: t[0])[1]
        self._save(key, best, timed)
        return best

    def _load(self, key) -> dict | None:
        try:
            entry = json.loads(self._store.read_text()).get(key)
        except (OSError, ValueError):
            return None
        config = entry.get("config") if isinstance(entry, dict) else None
        return config if config in self.configs else None

    def _save(self, key, best, timed) -> None:
        import warnings
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


def autotune(factory, configs, *, target=None, bench=None) -> Autotuned:
    """`factory` (a kernel factory such as hgemm_v6) tuned over `configs` (dicts of its keyword
    parameters); `bench(kernel, args) -> ms` replaces do_bench (for tests)."""
    return Autotuned(factory, configs, target=target, bench=bench)
