"""The one exception type of the layout package, and integer checking."""

import operator


class LayoutError(ValueError):
    """A layout that cannot be built, parsed or transformed as asked.

    ``column`` is the 1-based column of the problem when parsing text
    failed, else None.
    """

    def __init__(self, message: str, column: int | None = None):
        super().__init__(message)
        self.column = column


def as_int(value, what: str, minimum: int = 0) -> int:
    """``value`` as a Python int no smaller than ``minimum``.

    Accepts anything with ``__index__`` (numpy integers too), but not bool.

    >>> as_int(3, "extent", minimum=1)
    3
    """
    if isinstance(value, bool):
        raise LayoutError(f"{what} must be an integer, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise LayoutError(f"{what} must be an integer, got {value!r}") from None
    if number < minimum:
        raise LayoutError(f"{what} must be >= {minimum}, got {number}")
    return number
