"""TIRx-style builders: ``S[extents : strides]`` and ``R[extents : strides]``.

Python hands ``S[a : b]`` to ``__getitem__`` as ``slice(a, b)``.  Each side is
a tuple or a single item; a stride is an int (axis "m"), ``k @ axis``, or an
Axis (stride 1 along it).

>>> from tilemlir.layout import laneid
>>> [str(it) for it in S[(8, 2) : (1 @ laneid, 1)]]
['8:1@laneid', '2:1']
"""

from .axes import MEMORY, Axis, Iter, Stride
from .errors import LayoutError


def _items(side) -> tuple:
    return tuple(side) if isinstance(side, (tuple, list)) else (side,)


def _stride(item) -> Stride:
    if isinstance(item, Stride):
        return item
    if isinstance(item, Axis):
        return Stride(1, item.name)
    return Stride(item, MEMORY)


class _IterBuilder:
    """`S[...]` / `R[...]`: iterators written as extents : strides (see the module doc)."""

    def __init__(self, name: str, doc: str):
        self._name = name
        self.__doc__ = doc

    def __getitem__(self, key) -> tuple[Iter, ...]:
        if not isinstance(key, slice) or key.start is None or key.stop is None or key.step is not None:
            example = f"{self._name}[(2, 4) : (4, 1)]"
            raise LayoutError(f"write {self._name}[extents : strides], e.g. {example}; got {key!r}")
        extents, strides = _items(key.start), tuple(_stride(s) for s in _items(key.stop))
        if len(extents) != len(strides):
            raise LayoutError(f"{self._name}[...] has {len(extents)} extents but {len(strides)} strides")
        return tuple(Iter(e, s.value, s.axis) for e, s in zip(extents, strides))

    def __repr__(self) -> str:
        return self._name


S = _IterBuilder("S", """Shard iterators: ``S[extents : strides]`` splits an element's flat index.

    ``TileLayout(S[(2, 8) : (8, 1)])`` is a row-major (2, 8) tile; ``S[32 : 1 @ laneid]`` puts
    element i in lane i.""")
R = _IterBuilder("R", """Replica iterators: ``R[extents : strides]``, each element also held there.

    ``TileLayout(S[8 : 1], R[4 : 1 @ warpid])``: 8 registers, the same in each of 4 warps.""")
