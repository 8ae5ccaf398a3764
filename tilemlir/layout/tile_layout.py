"""TileLayout: where each element of a logical tile lives."""

import functools
import itertools
import math

import numpy as np

from . import algebra
from .axes import AXIS_BOUNDS, AXIS_ORDER, HOLDER_AXES, MEMORY, Iter, axis_name
from .errors import LayoutError, as_int
from .swizzle import Swizzle


class TileLayout:
    """A function from a flat element index to a value on each axis.

    The flat index ``i`` in ``[0, size())`` is split row-major over the shard
    extents (last iterator fastest) into digits ``c_j``; axis ``a`` gets
    ``offset[a] + sum(c_j * stride_j for the iterators j on a)``, then the
    swizzle, if any, permutes the "m" value.  A buffer coordinate maps to
    ``i`` by row-major flattening, so a layout has no shape of its own:
    operations needing one take it as an argument.  Replica iterators (holder
    axes only) broadcast: the element is also held at every
    ``base + sum(r_k * stride_k)``.  An axis a layout does not mention reads 0.

    Layouts are immutable; ``==`` and ``hash`` compare structure (see
    ``equivalent`` for comparing the functions).

    >>> from tilemlir.layout import S, laneid
    >>> d_frag = TileLayout(S[(2, 8, 4, 2) : (2, 4 @ laneid, 1 @ laneid, 1)])
    >>> d_frag.evaluate_coord((9, 3), (16, 8))   # row 8 + 1, column 2*1 + 1
    {'m': 3, 'laneid': 5}
    """

    __slots__ = ("_shard", "_replica", "_offset", "_swizzle")

    def __init__(self, shard, replica=(), offset=None, swizzle=None):
        self._shard = _as_iters(shard, "shard")
        self._replica = _as_iters(replica, "replica")
        self._offset = _as_offset(offset)
        if swizzle is not None and not isinstance(swizzle, Swizzle):
            raise LayoutError(f"swizzle must be a Swizzle or None, got {swizzle!r}")
        self._swizzle = swizzle
        for it in self._replica:
            if it.axis not in HOLDER_AXES:
                raise LayoutError(f"{self}: replica iterator {it} is not on a holder axis "
                                  f"({', '.join(HOLDER_AXES)})")
        reach = self._linear_maxima()
        for axis, bound in AXIS_BOUNDS.items():
            if reach.get(axis, 0) >= bound:
                raise LayoutError(f"{self}: {axis} reaches {reach[axis]} but has only {bound} "
                                  f"values")

    # -- fields -------------------------------------------------------------
    @property
    def shard(self) -> tuple[Iter, ...]:
        """The iterators that split an element's flat index (outermost first)."""
        return self._shard

    @property
    def replica(self) -> tuple[Iter, ...]:
        """The iterators along which every element is also held (holder axes)."""
        return self._replica

    @property
    def offset(self) -> dict[str, int]:
        """Non-zero offsets per axis (a fresh dict); "m" is before the swizzle."""
        return dict(self._offset)

    @property
    def swizzle(self) -> Swizzle | None:
        """The XOR swizzle applied to the "m" value last, or None."""
        return self._swizzle

    def replace(self, **fields) -> "TileLayout":
        """A copy with some of shard, replica, offset, swizzle replaced."""
        current = dict(shard=self._shard, replica=self._replica, offset=self.offset, swizzle=self._swizzle)
        unknown = set(fields) - set(current)
        if unknown:
            raise LayoutError(f"TileLayout has no field(s) {sorted(unknown)}")
        return TileLayout(**{**current, **fields})

    # -- queries ------------------------------------------------------------
    def size(self) -> int:
        """Number of elements (product of the shard extents)."""
        return math.prod(it.extent for it in self._shard)

    def axes(self) -> tuple[str, ...]:
        """Axes the layout mentions (shard, replica, offset, "m" if swizzled), in AXIS_ORDER."""
        used = {it.axis for it in self._shard + self._replica} | set(dict(self._offset))
        if self._swizzle is not None:
            used.add(MEMORY)
        return tuple(a for a in AXIS_ORDER if a in used)

    def is_replicated(self) -> bool:
        """Whether the layout has replica iterators (elements held twice)."""
        return bool(self._replica)

    def span(self, axis=MEMORY) -> int:
        """Largest value on ``axis`` + 1 (replicas and swizzle included); 0 if absent.

        >>> TileLayout(S[(4, 8) : (1 @ laneid, 2)]).span(), TileLayout(S[8 : 1]).span("laneid")
        (15, 0)
        """
        axis = axis_name(axis)
        if axis not in self.axes():
            return 0
        if axis == MEMORY and self._swizzle is not None:
            memory_iters = tuple(it for it in self._shard if it.axis == MEMORY)
            return _swizzled_max(memory_iters, self._offset_of(MEMORY), self._swizzle) + 1
        return self._linear_max(axis) + 1

    def checked_shape(self, shape) -> tuple[int, ...]:
        """``shape`` as a tuple of ints, checked to hold exactly ``size()`` elements."""
        dims = tuple(as_int(d, "shape dim", minimum=1) for d in shape)
        if math.prod(dims) != self.size():
            raise LayoutError(f"{self} has {self.size()} elements but shape {dims} has {math.prod(dims)}")
        return dims

    # -- evaluation ---------------------------------------------------------
    def evaluate(self, flat_index) -> dict[str, int]:
        """The base holder's value on every axis in ``axes()`` for one element."""
        index = as_int(flat_index, "flat index")
        if index >= self.size():
            raise LayoutError(f"flat index {index} is out of range for {self} ({self.size()} elements)")
        values = {axis: self._offset_of(axis) for axis in self.axes()}
        for it in reversed(self._shard):
            index, digit = divmod(index, it.extent)
            values[it.axis] += digit * it.stride
        if self._swizzle is not None:
            values[MEMORY] = self._swizzle.apply(values[MEMORY])
        return values

    def evaluate_coord(self, coord, shape) -> dict[str, int]:
        """``evaluate`` of the element at ``coord`` of a row-major buffer of ``shape``."""
        dims = self.checked_shape(shape)
        if len(coord) != len(dims):
            raise LayoutError(f"coordinate {tuple(coord)} does not match shape {dims}")
        flat = 0
        for x, d in zip(coord, dims):
            x = as_int(x, "coordinate")
            if x >= d:
                raise LayoutError(f"coordinate {tuple(coord)} is out of shape {dims}")
            flat = flat * d + x
        return self.evaluate(flat)

    def evaluate_all(self, shape=None) -> dict[str, np.ndarray]:
        """``evaluate`` of every element at once: axis -> int64 array of ``shape``.

        ``shape`` defaults to the flat ``(size(),)``.  Replicas are ignored.

        >>> TileLayout(S[(2, 2) : (1, 2)]).evaluate_all((2, 2))["m"].tolist()
        [[0, 2], [1, 3]]
        """
        dims = (self.size(),) if shape is None else self.checked_shape(shape)
        result = {}
        for axis in self.axes():
            values = _digit_sums(self._shard, axis) + self._offset_of(axis)
            if axis == MEMORY and self._swizzle is not None:
                values = self._swizzle.apply(values)
            result[axis] = values.reshape(dims)
        return result

    def holders(self, flat_index) -> list[dict[str, int]]:
        """Every copy of one element: the base holder moved by each replica combination."""
        base = self.evaluate(flat_index)
        copies = []
        for digits in itertools.product(*(range(it.extent) for it in self._replica)):
            copy = dict(base)
            for it, digit in zip(self._replica, digits):
                copy[it.axis] += digit * it.stride
            copies.append(copy)
        return copies

    def is_injective(self) -> bool:
        """Whether no two element copies share a place (all axes together).

        For a replicated layout every copy counts, so the replicas must not
        collide with each other or with other elements.
        """
        axes = self.axes()
        if not axes:
            return self.size() == 1
        places = self._places(axes)
        return len(np.unique(places, axis=0)) == len(places)

    def equivalent(self, other: "TileLayout") -> bool:
        """Whether both layouts are the same function, replicas included."""
        if self.size() != other.size():
            return False
        axes = tuple(a for a in AXIS_ORDER if a in self.axes() or a in other.axes())
        if not axes:
            return True
        if not np.array_equal(self._places(axes, replicas=False), other._places(axes, replicas=False)):
            return False
        return np.array_equal(np.unique(self._replica_shifts(axes), axis=0),
                              np.unique(other._replica_shifts(axes), axis=0))

    # -- transformations ----------------------------------------------------
    def canonicalize(self) -> "TileLayout":
        """The same function with extent-1 iterators dropped and mergeable neighbours merged.

        Adjacent iterators on one axis merge when the outer stride equals the
        inner extent * inner stride; replicas are also sorted first, since
        their order does not matter.

        >>> str(TileLayout(S[(2, 1, 4) : (4, 7, 1)]).canonicalize())
        'S[(8):(1)]'
        """
        by_axis_then_stride = sorted(self._replica, key=lambda it: (AXIS_ORDER.index(it.axis), -it.stride))
        return self.replace(shard=_merged(self._shard), replica=_merged(by_axis_then_stride))

    def group(self, shape) -> list[list[Iter]]:
        """The shard split into one iterator list per dim of ``shape``; see algebra.group."""
        return algebra.group(self, shape)

    def row_vector(self, shape) -> "TileLayout":
        """The layout of a vector of ``shape[-1]`` elements in which every holder of column j
        of this (rows, columns) register layout holds element j: the columns' iterators (their
        register slots renumbered densely), and the rows' thread iterators as replicas. A bias
        in this layout adds to the tile with no data leaving its thread.

        >>> from tilemlir.layout import parse_layout
        >>> acc = parse_layout("S[(4, 2, 8, 4, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]")
        >>> str(acc.row_vector((64, 32)))
        'S[(4, 4, 2):(2, 1@laneid, 1)] R[(8, 4):(4@laneid, 1@wid_in_wg)]'
        """
        return self._broadcast_vector("row_vector", shape, keep=1)

    def column_vector(self, shape) -> "TileLayout":
        """The layout of a (rows, 1) column in which every holder of row i of this (rows,
        columns) register layout holds element i: the rows' iterators (their register slots
        renumbered densely), and the columns' thread iterators as replicas. A per-row
        statistic (a row max or sum of the tile) in this layout scales or shifts the tile with
        no data leaving its thread, and is what a reduction along the columns leaves in every
        thread of the row.

        >>> from tilemlir.layout import parse_layout
        >>> acc = parse_layout("S[(4, 2, 8, 4, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]")
        >>> str(acc.column_vector((64, 32)))
        'S[(4, 2, 8):(1@wid_in_wg, 1, 4@laneid)] R[(4):(1@laneid)]'
        """
        return self._broadcast_vector("column_vector", shape, keep=0)

    def _broadcast_vector(self, what: str, shape, keep: int) -> "TileLayout":
        """Dim `keep`'s iterators of this 2-d register layout (slots renumbered densely), the
        other dim's thread iterators as replicas."""
        if len(shape) != 2 or self._replica or self._swizzle is not None:
            raise LayoutError(f"{self}: {what} takes an unreplicated, unswizzled 2-d "
                              f"register layout, got shape {list(shape)}")
        dims = self.canonicalize().group(tuple(shape))
        kept, other = dims[keep], dims[1 - keep]
        slots = sorted((it for it in kept if it.axis == MEMORY), key=lambda it: it.stride)
        dense, step = {}, 1
        for it in slots:
            dense[id(it)] = step
            step *= it.extent
        shard = [Iter(it.extent, dense[id(it)]) if it.axis == MEMORY else it for it in kept]
        replica = [it for it in other if it.axis != MEMORY and it.extent > 1]
        return TileLayout(shard, replica).canonicalize()

    def tile_to(self, to_shape, atom_shape) -> "TileLayout":
        """This layout (over ``atom_shape``) repeated over ``to_shape``; see algebra.tile_to."""
        return algebra.tile_to(self, to_shape, atom_shape)

    def permute_by_groups(self, shape, perm) -> "TileLayout":
        """The layout of the buffer with dims permuted; see algebra.permute_by_groups."""
        return algebra.permute_by_groups(self, shape, perm)

    def slice(self, shape, region) -> "TileLayout":
        """The layout of a box ``[(start, stop), ...]`` of the buffer; see algebra.slice_layout."""
        return algebra.slice_layout(self, shape, region)

    # -- text, equality -----------------------------------------------------
    def __str__(self) -> str:
        parts = [f"S[{_iters_text(self._shard)}]"]
        if self._replica:
            parts.append(f"R[{_iters_text(self._replica)}]")
        if self._offset:
            parts.append("+ {" + ", ".join(f"{a}: {v}" for a, v in self._offset) + "}")
        if self._swizzle is not None:
            parts.append(f"o {self._swizzle}")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"parse_layout({str(self)!r})"

    def _key(self):
        return self._shard, self._replica, self._offset, self._swizzle

    def __eq__(self, other) -> bool:
        return isinstance(other, TileLayout) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    # -- helpers ------------------------------------------------------------
    def _offset_of(self, axis: str) -> int:
        return dict(self._offset).get(axis, 0)

    def _linear_maxima(self) -> dict[str, int]:
        """{axis: largest pre-swizzle value on it}, replicas included (strides are >= 0), for
        the axes the layout names or offsets; one pass over the iterators."""
        reach = dict(self._offset)
        for it in self._shard + self._replica:
            reach[it.axis] = reach.get(it.axis, 0) + (it.extent - 1) * it.stride
        return reach

    def _linear_max(self, axis: str) -> int:
        """Largest pre-swizzle value on ``axis`` (0 where the layout does not name it)."""
        return self._linear_maxima().get(axis, 0)

    def _replica_shifts(self, axes) -> np.ndarray:
        """(replica combinations, len(axes)) array of what each replica adds."""
        return np.stack([_digit_sums(self._replica, axis) for axis in axes], axis=1)

    def _places(self, axes, replicas=True) -> np.ndarray:
        """(copies, len(axes)) array of every element copy's place on ``axes``."""
        values = self.evaluate_all()
        base = np.stack([values.get(axis, np.zeros(self.size(), np.int64)) for axis in axes], axis=1)
        if not replicas:
            return base
        return (base[:, None, :] + self._replica_shifts(axes)[None, :, :]).reshape(-1, len(axes))


def _as_iters(iters, what: str) -> tuple[Iter, ...]:
    if isinstance(iters, Iter) or not isinstance(iters, (tuple, list)):
        raise LayoutError(f"{what} must be a tuple of Iter (e.g. S[(2, 4) : (4, 1)]), got {iters!r}")
    for it in iters:
        if not isinstance(it, Iter):
            raise LayoutError(f"{what} must be a tuple of Iter, but holds {it!r}")
    return tuple(iters)


def _as_offset(offset) -> tuple[tuple[str, int], ...]:
    """Offsets as sorted (axis, value) pairs, zeros dropped, so equal layouts compare equal."""
    values = {}
    for axis, value in (offset or {}).items():
        values[axis_name(axis)] = as_int(value, f"offset on {axis}")
    return tuple((a, values[a]) for a in AXIS_ORDER if values.get(a))


def _digit_sums(iters, axis: str) -> np.ndarray:
    """Each flat index's sum of digit * stride on ``axis``, over the row-major product of ``iters``."""
    rank = len(iters)
    total = np.zeros((1,) * rank, dtype=np.int64)
    for j, it in enumerate(iters):
        if it.axis == axis:
            steps = np.arange(it.extent, dtype=np.int64) * it.stride
            total = total + steps.reshape([-1 if k == j else 1 for k in range(rank)])
    return np.broadcast_to(total, [it.extent for it in iters]).reshape(-1)


@functools.lru_cache(maxsize=1024)
def _swizzled_max(memory_iters: tuple[Iter, ...], offset: int, swizzle: Swizzle) -> int:
    """Largest swizzled "m" value, over every element: cached, since every build of a kernel
    asks it again for each of its shared-memory tiles (0.2 ms apiece)."""
    return int(swizzle.apply(_digit_sums(memory_iters, MEMORY) + offset).max())


def _merged(iters) -> tuple[Iter, ...]:
    merged = []
    for it in iters:
        if it.extent == 1:
            continue
        if merged and merged[-1].axis == it.axis and merged[-1].stride == it.extent * it.stride:
            outer = merged.pop()
            it = Iter(outer.extent * it.extent, it.stride, it.axis)
        merged.append(it)
    return tuple(merged)


def _iters_text(iters) -> str:
    extents = ", ".join(str(it.extent) for it in iters)
    strides = ", ".join(it.stride_text() for it in iters)
    return f"({extents}):({strides})"
