"""What an installed tilemlir carries: the dialect file and py.typed as package data, one
version, and `tilemlir-opt --version`. (CI also builds the wheel and runs the tools from it.)"""

import fnmatch
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import tilemlir
from tilemlir.ir.context import DIALECT_FILE
from tilemlir.version import MLIR_PACKAGES

PACKAGE = Path(tilemlir.__file__).resolve().parent
PYPROJECT = PACKAGE.parent / "pyproject.toml"


def test_the_dialect_file_and_py_typed_are_package_data():
    package_data = tomllib.loads(PYPROJECT.read_text())["tool"]["setuptools"]["package-data"]
    for path in (DIALECT_FILE, PACKAGE / "py.typed"):
        assert path.is_file()
        relative = path.relative_to(PACKAGE).as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in package_data["tilemlir"])


def test_the_version_has_one_source():
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert "version" in project["dynamic"] and "version" not in project
    assert metadata.version("tilemlir") == tilemlir.__version__


def test_opt_version_names_tilemlir_and_the_mlir_packages(capsys):
    from tilemlir.tools import opt
    with pytest.raises(SystemExit) as exited:
        opt.run(["--version"])
    assert exited.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"tilemlir {tilemlir.__version__}"
    assert lines[1:] == [f"  {name} {metadata.version(name)}" for name in MLIR_PACKAGES]
