"""XOR swizzles of the memory axis (CuTe ``Swizzle<bits, base, shift>``)."""

from dataclasses import dataclass

from .errors import LayoutError, as_int

#: Swizzle width in bytes of each named mode; "none" has no swizzle.
SWIZZLE_BYTES = {"128B": 128, "64B": 64, "32B": 32}
SWIZZLE_MODES = (*SWIZZLE_BYTES, "none")

#: Element widths the shared-memory helpers support.
ELEM_BITS = (4, 8, 16, 32, 64)


@dataclass(frozen=True)
class Swizzle:
    """``m ^ ((m & mask) >> shift)`` with ``mask = ((1 << bits) - 1) << (base + shift)``.

    It XORs the ``bits`` bits at ``base + shift`` into the ``bits`` bits at
    ``base``.  Requiring ``shift >= bits`` keeps the two fields apart, so the
    swizzle is its own inverse.

    >>> Swizzle(3, 3, 3).apply(64 + 5)   # row 1 of a 128B f16 atom: chunk 0 -> 1
    77
    """

    bits: int
    base: int
    shift: int

    def __post_init__(self):
        for name in ("bits", "base", "shift"):
            object.__setattr__(self, name, as_int(getattr(self, name), f"swizzle {name}"))
        if self.bits < 1 or self.shift < self.bits:
            raise LayoutError(f"{self} needs bits >= 1 and shift >= bits")

    @property
    def period(self) -> int:
        """Memory values this far apart are swizzled alike (adding a multiple commutes)."""
        return 1 << (self.base + self.shift + self.bits)

    def apply(self, m):
        """Swizzle an int or a numpy integer array of memory values."""
        mask = ((1 << self.bits) - 1) << (self.base + self.shift)
        return m ^ ((m & mask) >> self.shift)

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"


def check_elem_bits(elem_bits) -> int:
    """``elem_bits`` checked to be one of ELEM_BITS."""
    bits = as_int(elem_bits, "elem_bits")
    if bits not in ELEM_BITS:
        raise LayoutError(f"elem_bits must be one of {ELEM_BITS}, got {bits}")
    return bits


def check_mode(mode) -> str:
    """``mode`` checked to be one of SWIZZLE_MODES."""
    if mode not in SWIZZLE_MODES:
        raise LayoutError(f"swizzle mode must be one of {SWIZZLE_MODES}, got {mode!r}")
    return mode


def swizzle_for(mode: str, elem_bits: int) -> Swizzle | None:
    """The element-unit swizzle of a hardware mode ("128B", "64B", "32B", "none").

    Hardware XORs byte-address bits [7, 7+b) into the 16-byte chunk bits
    [4, 4+b); in elements the chunk field starts at log2(128 / elem_bits).

    >>> swizzle_for("128B", 16), swizzle_for("64B", 32), swizzle_for("none", 16)
    (Swizzle(bits=3, base=3, shift=3), Swizzle(bits=2, base=2, shift=3), None)
    """
    mode, bits = check_mode(mode), check_elem_bits(elem_bits)
    if mode == "none":
        return None
    chunk_bits = {128: 3, 64: 2, 32: 1}[SWIZZLE_BYTES[mode]]
    return Swizzle(chunk_bits, (128 // bits).bit_length() - 1, 3)
