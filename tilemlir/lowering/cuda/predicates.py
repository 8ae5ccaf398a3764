"""Predicates several variants share (each returns None when it holds, else the reason)."""

from __future__ import annotations

from tilemlir.dispatch.registry import Predicate, predicate
from tilemlir.ir.types import is_f8


@predicate("full_active_lanes")
def full_active_lanes(ctx):
    """The scope is made of whole warps and every thread of it reaches the op."""
    if ctx.scope not in ("warp", "warpgroup", "cta"):
        return f"scope '{ctx.scope}' is not made of whole warps (use warp, warpgroup or cta)"
    return ctx.narrowing_reason()


@predicate("no_replica")
def no_replica(ctx):
    """No buffer operand broadcasts its elements over replica axes."""
    replicated = [f"{name.upper()} ({buf.layout})" for name, buf in ctx.buffers().items()
                  if buf.layout.is_replicated()]
    if replicated:
        return "replicated layout on " + ", ".join(replicated)
    return None


@predicate("replicated_alike")
def replicated_alike(ctx):
    """A replicated dst needs its operands replicated the same way (each copy then computes
    its own); a replicated operand under an unreplicated dst is a broadcast (plan checks it)."""
    dst = ctx.buffer("dst")
    if not dst.layout.is_replicated():
        return None
    mine = sorted(map(str, dst.layout.canonicalize().replica))
    other = [f"{n.upper()} ({b.layout})" for n, b in ctx.buffers().items()
             if n != "dst" and sorted(map(str, b.layout.canonicalize().replica)) != mine]
    if other:
        return (f"dst ({dst.layout}) is replicated but " + ", ".join(other)
                + " is not replicated the same way")
    return None


def eight_bit_floats(ctx) -> str | None:
    """Why a math variant refuses the 8-bit floats among the op's buffers (they are moved,
    cast and multiplied by wgmma only), or None."""
    held = [f"{name} holds {buf.elem}" for name, buf in ctx.buffers().items() if is_f8(buf.elem)]
    if held:
        return ("8-bit floats are only moved, cast and multiplied by wgmma (tile.cast them to "
                "f16 or f32 first); " + ", ".join(held))
    return None


def target_supports(feature: str) -> Predicate:
    """The target chip has `feature` (see tilemlir.target)."""
    return Predicate("target", lambda ctx: ctx.target.require(feature))


def operands_in(scope: str, *names: str) -> Predicate:
    """The named buffer operands all live in memory scope `scope`."""
    def check(ctx):
        wrong = [f"{n.upper()} is in {ctx.buffer(n).scope}" for n in names
                 if ctx.buffer(n).scope != scope]
        if wrong:
            return f"needs {', '.join(n.upper() for n in names)} in {scope}; " + ", ".join(wrong)
        return None
    return Predicate(f"{scope}_operands", check)


def copies(dst_scope: str, src_scope: str, what: str) -> Predicate:
    """A copy from `src_scope` memory to `dst_scope` memory; `what` names the instruction."""
    def check(ctx):
        dst, src = ctx.buffer("dst").scope, ctx.buffer("src").scope
        if (dst, src) == (dst_scope, src_scope):
            return None
        return (f"{what} copies {src_scope} memory to {dst_scope} memory; dst is in {dst}, "
                f"src in {src}")
    return Predicate(f"{src_scope}_to_{dst_scope}", check)


def scope_in(*scopes: str) -> Predicate:
    def check(ctx):
        if ctx.scope in scopes:
            return None
        return f"scope '{ctx.scope}' is not one of {', '.join(scopes)}"
    return Predicate("scope", check)


@predicate("same_shape_and_type")
def same_shape_and_type(ctx):
    """A copy's dst and src have one shape and one element type."""
    dst, src = ctx.buffer("dst"), ctx.buffer("src")
    problems = []
    if tuple(dst.shape) != tuple(src.shape):
        problems.append(f"dst is {list(dst.shape)} but src is {list(src.shape)}")
    if str(dst.elem) != str(src.elem):
        problems.append(f"dst holds {dst.elem} but src holds {src.elem} (use tile.cast)")
    return "; ".join(problems) or None



@predicate("inside_buffers")
def inside_buffers(ctx):
    """No operand is a window hanging past its global buffer's edge: only masked copies
    (bounds=...) and TMA, which reads zeros and clips stores there, may touch one."""
    from tilemlir.ir.windows import overhang
    for name in ctx.buffers():
        where = overhang(ctx.operand(name))
        if where is not None:
            return (f"{name.upper()} hangs past its global buffer's edge ({where}): copy it with "
                    f"bounds=... or by TMA")
    return None
