"""Which CTA of a CTA pair reaches an op: tcgen05.mma with cta_group::2 is issued by the even
CTA of the pair only (it reads both CTAs' shared memory and writes both CTAs' tensor memory);
the odd CTA issuing as well would run every MMA twice.

`leader_only_reason(block)` proves, from the scf.if ops around a block, that only a CTA of even
cluster rank gets there: some enclosing branch is taken (its then-region) only when its
condition holds, and that condition implies an even %cluster_ctarank. Conditions understood:

    rank == c, c == rank                         c even
    rank % 2**k == c, (rank & (2**k - 1)) == c   k >= 1, c even
    p and q (arith.andi of i1)                    either implies it

where rank is tile.cluster_ctarank (or nvvm.read.ptx.sreg.cluster.ctarank), possibly through
integer casts. Anything else is not a proof: the check asks for one it can read.
"""

from __future__ import annotations

from mlir import ir

RANK_OPS = ("tile.cluster_ctarank", "nvvm.read.ptx.sreg.cluster.ctarank")
_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extui", "arith.extsi",
          "arith.trunci")


def _owner(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _through_casts(value: ir.Value) -> ir.Value:
    op = _owner(value)
    while op is not None and op.name in _CASTS:
        value = op.operands[0]
        op = _owner(value)
    return value


def _constant(value: ir.Value) -> int | None:
    op = _owner(_through_casts(value))
    if op is None or op.name != "arith.constant":
        return None
    attr = op.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def _is_rank(value: ir.Value) -> bool:
    op = _owner(_through_casts(value))
    return op is not None and op.name in RANK_OPS


def _keeps_parity(value: ir.Value) -> bool:
    """`value` is the rank or the rank reduced modulo a power of two >= 2 (same parity)."""
    value = _through_casts(value)
    if _is_rank(value):
        return True
    op = _owner(value)
    if op is None or len(op.operands) != 2:
        return False
    modulus = _constant(op.operands[1])
    if modulus is None or not _is_rank(op.operands[0]):
        return False
    if op.name in ("arith.remui", "arith.remsi"):
        return modulus >= 2 and modulus & (modulus - 1) == 0
    if op.name == "arith.andi":
        return modulus >= 1 and modulus & (modulus + 1) == 0
    return False


def implies_even_rank(cond: ir.Value) -> bool:
    """Whether `cond` (an i1) being true implies an even cluster CTA rank."""
    op = _owner(cond)
    if op is None:
        return False
    if op.name == "arith.andi":
        return any(implies_even_rank(v) for v in op.operands)
    if op.name != "arith.cmpi" or ir.IntegerAttr(op.attributes["predicate"]).value != 0:
        return False                                                     # 0: eq
    lhs, rhs = op.operands
    for side, other in ((lhs, rhs), (rhs, lhs)):
        c = _constant(other)
        if c is not None and c % 2 == 0 and _keeps_parity(side):
            return True
    return False


def leader_only_reason(block: ir.Block, what: str) -> str | None:
    """None when only the even CTA of each pair reaches `block`, else why not proven."""
    op = block.owner.operation          # an Operation: an OpView's .name may be its symbol
    while op.name not in ("gpu.func", "func.func") and op.parent is not None:
        if op.name == "scf.if" and block in list(op.regions[0].blocks) \
                and implies_even_rank(op.operands[0]):
            return None
        block = op.block
        op = block.owner.operation
    return (f"{what} with cta_group 2 is issued by the even CTA of the pair only: put it "
            f"under a branch such as `if rank % 2 == 0:` with rank = T.cuda.cluster_ctarank()")
