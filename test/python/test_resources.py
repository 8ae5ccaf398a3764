"""Resource figures of compiled kernels (n_regs, n_spills, local_bytes, shared_bytes, cubin,
sass) from ptxas -v and nvdisasm, run on the CPU; a missing tool is named with its remedy."""

import pytest

import tilemlir
from tilemlir.target import ptx
from tilemlir.target.ptx import ResourceUsage, ToolNotFound, parse_resource_usage

needs_ptxas = pytest.mark.skipif(ptx.find_ptxas() is None, reason="ptxas not found")
needs_nvdisasm = pytest.mark.skipif(ptx.find_cuda_tool("nvdisasm") is None,
                                    reason="nvdisasm not found")

# ptxas -v's messages as it writes them (13.x), two kernels, one with spills and static shared
# memory (the older form with cmem), one without.
MESSAGES = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'spilly' for 'sm_90a'
ptxas info    : Function properties for spilly
    48 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]
ptxas info    : Compiling entry function 'tidy' for 'sm_90a'
ptxas info    : Function properties for tidy
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 22 registers, used 0 barriers
ptxas info    : Compile time = 3.483 ms
"""


def test_ptxas_messages_are_read_kernel_by_kernel():
    assert parse_resource_usage(MESSAGES) == {
        "spilly": ResourceUsage("spilly", registers=255, stack=48, spill_stores=40,
                                spill_loads=36, shared=1024, barriers=1),
        "tidy": ResourceUsage("tidy", registers=22, stack=0, spill_stores=0, spill_loads=0,
                              shared=0, barriers=0)}


def test_the_figures_of_a_spilling_kernel(monkeypatch):
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    kernel = tilemlir.compile(gemm_16x8x16, target="sm_90a")
    fresh = type(kernel)(kernel.executable, kernel.signature)
    messages = MESSAGES.replace("spilly", kernel.name)
    monkeypatch.setattr(kernel.executable, "_assembled",
                        {kernel.signature.module: (b"\x7fELF", messages)})
    assert (fresh.n_regs, fresh.n_spills, fresh.local_bytes, fresh.shared_bytes) == (
        255, 10, 48, 1024)


@needs_ptxas
def test_a_compiled_kernels_figures():
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    kernel = tilemlir.compile(gemm_16x8x16, target="sm_90a")
    usage = kernel.resource_usage
    assert usage == ptx.resource_usage(kernel.ptx, "sm_90a", kernel.name)
    assert usage.kernel == kernel.name and 16 <= kernel.n_regs <= 64
    assert (kernel.n_spills, kernel.local_bytes, kernel.shared_bytes) == (0, 0, 0)
    assert kernel.cubin[:4] == b"\x7fELF"
    assert kernel.cubin is kernel.cubin           # assembled once


@needs_ptxas
def test_shared_bytes_count_the_dynamic_shared_memory():
    from tilemlir.kernels.hgemm_hopper import hgemm_v6
    kernel = tilemlir.compile(hgemm_v6(256, 512, 256), target="sm_90a")
    assert kernel.shared_bytes == kernel.signature.shared_memory > 48 * 1024
    assert kernel.n_spills == 0 and kernel.n_regs <= 255


@needs_ptxas
@needs_nvdisasm
def test_sass():
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    kernel = tilemlir.compile(gemm_16x8x16, target="sm_90a")
    assert kernel.sass.count("HMMA.16816.F32") == 1
    assert kernel.sass is kernel.sass


def test_a_missing_tool_is_named_with_its_remedy(monkeypatch):
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    kernel = tilemlir.compile(gemm_16x8x16, target="sm_90a")
    fresh = type(kernel)(kernel.executable, kernel.signature)
    monkeypatch.setattr(kernel.executable, "_assembled", {})
    monkeypatch.setattr(ptx, "find_cuda_tool", lambda name: None)
    with pytest.raises(ToolNotFound, match=r"ptxas not found: pip install 'tilemlir\[tools\]' "
                                           r"\(it brings nvidia-cuda-nvcc\).*TILEMLIR_PTXAS"):
        fresh.n_regs
    monkeypatch.setattr(kernel.executable, "_assembled",
                        {kernel.signature.module: (b"\x7fELF", MESSAGES)})
    with pytest.raises(ToolNotFound, match=r"nvdisasm not found: .*nvidia-cuda-nvdisasm.*"
                                           r"TILEMLIR_NVDISASM"):
        fresh.sass
