"""Runs a kernel's tile IR on the CPU: the threads of a CTA in lockstep, one CTA after another.

Every SSA scalar is a numpy vector with one entry per thread of the CTA, so thread ids, address
arithmetic, loads and stores are computed per thread, exactly as written. Control flow that
depends on the thread (scf.if on a thread id) runs each branch under a mask of the threads that
take it; loops must have the same bounds in every thread that runs them. A tile primitive runs
once per group of threads of its scope (a thread, a warp, a warpgroup, the CTA), as one
whole-tile operation on the operands' windows, each element read from and written to the thread
or the memory the operand's layout names (tilemlir.reference.memory).
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass

import numpy as np
from mlir import ir

from tilemlir.ir import kernel_abi
from tilemlir.ir.types import is_buffer_type
from tilemlir.reference.memory import (TMEM_COLUMNS, TMEM_LANES, Elem, InterpretError, Pointer,
                                       Root, Storage, Tile, buffer_type_of, elem_of, read,
                                       window, write)

_SCOPE_THREADS = {"thread": 1, "warp": 32, "warpgroup": 128}
_CMPI = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
         5: np.greater_equal, 6: np.less, 7: np.less_equal, 8: np.greater, 9: np.greater_equal}
_CMPF = {1: np.equal, 2: np.greater, 3: np.greater_equal, 4: np.less, 5: np.less_equal,
         6: np.not_equal, 8: np.equal, 9: np.greater, 10: np.greater_equal, 11: np.less,
         12: np.less_equal, 13: np.not_equal}


def _location(op) -> str:
    """`file:line: ` of the op's first file location (the kernel's Python line)."""
    loc = op.location
    while True:
        if loc.is_a_file():
            return f"{loc.filename}:{loc.start_line}: "
        if loc.is_a_name():
            loc = loc.child_loc
        elif loc.is_a_callsite():
            loc = loc.callee
        elif loc.is_a_fused() and loc.locations:
            loc = loc.locations[0]
        else:
            return ""


class _Located(InterpretError):
    pass


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


@dataclass
class _Barrier:
    """An mbarrier: the arrivals its phase expects, those and the transaction bytes still
    pending, and how many phases completed."""
    count: int
    pending: int
    tx: int = 0
    completed: int = 0

    def settle(self) -> None:
        if self.pending == 0 and self.tx == 0:
            self.completed += 1
            self.pending = self.count


class Machine:
    """One kernel launch: the global buffers, and per CTA its shared memory, tensor memory,
    barriers and threads."""

    def __init__(self, func, buffers: dict[int, Storage], scalars: dict[int, object],
                 out=None):
        self.func = func
        declared = kernel_abi.read(func)
        if declared.block is None:
            raise InterpretError(f"the kernel declares no {kernel_abi.BLOCK}")
        block = list(declared.block)
        if block[1:] != [1, 1]:
            raise InterpretError(f"blocks of {block} threads: the interpreter runs 1-D blocks")
        self.threads = block[0]
        self.grid = list(declared.grid)
        if declared.cluster not in (None, (1, 1, 1)):
            raise InterpretError("thread-block clusters: the interpreter runs one CTA at a time, "
                                 "so CTAs of a cluster cannot wait for each other")
        self.buffers, self.scalars = buffers, scalars
        self.out = out or sys.stdout
        self.tids = np.arange(self.threads)

    # ------------------------------------------------------------------ launch
    def run(self) -> None:
        gx, gy, gz = self.grid
        for z in range(gz):
            for y in range(gy):
                for x in range(gx):
                    self._run_cta((x, y, z))

    def _run_cta(self, cta) -> None:
        self.cta = cta
        self.env: dict = {}
        self.roots: dict = {}
        self.shared = Storage("shared", self._shared_bytes())
        self.tmem = Storage("tmem", TMEM_COLUMNS * 4, rows=TMEM_LANES)
        self.tmem_columns = 0
        self.barriers: dict = {}
        entry = self.func.regions[0].blocks[0]
        for i, arg in enumerate(entry.arguments):
            if i in self.scalars:
                self.env[arg] = np.full(self.threads, self.scalars[i],
                                        elem_of(arg.type).compute)
            else:
                self.env[arg] = i                      # a global buffer: its parameter index
        self._block(entry, np.ones(self.threads, bool))

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

    # ------------------------------------------------------------------ control flow
    def _block(self, block, mask: np.ndarray) -> list:
        """Runs the ops of `block` for the threads in `mask`; the values it yields."""
        for op in block.operations:
            op = op.operation
            if op.name in ("scf.yield", "gpu.return"):
                return [self.env[v] for v in op.operands]
            if not mask.any():
                continue
            try:
                handler = getattr(self, "_op_" + op.name.replace(".", "_"), None)
                if handler is None:
                    raise InterpretError(f"the interpreter does not model '{op.name}'")
                results = handler(op, mask)
            except _Located:
                raise
            except InterpretError as err:
                raise _Located(f"{_location(op)}{err}") from None
            if results is not None:
                for r, v in zip(op.results, results if isinstance(results, list) else [results]):
                    self.env[r] = v
        return []

    def _op_scf_if(self, op, mask):
        cond = self.env[op.operands[0]].astype(bool)
        then_values = self._block(op.regions[0].blocks[0], mask & cond)
        else_values = self._block(op.regions[1].blocks[0], mask & ~cond) \
            if len(op.regions) > 1 and op.regions[1].blocks else []
        if not op.results:
            return None
        if not (mask & cond).any():
            return else_values
        if not (mask & ~cond).any():
            return then_values
        return [np.where(cond, t, e) for t, e in zip(then_values, else_values)]

    def _op_scf_for(self, op, mask):
        lb, ub, step = (self._uniform(op.operands[i], mask, "the loop bound") for i in range(3))
        body = op.regions[0].blocks[0]
        carried = [self.env[v] for v in list(op.operands)[3:]]
        for i in range(lb, ub, step):
            self.env[body.arguments[0]] = np.full(self.threads, i, np.int64)
            for arg, value in zip(list(body.arguments)[1:], carried):
                self.env[arg] = value
            carried = self._block(body, mask)
        return carried

    def _uniform(self, value, mask, what: str) -> int:
        vals = self.env[value][mask]
        if np.any(vals != vals[0]):
            raise InterpretError(f"{what} differs across threads ({sorted(set(vals.tolist()))[:4]}"
                                 f"): the interpreter runs a loop in lockstep")
        return int(vals[0])

    # ------------------------------------------------------------------ scalars
    def _op_arith_constant(self, op, mask):
        attr = op.attributes["value"]
        t = op.results[0].type
        value = ir.FloatAttr(attr).value if isinstance(t, (ir.F16Type, ir.BF16Type, ir.F32Type,
                                                            ir.F64Type)) \
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

    def _op_gpu_block_id(self, op, mask):
        dim = "xyz".index(str(op.attributes["dimension"])[-2])
        return np.full(self.threads, self.cta[dim], np.int64)

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
    def _op_tile_global(self, op, mask):
        param = self.env[op.operands[0]]
        t = buffer_type_of(op.results[0].type)
        elem = elem_of(t.elem)
        storage = self.buffers[param]
        self.roots[op.results[0]] = Root(storage, t, elem,
                                         elements=storage.data.shape[1] // elem.itemsize)

    def _op_tile_alloc_shared(self, op, mask):
        t = buffer_type_of(op.results[0].type)
        elem = elem_of(t.elem)
        self.roots[op.results[0]] = Root(self.shared, t, elem, byte_base=_int_attr(op, "offset"),
                                         elements=max(t.layout.span("m"), 1))

    def _op_tile_alloc_local(self, op, mask):
        t = buffer_type_of(op.results[0].type)
        elem = elem_of(t.elem)
        span = max(t.layout.span("m"), 1)
        storage = Storage("local", span * elem.itemsize, rows=self.threads)
        self.roots[op.results[0]] = Root(storage, t, elem, elements=span)

    def _op_tile_tmem(self, op, mask):
        t = buffer_type_of(op.results[0].type)
        self.roots[op.results[0]] = Root(self.tmem, t, elem_of(t.elem),
                                         tmem_address=self.env[op.operands[0]].astype(np.int64))

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
        result = np.zeros(self.threads, elem.compute)
        result[threads] = elem.to_compute(pointer.storage.typed(elem)[rows, index])
        return result

    def _op_llvm_store(self, op, mask):
        value, pointer = self._operands(op)
        elem = elem_of(op.operands[0].type)
        threads = np.flatnonzero(mask)
        rows, index = pointer.view(elem, threads)
        pointer.storage.typed(elem)[rows, index] = elem.to_storage(value[threads])

    # ------------------------------------------------------------------ primitives
    def _groups(self, op, mask) -> list[np.ndarray]:
        """The groups of threads that each run one instance of a primitive of op's scope."""
        scope = _str_attr(op, "scope")
        if scope == "thread":
            return [np.array([t]) for t in np.flatnonzero(mask)]
        size = _SCOPE_THREADS.get(scope, self.threads)
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

    def _tile(self, value, group) -> Tile:
        """An operand for the threads `group`: a buffer's window, or a scalar (one per thread)."""
        if is_buffer_type(value.type):
            return read(self._window(value), group)
        scalars = self.env[value][group]
        return Tile(scalars.reshape(-1, 1) if len(group) > 1 else scalars[:1].reshape(1, 1),
                    np.ones((1,), bool))

    def _elementwise(self, op, mask, fn, operands) -> None:
        """dst = fn(*operands) element by element, operands broadcast against dst (numpy
        rules), for each group of threads of op's scope."""
        dst = self._window(op.operands[0])
        shape = dst.type.shape
        for group in self._groups(op, mask):
            tiles = [self._tile(v, group) for v in operands]
            if len(tiles) == 1 and tiles[0].values[0].size == dst.type.size:
                tiles = [Tile(tiles[0].values.reshape(tiles[0].values.shape[:1] + shape),
                              tiles[0].held.reshape(shape))]       # copy, cast: same size
            tiles = [t.aligned(len(shape)) for t in tiles]
            where = np.ones(shape, bool)
            for t in tiles:
                where = where & np.broadcast_to(t.held, shape)
            with np.errstate(all="ignore"):
                result = fn(*[_wide(t.values) for t in tiles])
            write(dst, group, np.asarray(result), where)

    def _op_tile_copy(self, op, mask):
        self._elementwise(op, mask, lambda x: x, op.operands[1:2])
        if op.name == "tile.copy_async" and len(op.operands) > 2:
            dst = self._window(op.operands[0])
            for group in self._groups(op, mask):
                self._complete_tx(op.operands[2], group[0],
                                  dst.type.size * dst.root.elem.itemsize)

    _op_tile_copy_async = _op_tile_copy
    _op_tile_cast = _op_tile_copy

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
            write(dst, group, index[None] + mine)

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
            src = self._tile(op.operands[1], group)
            if not src.held.all():
                raise InterpretError("the reduced tile is not held whole by the threads of the "
                                     "scope (its layout spreads it over other threads)")
            result = fn(_wide(src.values), axis=axis + 1, keepdims=True)
            write(dst, group, result.reshape(result.shape[:1] + dst.type.shape))

    def _whole(self, value, group, name: str) -> np.ndarray:
        tile = self._tile(value, group)
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
            A, B = self._whole(a, group, "A"), self._whole(b, group, "B")
            A = A.T if ir.BoolAttr(op.attributes["transpose_a"]).value else A
            B = B.T if ir.BoolAttr(op.attributes["transpose_b"]).value else B
            result = np.float32(alpha) * (A @ B)
            if beta != 0.0:
                result = result + np.float32(beta) * self._whole(c, group, "C")
            write(self._window(d), group, result[None])

    def _op_tile_gemm_async(self, op, mask):
        if _int_attr(op, "cta_group") != 1:
            raise InterpretError("cta_group=2 (CTA pairs) is not modelled")
        d, a, b, accum = op.operands
        transpose_b = ir.BoolAttr(op.attributes["transpose_b"]).value    # B stored K x N
        for group in self._groups(op, mask):
            B = self._whole(b, group, "B")
            result = self._whole(a, group, "A") @ (B if transpose_b else B.T)
            if self._same_value(accum, group, "accum"):
                result = result + self._whole(d, group, "D")
            write(self._window(d), group, result[None])

    # ------------------------------------------------------------------ synchronisation
    def _op_tile_cta_sync(self, op, mask):
        if not mask.all():
            raise InterpretError(f"a CTA barrier reached by {int(mask.sum())} of the "
                                 f"{self.threads} threads: on the GPU it never opens")

    _op_tile_cluster_sync = _op_tile_cta_sync

    def _op_tile_named_barrier(self, op, mask):
        threads = _int_attr(op, "threads")
        if int(mask.sum()) != threads:
            raise InterpretError(f"bar.sync for {threads} threads reached by {int(mask.sum())} at "
                                 f"once: a barrier between roles running different code is not "
                                 f"modelled (the interpreter runs branches one after the other)")

    def _op_tile_barrier_arrive(self, op, mask):
        raise InterpretError("bar.arrive hands off between roles running different code at "
                             "once, which the interpreter (branches one after the other) does "
                             "not model")

    def _no_op(self, op, mask):
        return None

    # Completion is immediate in the interpreter, so fences, waits for async groups and
    # register reconfiguration have nothing to order.
    _op_tile_fence = _op_tile_tcgen05_fence = _op_tile_setmaxnreg = _no_op
    _op_tile_async_commit = _op_tile_async_wait = _op_tile_tcgen05_wait = _no_op
    _op_tile_tmem_relinquish = _op_tile_tmem_dealloc = _no_op

    def _op_tile_elect_sync(self, op, mask):
        elected = np.zeros(self.threads, bool)
        for warp in range(0, self.threads, 32):
            active = np.flatnonzero(mask[warp:warp + 32])
            if len(active):
                elected[warp + active[0]] = True
        return elected

    def _op_tile_cluster_ctarank(self, op, mask):
        return np.zeros(self.threads, np.int32)

    def _op_tile_mapa(self, op, mask):
        pointer, rank = self._operands(op)
        if np.any(rank[mask] != 0):
            raise InterpretError("mapa to another CTA of a cluster is not modelled")
        return pointer

    def _barrier(self, pointer_value, thread: int) -> _Barrier | tuple:
        pointer = self.env[pointer_value]
        key = (id(pointer.storage), int(pointer.byte_offset[thread]))
        return self.barriers.get(key), key

    def _op_tile_mbarrier_init(self, op, mask):
        for t in np.flatnonzero(mask):
            count = int(self.env[op.operands[1]][t])
            _, key = self._barrier(op.operands[0], t)
            self.barriers[key] = _Barrier(count, count)

    def _existing(self, pointer_value, thread) -> _Barrier:
        barrier, _ = self._barrier(pointer_value, thread)
        if barrier is None:
            raise InterpretError("an mbarrier used before mbarrier.init")
        return barrier

    def _op_tile_mbarrier_arrive(self, op, mask):
        for t in np.flatnonzero(mask):
            self._arrive(self._existing(op.operands[0], t))

    def _arrive(self, barrier: _Barrier) -> None:
        barrier.pending -= 1
        if barrier.pending < 0:
            raise InterpretError(f"more arrivals on an mbarrier than its count {barrier.count}")
        barrier.settle()

    def _op_tile_mbarrier_arrive_expect_tx(self, op, mask):
        for t in np.flatnonzero(mask):
            barrier = self._existing(op.operands[0], t)
            barrier.tx += int(self.env[op.operands[1]][t])
            self._arrive(barrier)

    def _complete_tx(self, pointer_value, thread: int, nbytes: int) -> None:
        barrier = self._existing(pointer_value, thread)
        barrier.tx -= nbytes
        barrier.settle()

    def _op_tile_mbarrier_wait(self, op, mask):
        for t in np.flatnonzero(mask):
            barrier = self._existing(op.operands[0], t)
            parity = int(self.env[op.operands[1]][t]) & 1
            if barrier.completed % 2 == parity:
                raise InterpretError(
                    f"thread {t} waits for the mbarrier phase of parity {parity}, which still "
                    f"expects {barrier.pending} of {barrier.count} arrivals and {barrier.tx} "
                    f"transaction bytes: on the GPU this waits for work that, in program "
                    f"order, comes later (roles that hand off through barriers are not "
                    f"modelled), or forever")

    def _op_tile_tcgen05_commit(self, op, mask):
        if len(op.operands) > 1:
            raise InterpretError("tcgen05.commit to a cluster's barriers is not modelled")
        for t in np.flatnonzero(mask):
            self._arrive(self._existing(op.operands[0], t))

    def _op_tile_tmem_alloc(self, op, mask):
        ncols = _int_attr(op, "ncols")
        for warp in range(0, self.threads, 32):
            active = mask[warp:warp + 32]
            if not active.any():
                continue
            if not active.all():
                raise InterpretError("tcgen05.alloc is warp-collective: a whole warp runs it")
            if self.tmem_columns + ncols > TMEM_COLUMNS:
                raise InterpretError(f"tcgen05.alloc of {ncols} columns with "
                                     f"{self.tmem_columns} of {TMEM_COLUMNS} taken")
            pointer = self.env[op.operands[0]]
            elem = Elem("i32", np.dtype(np.int32), np.dtype(np.int32))
            rows, index = pointer.view(elem, np.array([warp]))
            pointer.storage.typed(elem)[rows, index] = self.tmem_columns
            self.tmem_columns += ncols
