"""Device macros used by test/python/test_macros.py, in a module of their own: they must see
this module's globals (not the kernel's) and carry this file's lines."""

import tilemlir.lang as T

SCALE = 3                       # the kernel's module has a SCALE of its own


@T.macro
def count_up(out, tid, n):
    """A device `if` and a `T.serial` loop, returning a loop-carried device value."""
    total: T.int32 = 0
    for i in T.serial(n):                               # marker-loop
        total = total + i * SCALE                       # marker-loop-body
    if tid == 0:
        out[0] = total                                  # marker-store
    return total


@T.macro
def add_twice(x, *, times=2, offset=0):
    """Keyword-only and default arguments; calls another macro."""
    return twice(x, times) + offset


@T.macro
def twice(x, times):
    return x * times


@T.macro
def fails(tid):
    if tid == 0:
        y = undefined_name + 1                          # noqa: F821  marker-fails
        return y


@T.macro
def returns_in_branch(tid):
    if tid == 0:
        return 1                                        # marker-return


@T.macro
def recurse(n):
    return recurse(n)


class Counter:
    """A small object whose methods are macros: Python-level facts on self, device code in
    the bodies."""

    def __init__(self, buf, step):
        self.buf = buf
        self.step = step

    @T.macro
    def bump(self, tid, i):
        if tid < self.step:
            self.buf[i] = i * self.step
