"""Where the CUDA tools (ptxas, nvdisasm) come from: $TILEMLIR_<TOOL>, else cuda.pathfinder
(the NVIDIA wheels, conda, CUDA_HOME), else the PATH."""

import os
import stat

import pytest

from tilemlir.target import ptx


def _tool(directory, name):
    path = directory / name
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_the_environment_variable_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("TILEMLIR_NVDISASM", "/opt/x/nvdisasm")
    assert ptx.find_cuda_tool("nvdisasm") == "/opt/x/nvdisasm"


def test_pathfinder_is_asked_before_the_path(monkeypatch, tmp_path):
    monkeypatch.delenv("TILEMLIR_PTXAS", raising=False)
    monkeypatch.setattr(ptx, "_pathfinder", lambda name: f"/wheel/bin/{name}")
    monkeypatch.setenv("PATH", os.path.dirname(_tool(tmp_path, "ptxas")))
    assert ptx.find_cuda_tool("ptxas") == "/wheel/bin/ptxas"


def test_the_path_is_the_last_resort(monkeypatch, tmp_path):
    monkeypatch.delenv("TILEMLIR_PTXAS", raising=False)
    monkeypatch.setattr(ptx, "_pathfinder", lambda name: None)
    on_path = _tool(tmp_path, "ptxas")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert ptx.find_cuda_tool("ptxas") == on_path
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert ptx.find_cuda_tool("ptxas") is None


def test_pathfinder_finds_the_wheels_tools():
    pathfinder = pytest.importorskip("cuda.pathfinder")
    if "ptxas" not in pathfinder.SUPPORTED_BINARY_UTILITIES:
        pytest.skip("cuda-pathfinder before 1.8.1 does not look for ptxas")
    # nvidia-cuda-nvcc ([tools] and [test] bring it) carries ptxas.
    found = ptx._pathfinder("ptxas")
    if found is None:
        pytest.skip("no ptxas where cuda.pathfinder looks")
    assert os.path.basename(found) == "ptxas" and os.access(found, os.X_OK)
    assert ptx._pathfinder("no-such-tool") is None
