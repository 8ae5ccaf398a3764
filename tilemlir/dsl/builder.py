"""The kernel under construction: its module, function, launch shape and current location.

Intrinsics (T.lane_id, Tx.cta.copy, ...) reach the kernel being built through `current()`; the
interpreter sets it for the duration of a build and sets the location of every op to the Python
line being interpreted, so dispatch diagnostics point at the kernel's source.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import gpu

from tilemlir.checks.verify import MAX_CLUSTER_CTAS, MAX_NON_PORTABLE_CLUSTER_CTAS
from tilemlir.dsl.values import KernelError
from tilemlir.ir import emit, kernel_abi
from tilemlir.ir.context import shared_context

_current: list["KernelBuilder"] = []


def current() -> "KernelBuilder":
    if not _current:
        raise KernelError("tilemlir intrinsics can only be used inside a kernel body")
    return _current[-1]


class KernelBuilder:
    """Builds `gpu.module @name { gpu.func @name(...) kernel }` in a fresh Context."""

    def __init__(self, name: str, filename: str):
        self.name = name
        self.filename = filename
        self.context = shared_context()
        self.location = ir.Location.file(filename, 1, 1, context=self.context)
        self.line = 1                         # the Python line being interpreted
        self.file = filename                  # ... and its file (a macro's own)
        with self.context, self.location:
            self.module = ir.Module.create()
            self.module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
        self.func = None
        self.entry = None
        self.param_names: tuple[str, ...] = ()
        self.grid: list[int] | None = None
        self.grid_exprs: list = []              # per grid dim: a run-time DimExpr or None
        self.dims: dict = {}                    # run-time dim -> Scalar (its hidden parameter)
        self.dim_args: list = []                # (run-time dim, kernel argument index)
        self.extents: list = []                 # (parameter, leading extent as JSON)
        self.cluster: list[int] | None = None
        self.non_portable_cluster = False
        self.min_ctas: int | None = None         # CTAs an SM must hold at once (registers)
        self.threads: dict[str, int] = {}     # declared thread hierarchy: level -> extent
        self.pool = None
        self._tid = None
        self._warp_index: dict[int, ir.Value] = {}

    # ------------------------------------------------------------------ structure
    def create_function(self, param_types: list[ir.Type], param_names: list[str]) -> list:
        """The gpu.func (at the current location, the `def` line) with an empty body."""
        with self.context, self.location:
            with ir.InsertionPoint(self.module.body):
                gmod = gpu.GPUModuleOp(self.name)
                gmod.bodyRegion.blocks.append()
            with ir.InsertionPoint(gmod.bodyRegion.blocks[0]):
                ftype = ir.FunctionType.get(param_types, [])
                self.func = gpu.GPUFuncOp(ir.TypeAttr.get(ftype), sym_name=self.name,
                                          kernel=True)
                self.entry = self.func.body.blocks.append(
                    *param_types, arg_locs=[self.location] * len(param_types))
                with ir.InsertionPoint(self.entry):
                    gpu.ReturnOp([])
        self.param_names = tuple(param_names)
        return list(self.entry.arguments)

    def body_insertion_point(self) -> ir.InsertionPoint:
        """Before the gpu.return of the entry block."""
        return ir.InsertionPoint(self.entry.operations[len(self.entry.operations) - 1])

    def finish(self) -> ir.Module:
        if self.pool is not None and not self.pool.committed:
            raise KernelError("the shared-memory pool was never committed (call pool.commit())")
        grid_exprs = tuple(e.to_json() if e is not None else "" for e in self.grid_exprs)
        declaration = kernel_abi.KernelDeclaration(
            self.param_names, self.block_size(), self.grid_size(),
            tuple(self._cluster_size()) if self.cluster is not None else None,
            tuple(self.dim_args), tuple(self.extents),
            grid_exprs + ("",) * (3 - len(grid_exprs)) if any(grid_exprs) else (),
            self.non_portable_cluster)
        with self.context:
            kernel_abi.declare(self.func.operation, declaration)
            if self.min_ctas is not None:      # ptxas: .minnctapersm, registers capped to fit
                self.func.attributes["nvvm.minctasm"] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(32), self.min_ctas)
        return self.module

    # ------------------------------------------------------------------ launch shape
    def set_grid(self, dims: list[int], dynamic=None) -> None:
        """The grid; `dynamic`: per dim, a run-time expression (DimExpr) or None, whose dims
        stand as 1 in `dims`."""
        dynamic = list(dynamic) if dynamic is not None else [None] * len(dims)
        if self.grid is not None and (list(dims) != self.grid or dynamic != self.grid_exprs):
            raise KernelError(f"the grid is declared twice: {self.grid} and {list(dims)}")
        if not 1 <= len(dims) <= 3 or any(not isinstance(d, int) or d < 1 for d in dims):
            raise KernelError(f"the grid must be 1 to 3 positive integers, got {list(dims)}")
        for e in dynamic:
            if e is not None:
                for name in sorted(e.names()):
                    self.dim_value(name)            # every dim of it is known at launch
        self.grid = list(dims)
        self.grid_exprs = dynamic
        self._check_cluster()

    # ------------------------------------------------------------------ run-time dims
    def bind_dims(self, values: dict, args: list, extents: list) -> None:
        """The run-time dims (name -> the Scalar of its hidden parameter), their kernel
        arguments (name, index) and the parameters whose leading extent is an expression."""
        self.dims, self.dim_args, self.extents = dict(values), list(args), list(extents)

    def dim_value(self, name: str):
        value = self.dims.get(name)
        if value is None:
            raise KernelError(f"T.dynamic({name!r}) sizes none of the kernel's buffer "
                              f"parameters, so nothing tells its value when the kernel is "
                              f"called (make it the leading extent of one)")
        return value

    def set_cluster(self, dims: list[int], non_portable: bool = False) -> None:
        if self.cluster is not None and list(dims) != self.cluster:
            raise KernelError(f"the cluster shape is declared twice: {self.cluster} and "
                              f"{list(dims)}")
        if not 1 <= len(dims) <= 3:
            raise KernelError(f"the cluster shape is 1 to 3 extents, got {list(dims)}")
        self.cluster = list(dims)
        self.non_portable_cluster = non_portable
        self._check_cluster()

    def _check_cluster(self) -> None:
        """Checks the cluster shape as soon as it (and the grid) are declared, so that the
        error names that line; finish() checks again for a grid declared after it."""
        if self.cluster is not None:
            self._cluster_size(grid_known=self.grid is not None)

    def _cluster_size(self, grid_known: bool = True) -> list[int]:
        """The cluster shape as 3 extents, checked against the grid (the launch needs whole
        clusters) and the portable limit of 8 CTAs (16 with the non-portable opt-in)."""
        cluster = self.cluster + [1] * (3 - len(self.cluster))
        grid = self.grid_size()
        known = [e is None for e in self.grid_exprs] + [True] * (3 - len(self.grid_exprs))
        # (a run-time grid extent is the kernel's to make whole clusters of)
        if grid_known and any(g % c for g, c, k in zip(grid, cluster, known) if k):
            raise KernelError(f"the grid {list(grid)} is not made of whole clusters of "
                              f"{cluster}")
        ctas = cluster[0] * cluster[1] * cluster[2]
        if self.non_portable_cluster and ctas > MAX_NON_PORTABLE_CLUSTER_CTAS:
            raise KernelError(f"a cluster of {cluster} has {ctas} CTAs, more than "
                              f"{MAX_NON_PORTABLE_CLUSTER_CTAS} (the most any GPU runs)")
        if not self.non_portable_cluster and ctas > MAX_CLUSTER_CTAS:
            raise KernelError(f"a cluster of {cluster} has more than {MAX_CLUSTER_CTAS} CTAs "
                              f"(the portable cluster size; up to "
                              f"{MAX_NON_PORTABLE_CLUSTER_CTAS} with "
                              f"T.cluster_shape(..., non_portable=True))")
        return cluster

    def grid_size(self) -> tuple[int, int, int]:
        g = (self.grid or [1]) + [1] * (3 - len(self.grid or [1]))
        return tuple(g)

    def declare_threads(self, level: str, extent: int) -> None:
        if not isinstance(extent, int) or extent < 1:
            raise KernelError(f"{level} extent must be a positive integer, got {extent!r}")
        known = self.threads.get(level)
        if known is not None and known != extent:
            raise KernelError(f"{level} declared with extent {known} and {extent}")
        self.threads[level] = extent

    def block_size(self) -> tuple[int, int, int]:
        t = self.threads
        if "thread" in t:
            return (t["thread"], 1, 1)
        if not t:
            raise KernelError("the kernel declares no threads: use T.lane_id, T.warp_id, "
                              "T.warp_id_in_wg, T.warpgroup_id or T.thread_id")
        lanes = t.get("lane", 32)
        if lanes != 32:
            raise KernelError(f"T.lane_id must have extent 32, got {lanes}")
        if "warp" in t:
            return (32 * t["warp"], 1, 1)
        return (32 * t.get("warp_in_wg", 1) * t.get("warpgroup", 1), 1, 1)

    def thread_id(self) -> ir.Value:
        """threadIdx.x, built once at the top of the kernel."""
        if self._tid is None:
            with ir.InsertionPoint.at_block_begin(self.entry), self.location:
                self._tid = emit.thread_id_x()
        return self._tid

    def warp_index(self, divisor: int) -> ir.Value:
        """threadIdx.x // divisor (a multiple of 32: a warp's or warpgroup's index) read from
        lane 0 (emit.warp_uniform), built once at the top of the kernel: there every thread
        runs, so the warp-wide shuffle is never reached by part of a warp, wherever the
        kernel asks for the index."""
        value = self._warp_index.get(divisor)
        if value is None:
            with ir.InsertionPoint.at_block_begin(self.entry), self.location:
                value = emit.warp_uniform(emit.div(emit.thread_id_x(), divisor))
            self._warp_index[divisor] = value
        return value

    def at(self, line: int, col: int, filename: str | None = None) -> "_AtLine":
        """A context in which ops get the location of `line` (1-based) and `col` (0-based) of
        `filename` (default: the kernel's file; a macro's statements name their own)."""
        return _AtLine(self, line, col, filename or self.filename)


class _AtLine:
    """KernelBuilder.at's context: a class, since the interpreter enters one per statement and
    a generator-based context manager costs 1.5 us more each time."""

    __slots__ = ("builder", "location", "line", "file", "saved")

    def __init__(self, builder: KernelBuilder, line: int, col: int, filename: str):
        self.builder = builder
        self.location = ir.Location.file(filename, line, col + 1, context=builder.context)
        self.line = line
        self.file = filename

    def __enter__(self) -> None:
        b = self.builder
        self.saved = b.location, b.line, b.file
        b.location, b.line, b.file = self.location, self.line, self.file
        self.location.__enter__()

    def __exit__(self, *exc) -> None:
        self.location.__exit__(*exc)
        self.builder.location, self.builder.line, self.builder.file = self.saved


def product(shape) -> int:
    return math.prod(shape)
