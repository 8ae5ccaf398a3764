"""Tile primitives with an execution scope, and the escapes to synchronisation instructions.

    Tx.cta.copy(Asmem[:, :], A[m:m + 128, k:k + 64])     # all threads of the CTA cooperate
    Tx.wg.copy_async(Dreg_wg[:, :], tmem[:, :128])       # one warpgroup
    Tx.warp.gemm(D, A, B, D, beta=1.0)                   # one warp (mma.sync)
    Tx.gemm_async(tmem[:, :128], As, Bs, accum=i != 0)   # one thread (the elected one)
    T.ptx.mbarrier.try_wait(bar.ptr_to([0]), phase)
    T.cuda.cta_sync()

Every primitive takes `dispatch="variant"` to pin the variant the dispatcher uses.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from tilemlir.checks.verify import NAMED_BARRIERS
from tilemlir.dsl.buffers import TileBuffer
from tilemlir.dsl.values import KernelError, Scalar, as_scalar
from tilemlir.ir import emit

def _i64_attr(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(emit.i64(), int(v))


def _buffer(x, what: str) -> ir.Value:
    if not isinstance(x, TileBuffer):
        raise KernelError(f"{what} must be a buffer, got {type(x).__name__}")
    return x.value


def _op(name: str, operands: list, attributes: dict, dispatch: str | None, results=()):
    attrs = dict(attributes)
    if dispatch is not None:
        attrs["dispatch"] = ir.StringAttr.get(dispatch)
    return ir.Operation.create(f"tile.{name}", results=list(results), operands=operands,
                               attributes=attrs)


def _cta_mask(mask, what: str) -> int:
    """A static 16-bit mask of cluster CTA ranks (at least one set)."""
    if not isinstance(mask, int) or isinstance(mask, bool) or not 0 < mask < 1 << 16:
        raise KernelError(f"{what} multicast is a 16-bit mask of cluster CTA ranks, got "
                          f"{mask!r}")
    return mask


def _bounds(bounds, dst, what: str) -> list[ir.Value]:
    """The bounds operands of a masked copy: one index value per dim of `dst`'s window, the
    extent in range along it; then, where some dim is given as a (lower, upper) pair, one
    lower bound per dim (0 for the dims given by their extent alone)."""
    rank = len(dst.shape)
    if not isinstance(bounds, (tuple, list)) or len(bounds) != rank:
        raise KernelError(f"{what}: bounds gives the valid extent of each of the window's "
                          f"{rank} dims, got {bounds!r}")

    def value(b, where: str) -> ir.Value:
        if isinstance(b, bool) or not (isinstance(b, (int, Scalar)) or hasattr(b, "__index__")):
            raise KernelError(f"{what}: {where} must be an int or a device integer, got {b!r}")
        return as_scalar(b, emit.index()).value

    uppers, lowers = [], []
    for d, b in enumerate(bounds):
        if isinstance(b, (tuple, list)):
            if len(b) != 2:
                raise KernelError(f"{what}: bounds[{d}] is an extent or a (lower, upper) pair, "
                                  f"got {b!r}")
            lowers.append(value(b[0], f"bounds[{d}][0]"))
            uppers.append(value(b[1], f"bounds[{d}][1]"))
        else:
            lowers.append(None)
            uppers.append(value(b, f"bounds[{d}]"))
    if all(lo is None for lo in lowers):
        return uppers
    zero = emit.const(0, emit.index())
    return uppers + [zero if lo is None else lo for lo in lowers]


def _fill_attr(fill, dst) -> ir.Attribute:
    """`fill` (default 0) as an attribute of dst's element type."""
    elem = dst.dtype
    value = 0 if fill is None else fill
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise KernelError(f"copy: fill must be a number, got {fill!r}")
    if isinstance(elem, ir.IntegerType):
        if not float(value).is_integer():
            raise KernelError(f"copy: fill {fill!r} is not an integer, and the tile holds "
                              f"{elem}")
        return ir.IntegerAttr.get(elem, int(value))
    return ir.FloatAttr.get(elem, float(value))


def _bool(v) -> ir.Value:
    return as_scalar(v, emit.i1()).value if not isinstance(v, bool) else emit.const(int(v), emit.i1())


class Scope:
    """The primitives run by the threads of one execution scope together.

    `Tx.thread` (also plain `Tx.`), `Tx.warp` (32 threads), `Tx.wg` / `Tx.warpgroup` (128),
    `Tx.cta` (the whole block) and `Tx.cluster`. Every thread of the scope must reach the call
    (dispatch rejects one under a branch that splits the scope); at thread scope each thread that
    reaches it runs it alone (TMA and tcgen05.mma are issued that way, under a branch that keeps
    one thread). Every primitive takes `dispatch="variant"` to pin the variant.

        Tx.cta.copy(As, A[m:m + 128, k:k + 64])     # all threads of the CTA cooperate
        Tx.wg.gemm_async(acc, As, Bs, accum=True)   # one warpgroup: wgmma"""

    def __init__(self, name: str):
        self.name = name

    def _scope(self) -> dict:
        return {"scope": ir.StringAttr.get(self.name)}

    def copy(self, dst, src, bounds=None, fill=None, dispatch: str | None = None) -> None:
        """dst = src for two tiles of one shape and element type (global, shared or registers).

        The threads of the scope share the work. The variant follows from the operands' memories
        and layouts: 16-byte chunks per thread between global and shared memory, ldmatrix /
        stmatrix for 16-bit tiles between shared memory and registers, vector or per-element
        accesses between registers and memory (each thread moves the elements it holds).

            Tx.cta.copy(As, A[m:m + 128, k:k + 64])         # global -> shared
            Tx.warp.copy(a_frag, As[0:16, :])               # shared -> registers (ldmatrix)
            Tx.wg.copy(D[m:m + 64, n:n + 128], out)         # registers -> global

        With `bounds` (the valid extent of the window along each dim, ints or device values),
        only elements whose index is below the bound in every dim are in range: reads out of
        range give `fill` (default 0; e.g. float("-inf") before a max), writes out of range are
        skipped. A window of a global buffer may then hang past the buffer's edge (a ragged
        tile):

            Tx.cta.copy(As, A[m:m + 128, k:k + 64], bounds=(M - m, K - k))
            Tx.wg.copy(D[m:m + 64, n:n + 128], out, bounds=(M - m, N - n))

        A dim's bound may be a (lower, upper) pair: indices lower <= i < upper are in range
        (a window that starts before its data, e.g. on the 16-byte boundary below a row that
        starts at a run-time offset, so that the accesses stay 16 bytes wide but at its ends):

            Tx.cta.copy(Y[0:1, start:start + width], y, bounds=(1, (lead, lead + N)))"""
        operands = [_buffer(dst, "dst"), _buffer(src, "src")]
        if bounds is None:
            if fill is not None:
                raise KernelError("copy: fill is the value of elements out of bounds; pass "
                                  "bounds too")
            _op("copy", operands, self._scope(), dispatch)
            return
        attrs = dict(self._scope(), fill=_fill_attr(fill, dst))
        _op("copy_masked", operands + _bounds(bounds, dst, "copy"), attrs, dispatch)

    def copy_async(self, dst, src, barrier=None, multicast: int | None = None, bounds=None,
                   dispatch: str | None = None) -> None:
        """Starts an asynchronous copy dst <- src (TMA, cp.async or tcgen05.ld).

        - global -> shared with `barrier` (an mbarrier pointer), one thread: a TMA load completing
          on the barrier (`T.ptx.mbarrier.arrive_expect_tx` first). The tensor map comes from the
          shared tile's layout; the runtime encodes it and passes it to the kernel. Reads past
          the global buffer's edges give zeros.
        - shared -> global, one thread: a TMA store (`T.ptx.bulk.commit_group()`, `wait_group`),
          clipped at the buffer's edges.
        - global -> shared without a barrier, the scope's threads: cp.async
          (`T.ptx.cp_async.commit_group()`, `wait_group(n)`). With `bounds` (the valid extent
          of the window per dim), elements at or past a bound read as zeros (cp.async's zero
          fill), so the window may hang past the buffer's edge.
        - tensor memory -> registers, warp or warpgroup scope: tcgen05.ld (then
          `T.ptx.tcgen05.wait.ld()`).

            if T.ptx.elect_sync():
                T.ptx.mbarrier.arrive_expect_tx(full.ptr_to([s]), stage_bytes)
                Tx.copy_async(As[s * 128:(s + 1) * 128, :], A[m:m + 128, k:k + 64],
                              full.ptr_to([s]))

        With `multicast` (a mask of cluster CTA ranks, e.g. 0b11 for both CTAs of a pair),
        `src` lands at `dst`'s offset in the shared memory of every CTA of the mask and
        completes on the barrier at `barrier`'s offset in each (TMA multicast)."""
        operands = [_buffer(dst, "dst"), _buffer(src, "src")]
        if bounds is not None:
            if barrier is not None or multicast is not None:
                raise KernelError("copy_async: bounds mask cp.async copies; a TMA copy "
                                  "(barrier=...) reads zeros past its global buffer's edges "
                                  "without bounds")
            _op("copy_async_masked", operands + _bounds(bounds, dst, "copy_async"),
                self._scope(), dispatch)
            return
        if multicast is not None:
            if barrier is None:
                raise KernelError("copy_async with multicast completes on a barrier in each "
                                  "CTA of the mask: pass barrier")
            operands += [barrier, emit.const(_cta_mask(multicast, "copy_async"),
                                              ir.IntegerType.get_signless(16))]
            _op("copy_async_multicast", operands, self._scope(), dispatch)
            return
        if barrier is not None:
            operands.append(barrier)
        _op("copy_async", operands, self._scope(), dispatch)

    def gemm(self, D, A, B, C, transpose_A: bool = False, transpose_B: bool = False,
             alpha: float = 1.0, beta: float = 0.0, dispatch: str | None = None) -> None:
        """D = alpha * A . B + beta * C on register tiles, at warp scope (mma.sync).

        One mma.sync m16n8k16 (or k8) per atom: A, B, C and D in the fragment layouts of
        `T.MmaSync(k).fragments(M, N, K)`, f16 or bf16 inputs, f32 C and D. With `transpose_A`
        (`transpose_B`) A is held as K x M (B as N x K). alpha must be 1, beta 0 or 1.

            Tx.warp.gemm(d, a, b, d, beta=1.0)      # d += a @ b"""
        f32 = ir.F32Type.get()
        attrs = dict(self._scope(), alpha=ir.FloatAttr.get(f32, float(alpha)),
                     beta=ir.FloatAttr.get(f32, float(beta)),
                     transpose_a=ir.BoolAttr.get(bool(transpose_A)),
                     transpose_b=ir.BoolAttr.get(bool(transpose_B)))
        _op("gemm", [_buffer(D, "D"), _buffer(A, "A"), _buffer(B, "B"), _buffer(C, "C")],
            attrs, dispatch)

    def gemm_async(self, D, A, B, accum=False, cta_group: int = 1, transpose_B: bool = False,
                   dispatch: str | None = None) -> None:
        """Starts D (+)= A . B^T on the tensor cores: wgmma or tcgen05.mma.

        B is (N x K), K-major, in shared memory; with transpose_B=True B is (K x N), N contiguous,
        and D (+)= A . B (an MN-major B, e.g. attention's V tile). `accum` (a bool or a device
        bool) adds to D instead of overwriting it.

        - wgmma (sm_90a, `Tx.wg`): D an f32 register tile in `T.wgmma_accumulator_layout(M, N)`;
          A in shared memory or in registers in `T.wgmma_a_layout(M, K)`. The call fences and
          commits its own group: wait with `T.ptx.wgmma.wait_group(n)`.
        - tcgen05.mma (sm_100a, `Tx.`, one thread): D in tensor memory; `cta_group=2` computes over
          a CTA pair (issued by the leader). Completion: `T.ptx.tcgen05.commit(barrier)`.

            Tx.wg.gemm_async(acc, As[s * 64:(s + 1) * 64, :], Bs[s * 128:(s + 1) * 128, :],
                             accum=True)
            T.ptx.wgmma.wait_group(0)"""
        if not isinstance(transpose_B, bool):
            raise KernelError(f"gemm_async: transpose_B must be True or False, got "
                              f"{transpose_B!r}")
        if cta_group == 2:
            from tilemlir.analysis.cta_pair import leader_only_reason
            reason = leader_only_reason(ir.InsertionPoint.current.block, "gemm_async")
            if reason:
                raise KernelError(reason)
        attrs = dict(self._scope(), cta_group=_i64_attr(cta_group),
                     transpose_b=ir.BoolAttr.get(transpose_B))
        _op("gemm_async", [_buffer(D, "D"), _buffer(A, "A"), _buffer(B, "B"), _bool(accum)],
            attrs, dispatch)

    def cast(self, dst, src, dispatch: str | None = None) -> None:
        """dst = src converted to dst's element type, register tiles of one shape.

        Each thread converts the elements it holds; f32 pairs to f16 / bf16 are one packed cvt.

            Tx.wg.cast(out, acc)          # the f32 accumulator as f16, in the same layout"""
        _op("cast", [_buffer(dst, "dst"), _buffer(src, "src")], self._scope(), dispatch)

    def fill(self, dst, value, dispatch: str | None = None) -> None:
        """Every element of dst (registers or memory) = value, a Python number or a device scalar.

            Tx.wg.fill(acc, 0.0)"""
        buf = _buffer(dst, "dst")
        v = as_scalar(value, dst.dtype)
        _op("fill", [buf, v.value], self._scope(), dispatch)

    def iota(self, dst, axis: int, offset=0, dispatch: str | None = None) -> None:
        """dst[i0, i1, ...] = i_axis + offset, in the registers of the threads holding each element.

        dst is an f32 or i32 register tile (f32 is exact up to 2**24). `offset` is a number or a
        device value (an integer index, e.g. from T.cta_id, is converted as a signed integer).
        For masks: iota the row and column indices, then compare and select.

            Tx.wg.iota(cols, 1, offset=k0)
            Tx.wg.iota(rows, 0, offset=q0)
            Tx.wg.compare(mask, cols, ">", rows)          # causal: key after query
            Tx.wg.select(S, mask, float("-inf"), S)"""
        buf = _buffer(dst, "dst")
        rank = len(dst.shape)
        if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
            raise KernelError(f"Tx.iota: axis must be an integer in [{-rank}, {rank}) for a "
                              f"{rank}-d dst, got {axis!r}")
        operands = [buf]
        if isinstance(offset, Scalar) or offset != 0:
            operands.append(_iota_offset(offset, dst.dtype))
        _op("iota", operands, dict(self._scope(), axis=_i64_attr(axis % rank)), dispatch)


    # ------------------------------------------------------------------ elementwise math
    def _unary(self, fn: str, dst, src, fast, dispatch) -> None:
        if not isinstance(fast, bool):
            raise KernelError(f"Tx.{fn}: fast must be True or False, got {fast!r}")
        attrs = dict(self._scope(), fn=ir.StringAttr.get(fn), fast=ir.BoolAttr.get(fast))
        _op("unary", [_buffer(dst, "dst"), _buffer(src, "src")], attrs, dispatch)

    def exp(self, dst, src, fast: bool = False, dispatch: str | None = None) -> None:
        """dst = e^src elementwise; fast=True: ex2.approx.ftz (no range reduction).

            Tx.wg.exp(P, S)"""
        self._unary("exp", dst, src, fast, dispatch)

    def exp2(self, dst, src, fast: bool = False, dispatch: str | None = None) -> None:
        """dst = 2^src elementwise (ex2.approx; fast=True flushes subnormals)."""
        self._unary("exp2", dst, src, fast, dispatch)

    def log(self, dst, src, fast: bool = False, dispatch: str | None = None) -> None:
        """dst = ln(src) elementwise; fast=True: lg2.approx.ftz times ln 2."""
        self._unary("log", dst, src, fast, dispatch)

    def rsqrt(self, dst, src, fast: bool = False, dispatch: str | None = None) -> None:
        """dst = 1 / sqrt(src) elementwise; fast=True: rsqrt.approx.ftz."""
        self._unary("rsqrt", dst, src, fast, dispatch)

    def sqrt(self, dst, src, fast: bool = False, dispatch: str | None = None) -> None:
        """dst = sqrt(src) elementwise (sqrt.rn); fast=True: sqrt.approx.ftz."""
        self._unary("sqrt", dst, src, fast, dispatch)

    def tanh(self, dst, src, fast: bool = False, dispatch: str | None = None) -> None:
        """dst = tanh(src) elementwise; fast=True: tanh.approx."""
        self._unary("tanh", dst, src, fast, dispatch)

    def sigmoid(self, dst, src, fast: bool = False, dispatch: str | None = None) -> None:
        """dst = 1 / (1 + e^-src) elementwise; fast=True: with ex2 / rcp approx."""
        self._unary("sigmoid", dst, src, fast, dispatch)

    def silu(self, dst, src, fast: bool = False, dispatch: str | None = None) -> None:
        """dst = src / (1 + e^-src) elementwise (SiLU); fast=True: with approx."""
        self._unary("silu", dst, src, fast, dispatch)

    def gelu(self, dst, src, approximate: str = "none", fast: bool = False,
             dispatch: str | None = None) -> None:
        """dst = gelu(src) elementwise, as torch's: approximate="none" (erf) or "tanh"."""
        if approximate not in ("none", "tanh"):
            raise KernelError(f"Tx.gelu: approximate must be 'none' or 'tanh', got "
                              f"{approximate!r}")
        self._unary("gelu_erf" if approximate == "none" else "gelu_tanh", dst, src, fast,
                    dispatch)

    def neg(self, dst, src, dispatch: str | None = None) -> None:
        """dst = -src elementwise (a sign-bit flip, exact)."""
        self._unary("neg", dst, src, False, dispatch)

    def abs(self, dst, src, dispatch: str | None = None) -> None:
        """dst = |src| elementwise (the sign bit cleared, exact)."""
        self._unary("abs", dst, src, False, dispatch)

    def _binary(self, fn: str, dst, lhs, rhs, dispatch) -> None:
        d = _buffer(dst, "dst")
        if fn in ("lt", "le", "gt", "ge", "eq", "ne"):
            other = [x for x in (lhs, rhs) if isinstance(x, TileBuffer)]
            elem = other[0].dtype if other else None
        else:
            elem = dst.dtype
        _op("binary", [d, _operand(lhs, elem, "lhs"), _operand(rhs, elem, "rhs")],
            dict(self._scope(), fn=ir.StringAttr.get(fn)), dispatch)

    def add(self, dst, lhs, rhs, dispatch: str | None = None) -> None:
        """dst = lhs + rhs elementwise; each operand a tile (numpy broadcasting) or a scalar.

        On register tiles. A broadcast operand whose layout gives each thread the elements it
        needs (a bias in `acc_layout.row_vector(shape)`) adds with no data exchange.

            Tx.wg.add(acc, acc, bias)     # bias: (1, N), broadcast over the rows
            Tx.wg.add(x, x, 1.0)"""
        self._binary("add", dst, lhs, rhs, dispatch)

    def sub(self, dst, lhs, rhs, dispatch: str | None = None) -> None:
        """dst = lhs - rhs elementwise (tiles with numpy broadcasting, or scalars)."""
        self._binary("sub", dst, lhs, rhs, dispatch)

    def mul(self, dst, lhs, rhs, dispatch: str | None = None) -> None:
        """dst = lhs * rhs elementwise (tiles with numpy broadcasting, or scalars).

            Tx.wg.mul(S, S, scale)"""
        self._binary("mul", dst, lhs, rhs, dispatch)

    def div(self, dst, lhs, rhs, dispatch: str | None = None) -> None:
        """dst = lhs / rhs elementwise (tiles with numpy broadcasting, or scalars)."""
        self._binary("div", dst, lhs, rhs, dispatch)

    def maximum(self, dst, lhs, rhs, dispatch: str | None = None) -> None:
        """Elementwise max (NaN-propagating); the reduction is `max(dst, src, axis=)`."""
        self._binary("max", dst, lhs, rhs, dispatch)

    def minimum(self, dst, lhs, rhs, dispatch: str | None = None) -> None:
        """Elementwise min (NaN-propagating); the reduction is `min(dst, src, axis=)`."""
        self._binary("min", dst, lhs, rhs, dispatch)

    def compare(self, dst, lhs, op: str, rhs, dispatch: str | None = None) -> None:
        """dst (an i1 tile) = lhs op rhs elementwise, op one of < <= > >= == !=.

            Tx.wg.compare(mask, cols, ">", rows)"""
        names = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
        if op not in names:
            raise KernelError(f"Tx.compare: op must be one of {', '.join(names)}, got {op!r}")
        self._binary(names[op], dst, lhs, rhs, dispatch)

    def select(self, dst, cond, on_true, on_false, dispatch: str | None = None) -> None:
        """dst = cond ? on_true : on_false (torch.where); cond an i1 tile or scalar."""
        d = _buffer(dst, "dst")
        _op("select", [d, _operand(cond, emit.i1(), "cond"),
                       _operand(on_true, dst.dtype, "on_true"),
                       _operand(on_false, dst.dtype, "on_false")], self._scope(), dispatch)

    # ------------------------------------------------------------------ reductions
    def _reduce(self, fn: str, dst, src, axis, scratch, dispatch) -> None:
        s = _buffer(src, "src")
        rank = len(src.shape)
        if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
            raise KernelError(f"Tx.{fn}: axis must be an integer in [{-rank}, {rank}) for a "
                              f"{rank}-d src, got {axis!r}")
        operands = [_buffer(dst, "dst"), s]
        if scratch is not None:
            operands.append(_buffer(scratch, "scratch"))
        attrs = dict(self._scope(), fn=ir.StringAttr.get(fn), axis=_i64_attr(axis % rank))
        _op("reduce", operands, attrs, dispatch)

    def sum(self, dst, src, axis: int = -1, scratch=None, dispatch: str | None = None) -> None:
        """dst = src summed over `axis` (dst keeps the axis with extent 1), on register tiles.

        The layout picks the variant: rows whole in a thread, rows over the lanes of a warp
        (butterfly shuffles), or rows over several warps, whose partials combine through
        `scratch` (shared, dst elements x warps per row) between two barriers. At warpgroup scope
        (Tx.wg) with rows over the warpgroup's 4 warps, each warpgroup passes its own window
        (`scratch=red[wg, :]`) and syncs on named barrier 15 - wg, 128.

            Tx.cta.sum(s, x, axis=1, scratch=red)"""
        self._reduce("sum", dst, src, axis, scratch, dispatch)

    def max(self, dst, src, axis: int = -1, scratch=None, dispatch: str | None = None) -> None:
        """dst = the max of src over `axis` (dst keeps the axis with extent 1); as `sum`.

            Tx.wg.max(m, S, axis=1)     # m in acc_layout.column_vector(...): every lane of a row"""
        self._reduce("max", dst, src, axis, scratch, dispatch)

    def min(self, dst, src, axis: int = -1, scratch=None, dispatch: str | None = None) -> None:
        """dst = the min of src over `axis` (dst keeps the axis with extent 1); as `sum`."""
        self._reduce("min", dst, src, axis, scratch, dispatch)


def _operand(x, elem: ir.Type | None, what: str) -> ir.Value:
    """A buffer operand's value, or a scalar operand as a value of type `elem`."""
    if isinstance(x, TileBuffer):
        return x.value
    if elem is None:
        raise KernelError(f"{what}: a comparison of two scalars has no tile to take the type "
                          f"from; pass a buffer")
    if isinstance(x, (Scalar, bool, int, float)):
        if isinstance(x, Scalar) and x.type != elem:
            raise KernelError(f"{what} is a {x.type} value but the tile holds {elem}; convert "
                              f"it first")
        return as_scalar(x, elem).value
    raise KernelError(f"{what} must be a buffer or a number, got {type(x).__name__}")


def _iota_offset(offset, elem: ir.Type) -> ir.Value:
    """iota's offset as a value of the tile's element type; integers convert as signed (an
    offset such as `q0 - k0` may be negative), an index through i32."""
    if isinstance(offset, bool) or not isinstance(offset, (Scalar, int, float)):
        raise KernelError(f"Tx.iota: offset must be a number or a device value, got "
                          f"{type(offset).__name__}")
    if not isinstance(offset, Scalar):
        return as_scalar(offset, elem).value
    t = offset.type
    if t == elem:
        return offset.value
    is_int = isinstance(t, ir.IndexType) or (isinstance(t, ir.IntegerType)
                                             and ir.IntegerType(t).width > 1)
    if is_int and isinstance(elem, ir.FloatType):
        v = arith.index_cast(emit.i32(), offset.value) if isinstance(t, ir.IndexType) \
            else offset.value
        return arith.sitofp(elem, v)
    if is_int and isinstance(elem, ir.IntegerType):
        if isinstance(t, ir.IndexType):
            return arith.index_cast(elem, offset.value)
        wider = ir.IntegerType(t).width < ir.IntegerType(elem).width
        return (arith.extsi if wider else arith.trunci)(elem, offset.value)
    if isinstance(t, ir.FloatType) and isinstance(elem, ir.FloatType):
        return as_scalar(offset, elem).value
    raise KernelError(f"Tx.iota: offset is a {t} value but the tile holds {elem}; convert it "
                      f"first")


class TileNamespace(Scope):
    """`T.tile` (`Tx`): the primitives at thread scope, and the scopes `Tx.thread`, `Tx.warp`,
    `Tx.wg` (= `Tx.warpgroup`), `Tx.cta`, `Tx.cluster`."""

    def __init__(self):
        super().__init__("thread")
        self.thread = Scope("thread")
        self.warp = Scope("warp")
        self.wg = self.warpgroup = Scope("warpgroup")
        self.cta = Scope("cta")
        self.cluster = Scope("cluster")


tile = TileNamespace()


# ---------------------------------------------------------------------------- escapes
def _group(cta_group: int) -> dict:
    return {"cta_group": _i64_attr(cta_group)}


def _scope_attr(scope, what: str) -> ir.Attribute:
    """The memory scope of a barrier's release or acquire."""
    if scope not in ("cta", "cluster"):
        raise KernelError(f"{what} scope is 'cta' or 'cluster', got {scope!r}")
    return ir.StringAttr.get(scope)


class _MBarrier:
    """`T.ptx.mbarrier`: shared-memory barriers (mbarrier) that track arrivals and async copies.

    A barrier is a uint64 in shared memory (`pool.alloc((STAGES,), "uint64", align=8)`), passed
    by pointer (`bar.ptr_to([s])`). A phase completes when its arrivals and its expected
    transaction bytes are in; a waiter passes the parity of the phase it waits for."""

    def init(self, ptr, count) -> None:
        """Sets the barrier at `ptr` to expect `count` arrivals per phase.

        One thread runs it; then `T.ptx.fence.mbarrier_init()` and a CTA (or cluster) sync before
        anyone uses the barrier.

            if tid == 0:
                T.ptx.mbarrier.init(full.ptr_to([s]), 1)"""
        _op("mbarrier_init", [ptr, as_scalar(count, emit.i32()).value], {}, None)

    def arrive(self, ptr, scope: str = "cta") -> None:
        """Arrives on the barrier at `ptr`: this CTA's, or a peer's (a T.cuda.mapa pointer).
        scope="cluster" releases at cluster scope, for waiters in other CTAs that acquire at
        cluster scope (try_wait(..., scope="cluster"))."""
        _op("mbarrier_arrive", [ptr], {"scope": _scope_attr(scope, "mbarrier.arrive")}, None)

    def arrive_expect_tx(self, ptr, nbytes) -> None:
        """Arrives on the barrier at `ptr` and expects `nbytes` of async copies (TMA) in this phase.

        The phase completes once they have landed (and the other arrivals are in)."""
        _op("mbarrier_arrive_expect_tx", [ptr, as_scalar(nbytes, emit.i32()).value], {}, None)

    def try_wait(self, ptr, phase, scope: str = "cta") -> None:
        """Waits until the barrier's phase of parity `phase` has completed. scope="cluster"
        acquires at cluster scope: for barriers that threads of other CTAs arrive on."""
        _op("mbarrier_wait", [ptr, as_scalar(phase, emit.i32()).value],
            {"scope": _scope_attr(scope, "mbarrier.try_wait")}, None)


class _Wait:
    """`T.ptx.tcgen05.wait`: waits for this thread's tcgen05.ld / tcgen05.st."""

    def ld(self) -> None:
        """tcgen05.wait::ld: this thread's tensor-memory loads (Tx.copy_async) are done."""
        _op("tcgen05_wait", [], {"kind": ir.StringAttr.get("ld")}, None)

    def st(self) -> None:
        """tcgen05.wait::st: this thread's tensor-memory stores are done."""
        _op("tcgen05_wait", [], {"kind": ir.StringAttr.get("st")}, None)


class _Tcgen05:
    """`T.ptx.tcgen05`: tensor memory (TMEM) allocation, MMA completion and ordering (sm_100a)."""

    wait = _Wait()

    def alloc(self, dst_ptr, n_cols: int, cta_group: int = 1) -> None:
        """Allocates `n_cols` TMEM columns (a power of two from 32 to 512) for this CTA.

        A whole warp runs it; the TMEM address is written to the shared-memory word at `dst_ptr`.

            if warp_id == 0:
                T.ptx.tcgen05.alloc(T.address_of(tmem_addr), n_cols=512)"""
        _op("tmem_alloc", [dst_ptr], dict(_group(cta_group), ncols=_i64_attr(n_cols)), None)

    def relinquish_alloc_permit(self, cta_group: int = 1) -> None:
        """Gives up this CTA's right to allocate more TMEM, so other CTAs on the SM may allocate."""
        _op("tmem_relinquish", [], _group(cta_group), None)

    def dealloc(self, address, n_cols: int, cta_group: int = 1) -> None:
        """Frees the `n_cols` TMEM columns at `address` (a whole warp, before the CTA exits)."""
        addr = as_scalar(address, emit.i32()).value
        _op("tmem_dealloc", [addr], dict(_group(cta_group), ncols=_i64_attr(n_cols)), None)

    def commit(self, barrier_ptr, cta_group: int = 1, multicast: int | None = None) -> None:
        """Makes the barrier at `barrier_ptr` track this thread's earlier tcgen05 ops.

        The barrier is arrived at when they complete (the MMA's accumulator can then be read).
        With `multicast` (a mask of cluster CTA ranks, e.g. 0b11 for a CTA pair) the barrier
        at the same offset in each of those CTAs is arrived at."""
        operands = [barrier_ptr]
        if multicast is not None:
            operands.append(emit.const(_cta_mask(multicast, "tcgen05.commit"),
                                       ir.IntegerType.get_signless(16)))
        _op("tcgen05_commit", operands, _group(cta_group), None)

    def fence_before_thread_sync(self) -> None:
        """Orders this thread's earlier tcgen05 ops before the thread sync that follows."""
        _op("tcgen05_fence", [], {"kind": ir.StringAttr.get("before_thread_sync")}, None)

    def fence_after_thread_sync(self) -> None:
        """Orders this thread's later tcgen05 ops after the thread sync that precedes
        (e.g. tcgen05.ld after the mbarrier wait that saw the MMA's commit)."""
        _op("tcgen05_fence", [], {"kind": ir.StringAttr.get("after_thread_sync")}, None)


class _Fence:
    """`T.ptx.fence`: memory fences between proxies and for barrier initialisation."""

    def proxy_async(self, space: str = "shared::cta") -> None:
        """fence.proxy.async.shared::cta: shared-memory writes before async-proxy reads.

        Needed between ordinary stores to shared memory and a TMA store or a wgmma / tcgen05 that
        reads them (the pass tile-check-async-proxy rejects a kernel that lacks it).

            Tx.wg.copy(Ds, out)                     # registers -> shared (generic proxy)
            T.ptx.fence.proxy_async("shared::cta")
            T.cuda.bar_sync(1, 128)
            if tid_in_wg == 0:
                Tx.copy_async(D[m:m + 64, n:n + 128], Ds)   # a TMA store reads Ds"""
        if space not in ("shared::cta", "shared"):
            raise KernelError(f"fence.proxy_async supports shared::cta, got {space!r}")
        _op("fence", [], {"kind": ir.StringAttr.get("proxy_async_shared")}, None)

    def mbarrier_init(self) -> None:
        """fence.mbarrier_init.release.cluster: mbarrier.init visible before the barriers' use."""
        _op("fence", [], {"kind": ir.StringAttr.get("mbarrier_init")}, None)


class _AsyncGroup:
    """Asynchronous operations committed and waited for in groups: `T.ptx.cp_async`,
    `T.ptx.wgmma` and `T.ptx.bulk` (TMA stores)."""

    def __init__(self, kind: str, doc: str):
        self.kind = kind
        self.__doc__ = doc

    def commit_group(self) -> None:
        """Closes a group of this thread's operations of the family issued since the last commit.

            Tx.copy_async(D[m:m + 64, n:n + 128], Ds)     # a TMA store
            T.ptx.bulk.commit_group()"""
        _op("async_commit", [], {"kind": ir.StringAttr.get(self.kind)}, None)

    def wait_group(self, pending: int) -> None:
        """Waits until at most `pending` of this thread's committed groups are unfinished.

            T.ptx.wgmma.wait_group(1)     # every wgmma group but the last is done"""
        _op("async_wait", [], {"kind": ir.StringAttr.get(self.kind),
                               "pending": _i64_attr(pending)}, None)


class _Ptx:
    """`T.ptx`: escapes to single PTX instructions.

    `mbarrier`, `tcgen05`, `fence`, the async groups `cp_async`, `wgmma` and `bulk`, and
    `setmaxnreg`, `elect_sync`, `atom_add`."""

    mbarrier = _MBarrier()
    tcgen05 = _Tcgen05()
    fence = _Fence()
    cp_async = _AsyncGroup("cp_async", "`T.ptx.cp_async`: groups of cp.async copies "
                           "(Tx.copy_async global -> shared without a barrier).")
    wgmma = _AsyncGroup("wgmma", "`T.ptx.wgmma`: groups of wgmma (each Tx.wg.gemm_async "
                        "commits its own).")
    bulk = _AsyncGroup("bulk", "`T.ptx.bulk`: groups of TMA stores (Tx.copy_async shared -> "
                       "global).")

    def setmaxnreg(self, count: int, increase: bool) -> None:
        """Sets this warpgroup's per-thread register budget (every thread of it must run this).

            T.ptx.setmaxnreg(40, increase=False)      # the producer warpgroup gives registers up
            T.ptx.setmaxnreg(232, increase=True)      # the consumers take them"""
        if not isinstance(count, int) or isinstance(count, bool):
            raise KernelError(f"setmaxnreg count must be an integer, got {count!r}")
        _op("setmaxnreg", [], {"count": _i64_attr(count), "action": ir.StringAttr.get(
            "increase" if increase else "decrease")}, None)

    def elect_sync(self) -> Scalar:
        """True in exactly one active lane of the warp (elect.sync): e.g. the TMA issuer.

            if T.ptx.elect_sync():
                Tx.copy_async(As, A[m:m + 128, k:k + 64], full.ptr_to([0]))"""
        return Scalar(_op("elect_sync", [], {}, None, results=[emit.i1()]).result)

    def atom_add(self, pointer, value, sem: str = "relaxed", scope: str = "gpu") -> Scalar:
        """Atomically adds the i32 `value` to the word at `pointer` and returns the old word;
        `sem` ("relaxed", "acquire", "release", "acq_rel") orders this thread's other accesses
        around it for the threads of `scope` ("cta", "cluster", "gpu")."""
        if sem not in _ATOMIC_SEMS:
            raise KernelError(f"atom_add sem must be one of {', '.join(_ATOMIC_SEMS)}, "
                              f"got {sem!r}")
        if scope not in _ATOMIC_SCOPES:
            raise KernelError(f"atom_add scope must be one of {', '.join(_ATOMIC_SCOPES)}, "
                              f"got {scope!r}")
        return Scalar(_op("atomic_add", [pointer, as_scalar(value, emit.i32()).value],
                          {"sem": ir.StringAttr.get(sem), "mem_scope": ir.StringAttr.get(scope)},
                          None, results=[emit.i32()]).result)


_ATOMIC_SEMS = ("relaxed", "acquire", "release", "acq_rel")
_ATOMIC_SCOPES = ("cta", "cluster", "gpu", "sys")


class _Cuda:
    """`T.cuda`: CTA, named and cluster barriers, and cluster addressing (CUDA's intrinsics)."""

    def cta_sync(self) -> None:
        """Every thread of the CTA waits here (__syncthreads, bar.sync 0)."""
        _op("cta_sync", [], {}, None)

    def cluster_sync(self) -> None:
        """Every thread of every CTA of the cluster waits here (barrier.cluster)."""
        _op("cluster_sync", [], {}, None)

    def mapa(self, pointer, rank) -> ir.Value:
        """The shared::cluster address of the shared-memory variable at `pointer` in the CTA
        of cluster rank `rank` (e.g. the leader's barrier for the CTA pair's TMA loads)."""
        return _op("mapa", [pointer, as_scalar(rank, emit.i32()).value], {}, None,
                   results=[emit.ptr(7)]).result

    def cluster_ctarank(self) -> Scalar:
        """This CTA's rank in its cluster."""
        return Scalar(_op("cluster_ctarank", [], {}, None, results=[emit.i32()]).result)

    def bar_sync(self, barrier_id, threads: int) -> None:
        """bar.sync barrier_id, threads: only the `threads` threads using this id wait (ids
        1..15; 0 is cta_sync's; warpgroup-scope reductions over warps take 15 - wg)."""
        _op("named_barrier", [_barrier_id(barrier_id, "bar_sync")],
            {"threads": _i64_attr(_barrier_threads(threads, "bar_sync"))}, None)

    def bar_arrive(self, barrier_id, threads: int) -> None:
        """bar.arrive barrier_id, threads: counts this thread towards the barrier without
        waiting; the `threads` include those that wait on it with bar_sync."""
        _op("barrier_arrive", [_barrier_id(barrier_id, "bar_arrive")],
            {"threads": _i64_attr(_barrier_threads(threads, "bar_arrive"))}, None)

    def bar_or(self, barrier_id, threads: int, pred) -> Scalar:
        """bar_sync that also returns, to each of the `threads` threads, whether any of them
        passed a true `pred` (a boolean the whole group may branch on)."""
        return Scalar(_op("barrier_or", [_barrier_id(barrier_id, "bar_or"), _bool(pred)],
                          {"threads": _i64_attr(_barrier_threads(threads, "bar_or"))}, None,
                          results=[emit.i1()]).result)


def _barrier_id(barrier_id, what: str) -> ir.Value:
    """A named barrier's id: a device value, or a static one of the 16 a CTA has."""
    if isinstance(barrier_id, bool) or (isinstance(barrier_id, int)
                                        and not 0 <= barrier_id < NAMED_BARRIERS):
        raise KernelError(f"{what} barrier_id must be one of the named barriers 0.."
                          f"{NAMED_BARRIERS - 1}, got {barrier_id!r}")
    return as_scalar(barrier_id, emit.i32()).value


def _barrier_threads(threads, what: str) -> int:
    """A named barrier's thread count: static, whole warps."""
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 32 or threads % 32:
        raise KernelError(f"{what} threads must be a positive multiple of 32 (whole warps), "
                          f"got {threads!r}")
    return threads


ptx = _Ptx()
cuda = _Cuda()
