"""Axes a layout maps elements onto, strides along them, and iterators.

An axis names one coordinate of where an element lives: "m" (memory: the
slot in per-thread storage for registers, the element offset for shared or
global buffers), the thread axes, tensor memory lanes/columns, and the CTA
ids of a cluster.  ``4 @ laneid`` is a stride of 4 along axis laneid.
"""

from dataclasses import dataclass

from .errors import LayoutError, as_int

MEMORY = "m"

#: Axes naming who holds an element (threads, and CTAs for cluster-scope
#: layouts); a replica may only broadcast along these.
HOLDER_AXES = ("laneid", "warpid", "wid_in_wg", "tid_in_wg", "wgid", "tx",
               "cta_x", "cta_y", "cta_z")

#: Every axis, in the order text and evaluation list them.
AXIS_ORDER = (MEMORY, "laneid", "warpid", "wid_in_wg", "tid_in_wg", "wgid",
              "tx", "TLane", "TCol", "cta_x", "cta_y", "cta_z")

#: Hardware ranges of the fixed-size axes; layouts reaching past them are
#: rejected when built.
AXIS_BOUNDS = {"laneid": 32, "wid_in_wg": 4, "tid_in_wg": 128, "TLane": 128}


def axis_name(axis) -> str:
    """The name of ``axis`` (an Axis or a string), checked to be known.

    >>> axis_name(laneid), axis_name("m")
    ('laneid', 'm')
    """
    name = axis.name if isinstance(axis, Axis) else axis
    if not isinstance(name, str) or name not in AXIS_ORDER:
        raise LayoutError(f"unknown axis {axis!r}; the axes are {', '.join(AXIS_ORDER)}")
    return name


@dataclass(frozen=True)
class Stride:
    """A stride along one axis, written ``4 @ laneid`` (a bare int is on "m").

    >>> str(4 @ laneid), str(Stride(2))
    ('4@laneid', '2')
    """

    value: int
    axis: str = MEMORY

    def __post_init__(self):
        object.__setattr__(self, "value", as_int(self.value, "stride"))
        object.__setattr__(self, "axis", axis_name(self.axis))

    def __str__(self) -> str:
        return str(self.value) if self.axis == MEMORY else f"{self.value}@{self.axis}"


@dataclass(frozen=True)
class Axis:
    """A named axis object; ``stride @ axis`` makes a Stride along it."""

    name: str

    def __post_init__(self):
        axis_name(self.name)

    def __rmatmul__(self, stride) -> Stride:
        return Stride(stride, self.name)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Iter:
    """``extent`` steps of ``stride`` along ``axis``.

    >>> str(Iter(8, 4, "laneid"))
    '8:4@laneid'
    """

    extent: int
    stride: int
    axis: str = MEMORY

    def __post_init__(self):
        object.__setattr__(self, "extent", as_int(self.extent, "iterator extent", minimum=1))
        object.__setattr__(self, "stride", as_int(self.stride, "iterator stride"))
        object.__setattr__(self, "axis", axis_name(self.axis))

    def stride_text(self) -> str:
        """The stride as written in layout text: ``4@laneid``, or ``4`` on "m"."""
        return str(Stride(self.stride, self.axis))

    def __str__(self) -> str:
        return f"{self.extent}:{self.stride_text()}"


memory = Axis(MEMORY)
laneid = Axis("laneid")
warpid = Axis("warpid")
wid_in_wg = Axis("wid_in_wg")
tid_in_wg = Axis("tid_in_wg")
wgid = Axis("wgid")
tx = Axis("tx")
TLane = Axis("TLane")
TCol = Axis("TCol")
cta_x = Axis("cta_x")
cta_y = Axis("cta_y")
cta_z = Axis("cta_z")
