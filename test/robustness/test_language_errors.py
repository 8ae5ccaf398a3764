"""Kernel-language mistakes: a KernelError naming the Python line, never a hang, a traceback
or a kernel that compiles to something else. Each compile runs in a child process."""

import pytest

from harness import PyCase

HERE = "import bad_kernels as k\n"


def compile_case(name, exception, *errors):
    return PyCase(f"language-{name}",
                  HERE + f"tilemlir.compile(k.{name}, target='sm_80', cache=False)",
                  exception, ("bad_kernels.py:",) + errors if exception else ())


CASES = [
    compile_case("unroll_ten_million", "KernelError",
                 "would unroll 10000000 iterations, more than 4096: use T.serial"),
    compile_case("unroll_step_zero", "KernelError", "T.unroll step must not be 0"),
    compile_case("unroll_float_bound", "KernelError", "T.unroll needs static integer bounds"),
    compile_case("serial_step_zero", "KernelError", "T.serial step must not be 0"),
    compile_case("star_args", "KernelError", "kernel parameters are plain named parameters"),
    compile_case("keyword_only", "KernelError", "keyword-only"),
    compile_case("recursive_helper", "KernelError", "again() calls itself"),
    compile_case("unroll_4096_is_fine", None),
    PyCase("language-class-as-kernel", "import tilemlir.lang as T\n"
           "class K:\n    pass\n"
           "tilemlir.compile(T.prim_func(K), target='sm_80', cache=False)",
           "KernelError", ("is not a function: a kernel is a plain `def`",)),
]


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_case(batch, case_id):
    batch.check(case_id)
