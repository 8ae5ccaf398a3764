"""How aligned the elements of a buffer window are: its root storage's alignment, its swizzle,
and what the value analysis knows its dynamic slice offsets to be multiples of."""

from __future__ import annotations

import math

from mlir import ir

from tilemlir.analysis.values import ValueAnalysis
from tilemlir.ir.windows import BufferRef

GLOBAL_ALIGNMENT = 16  # bytes; tile.global pointers are assumed 16-byte aligned (cudaMalloc: 256)
SMEM_ALIGN = 1024      # bytes; tile-materialize aligns the pool tile.alloc_shared offsets count in


def root_alignment(ref: BufferRef) -> int:
    """The byte alignment of the root storage's first element."""
    owner = ref.root.owner
    if owner.name == "tile.alloc_shared":
        offset = ir.IntegerAttr(owner.attributes["offset"]).value
        return min(SMEM_ALIGN, offset & -offset) if offset else SMEM_ALIGN
    return GLOBAL_ALIGNMENT


def dynamic_multiple(ref: BufferRef) -> int:
    """A number the dynamic part of ref's base offset is known to be a multiple of (0: none)."""
    total = 0
    analysis = ValueAnalysis()
    for iters, value in ref.dynamic_terms():
        mult = analysis.multiple(value)
        inner = math.prod(e for e, _ in iters[1:])
        if len(iters) == 1:
            term = mult * iters[0][1]
        elif mult % inner == 0:           # only the outermost digit moves
            term = mult // inner * iters[0][1]
        else:
            term = math.gcd(*(s for _, s in iters))
        total = math.gcd(total, term)
    return total


def vector_limit(ref: BufferRef, max_bytes: int = 16,
                 dynamic: bool = True) -> tuple[int, str | None]:
    """(n, why): the most elements (a power of two, n * elem <= max_bytes) one aligned vector
    access may move through `ref` as far as its base and swizzle allow (and, unless
    dynamic=False, its dynamic offset), and what stops it from moving more (None when only
    `max_bytes` does). Whether the elements are contiguous is the caller's business (see
    `static_offsets`)."""
    elem_bytes = max(ref.type.elem_bits // 8, 1)
    n, why = max(max_bytes // elem_bytes, 1), None
    limits = [(root_alignment(ref) // elem_bytes, f"its storage is {root_alignment(ref)}-byte "
                                                  f"aligned")]
    sw = ref.layout.swizzle
    if sw is not None:
        limits.append((1 << sw.base, f"its swizzle {sw} permutes {1 << sw.base}-element groups"))
    mult = dynamic_multiple(ref) if dynamic else 0
    if mult:
        limits.append((mult & -mult, f"its dynamic offset is only known to be a multiple of "
                                     f"{mult & -mult} elements"))
    for limit, reason in limits:
        if limit < n:
            n, why = max(limit, 1), reason
    return n, why
