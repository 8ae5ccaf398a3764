"""Property tests of tilemlir.layout on random compact layouts (hypothesis)."""

import math
from collections import defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tilemlir.layout import (Iter, LayoutError, Swizzle, TileLayout, from_attr_text, parse_layout,
                             to_attr_text)

FREE_AXES = ("m", "laneid", "warpid", "tx", "TCol")
LANES = 32
PROPERTY = settings(max_examples=80, deadline=None)


@st.composite
def compact_layouts(draw, max_iters=4):
    """Injective layouts: per axis, the strides of its iterators tile [0, product) exactly."""
    count = draw(st.integers(0, max_iters))
    extents = draw(st.lists(st.integers(1, 8), min_size=count, max_size=count))
    axes = draw(st.lists(st.sampled_from(FREE_AXES), min_size=count, max_size=count))
    if math.prod(e for e, a in zip(extents, axes) if a == "laneid") > LANES:
        axes = ["tx" if a == "laneid" else a for a in axes]
    strides, running = [0] * count, defaultdict(lambda: 1)
    for j in draw(st.permutations(range(count))):  # innermost first
        strides[j] = running[axes[j]]
        running[axes[j]] *= extents[j]
    offset = draw(st.dictionaries(st.sampled_from(("m", "warpid", "TCol")), st.integers(0, 20), max_size=2))
    return TileLayout([Iter(e, s, a) for e, s, a in zip(extents, strides, axes)], offset=offset)


@st.composite
def decorated_layouts(draw):
    """Compact layouts, sometimes with a replica and a swizzle."""
    base = draw(compact_layouts())
    replica_iters = st.builds(Iter, st.integers(1, 4), st.integers(0, 64), st.sampled_from(("warpid", "tx")))
    replica = draw(st.lists(replica_iters, max_size=2))
    bits = draw(st.integers(1, 3))
    swizzles = st.builds(Swizzle, st.just(bits), st.integers(0, 4), st.integers(bits, bits + 3))
    swizzle = draw(st.none() | swizzles)
    return base.replace(replica=replica, swizzle=swizzle)


def prime_factors(n):
    factors, p = [], 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors


@st.composite
def shapes_for(draw, layout):
    """A shape ``layout`` can be grouped by: runs of its iterators' prime factors, plus 1-dims."""
    factors = [p for it in layout.shard for p in draw(st.permutations(prime_factors(it.extent)))]
    cuts = sorted(draw(st.sets(st.integers(1, len(factors) - 1)))) if len(factors) > 1 else []
    bounds = [0, *cuts, len(factors)]
    dims = [math.prod(factors[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]
    for _ in range(draw(st.integers(0, 2))):
        dims.insert(draw(st.integers(0, len(dims))), 1)
    return tuple(dims)


@st.composite
def layouts_and_shapes(draw):
    layout = draw(compact_layouts())
    return layout, draw(shapes_for(layout))


@st.composite
def boxes(draw, layout, shape):
    """A region slice_layout accepts: per dim, inner iterators whole, one partly, outer ones fixed."""
    region = []
    for size, dim_iters in zip(shape, layout.canonicalize().group(shape)):
        extents = [it.extent for it in dim_iters]
        whole_inner = draw(st.integers(0, len(extents)))
        if whole_inner == len(extents):
            region.append((0, size))
            continue
        part = len(extents) - 1 - whole_inner
        inner = math.prod(extents[part + 1:])
        steps = draw(st.integers(1, extents[part]))
        first = draw(st.integers(0, extents[part] - steps))
        outer = 0
        for extent in extents[:part]:
            outer = outer * extent + draw(st.integers(0, extent - 1))
        start = (outer * extents[part] + first) * inner
        region.append((start, start + steps * inner))
    return region


def box_view(array, region):
    return array[tuple(slice(lo, hi) for lo, hi in region)]


def box_shape(region):
    return tuple(hi - lo for lo, hi in region)


def same_values(left, right):
    """Whether two axis -> values maps agree, an absent axis reading 0."""
    return all(np.all(left.get(axis, 0) == right.get(axis, 0)) for axis in set(left) | set(right))


@PROPERTY
@given(decorated_layouts())
def test_text_round_trip(layout):
    assert parse_layout(str(layout)) == layout
    assert from_attr_text(to_attr_text(layout)) == layout


@PROPERTY
@given(decorated_layouts())
def test_canonicalize_preserves_the_function(layout):
    canonical = layout.canonicalize()
    assert canonical.equivalent(layout)
    assert same_values(canonical.evaluate_all(), layout.evaluate_all())
    assert canonical.canonicalize() == canonical


@PROPERTY
@given(decorated_layouts(), st.data())
def test_evaluate_all_agrees_with_evaluate(layout, data):
    values = layout.evaluate_all()
    for index in data.draw(st.lists(st.integers(0, layout.size() - 1), max_size=20)):
        assert layout.evaluate(index) == {axis: int(v[index]) for axis, v in values.items()}


@PROPERTY
@given(compact_layouts())
def test_compact_layouts_are_injective(layout):
    assert layout.is_injective()


@PROPERTY
@given(layouts_and_shapes())
def test_group_splits_by_dims_without_changing_the_function(case):
    layout, shape = case
    groups = layout.group(shape)
    assert [math.prod(it.extent for it in dim) for dim in groups] == list(shape)
    assert layout.replace(shard=[it for dim in groups for it in dim]).equivalent(layout)


@PROPERTY
@given(layouts_and_shapes(), st.data())
def test_permute_then_inverse_permute(case, data):
    layout, shape = case
    perm = data.draw(st.permutations(range(len(shape))))
    permuted = layout.permute_by_groups(shape, perm)
    permuted_shape = tuple(shape[p] for p in perm)
    for axis, values in layout.evaluate_all(shape).items():
        assert np.array_equal(permuted.evaluate_all(permuted_shape)[axis], np.transpose(values, perm))
    back = permuted.permute_by_groups(permuted_shape, np.argsort(perm))
    assert back.equivalent(layout)


@PROPERTY
@given(layouts_and_shapes(), st.data())
def test_tile_to_then_slicing_a_tile_gives_the_atom(case, data):
    atom, atom_shape = case
    copies = data.draw(st.lists(st.integers(1, 3), min_size=len(atom_shape), max_size=len(atom_shape))
                       .filter(lambda c: math.prod(c) <= 8))
    full_shape = tuple(a * c for a, c in zip(atom_shape, copies))
    tiled = atom.tile_to(full_shape, atom_shape)
    tile = [data.draw(st.integers(0, c - 1)) for c in copies]
    region = [(t * a, (t + 1) * a) for t, a in zip(tile, atom_shape)]
    moved = np.ravel_multi_index(tile, copies) * max(atom.span(), 1)
    expected = atom.evaluate_all(atom_shape)
    expected["m"] = expected.get("m", 0) + moved
    assert same_values(tiled.slice(full_shape, region).evaluate_all(atom_shape), expected)
    assert tiled.is_injective()


@PROPERTY
@given(layouts_and_shapes(), st.data())
def test_slice_reads_the_box_of_the_source(case, data):
    layout, shape = case
    region = data.draw(boxes(layout, shape))
    sliced = layout.slice(shape, region)
    full = layout.evaluate_all(shape)
    expected = {axis: box_view(values, region) for axis, values in full.items()}
    assert same_values(sliced.evaluate_all(box_shape(region)), expected)


@PROPERTY
@given(layouts_and_shapes(), st.data())
def test_any_region_is_sliced_right_or_refused(case, data):
    layout, shape = case
    region = []
    for size in shape:
        lo = data.draw(st.integers(0, size - 1))
        region.append((lo, data.draw(st.integers(lo + 1, size))))
    try:
        sliced = layout.slice(shape, region)
    except LayoutError:
        return
    expected = {axis: box_view(values, region) for axis, values in layout.evaluate_all(shape).items()}
    assert same_values(sliced.evaluate_all(box_shape(region)), expected)


@PROPERTY
@given(layouts_and_shapes(), st.data())
def test_slice_of_a_slice_is_the_composed_slice(case, data):
    layout, shape = case
    outer = data.draw(boxes(layout, shape))
    first = layout.slice(shape, outer)
    inner = data.draw(boxes(first, box_shape(outer)))
    composed = [(lo + inner_lo, lo + inner_hi) for (lo, _), (inner_lo, inner_hi) in zip(outer, inner)]
    assert first.slice(box_shape(outer), inner).equivalent(layout.slice(shape, composed))
