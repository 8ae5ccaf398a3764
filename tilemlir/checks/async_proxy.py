"""tile-check-async-proxy: no async-proxy read of shared memory that generic-proxy writes reach
without a fence.proxy.async between them.

The PTX memory model keeps two proxies apart: ordinary loads and stores (st.shared, stmatrix,
cp.async) are the generic proxy; wgmma and tcgen05.mma operand reads and TMA stores read shared
memory through the async proxy. A generic write becomes visible to an async-proxy read only
through `fence.proxy.async` (tile.fence {kind = "proxy_async_shared"}) between them; a barrier
alone is not enough. Forgetting it works most of the time and corrupts results now and then.

The check runs on tile IR, before tile-dispatch, because there every access is still one op on a
buffer whose storage is known (its root tile.alloc_shared: a byte range of the pool), and the
proxy of each access does not depend on the variant dispatch will pick:

  generic-proxy writes   tile.copy, tile.fill, tile.cast, tile.gemm into shared memory, and
                         tile.copy_async global -> shared without a barrier (cp.async; with a
                         barrier operand it is TMA, whose writes are the async proxy already)
  async-proxy reads      tile.gemm_async's A and B in shared memory (wgmma, tcgen05.mma) and
                         tile.copy_async shared -> global (TMA store)
  fence                  tile.fence {kind = "proxy_async_shared"}

After dispatch the same accesses are pointer arithmetic on one pool, and which store belongs to
which buffer would have to be recovered.

The analysis is a forward "pending generic writes" data flow over the structured control flow of
each kernel, conservative in one direction (it may reject, never silently accept a missing fence
on a path it sees): ops in program order within a block; scf.if joins both branches (a missing
else is the path through); every other op with regions (scf.for, scf.while, ...) may run its
regions any number of times, so their state is iterated to a fixpoint (a write late in a loop
body reaches a read at the top of the next iteration) and joined with the path that skips them.
A fence clears every pending write: threads are not told apart, so a fence executed by other
threads than the writers (or under a condition the writers do not take) is the programmer's
responsibility, as is the barrier that orders the fence before the read. Two buffers conflict
when their roots' byte ranges overlap (windows are widened to their whole root). Buffers without
a known root are left to tile-dispatch, which reports them.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from tilemlir.ir.dialect import OPS
from tilemlir.ir.types import BufferType, is_buffer_type, parse_buffer_type
from tilemlir.layout import LayoutError

FIX = ("add T.ptx.fence.proxy_async() after the write, before the barrier that orders it "
       "before the read")


@dataclass(frozen=True)
class _Access:
    op: ir.Operation
    operand: str
    lo: int            # byte range of the root allocation in the shared-memory pool
    hi: int

    def describe(self, located: bool = True) -> str:
        where = f" at {_where(self.op.location)}" if located else ""
        return f"'{self.op.name}' (operand {self.operand.upper()}){where}"


def _where(loc: ir.Location) -> str:
    """file:line:col for a file location, else MLIR's form."""
    if loc.is_a_file():
        return f"{loc.filename}:{loc.start_line}:{loc.start_col}"
    return str(loc)


def _operand(op: ir.Operation, name: str) -> ir.Value | None:
    names = OPS[op.name.removeprefix("tile.")].operands
    i = names.index(name)
    return op.operands[i] if i < len(op.operands) else None


def _buffer(value: ir.Value | None) -> BufferType | None:
    """The buffer type of `value`, or None where it is not one or is malformed (tile-dispatch
    verifies buffer types and reports those)."""
    if value is None or not is_buffer_type(value.type):
        return None
    try:
        buf = parse_buffer_type(value.type)
        buf.layout.checked_shape(buf.shape)
    except (LayoutError, ValueError):
        return None
    return buf


def _scope(value: ir.Value | None) -> str | None:
    buf = _buffer(value)
    return buf.scope if buf else None


def _root(value: ir.Value) -> ir.Value:
    """The buffer a chain of windows (tile.slice, tile.view) starts from."""
    while not isinstance(value.owner, ir.Block) and value.owner.operation.name in (
            "tile.slice", "tile.view"):
        value = value.owner.operands[0]
    return value


def _shared_range(value: ir.Value) -> tuple[int, int] | None:
    """Bytes [lo, hi) of the pool that `value`'s root tile.alloc_shared covers, or None."""
    root = _root(value)
    owner = root.owner
    buf = _buffer(root)
    if buf is None or isinstance(owner, ir.Block) or owner.operation.name != "tile.alloc_shared":
        return None
    offset = owner.attributes["offset"] if "offset" in owner.attributes else None
    if not isinstance(offset, ir.IntegerAttr):
        return None
    lo = ir.IntegerAttr(offset).value
    return lo, lo + -(-max(buf.layout.span("m"), 1) * buf.elem_bits // 8)


def _accesses(op: ir.Operation, names: tuple[str, ...]) -> list[_Access]:
    found = []
    for name in names:
        value = _operand(op, name)
        if _scope(value) != "shared":
            continue
        span = _shared_range(value)
        if span is not None:
            found.append(_Access(op, name, *span))
    return found


def generic_writes(op: ir.Operation) -> list[_Access]:
    """The shared-memory writes of `op` through the generic proxy."""
    name = op.name
    if name in ("tile.copy", "tile.fill", "tile.cast"):
        return _accesses(op, ("dst",))
    if name == "tile.gemm":
        return _accesses(op, ("d",))
    if name == "tile.copy_async" and _operand(op, "barrier") is None \
            and _scope(_operand(op, "src")) == "global":
        return _accesses(op, ("dst",))          # cp.async: the generic proxy
    return []


def async_reads(op: ir.Operation) -> list[_Access]:
    """The shared-memory reads of `op` through the async proxy."""
    if op.name == "tile.gemm_async":
        return _accesses(op, ("a", "b"))
    if op.name == "tile.copy_async" and _scope(_operand(op, "dst")) == "global":
        return _accesses(op, ("src",))          # TMA store
    return []


def _is_proxy_fence(op: ir.Operation) -> bool:
    return op.name == "tile.fence" and "kind" in op.attributes and \
        ir.StringAttr(op.attributes["kind"]).value == "proxy_async_shared"


class _Analysis:
    def __init__(self):
        self.writes: list[_Access] = []         # index = the id pending sets hold
        self._write_ids: dict[tuple, int] = {}
        self.missing: dict[tuple[int, int], tuple[_Access, _Access]] = {}
        self._reads: dict = {}                  # read op -> program-order number

    def _write_id(self, access: _Access) -> int:
        key = (access.op, access.operand)
        if key not in self._write_ids:
            self._write_ids[key] = len(self.writes)
            self.writes.append(access)
        return self._write_ids[key]

    def op(self, op: ir.Operation, pending: frozenset) -> frozenset:
        if _is_proxy_fence(op):
            return frozenset()
        for read in async_reads(op):
            order = self._reads.setdefault((op, read.operand), len(self._reads))
            for w in pending:
                write = self.writes[w]
                if write.lo < read.hi and read.lo < write.hi:
                    self.missing.setdefault((order, w), (write, read))
        if len(op.regions):
            pending = self.region_op(op, pending)
        writes = generic_writes(op)
        if writes:
            pending = pending | {self._write_id(w) for w in writes}
        return pending

    def block(self, block: ir.Block, pending: frozenset) -> frozenset:
        for op in block.operations:
            pending = self.op(op.operation, pending)
        return pending

    def region(self, region: ir.Region, pending: frozenset) -> frozenset:
        """A region's blocks in order; several blocks (unstructured flow) are iterated."""
        blocks = list(region.blocks)
        if len(blocks) == 1:
            return self.block(blocks[0], pending)
        return self._fixpoint(lambda s: self._blocks(blocks, s), pending)

    def _blocks(self, blocks, pending: frozenset) -> frozenset:
        for b in blocks:
            pending = self.block(b, pending)
        return pending

    def _fixpoint(self, body, pending: frozenset) -> frozenset:
        """State after `body` runs zero or more times from `pending`."""
        state = pending
        while True:
            after = state | body(state)
            if after == state:
                return state
            state = after

    def region_op(self, op: ir.Operation, pending: frozenset) -> frozenset:
        regions = list(op.regions)
        if op.name == "scf.if":
            then = self.region(regions[0], pending)
            other = self.region(regions[1], pending) if len(regions) > 1 and \
                len(regions[1].blocks) else pending
            return then | other
        return self._fixpoint(lambda s: self._regions(regions, s), pending)

    def _regions(self, regions, pending: frozenset) -> frozenset:
        for r in regions:
            pending = self.region(r, pending)
        return pending


def _kernels(root: ir.Operation) -> list[ir.Operation]:
    found = []

    def visit(op):
        if op.name in ("gpu.func", "func.func"):
            found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found


def check_async_proxy(root: ir.Operation) -> list[tuple[ir.Location, str]]:
    """(location, message) for each async-proxy read some generic write reaches unfenced: at
    the read, naming the write. Each function is analysed on its own."""
    problems = []
    for func in _kernels(root):
        analysis = _Analysis()
        for region in func.regions:
            analysis.region(region, frozenset())
        for _, (write, read) in sorted(analysis.missing.items(), key=lambda item: item[0]):
            overlap = f"[{max(write.lo, read.lo)}, {min(write.hi, read.hi)})"
            problems.append((read.op.location, (
                f"async-proxy read of shared memory by {read.describe(located=False)} may see "
                f"the generic-proxy write by {write.describe()} (bytes {overlap} of the pool) "
                f"with no fence.proxy.async between them: {FIX}")))
    return problems
