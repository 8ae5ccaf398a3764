"""Small IR builders shared by the kernel language and the lowerings (insertion point and
location come from the caller).

Values are folded where that is free: integer helpers accept Python ints or index Values and
only build ops when a Value is involved, so static index arithmetic stays static.
"""

from __future__ import annotations

from typing import Union

from mlir import ir
from mlir.dialects import arith, gpu, llvm

from tilemlir.ir.types import f8_bits, is_f8, llvm_type

Index = Union[int, ir.Value]
GEP_DYNAMIC = -2147483648  # llvm.getelementptr's marker for "take the next dynamic index"


# ---------------------------------------------------------------------------- types
def i1() -> ir.Type:
    return ir.IntegerType.get_signless(1)


def i32() -> ir.Type:
    return ir.IntegerType.get_signless(32)


def i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def index() -> ir.Type:
    return ir.IndexType.get()


def ptr(addr_space: int = 0) -> ir.Type:
    return ir.Type.parse(f"!llvm.ptr<{addr_space}>" if addr_space else "!llvm.ptr")


def struct(types) -> ir.Type:
    return ir.Type.parse("!llvm.struct<(" + ", ".join(str(t) for t in types) + ")>")


# ---------------------------------------------------------------------------- ops
def generic(name: str, operands: list, result: ir.Type, attributes: dict | None = None) -> ir.Value:
    """The result of a new `name` op with one result of type `result`. For the ops a kernel
    build makes by the hundred: the dialects' generated builders take 2-3 times as long
    (arith.constant infers its result type through the op's interface)."""
    return ir.Operation.create(name, results=[result], operands=operands,
                               attributes=attributes).result


# ---------------------------------------------------------------------------- constants
def const(value, type_: ir.Type) -> ir.Value:
    attr = ir.FloatAttr.get(type_, float(value)) if isinstance(type_, ir.FloatType) else \
        ir.IntegerAttr.get(type_, int(value))
    return generic("arith.constant", [], type_, {"value": attr})


def int_constant(value: ir.Value) -> int | None:
    """The integer an arith.constant `value` holds, or None for anything else."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def stored_const(value, type_: ir.Type) -> ir.Value:
    """const(value, type_) as LLVM holds it: an 8-bit float as its bits (i8)."""
    return const(f8_bits(value, type_), llvm_type(type_)) if is_f8(type_) else const(value, type_)


def const_index(value: int) -> ir.Value:
    return const(value, index())


def const_i32(value: int) -> ir.Value:
    return const(value, i32())


def as_index(v: Index) -> ir.Value:
    return const_index(v) if isinstance(v, int) else v


# ---------------------------------------------------------------------------- index arithmetic
def add(a: Index, b: Index) -> Index:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if isinstance(a, int) and a == 0:
        return b
    if isinstance(b, int) and b == 0:
        return a
    return arith.addi(as_index(a), as_index(b))


def mul(a: Index, b: Index) -> Index:
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if isinstance(a, int):
        a, b = b, a
    if isinstance(b, int):
        if b == 0:
            return 0
        if b == 1:
            return a
    return arith.muli(as_index(a), as_index(b))


def div(a: Index, b: int) -> Index:
    if isinstance(a, int):
        return a // b
    return a if b == 1 else arith.divui(a, const_index(b))


def rem(a: Index, b: int) -> Index:
    if isinstance(a, int):
        return a % b
    return 0 if b == 1 else arith.remui(a, const_index(b))


def xor(a: Index, b: Index) -> Index:
    if isinstance(a, int) and isinstance(b, int):
        return a ^ b
    return arith.xori(as_index(a), as_index(b))


def shr(a: Index, bits: int) -> Index:
    if isinstance(a, int):
        return a >> bits
    return arith.shrui(a, const_index(bits))


def band(a: Index, mask: int) -> Index:
    if isinstance(a, int):
        return a & mask
    return arith.andi(a, const_index(mask))


def to_i32(v: Index) -> ir.Value:
    if isinstance(v, int):
        return const_i32(v)
    if isinstance(v.type, ir.IndexType):
        return arith.index_cast(i32(), v)
    return v


def to_index(v: ir.Value) -> ir.Value:
    return v if isinstance(v.type, ir.IndexType) else arith.index_cast(index(), v)


# ---------------------------------------------------------------------------- thread ids
def thread_id_x() -> ir.Value:
    return gpu.thread_id(gpu.Dimension.x)


def warp_uniform(v: ir.Value) -> ir.Value:
    """`v`, the same on every lane of a warp (a warp's or warpgroup's index), read from lane 0
    by a shuffle, which tells ptxas it is warp-uniform: the code keyed on it (warp-specialized
    roles, descriptors of a warpgroup's rows) then stays on the uniform datapath, as CUTLASS's
    canonical_warp_group_idx does. The value analysis reads the shuffle as `v` itself."""
    shuffled = gpu.shuffle(to_i32(v), const_i32(0), const_i32(32), gpu.ShuffleMode.IDX)[0]
    return to_index(shuffled)


# ---------------------------------------------------------------------------- memory
def gep(base: ir.Value, elem: ir.Type, offset: Index) -> ir.Value:
    """&base[offset] with `offset` counted in elements of `elem`."""
    elem = llvm_type(elem)
    if isinstance(offset, int):
        if offset == 0:
            return base
        if -2 ** 31 <= offset < 2 ** 31:        # a GEP's constant indices are i32
            return llvm.getelementptr(base.type, base, [], [offset], elem, 0)
        offset = const(offset, i64())
    return llvm.getelementptr(base.type, base, [to_index_i64(offset)], [GEP_DYNAMIC], elem, 0)


def to_index_i64(v: ir.Value) -> ir.Value:
    if isinstance(v.type, ir.IndexType):
        return arith.index_cast(i64(), v)
    return v


def load(type_: ir.Type, address: ir.Value, align: int | None = None) -> ir.Value:
    """A load of `type_` (8-bit floats come as their bits: i8)."""
    return llvm.load(llvm_type(type_), address, alignment=align)


def store(value: ir.Value, address: ir.Value, align: int | None = None) -> None:
    llvm.store(value, address, alignment=align)


def vector_type(n: int, elem: ir.Type) -> ir.Type:
    """vector<n x elem> as LLVM holds it (8-bit floats as i8)."""
    return ir.VectorType.get([n], llvm_type(elem))


def build_vector(values: list[ir.Value]) -> ir.Value:
    """A vector<N x T> from N scalars (lowers to register moves)."""
    vt = vector_type(len(values), values[0].type)
    vec = llvm.mlir_poison(vt)
    for i, v in enumerate(values):
        vec = llvm.insertelement(vec, v, const_i32(i))
    return vec


def extract_element(vec: ir.Value, i: int) -> ir.Value:
    return llvm.extractelement(vec, const_i32(i))


def bitcast(type_: ir.Type, v: ir.Value) -> ir.Value:
    return llvm.bitcast(type_, v)


def extract_value(container: ir.Value, position: int, type_: ir.Type) -> ir.Value:
    return llvm.extractvalue(type_, container, [position])
