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
    """The IRDL file lives once, in the top-level dialects/, and ships as tilemlir/dialects/."""
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["setuptools"]
    setup = (PACKAGE.parent / "setup.py").read_text()
    assert '"tilemlir.dialects"' in setup and 'package_dir={"tilemlir.dialects": "dialects"}' in setup
    assert any(fnmatch.fnmatch(DIALECT_FILE.name, pattern)
               for pattern in config["package-data"]["tilemlir.dialects"])
    assert "py.typed" in config["package-data"]["tilemlir"] and (PACKAGE / "py.typed").is_file()


def test_there_is_one_dialect_file():
    """In a checkout: dialects/tile.irdl.mlir, and no copy of it under tilemlir/."""
    if not (PACKAGE.parent / "dialects").is_dir():
        pytest.skip("an installed tilemlir: the wheel's tilemlir/dialects/ is the one copy")
    assert DIALECT_FILE == PACKAGE.parent / "dialects" / "tile.irdl.mlir"
    assert list(PACKAGE.rglob("*.irdl.mlir")) == []


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


def test_the_license_is_apache_2_and_travels_with_the_package():
    meta = metadata.metadata("tilemlir")
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    license_text = (PACKAGE.parent / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert not any(c.startswith("License ::") for c in meta.get_all("Classifier"))


def test_the_extras():
    meta = metadata.metadata("tilemlir")
    assert set(meta.get_all("Provides-Extra")) >= {"tools", "test", "torch", "cupy", "dev"}
    requires = meta.get_all("Requires-Dist")

    def extra(name):
        return {r.split(";")[0].replace(" ", "") for r in requires
                if f'extra == "{name}"' in r}
    assert {r.split(">")[0] for r in extra("tools")} == {"nvidia-cuda-nvcc",
                                                         "nvidia-cuda-nvdisasm"}
    assert "tilemlir[tools]" in extra("test") and "tilemlir[test]" in extra("dev")
    assert any(r.startswith("cupy-cuda") for r in extra("cupy"))
