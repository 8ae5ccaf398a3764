"""T.print on a GPU: what the device prints, captured from a child process's stdout (vprintf
writes to the process's file descriptor 1 when the host synchronises)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]

_CHILD = r"""
import torch
import tilemlir
import debug_kernels                      # test/Inputs/debug_kernels.py
x = (torch.arange(64, device="cuda") * 0.5 + 1.5).float()
kernel = tilemlir.compile(debug_kernels.show, cache=False)
kernel(x, 7)
torch.cuda.synchronize()                  # the device's printf buffer is written out here
"""


def test_device_print_output_carries_the_python_lines(tmp_path):
    pytest.importorskip("torch")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), str(ROOT / "test" / "Inputs"), os.environ.get("PYTHONPATH", "")]),
        TILEMLIR_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    # Threads print in no defined order: compare the lines as a multiset.
    assert sorted(proc.stdout.splitlines()) == sorted([
        "[debug_kernels.py:15] tid 0 x = 1.5 n% 7",
        "[debug_kernels.py:15] tid 1 x = 2 n% 7",
        "[debug_kernels.py:16] tid=0 x=1.500 hex=0000 shape=(2, 3)",
        "[debug_kernels.py:16] tid=1 x=2.000 hex=00ff shape=(2, 3)",
        "[debug_kernels.py:18] last: 66!",
    ])
