"""Shape-driven layout operations: group, tile_to, permute_by_groups, slice.

A layout has no shape of its own (see TileLayout); each operation here takes
the row-major buffer shape the layout is read through and returns iterators
or a new layout over the resulting shape.  The functions only call methods
of the layout they are given, so this module does not import TileLayout.
"""

from collections import deque

from .axes import MEMORY, Iter
from .errors import LayoutError, as_int


def group(layout, shape) -> list[list[Iter]]:
    """The shard split into one iterator list per dim of ``shape``.

    Dim ``d``'s iterators multiply to ``shape[d]``; an iterator straddling a
    dim boundary is split in two (outer part stride * inner extent).  Leftover
    extent-1 iterators join the last dim.

    >>> from tilemlir.layout import S, TileLayout
    >>> [[str(it) for it in dim] for dim in TileLayout(S[(8, 4) : (4, 1)]).group((4, 8))]
    [['4:8'], ['2:4', '4:1']]
    """
    dims = layout.checked_shape(shape)
    pending = deque(enumerate(layout.shard))
    groups = []
    for d, size in enumerate(dims):
        dim_iters, left = [], size
        while left > 1:
            index, it = pending.popleft()
            if left % it.extent == 0:
                dim_iters.append(it)
                left //= it.extent
            elif it.extent % left == 0:
                inner = it.extent // left
                dim_iters.append(Iter(left, it.stride * inner, it.axis))
                pending.appendleft((index, Iter(inner, it.stride, it.axis)))
                left = 1
            else:
                place = f"dim {d} (size {size})"
                if left != size:
                    place = f"the {left} elements left of {place}"
                raise LayoutError(f"cannot group {layout}: extent {it.extent} of iterator {index} does not divide "
                                  f"{place} of shape {dims}, nor does {left} divide {it.extent}")
        groups.append(dim_iters)
    if groups:
        groups[-1].extend(it for _, it in pending)
    return groups


def tile_to(layout, to_shape, atom_shape):
    """``layout`` (over ``atom_shape``) repeated to cover ``to_shape``.

    Copies differ only in memory: copy ``t`` (row-major over the grid
    ``to_shape / atom_shape``) is moved by ``t * span("m")``, so copies follow
    one another (a layout without "m" counts as one slot per holder).  With a
    swizzle the span must be a multiple of its period, so every copy is
    swizzled like the atom.

    >>> from tilemlir.layout import S, TileLayout, laneid
    >>> b_k8 = TileLayout(S[(4, 2, 8) : (1 @ laneid, 1, 4 @ laneid)])
    >>> str(b_k8.tile_to((16, 8), (8, 8)))
    'S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]'
    """
    atom = layout.checked_shape(atom_shape)
    full = tuple(as_int(d, "to_shape dim", minimum=1) for d in to_shape)
    if len(full) != len(atom):
        raise LayoutError(f"tile_to: to_shape {full} and atom_shape {atom} have different ranks")
    for d, (f, a) in enumerate(zip(full, atom)):
        if f % a:
            raise LayoutError(f"tile_to {layout}: dim {d} of to_shape {full} ({f}) is not a multiple of "
                              f"dim {d} of atom_shape {atom} ({a})")
    tile_span = max(layout.span(MEMORY), 1)
    swizzle = layout.swizzle
    if swizzle is not None and tile_span % swizzle.period:
        raise LayoutError(f"tile_to {layout}: memory span {tile_span} is not a multiple of the period "
                          f"{swizzle.period} of {swizzle}, so copies would be swizzled differently")
    groups = group(layout, atom)
    shard, tile_stride = [], tile_span
    for d in reversed(range(len(atom))):
        copies = full[d] // atom[d]
        shard[:0] = ([Iter(copies, tile_stride)] if copies > 1 else []) + groups[d]
        tile_stride *= copies
    return layout.replace(shard=shard)


def permute_by_groups(layout, shape, perm):
    """The layout of the buffer with dims permuted: shape ``[shape[p] for p in perm]``.

    The element at ``coord'`` of the permuted buffer (``coord'[k] ==
    coord[perm[k]]``) lands where ``coord`` did.

    >>> from tilemlir.layout import S, TileLayout
    >>> str(TileLayout(S[(2, 4) : (4, 1)]).permute_by_groups((2, 4), (1, 0)))
    'S[(4, 2):(1, 4)]'
    """
    groups = group(layout, shape)
    order = tuple(as_int(p, "perm entry") for p in perm)
    if sorted(order) != list(range(len(groups))):
        raise LayoutError(f"cannot permute {layout}: {order} is not a permutation of the "
                          f"{len(groups)} dims of shape {tuple(shape)}")
    return layout.replace(shard=[it for p in order for it in groups[p]])


def slice_layout(layout, shape, region):
    """The layout of the box ``region = [(start, stop), ...]`` of a ``shape`` buffer.

    ``L_sub(local) == L(start + local)``; the starts go into the offset
    (before the swizzle).  Per dim, the range must be a box of the dim's
    iterators (canonicalized first): inner iterators fully covered, one
    partly covered without wrapping, outer ones fixed.  LayoutError otherwise.

    >>> from tilemlir.layout import S, TileLayout, laneid
    >>> d_frag = TileLayout(S[(2, 8, 4, 2) : (2, 4 @ laneid, 1 @ laneid, 1)])
    >>> str(d_frag.slice((16, 8), [(3, 4), (0, 8)]))
    'S[(4, 2):(1@laneid, 1)] + {laneid: 12}'
    """
    dims = layout.checked_shape(shape)
    box = _checked_region(region, dims)
    canonical = layout.canonicalize()
    offset, shard = canonical.offset, []
    for d, (dim_iters, (start, stop)) in enumerate(zip(group(canonical, dims), box)):
        def problem(d=d, start=start, stop=stop):     # the text only when slicing fails
            return (f"cannot slice {layout} (shape {dims}) to {box}: range [{start}, {stop}) "
                    f"of dim {d}")
        kept, shifts = _slice_dim(dim_iters, start, stop - start, problem)
        shard += kept
        for axis, shift in shifts.items():
            offset[axis] = offset.get(axis, 0) + shift
    return canonical.replace(shard=shard, offset=offset)


def _checked_region(region, dims) -> list[tuple[int, int]]:
    box = [(as_int(lo, "region start"), as_int(hi, "region stop")) for lo, hi in region]
    if len(box) != len(dims) or any(not lo < hi <= d for (lo, hi), d in zip(box, dims)):
        raise LayoutError(f"region {box} is not a non-empty box inside shape {dims}")
    return box


def _slice_dim(dim_iters, start, count, problem):
    """Iterators and per-axis shifts of the ``count`` indices from ``start`` of one dim;
    ``problem()`` begins the error message."""
    kept, shifts = [], {}
    inner, left = 1, count  # inner: extent product of the iterators already walked
    for it in reversed(dim_iters):
        digit = (start // inner) % it.extent
        if left == 1:
            shifts[it.axis] = shifts.get(it.axis, 0) + digit * it.stride
        elif digit == 0 and left % it.extent == 0:
            kept.append(it)
            left //= it.extent
        elif digit + left <= it.extent:
            kept.append(Iter(left, it.stride, it.axis))
            shifts[it.axis] = shifts.get(it.axis, 0) + digit * it.stride
            left = 1
        else:
            raise LayoutError(f"{problem()} straddles iterator {it} (starting at its step {digit} with "
                              f"{left} steps to cover), which no layout can express")
        inner *= it.extent
    kept.reverse()
    return kept, shifts
