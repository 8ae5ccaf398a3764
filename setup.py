"""Which packages the wheel and the sdist hold: tilemlir/ and its subpackages, and the tile
dialect's IRDL file, which lives once at the top of the repository (dialects/) and is installed
as tilemlir/dialects/. Everything else is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(packages=find_namespace_packages(include=["tilemlir*"]) + ["tilemlir.dialects"],
      package_dir={"tilemlir.dialects": "dialects"})
