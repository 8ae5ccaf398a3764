"""Runs a kernel's tile IR on the CPU: the threads of each cluster of CTAs as strands in
lockstep (tilemlir.reference.threads), one cluster after another, with the race detector
(tilemlir.reference.races) watching shared memory.

Every SSA scalar is a numpy vector with one entry per thread of the CTA, so thread ids, address
arithmetic, loads and stores are computed per thread, exactly as written. A tile primitive runs
once per group of threads of its scope (a thread, a warp, a warpgroup, the CTA), as one
whole-tile operation on the operands' windows, each element read from and written to the thread
or the memory the operand's layout names (tilemlir.reference.memory).

Async work completes when it is issued (a TMA load lands, a wgmma computes), which is correct
whenever the kernel waits for it before using it: the race detector reports the accesses that
would not be ordered after it on the GPU.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import replace

import numpy as np
from mlir import ir

from tilemlir.ir import kernel_abi
from tilemlir.ir.types import is_buffer_type
from tilemlir.reference.memory import (THREAD_AXES, TMEM_COLUMNS, Elem, InterpretError,
                                       inside_edges,
                                       Pointer, Root, Storage, Tile, buffer_type_of, elem_of,
                                       place, read, window, write)
from tilemlir.reference.races import Clocks, RaceError, Races
from tilemlir.reference.sync import (BarrierWait, Mbarrier, MbarrierWait, NamedBarrier,
                                     RegisterWait)
from tilemlir.ir.locations import python_line
from tilemlir.reference.threads import CTA, SCOPE_THREADS, Frame, Scheduler, Strand

_CMPI = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
         5: np.greater_equal, 6: np.less, 7: np.less_equal, 8: np.greater, 9: np.greater_equal}
_CMPF = {1: np.equal, 2: np.greater, 3: np.greater_equal, 4: np.less, 5: np.less_equal,
         6: np.not_equal, 8: np.equal, 9: np.greater, 10: np.greater_equal, 11: np.less,
         12: np.less_equal, 13: np.not_equal}


def launch_shape(func, dims: dict | None = None) -> tuple[int, list[int], list[int]]:
    """(threads per CTA, grid, cluster shape): what the gpu.func declares (ir.kernel_abi), its
    run-time grid extents evaluated for `dims`."""
    declared = kernel_abi.read(func)
    if declared.block is None:
        raise InterpretError(f"the kernel declares no {kernel_abi.BLOCK}")
    block = list(declared.block)
    if block[1:] != [1, 1]:
        raise InterpretError(f"blocks of {block} threads: the interpreter runs 1-D blocks")
    grid = [kernel_abi.evaluate_extent(e, dims or {}) if e else g
            for e, g in zip(declared.grid_exprs or ("",) * 3, declared.grid)]
    cluster = list(declared.cluster or (1, 1, 1))
    if any(g % c for g, c in zip(grid, cluster)):
        raise InterpretError(f"a grid of {grid} CTAs is not a whole number of {cluster} "
                             f"clusters")
    return block[0], grid, cluster


def _unsigned(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.kind == "i" else a


def _int_attr(op, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


def _str_attr(op, name: str) -> str:
    return ir.StringAttr(op.attributes[name]).value


def _wide(values: np.ndarray) -> np.ndarray:
    """Floats below 32 bits computed in float32 (the result is rounded to dst's type)."""
    return values.astype(np.float32) if values.dtype == np.float16 else values


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


_erf = np.vectorize(math.erf, otypes=[np.float64])
_UNARY = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "tanh": np.tanh, "sigmoid": _sigmoid,
    "silu": lambda x: x * _sigmoid(x), "neg": np.negative, "abs": np.abs,
    "gelu_tanh": lambda x: 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3))),
    "gelu_erf": lambda x: (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))).astype(x.dtype),
}
_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "max": np.maximum, "min": np.minimum, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal,
}


def _nonzero(b: np.ndarray) -> np.ndarray:
    """Divisors for every thread: inactive threads' values may be 0."""
    return np.where(b == 0, 1, b)


def _binary(fn):
    """A handler computing fn(a, b) for every thread, in the result's type."""
    def handler(self, op, mask):
        a, b = self._operands(op)
        with np.errstate(all="ignore"):
            return self._typed(op, fn(a, b))
    return handler



class Machine(Scheduler):
    """One kernel launch: the global buffers, and per cluster its CTAs, barriers and
    strands of threads."""

    def __init__(self, func, buffers: dict[int, Storage], scalars: dict[int, object],
                 out=None, races: bool = True, dims: dict | None = None):
        self.func = func
        threads, self.grid, self.cluster_shape = launch_shape(func, dims)
        super().__init__(threads)
        self.buffers, self.scalars = buffers, scalars
        self.out = out or sys.stdout
        self.tids = np.arange(self.threads)
        self.warps_per_cta = -(-self.threads // 32)
        self.detect_races = races
        self.shared_bytes = self._shared_bytes()
        self._where: dict = {}

    # ------------------------------------------------------------------ launch
    def run(self) -> None:
        (gx, gy, gz), (cx, cy, cz) = self.grid, self.cluster_shape
        for z in range(0, gz, cz):
            for y in range(0, gy, cy):
                for x in range(0, gx, cx):
                    self._run_cluster([(x + dx, y + dy, z + dz) for dz in range(cz)
                                       for dy in range(cy) for dx in range(cx)])

    def _run_cluster(self, coords) -> None:
        self.strands = []
        self.cluster = [CTA(c, rank, self.threads, self.shared_bytes)
                        for rank, c in enumerate(coords)]
        self.barriers: dict = {}
        self.clocks = self.races = None
        if self.detect_races:
            self.clocks = Clocks([f"warp {w} of {cta.name}" for cta in self.cluster
                                  for w in range(self.warps_per_cta)])
            self.races = Races(self.clocks)
            for cta in self.cluster:
                cta.wgmma_agents = [self.clocks.agent(f"the wgmma of warpgroup {g} of {cta.name}, "
                                                      f"reading until wgmma.wait_group", "group")
                                    for g in range(len(cta.wgmma_agents))]
        self.cluster_barrier = NamedBarrier("barrier.cluster (cluster_sync)", self.clocks)
        entry = self.func.regions[0].blocks[0]
        everyone = np.ones(self.threads, bool)
        for cta in self.cluster:
            for i, arg in enumerate(entry.arguments):
                if i in self.scalars:
                    cta.env[arg] = np.full(self.threads, self.scalars[i],
                                           elem_of(arg.type).compute)
                else:
                    cta.env[arg] = i                   # a global buffer: its parameter index
            self.strands.append(Strand(cta, [Frame(self.instrs(entry), None, everyone)]))
        self.schedule()

    def _shared_bytes(self) -> int:
        end = 16

        def visit(op):
            nonlocal end
            if op.name == "tile.alloc_shared":
                t = buffer_type_of(op.results[0].type)
                end = max(end, _int_attr(op, "offset")
                          + max(t.layout.span("m"), 1) * elem_of(t.elem).itemsize)
            return ir.WalkResult.ADVANCE
        self.func.walk(visit)
        return end

    def warps_of(self, threads) -> np.ndarray:
        """The race detector's warp agents of threads of the current CTA."""
        return self.cta.rank * self.warps_per_cta + np.asarray(threads) // 32

    def _line(self, op) -> int:
        """The race detector's id of the op's Python line."""
        found = self._where.get(op)
        if found is None:
            found = self._where[op] = python_line(op) or op.name
        return self.races.loc(found)

    # ------------------------------------------------------------------ scalars
    def _op_arith_constant(self, op, mask):
        attr = op.attributes["value"]
        t = op.results[0].type
        value = ir.FloatAttr(attr).value if isinstance(t, ir.FloatType) \
            else ir.IntegerAttr(attr).value if not isinstance(attr, ir.BoolAttr) \
            else ir.BoolAttr(attr).value
        return np.full(self.threads, value, elem_of(t).compute)

    def _operands(self, op):
        return [self.env[v] for v in op.operands]

    def _typed(self, op, values):
        elem = elem_of(op.results[0].type)
        with np.errstate(all="ignore"):
            return elem.round(values) if elem.name == "bf16" else np.asarray(values).astype(
                elem.compute)

    _op_arith_addi = _binary(lambda a, b: a + b)
    _op_arith_subi = _binary(lambda a, b: a - b)
    _op_arith_muli = _binary(lambda a, b: a * b)
    _op_arith_andi = _binary(lambda a, b: a & b)
    _op_arith_ori = _binary(lambda a, b: a | b)
    _op_arith_xori = _binary(lambda a, b: a ^ b)
    _op_arith_shli = _binary(lambda a, b: a << b)
    _op_arith_shrsi = _binary(lambda a, b: a >> b)
    _op_arith_shrui = _binary(lambda a, b: (_unsigned(a) >> _unsigned(b)).view(a.dtype))
    _op_arith_divui = _binary(lambda a, b: (_unsigned(a) // _nonzero(_unsigned(b))).view(a.dtype))
    _op_arith_remui = _binary(lambda a, b: (_unsigned(a) % _nonzero(_unsigned(b))).view(a.dtype))
    _op_arith_divsi = _binary(lambda a, b: np.trunc(a / _nonzero(b)).astype(a.dtype))
    _op_arith_remsi = _binary(lambda a, b: a - np.trunc(a / _nonzero(b)).astype(a.dtype) * b)
    _op_arith_maxsi = _binary(np.maximum)
    _op_arith_minsi = _binary(np.minimum)
    _op_arith_maxui = _binary(lambda a, b: np.maximum(_unsigned(a), _unsigned(b)).view(a.dtype))
    _op_arith_minui = _binary(lambda a, b: np.minimum(_unsigned(a), _unsigned(b)).view(a.dtype))
    _op_arith_addf = _binary(lambda a, b: a + b)
    _op_arith_subf = _binary(lambda a, b: a - b)
    _op_arith_mulf = _binary(lambda a, b: a * b)
    _op_arith_divf = _binary(lambda a, b: a / b)
    _op_arith_remf = _binary(np.fmod)
    _op_arith_maximumf = _binary(np.maximum)
    _op_arith_minimumf = _binary(np.minimum)
    _op_arith_maxnumf = _binary(np.fmax)
    _op_arith_minnumf = _binary(np.fmin)

    def _op_arith_negf(self, op, mask):
        return self._typed(op, -self.env[op.operands[0]])

    def _op_arith_cmpi(self, op, mask):
        a, b = self._operands(op)
        predicate = _int_attr(op, "predicate")
        if predicate >= 6:
            a, b = _unsigned(a), _unsigned(b)
        return _CMPI[predicate](a, b)

    def _op_arith_cmpf(self, op, mask):
        a, b = self._operands(op)
        predicate = _int_attr(op, "predicate")
        if predicate in (0, 15):
            return np.full(self.threads, predicate == 15)
        if predicate in (7, 14):
            ordered = ~(np.isnan(a) | np.isnan(b))
            return ordered if predicate == 7 else ~ordered
        result = _CMPF[predicate](a, b)
        unordered = np.isnan(a) | np.isnan(b)
        return result | unordered if 8 <= predicate <= 13 else result & ~unordered

    def _op_arith_select(self, op, mask):
        c, a, b = self._operands(op)
        if not isinstance(a, np.ndarray):
            raise InterpretError("a select between buffers or pointers is not modelled")
        return np.where(c.astype(bool), a, b)

    def _cast(self, op, values):
        with np.errstate(all="ignore"):
            return self._typed(op, values)

    def _op_arith_index_cast(self, op, mask):
        return self._cast(op, self.env[op.operands[0]])

    def _op_arith_index_castui(self, op, mask):
        return self._cast(op, _unsigned(self.env[op.operands[0]]))

    _op_arith_extsi = _op_arith_trunci = _op_arith_index_cast
    _op_arith_sitofp = _op_arith_fptosi = _op_arith_index_cast
    _op_arith_extf = _op_arith_truncf = _op_arith_index_cast

    def _op_arith_extui(self, op, mask):
        a = self.env[op.operands[0]]
        return self._cast(op, a if a.dtype == bool else _unsigned(a))

    _op_arith_uitofp = _op_arith_fptoui = _op_arith_extui

    def _op_arith_bitcast(self, op, mask):
        a = self.env[op.operands[0]]
        elem = elem_of(op.results[0].type)
        return elem.to_compute(elem_of(op.operands[0].type).to_storage(a).view(elem.storage))

    # ------------------------------------------------------------------ threads
    def _op_gpu_thread_id(self, op, mask):
        dim = str(op.attributes["dimension"])
        return self.tids.astype(np.int64) if dim.endswith("x>") else np.zeros(self.threads, np.int64)

    def _op_gpu_shuffle(self, op, mask):
        value, offset, width = self._operands(op)
        if str(op.attributes["mode"]) != "#gpu<shuffle_mode idx>":
            raise InterpretError(f"the interpreter models gpu.shuffle idx only, got "
                                 f"{op.attributes['mode']}")
        lanes = np.arange(self.threads)
        warps = np.unique(lanes[mask] // 32)
        whole = np.minimum(warps * 32 + 32, self.threads) - warps * 32
        if (np.bincount(lanes[mask] // 32, minlength=warps.max(initial=0) + 1)[warps]
                != whole).any():
            raise InterpretError("gpu.shuffle (shfl.sync over all 32 lanes) reached by part of "
                                 "a warp: on the GPU the warp would wait for lanes that never "
                                 "come")
        source = lanes - lanes % width + offset
        valid = (offset < width) & (source < self.threads)
        return [value[np.where(valid, source, lanes)], valid]

    def _op_gpu_block_id(self, op, mask):
        dim = "xyz".index(str(op.attributes["dimension"])[-2])
        return np.full(self.threads, self.cta.coords[dim], np.int64)

    def _op_gpu_block_dim(self, op, mask):
        dim = "xyz".index(str(op.attributes["dimension"])[-2])
        return np.full(self.threads, [self.threads, 1, 1][dim], np.int64)

    def _op_gpu_grid_dim(self, op, mask):
        dim = "xyz".index(str(op.attributes["dimension"])[-2])
        return np.full(self.threads, self.grid[dim], np.int64)

    # ------------------------------------------------------------------ printf
    def _op_gpu_printf(self, op, mask):
        fmt = re.sub(r"%([-+ #0]*\d*(?:\.\d+)?)(?:ll|l|hh|h)?([diouxXeEfFgGcs])",
                     lambda m: f"%{m.group(1)}{'d' if m.group(2) in 'iu' else m.group(2)}",
                     _str_attr(op, "format"))
        values = self._operands(op)
        for t in np.flatnonzero(mask):
            args = tuple(v[t].item() for v in values)
            self.out.write(fmt % args)

    # ------------------------------------------------------------------ buffers
    # Root ops keep the storage a CTA already has: strands of the CTA may run them at
    # different times (registers are per thread anyway).
    def _op_tile_global(self, op, mask):
        param = self.env[op.operands[0]]
        t = buffer_type_of(op.results[0].type)
        elem = elem_of(t.elem)
        storage = self.buffers[param]
        self.roots[op.results[0]] = Root(storage, t, elem,
                                         elements=storage.data.shape[1] // elem.itemsize)

    def _op_tile_alloc_shared(self, op, mask):
        if op.results[0] in self.roots:
            return
        t = buffer_type_of(op.results[0].type)
        elem = elem_of(t.elem)
        base, span = _int_attr(op, "offset"), max(t.layout.span("m"), 1)
        self.roots[op.results[0]] = Root(self.cta.shared, t, elem, byte_base=base,
                                         elements=span)
        if self.races is not None:
            self._shadow(self.cta.shared).buffers.append(
                (base, base + span * elem.itemsize, python_line(op) or "an unknown line"))

    def _op_tile_alloc_local(self, op, mask):
        if op.results[0] in self.roots:
            return
        t = buffer_type_of(op.results[0].type)
        elem = elem_of(t.elem)
        span = max(t.layout.span("m"), 1)
        storage = Storage("local", span * elem.itemsize, rows=self.threads)
        self.roots[op.results[0]] = Root(storage, t, elem, elements=span)

    def _op_tile_tmem(self, op, mask):
        address = self.env[op.operands[0]].astype(np.int64)
        old = self.roots.get(op.results[0])
        if old is not None:
            old.tmem_address = np.where(mask, address, old.tmem_address)
            return
        t = buffer_type_of(op.results[0].type)
        self.roots[op.results[0]] = Root(self.cta.tmem, t, elem_of(t.elem),
                                         tmem_address=address)

    def _op_tile_slice(self, op, mask):
        return None                    # windows are resolved where they are used

    _op_tile_view = _op_tile_slice

    def _window(self, value):
        return window(value, self.roots, self.env, self.threads)

    def _op_tile_addr(self, op, mask):
        w = self._window(op.operands[0])
        if w.scope == "tmem":
            raise InterpretError("tensor memory has no element addresses")
        indices = [self.env[v] for v in list(op.operands)[1:]]
        layout = w.type.layout.replace(swizzle=None)
        offsets = np.zeros(self.threads, np.int64)
        for t in np.flatnonzero(mask):
            coord = [int(i[t]) for i in indices]
            if any(not 0 <= c < d for c, d in zip(coord, w.type.shape)):
                raise InterpretError(f"index {tuple(coord)} is out of the buffer's shape "
                                     f"{w.type.shape} (thread {t})")
            linear = int(w.base["m"][t]) + layout.evaluate_coord(coord, w.type.shape).get("m", 0)
            sw = w.type.layout.swizzle
            offsets[t] = w.root.byte_base + int(sw.apply(linear) if sw else linear) \
                * w.root.elem.itemsize
        return Pointer(w.root.storage, offsets)

    def _op_llvm_load(self, op, mask):
        pointer = self.env[op.operands[0]]
        elem = elem_of(op.results[0].type)
        threads = np.flatnonzero(mask)
        rows, index = pointer.view(elem, threads)
        self._pointer_access(pointer, elem, threads, False, op)
        result = np.zeros(self.threads, elem.compute)
        result[threads] = elem.to_compute(pointer.storage.typed(elem)[rows, index])
        return result

    def _op_llvm_store(self, op, mask):
        value, pointer = self._operands(op)
        elem = elem_of(op.operands[0].type)
        threads = np.flatnonzero(mask)
        rows, index = pointer.view(elem, threads)
        self._pointer_access(pointer, elem, threads, True, op)
        pointer.storage.typed(elem)[rows, index] = elem.to_storage(value[threads])

    def _op_tile_atomic_add(self, op, mask):
        """old = *p; *p = old + value, thread after thread."""
        pointer, value = self._operands(op)
        elem = elem_of(op.results[0].type)
        cells = pointer.storage.typed(elem)
        old = np.zeros(self.threads, elem.compute)
        for t in np.flatnonzero(mask):
            rows, index = pointer.view(elem, np.array([t]))
            old[t] = cells[rows[0], index[0]]
            cells[rows[0], index[0]] = elem.to_storage(old[t] + value[t])
        return old

    # ------------------------------------------------------------------ race tracking
    def _storage_name(self, storage) -> str:
        for cta in self.cluster:
            if storage is cta.shared:
                return f"the shared memory of {cta.name}"
        return f"{storage.kind} memory"

    def _shadow(self, storage):
        return self.races.shadow(storage, self._storage_name(storage))

    def _shared_access(self, w, group, write: bool, op, holders=None, valid=None) -> None:
        """A generic-proxy access of the threads `group` to the window `w` (tracked if shared):
        `holders`, per element, the thread whose registers it moves to or from; otherwise the
        group's first warp, ordered after what all its warps are. `valid`: the elements a
        masked copy moves."""
        if self.races is None or w.scope != "shared":
            return
        p = place(w, group, valid=valid)
        byte_rows = _byte_rows(p.index[p.held], w.root.elem.itemsize)
        clocks = self.clocks
        if holders is None:
            warps = np.unique(self.warps_of(group))
            self._generic(w.root.storage, byte_rows.reshape(-1), int(warps[0]),
                          clocks.of(warps), write, op)
            return
        owner = self.warps_of(np.broadcast_to(holders, p.held.shape)[p.held])
        for warp in np.unique(owner).tolist():
            self._generic(w.root.storage, byte_rows[owner == warp].reshape(-1), warp,
                          clocks.rows[warp], write, op)

    def _generic(self, storage, bytes_, warp: int, known, write: bool, op) -> None:
        what = f"by {self.clocks.names[warp]}"
        clock = int(self.clocks.rows[warp, warp])
        if write:
            self.races.write(self._shadow(storage), bytes_, warp, clock, known, self._line(op),
                             what, generic=True)
        else:
            self.races.read(self._shadow(storage), bytes_, warp, clock, known, self._line(op),
                            what)

    def _pointer_access(self, pointer, elem, threads, write: bool, op) -> None:
        if self.races is None or pointer.storage.kind != "shared":
            return
        offsets = pointer.byte_offset[threads]
        warps = self.warps_of(threads)
        for warp in np.unique(warps).tolist():
            bytes_ = (offsets[warps == warp][:, None] + np.arange(elem.itemsize)).reshape(-1)
            self._generic(pointer.storage, bytes_, warp, self.clocks.rows[warp], write, op)

    def _registers(self, w, group, write: bool) -> None:
        """Registers that a gemm_async in flight (not yet retired by wgmma.wait_group) reads
        or writes may not be written, or read if it writes them."""
        if self.races is None or w.scope != "local":
            return
        cta = self.cta
        storage = id(w.root.storage)
        for g in np.unique(group // 128).tolist():
            pending = cta.wgmma_pending[g]
            if not pending:
                continue
            retired = int(cta.wgmma_retired[group[group // 128 == g] // 32].min())
            for k, reads, writes, line in pending:
                if k > retired and (storage in writes or (write and storage in reads)):
                    raise RaceError(
                        f"this {'write' if write else 'read'} of registers that the gemm_async "
                        f"at {line} {'writes' if storage in writes else 'reads'} (wgmma group "
                        f"{k} of warpgroup {g} of {cta.name}) comes before a wgmma.wait_group "
                        f"retires that group")

    def _read_tile(self, value, group, op, holders=None, track: bool = True) -> Tile:
        """An operand for the threads `group`: a buffer's window (the access tracked by the
        race detector unless `track` is False), or a scalar (one per thread)."""
        if is_buffer_type(value.type):
            w = self._window(value)
            if track:
                self._registers(w, group, False)
                self._shared_access(w, group, False, op, holders)
            return read(w, group)
        scalars = self.env[value][group]
        return Tile(scalars.reshape(-1, 1) if len(group) > 1 else scalars[:1].reshape(1, 1),
                    np.ones((1,), bool))

    def _write_tile(self, w, group, values, op, where_=None, holders=None) -> None:
        self._registers(w, group, True)
        self._shared_access(w, group, True, op, holders)
        write(w, group, values, where_)

    def _holders(self, value, group):
        """Per element, the thread holding it, for a register tile spread over threads."""
        if self.races is None or not is_buffer_type(value.type):
            return None
        w = self._window(value)
        if w.scope != "local" or len(group) == 1 or not _spread(w):
            return None
        return place(w, group).rows

    # ------------------------------------------------------------------ primitives
    def _groups(self, op, mask) -> list[np.ndarray]:
        """The groups of threads that each run one instance of a primitive of op's scope."""
        scope = _str_attr(op, "scope")
        if scope == "thread":
            return [np.array([t]) for t in np.flatnonzero(mask)]
        size = SCOPE_THREADS.get(scope, self.threads)
        groups = []
        for start in range(0, self.threads, size):
            group = self.tids[start:start + size]
            active = mask[group]
            if active.any() and not active.all():
                raise InterpretError(f"a {scope}-scope {op.name} reached by {int(active.sum())} "
                                     f"of the {len(group)} threads of its {scope}: the "
                                     f"cooperative primitive needs all of them")
            if active.all():
                groups.append(group)
        return groups

    def _same_value(self, value, group, what: str):
        vals = self.env[value][group]
        if np.any(vals != vals[0]):
            raise InterpretError(f"{what} differs across the threads of the scope")
        return vals[0]

    def _elementwise(self, op, mask, fn, operands, track: bool = True) -> None:
        """dst = fn(*operands) element by element, operands broadcast against dst (numpy
        rules), for each group of threads of op's scope."""
        dst = self._window(op.operands[0])
        shape = dst.type.shape
        for group in self._groups(op, mask):
            holders = self._movers(dst, operands, group) if track else None
            tiles = [self._read_tile(v, group, op, holders, track) for v in operands]
            if len(tiles) == 1 and tiles[0].values[0].size == dst.type.size:
                tiles = [Tile(tiles[0].values.reshape(tiles[0].values.shape[:1] + shape),
                              tiles[0].held.reshape(shape))]       # copy, cast: same size
            tiles = [t.aligned(len(shape)) for t in tiles]
            where_ = np.ones(shape, bool)
            for t in tiles:
                where_ = where_ & np.broadcast_to(t.held, shape)
            with np.errstate(all="ignore"):
                result = fn(*[_wide(t.values) for t in tiles])
            if track:
                self._write_tile(dst, group, np.asarray(result), op, where_, holders)
            else:
                write(dst, group, np.asarray(result), where_)

    def _movers(self, dst, operands, group):
        """For a copy between shared memory and registers spread over threads: per element,
        the thread whose registers it moves to or from (ldmatrix, stmatrix, vector ld/st)."""
        if self.races is None:
            return None
        values = [v for v in operands if is_buffer_type(v.type)]
        if len(values) != 1 or buffer_type_of(values[0].type).shape != dst.type.shape:
            return None
        src = self._window(values[0])
        if dst.scope == "shared" and src.scope == "local":
            return self._holders(values[0], group)
        if dst.scope == "local" and src.scope == "shared" and _spread(dst):
            return place(dst, group).rows if len(group) > 1 else None
        return None

    def _op_tile_copy(self, op, mask):
        self._elementwise(op, mask, lambda x: x, op.operands[1:2])

    _op_tile_cast = _op_tile_copy

    def _op_tile_copy_async(self, op, mask):
        """TMA loads (completing on the barrier), cp.async (without one: until its
        wait_group), TMA stores (bulk groups), tcgen05 loads and stores. A TMA box may hang
        past its global buffer's edges: its loads read zeros there, its stores skip them."""
        dst, src = self._window(op.operands[0]), self._window(op.operands[1])
        barrier = op.operands[2] if len(op.operands) > 2 else None
        tma = (barrier is not None and src.scope == "global" and dst.scope == "shared") or \
            (src.scope == "shared" and dst.scope == "global")
        for group in self._groups(op, mask):
            edges = inside_edges(src if src.scope == "global" else dst, group) if tma else None
            if edges is None:
                self._elementwise_group(op, group, src, dst)
            else:
                tile = read(src, group, edges if src.scope == "global" else None)
                values = np.where(edges, tile.values.reshape(tile.values.shape[:1] +
                                                            dst.type.shape), 0)
                write(dst, group, values, None, edges if dst.scope == "global" else None)
            self._landed(op, dst, src, group, barrier, self.cta)

    def _elementwise_group(self, op, group, src, dst) -> None:
        """dst = src for one group of threads (an async copy's: not tracked as its issuer's own
        accesses, the bookkeeping of _landed is)."""
        tile = read(src, group)
        shape = dst.type.shape
        write(dst, group, tile.values.reshape(tile.values.shape[:1] + shape),
              tile.held.reshape(shape))

    def _op_tile_copy_masked(self, op, mask):
        """A copy of the elements whose window coordinates are below the bounds and at or above
        the lower bounds if any (a global window may hang past its buffer's edges): reads
        outside them give the fill, writes outside them into global memory are skipped (into
        shared memory and registers every element is written)."""
        fill = op.attributes["fill"] if "fill" in op.attributes else None
        value = 0 if fill is None else ir.FloatAttr(fill).value \
            if isinstance(fill, ir.FloatAttr) else ir.IntegerAttr(fill).value
        self._masked(op, mask, value)

    def _op_tile_copy_async_masked(self, op, mask):
        """cp.async of the elements below the bounds, zeros past them (until its wait_group)."""
        self._masked(op, mask, 0)
        dst, src = self._window(op.operands[0]), self._window(op.operands[1])
        for group in self._groups(op, mask):
            self._landed(op, dst, src, group, None, self.cta)

    def _masked(self, op, mask, fill) -> None:
        dst, src = self._window(op.operands[0]), self._window(op.operands[1])
        shape = dst.type.shape
        bounds = list(op.operands)[2:]             # the extents, then any lower bounds
        for group in self._groups(op, mask):
            limits = [int(self._same_value(b, group, "a bound of the masked copy"))
                      for b in bounds]
            inside = np.ones(shape, bool)
            for index, limit in zip(np.indices(shape), limits[:len(shape)]):
                inside &= index < limit
            for index, low in zip(np.indices(shape), limits[len(shape):]):
                inside &= index >= low
            src_valid = inside if src.scope == "global" else None
            dst_valid = inside if dst.scope == "global" else None
            async_copy = op.name == "tile.copy_async_masked"
            if not async_copy:
                self._registers(src, group, False)
                self._shared_access(src, group, False, op, valid=src_valid)
            tile = read(src, group, src_valid)
            values = np.where(inside, tile.values.reshape(tile.values.shape[:1] + shape), fill)
            where_ = tile.held.reshape(shape) | ~inside
            if dst_valid is not None:
                where_ = where_ & inside
            if not async_copy:
                self._registers(dst, group, True)
                self._shared_access(dst, group, True, op, valid=dst_valid)
            write(dst, group, values, where_, dst_valid)

    def _op_tile_copy_async_multicast(self, op, mask):
        """A TMA load into the CTAs of the cluster whose ranks the mask sets: at dst's offset
        in each, completing on the barrier at the same offset in each."""
        dst, src = self._window(op.operands[0]), self._window(op.operands[1])
        ranks = self._env_uniform(op.operands[3], mask, "the multicast mask")
        for group in self._groups(op, mask):
            edges = inside_edges(src, group)
            values = read(src, group, edges).values
            if edges is not None:
                values = np.where(edges, values.reshape(values.shape[:1] + dst.type.shape), 0)
            for rank in range(len(self.cluster)):
                if not ranks >> rank & 1:
                    continue
                peer = self.cluster[rank]
                there = replace(dst, root=peer.roots.get(dst.ref.root) or self._no_root(peer))
                write(there, group, values)
                self._landed(op, there, src, group, op.operands[2], peer)
        if ranks >> len(self.cluster):
            raise InterpretError(f"the multicast mask {ranks:#b} names CTAs past the "
                                 f"{len(self.cluster)} of the cluster")

    def _no_root(self, peer):
        raise InterpretError(f"{peer.name} has not allocated the multicast's destination yet")

    def _landed(self, op, dst, src, group, barrier_value, cta) -> None:
        """The bookkeeping of an async copy issued by `group`'s first thread, into `cta`:
        transaction bytes, async groups, and the race detector's accesses."""
        issuer = int(group[0])
        warp = int(self.warps_of([issuer])[0])
        if barrier_value is not None:
            barrier = self._existing(barrier_value, issuer, cta)
            if self.races is not None and dst.scope == "shared":
                self._async_write(dst, group, op, barrier.agent, barrier.landing, warp)
            barrier.complete_tx(dst.type.size * dst.root.elem.itemsize, warp)
        elif src.scope == "global" and dst.scope == "shared":
            committed, agent = self._async_group("cp_async", issuer)
            if self.races is not None:
                self._async_write(dst, group, op, agent, committed + 1, warp)
        elif src.scope == "shared" and dst.scope == "global":
            committed, agent = self._async_group("bulk", issuer)
            if self.races is not None:
                p = place(src, group)
                bytes_ = _byte_rows(p.index[p.held], src.root.elem.itemsize).reshape(-1)
                self.races.read(self._shadow(src.root.storage), bytes_, agent, committed + 1,
                                self.clocks.rows[warp], self._line(op),
                                f"by the TMA store issued by thread {issuer} of "
                                f"{self.cta.name}", async_proxy=True)

    def _async_write(self, dst, group, op, agent: int, clock: int, warp: int) -> None:
        p = place(dst, group)
        bytes_ = _byte_rows(p.index[p.held], dst.root.elem.itemsize).reshape(-1)
        self.races.write(self._shadow(dst.root.storage), bytes_, agent, clock,
                         self.clocks.rows[warp], self._line(op),
                         f"by the async copy issued by {self.clocks.names[warp]}",
                         generic=False)

    def _async_group(self, kind: str, thread: int) -> list[int]:
        """[groups committed, race agent] of a thread's cp.async or bulk copies."""
        key = (kind, thread)
        group = self.cta.groups.get(key)
        if group is None:
            agent = -1
            if self.clocks is not None:
                what = "bulk copies (TMA stores)" if kind == "bulk" else "cp.async copies"
                agent = self.clocks.agent(f"the {what} of thread {thread} of {self.cta.name}, "
                                          f"until its wait_group", "group")
            group = self.cta.groups[key] = [0, agent]
        return group

    def _op_tile_fill(self, op, mask):
        for group in self._groups(op, mask):
            self._same_value(op.operands[1], group, "the fill value")
        self._elementwise(op, mask, lambda v: v, op.operands[1:2])

    def _op_tile_iota(self, op, mask):
        """dst = its coordinates along `axis` plus each thread's own offset (on the GPU every
        thread adds its offset to the elements its registers hold)."""
        dst = self._window(op.operands[0])
        if dst.scope != "local":
            raise InterpretError(f"iota fills register tiles; dst is in {dst.scope}")
        shape, compute = dst.type.shape, dst.root.elem.compute
        axis = _int_attr(op, "axis")
        index = np.indices(shape)[axis].astype(compute)
        offsets = self.env[op.operands[1]] if len(op.operands) > 1 \
            else np.zeros(self.threads, compute)
        for group in self._groups(op, mask):
            mine = offsets[group].astype(compute).reshape((len(group),) + (1,) * len(shape))
            self._write_tile(dst, group, index[None] + mine, op)

    def _op_tile_unary(self, op, mask):
        fn = _UNARY[_str_attr(op, "fn")]
        self._elementwise(op, mask, fn, op.operands[1:2])

    def _op_tile_binary(self, op, mask):
        self._elementwise(op, mask, _BINARY[_str_attr(op, "fn")], op.operands[1:3])

    def _op_tile_select(self, op, mask):
        self._elementwise(op, mask, lambda c, a, b: np.where(c != 0, a, b), op.operands[1:4])

    def _op_tile_reduce(self, op, mask):
        """dst = fn over `axis` of src, for the scope (the scratch buffer is the lowering's:
        the interpreter neither reads nor writes it)."""
        fn = {"sum": np.sum, "max": np.max, "min": np.min}[_str_attr(op, "fn")]
        axis = _int_attr(op, "axis")
        dst = self._window(op.operands[0])
        for group in self._groups(op, mask):
            src = self._read_tile(op.operands[1], group, op)
            if not src.held.all():
                raise InterpretError("the reduced tile is not held whole by the threads of the "
                                     "scope (its layout spreads it over other threads)")
            result = fn(_wide(src.values), axis=axis + 1, keepdims=True)
            self._write_tile(dst, group, result.reshape(result.shape[:1] + dst.type.shape), op)

    def _whole(self, value, group, name: str, op, track: bool = True) -> np.ndarray:
        tile = self._read_tile(value, group, op, track=track)
        if not tile.held.all():
            raise InterpretError(f"operand {name} is not held whole by the threads of the scope "
                                 f"(its layout spreads it over other threads)")
        if np.any(tile.values != tile.values[:1]):
            raise InterpretError(f"operand {name}: the threads of the scope hold different "
                                 f"copies of it")
        return tile.values[0].astype(np.float32)

    def _op_tile_gemm(self, op, mask):
        d, a, b, c = op.operands
        alpha = ir.FloatAttr(op.attributes["alpha"]).value
        beta = ir.FloatAttr(op.attributes["beta"]).value
        for group in self._groups(op, mask):
            A, B = self._whole(a, group, "A", op), self._whole(b, group, "B", op)
            A = A.T if ir.BoolAttr(op.attributes["transpose_a"]).value else A
            B = B.T if ir.BoolAttr(op.attributes["transpose_b"]).value else B
            result = np.float32(alpha) * (A @ B)
            if beta != 0.0:
                result = result + np.float32(beta) * self._whole(c, group, "C", op)
            self._write_tile(self._window(d), group, result[None], op)

    def _op_tile_gemm_async(self, op, mask):
        """wgmma (D in registers): one committed group, reading its shared operands until a
        wait_group retires it; tcgen05.mma (D in tensor memory): its completion is the
        kernel's tcgen05.commit, so the race detector takes its reads as the issuer's."""
        if _int_attr(op, "cta_group") != 1:
            raise InterpretError("cta_group=2 (CTA pairs) is not modelled")
        d, a, b, accum = op.operands
        transpose_b = ir.BoolAttr(op.attributes["transpose_b"]).value    # B stored K x N
        dst = self._window(d)
        for group in self._groups(op, mask):
            wgmma = dst.scope == "local"
            B = self._whole(b, group, "B", op, track=not wgmma)
            result = self._whole(a, group, "A", op, track=not wgmma) @ (B if transpose_b else B.T)
            if self._same_value(accum, group, "accum"):
                result = result + self._whole(d, group, "D", op, track=False)
            write(dst, group, result[None])
            if wgmma:
                self._wgmma_issued(op, group, (a, b), dst)

    def _wgmma_issued(self, op, group, operands, dst) -> None:
        cta = self.cta
        g = int(group[0]) // 128
        cta.wgmma_issued[g] += 1
        if self.races is None:
            return
        k = cta.wgmma_issued[g]
        known = self.clocks.of(np.unique(self.warps_of(group)))
        reads = set()
        for value in operands:
            w = self._window(value)
            if w.scope == "shared":
                p = place(w, group)
                bytes_ = _byte_rows(p.index[p.held], w.root.elem.itemsize).reshape(-1)
                self.races.read(self._shadow(w.root.storage), bytes_, cta.wgmma_agents[g], k,
                                known, self._line(op), f"by the wgmma of warpgroup {g} of "
                                f"{cta.name} (group {k})", async_proxy=True)
            elif w.scope == "local":
                reads.add(id(w.root.storage))
        cta.wgmma_pending[g].append((k, reads, {id(dst.root.storage)},
                                     python_line(op) or op.name))

    # ------------------------------------------------------------------ async groups
    def _op_tile_async_commit(self, op, mask):
        kind = _str_attr(op, "kind")
        if kind == "wgmma":
            return None                  # every gemm_async commits its own group
        for t in np.flatnonzero(mask).tolist():
            self._async_group(kind, t)[0] += 1

    def _op_tile_async_wait(self, op, mask):
        kind, pending = _str_attr(op, "kind"), _int_attr(op, "pending")
        cta, clocks = self.cta, self.clocks
        threads = np.flatnonzero(mask)
        if kind == "wgmma":
            for g in np.unique(threads // 128).tolist():
                mine = threads[threads // 128 == g]
                done = cta.wgmma_issued[g] - pending
                local = np.unique(mine // 32)
                cta.wgmma_retired[local] = np.maximum(cta.wgmma_retired[local], done)
                if clocks is not None:
                    clocks.learn(self.warps_of(mine), cta.wgmma_agents[g], done)
                everyone = cta.wgmma_retired[g * 4:g * 4 + 4].min()
                cta.wgmma_pending[g] = [p for p in cta.wgmma_pending[g] if p[0] > everyone]
            return None
        for t in threads.tolist():
            committed, agent = self._async_group(kind, t)
            if clocks is not None:
                clocks.learn(self.warps_of([t]), agent, committed - pending)

    # ------------------------------------------------------------------ synchronisation
    def _named(self, key, name: str) -> NamedBarrier:
        barrier = self.cta.named.get(key)
        if barrier is None:
            barrier = self.cta.named[key] = NamedBarrier(name, self.clocks)
        return barrier

    def _bar(self, op, mask, ids, count: int, wait=True, preds=None, result=None):
        """bar.sync / bar.arrive / bar.red on the barrier of each thread's id."""
        ids = np.asarray(ids)
        entries = []
        for bid in np.unique(ids[mask]).tolist():
            mine = mask & (ids == bid)
            threads = np.flatnonzero(mine)
            name = "the CTA barrier (bar.sync 0)" if bid == 0 and op.name == "tile.cta_sync" \
                else f"bar.sync {bid}"
            barrier = self._named(bid, name)
            generations = barrier.arrive(threads, count, self.warps_of(threads),
                                         None if preds is None else preds[threads])
            per_thread = np.zeros(self.threads, np.int64)
            per_thread[threads] = generations
            entries.append((mine, barrier, per_thread))
        if not wait:
            return None
        return self._blocked(BarrierWait(op, entries, result), mask)

    def _blocked(self, wait, mask):
        """`wait`, or None (having acquired what it waits for) when it is already satisfied."""
        if np.array_equal(wait.ready(self) & mask, mask):
            wait.finish(self, mask)
            return None
        return wait

    def _op_tile_cta_sync(self, op, mask):
        return self._bar(op, mask, np.zeros(self.threads, np.int64), self.threads)

    def _op_tile_named_barrier(self, op, mask):
        return self._bar(op, mask, self.env[op.operands[0]], _int_attr(op, "threads"))

    def _op_tile_barrier_arrive(self, op, mask):
        return self._bar(op, mask, self.env[op.operands[0]], _int_attr(op, "threads"),
                         wait=False)

    def _op_tile_barrier_or(self, op, mask):
        return self._bar(op, mask, self.env[op.operands[0]], _int_attr(op, "threads"),
                         preds=self.env[op.operands[1]].astype(bool), result=op.results[0])

    def _op_tile_cluster_sync(self, op, mask):
        threads = np.flatnonzero(mask)
        barrier = self.cluster_barrier
        generations = barrier.arrive(threads, self.threads * len(self.cluster),
                                     self.warps_of(threads))
        per_thread = np.zeros(self.threads, np.int64)
        per_thread[threads] = generations
        return self._blocked(BarrierWait(op, [(mask.copy(), barrier, per_thread)]), mask)

    def _no_op(self, op, mask):
        return None

    def _op_tile_setmaxnreg(self, op, mask):
        """.dec gives the warps' registers above `count` back to the CTA's pool; .inc waits
        until the pool holds what it takes (a budget above the launch's waits forever)."""
        cta, count = self.cta, _int_attr(op, "count")
        if _str_attr(op, "action") == "decrease":
            warps = np.unique(np.flatnonzero(mask) // 32)
            cta.register_pool += int(np.maximum(cta.registers[warps] - count, 0).sum()) * 32
            cta.registers[warps] = np.minimum(cta.registers[warps], count)
            return None
        return self._blocked(RegisterWait(op, cta, mask, count), mask)

    # tcgen05's waits and fences order work that completes when it is issued here.
    _op_tile_tcgen05_fence = _op_tile_tcgen05_wait = _no_op
    _op_tile_tmem_relinquish = _op_tile_tmem_dealloc = _no_op

    def _op_tile_fence(self, op, mask):
        if _str_attr(op, "kind") == "proxy_async_shared" and self.clocks is not None:
            self.clocks.fence(np.unique(self.warps_of(np.flatnonzero(mask))))

    def _op_tile_elect_sync(self, op, mask):
        elected = np.zeros(self.threads, bool)
        for warp in range(0, self.threads, 32):
            active = np.flatnonzero(mask[warp:warp + 32])
            if len(active):
                elected[warp + active[0]] = True
        return elected

    def _op_tile_cluster_ctarank(self, op, mask):
        return np.full(self.threads, self.cta.rank, np.int32)

    def _env_uniform(self, value, mask, what: str) -> int:
        values = np.asarray(self.env[value])[mask]
        if np.any(values != values[0]):
            raise InterpretError(f"{what} differs across the threads executing the op "
                                 f"({sorted(set(values.tolist()))[:4]})")
        return int(values[0])

    def _op_tile_mapa(self, op, mask):
        """The same shared-memory offset in the CTA of the given rank of the cluster."""
        pointer = self.env[op.operands[0]]
        rank = self._env_uniform(op.operands[1], mask, "the CTA rank of mapa")
        if not 0 <= rank < len(self.cluster):
            raise InterpretError(f"mapa to CTA rank {rank} of a cluster of {len(self.cluster)}")
        if pointer.storage is not self.cta.shared:
            raise InterpretError("mapa of an address outside this CTA's shared memory")
        return Pointer(self.cluster[rank].shared, pointer.byte_offset.copy(), pointer.limit)

    def _barrier_at(self, pointer, thread: int):
        return (id(pointer.storage), int(pointer.byte_offset[thread]))

    def _op_tile_mbarrier_init(self, op, mask):
        pointer = self.env[op.operands[0]]
        for t in np.flatnonzero(mask).tolist():
            key = self._barrier_at(pointer, t)
            count = int(self.env[op.operands[1]][t])
            old = self.barriers.get(key)
            what = f"the mbarrier at byte {key[1]} of {self._storage_name(pointer.storage)}"
            agent, clock = (old.agent, old.clock) if old is not None else (-1, 0)
            if old is None and self.clocks is not None:
                agent = self.clocks.agent(f"the async copies completing on {what}", "phase")
            self.barriers[key] = Mbarrier(count, what, self.clocks, agent, clock)

    def _existing(self, pointer_value, thread: int, cta=None) -> Mbarrier:
        """The mbarrier at `thread`'s pointer (at the same offset in `cta`'s shared memory)."""
        pointer = self.env[pointer_value]
        key = self._barrier_at(pointer, thread)
        if cta is not None and pointer.storage is self.cta.shared:
            key = (id(cta.shared), key[1])
        barrier = self.barriers.get(key)
        if barrier is None:
            raise InterpretError("an mbarrier used before mbarrier.init")
        return barrier

    def _op_tile_mbarrier_arrive(self, op, mask):
        for t in np.flatnonzero(mask).tolist():
            self._existing(op.operands[0], t).arrive(int(self.warps_of([t])[0]))

    def _op_tile_mbarrier_arrive_expect_tx(self, op, mask):
        for t in np.flatnonzero(mask).tolist():
            barrier = self._existing(op.operands[0], t)
            barrier.expect(int(self.env[op.operands[1]][t]))
            barrier.arrive(int(self.warps_of([t])[0]))

    def _op_tile_mbarrier_wait(self, op, mask):
        pointer = self.env[op.operands[0]]
        threads = np.flatnonzero(mask)
        keys = np.stack([pointer.byte_offset[threads],
                         np.asarray(self.env[op.operands[1]])[threads] & 1], axis=1)
        entries = []
        for offset, parity in np.unique(keys, axis=0).tolist():
            mine = np.zeros(self.threads, bool)
            mine[threads[(keys == (offset, parity)).all(axis=1)]] = True
            entries.append((mine, self._existing(op.operands[0], int(np.flatnonzero(mine)[0])),
                            parity))
        return self._blocked(MbarrierWait(op, entries), mask)

    def _op_tile_tcgen05_commit(self, op, mask):
        ranks = self._env_uniform(op.operands[1], mask, "the multicast mask") \
            if len(op.operands) > 1 else None
        for t in np.flatnonzero(mask).tolist():
            warp = int(self.warps_of([t])[0])
            if ranks is None:
                self._existing(op.operands[0], t).arrive(warp)
                continue
            for rank, cta in enumerate(self.cluster):
                if ranks >> rank & 1:
                    self._existing(op.operands[0], t, cta).arrive(warp)

    def _op_tile_tmem_alloc(self, op, mask):
        ncols = _int_attr(op, "ncols")
        cta = self.cta
        for warp in range(0, self.threads, 32):
            active = mask[warp:warp + 32]
            if not active.any():
                continue
            if not active.all():
                raise InterpretError("tcgen05.alloc is warp-collective: a whole warp runs it")
            if cta.tmem_columns + ncols > TMEM_COLUMNS:
                raise InterpretError(f"tcgen05.alloc of {ncols} columns with "
                                     f"{cta.tmem_columns} of {TMEM_COLUMNS} taken")
            pointer = self.env[op.operands[0]]
            elem = Elem("i32", np.dtype(np.int32), np.dtype(np.int32))
            rows, index = pointer.view(elem, np.array([warp]))
            self._pointer_access(pointer, elem, np.array([warp]), True, op)
            pointer.storage.typed(elem)[rows, index] = cta.tmem_columns
            cta.tmem_columns += ncols


def _byte_rows(elements: np.ndarray, itemsize: int) -> np.ndarray:
    """(elements, itemsize) byte offsets of elements of a storage typed by their size."""
    return elements.reshape(-1, 1) * itemsize + np.arange(itemsize)


def _spread(w) -> bool:
    """Whether a register window's layout spreads it over threads."""
    return any(a in THREAD_AXES for a in w.type.layout.axes())
