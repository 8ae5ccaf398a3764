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
    compile_case("grid_too_tall", "KernelError",
                 "a grid extent of 70000 along y exceeds the hardware limit 65535"),
    *[PyCase(f"language-buffer-shape-{i}", "import tilemlir.lang as T\n"
             f"T.Buffer({shape}, 'float16')", "KernelError",
             ("T.Buffer shape entries are positive integers",))
      for i, shape in enumerate(["(16.5, 8)", "(True, 8)", "(0, 8)", "(-4,)", "('16', 8)",
                                 "(16, None)"])],
    PyCase("language-alloc-local-float-shape", "import tilemlir.lang as T\n"
           "T.alloc_buffer((2.0, 4), 'float32')", "KernelError",
           ("alloc_local shape entries are positive integers, got 2.0",)),
    PyCase("language-1000-parameters", "import tilemlir.lang as T\n"
           "names = ', '.join(f'p{i}: T.int32' for i in range(1000))\n"
           "exec(f'def many({names}):\\n    pass', globals())\n"
           "tilemlir.compile(T.prim_func(many), target='sm_80', cache=False)",
           "KernelError", ("many takes 1000 parameters; a kernel's parameters must fit in 4096 bytes",)),
    PyCase("language-class-as-kernel", "import tilemlir.lang as T\n"
           "class K:\n    pass\n"
           "tilemlir.compile(T.prim_func(K), target='sm_80', cache=False)",
           "KernelError", ("is not a function: a kernel is a plain `def`",)),
]


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_case(batch, case_id):
    batch.check(case_id)
