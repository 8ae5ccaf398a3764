"""The `tilemlir` package's public API: listed by dir() and __all__, loaded on first use, each
with a docstring, and `import tilemlir` alone loads neither the compiler nor MLIR."""

import subprocess
import sys

import pytest

import tilemlir

PUBLIC = ("compile", "interpret", "autotune", "torch_op", "check_banks")


@pytest.mark.parametrize("name", PUBLIC)
def test_dir_and_all_list_the_lazy_functions(name):
    assert name in dir(tilemlir)
    assert name in tilemlir.__all__
    fn = getattr(tilemlir, name)
    assert callable(fn) and fn.__name__ == name
    assert (fn.__doc__ or "").strip(), f"tilemlir.{name} has no docstring"


def test_all_names_exist_and_unknown_names_raise():
    for name in tilemlir.__all__:
        getattr(tilemlir, name)
    with pytest.raises(AttributeError, match="no attribute 'compiler'"):
        tilemlir.compiler                                           # noqa: B018


def test_import_tilemlir_stays_light():
    code = ("import sys, tilemlir; dir(tilemlir); "
            "print(sorted(m for m in sys.modules if m == 'mlir' or m.startswith('tilemlir.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
