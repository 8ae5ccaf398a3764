"""The CUDA driver through cuda-python (CPU: a recording fake of cuda.bindings.driver stands in
for the driver): the driver check, the chip of a device, and the second-device path's module
load and launches, each in its device's primary context, with the caller's context restored."""

import pytest

from fake_cuda import FakeDriver
from tilemlir.runtime import cuda


@pytest.fixture
def fake(monkeypatch):
    """Installs a FakeDriver (reconfigure it through the returned object)."""
    driver = FakeDriver()
    monkeypatch.setattr(cuda, "driver", lambda: driver)
    monkeypatch.setattr(cuda, "_contexts", {})
    cuda._driver_problem.cache_clear()
    cuda._device_chip.cache_clear()
    yield driver
    cuda._driver_problem.cache_clear()
    cuda._device_chip.cache_clear()


def test_without_a_driver_the_problem_is_named_and_nothing_aborts():
    if cuda.driver_available():
        pytest.skip("checks the behaviour without a CUDA driver")
    assert "libcuda.so.1" in cuda._driver_problem()
    with pytest.raises(cuda.CudaUnavailable, match="libcuda.so.1"):
        cuda.device_chip(0)
    with pytest.raises(cuda.CudaUnavailable):
        cuda.primary_context(0)


def test_driver_problems_are_told_apart(fake, monkeypatch):
    assert cuda._driver_problem() is None and cuda.driver_available()
    cuda._driver_problem.cache_clear()
    fake.fail = "cuInit"
    assert "cuInit failed (CUDA_ERROR_INVALID_VALUE" in cuda._driver_problem()
    cuda._driver_problem.cache_clear()
    fake.fail, fake.device_count = None, 0
    assert cuda._driver_problem() == "the CUDA driver found no GPU"

    def unloadable(flags):
        raise RuntimeError("libcuda.so.1: cannot open shared object file")
    cuda._driver_problem.cache_clear()
    monkeypatch.setattr(fake, "cuInit", unloadable, raising=False)
    assert cuda._driver_problem().startswith("no CUDA driver")


@pytest.mark.parametrize("capability, chip", [((9, 0), "sm_90a"), ((10, 0), "sm_100a"),
                                              ((8, 6), "sm_86"), ((12, 0), "sm_120")])
def test_device_chip(fake, capability, chip):
    fake.capability = capability
    assert cuda.device_chip(1) == chip


def test_the_chip_is_asked_once_per_device(fake):
    fake.capability = (9, 0)
    assert cuda.device_chip(0) == "sm_90a"
    fake.capability = (8, 0)              # a device does not change: the first answer stands
    assert cuda.device_chip(0) == "sm_90a" and cuda.device_chip(1) == "sm_80"


def test_errors_name_the_call_and_the_error(fake):
    fake.fail = "cuDeviceGetAttribute"
    with pytest.raises(cuda.CudaError, match=r"cuDeviceGetAttribute failed: "
                                             r"CUDA_ERROR_INVALID_VALUE \(1\)"):
        cuda.device_chip(0)


def test_primary_contexts_are_retained_once(fake):
    assert int(cuda.primary_context(1)) == 0xC001
    assert int(cuda.primary_context(1)) == 0xC001
    assert [c for c in fake.calls if c[0] == "cuDevicePrimaryCtxRetain"] == [
        ("cuDevicePrimaryCtxRetain", 1)]


def _balanced(calls) -> bool:
    depth = 0
    for call in calls:
        depth += {"push": 1, "pop": -1}.get(call[0], 0)
        if depth < 0:
            return False
    return depth == 0


def test_a_kernel_on_another_device_loads_in_that_devices_context(fake):
    function = cuda.DriverFunction("// ptx", "k", 1)
    load, get = fake.calls[-3], fake.calls[-2]
    assert load == ("cuModuleLoadData", b"// ptx\0", 0xC001)   # NUL-terminated for the JIT
    assert get == ("cuModuleGetFunction", 0xA000, b"k", 0xC001)
    assert int(function.function) == 0xF000
    assert _balanced(fake.calls) and not fake.current


def test_plain_launches_configure_once_and_restore_the_context(fake):
    import ctypes
    function = cuda.DriverFunction("// ptx", "k", 1)
    launch = function.launcher((4, 2, 1), (128, 1, 1), (1, 1, 1), 100_000)
    params = (ctypes.c_void_p * 2)()
    fake.calls.clear()
    launch(0x5000, params, None, 2)
    launch(0x6000, params, None, 2)
    attributes = [c for c in fake.calls if c[0] == "cuFuncSetAttribute"]
    a = fake.CUfunction_attribute
    assert [(c[1], c[2], c[3]) for c in attributes] == [
        (a.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100_000, 0xC001),
        (a.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1, 0xC001)]
    launches = [c for c in fake.calls if c[0] == "cuLaunchKernel"]
    assert [c[1:5] for c in launches] == [((4, 2, 1), (128, 1, 1), 100_000, 0x5000),
                                          ((4, 2, 1), (128, 1, 1), 100_000, 0x6000)]
    assert all(c[5] is params and c[6] == 0xC001 for c in launches)
    assert _balanced(fake.calls) and not fake.current


def test_cluster_launches_carry_the_shape_and_the_spread_policy(fake):
    function = cuda.DriverFunction("// ptx", "k", 1)
    launch = function.launcher((8, 1, 1), (384, 1, 1), (2, 1, 1), 200_000)
    launch(0x5000, None, None, 0)
    launch(0x7000, None, None, 0)
    launches = [c for c in fake.calls if c[0] == "cuLaunchKernelEx"]
    assert [c[2] for c in launches] == [0x5000, 0x7000]          # each call's own stream
    config = launches[0][1]
    assert (config.gridDimX, config.gridDimY, config.gridDimZ) == (8, 1, 1)
    assert (config.blockDimX, config.blockDimY, config.blockDimZ) == (384, 1, 1)
    assert config.sharedMemBytes == 200_000 and config.numAttrs == 2
    shape, policy = config.attrs
    assert shape.id == fake.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    assert (shape.value.clusterDim.x, shape.value.clusterDim.y,
            shape.value.clusterDim.z) == (2, 1, 1)
    assert policy.id == \
        fake.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
    assert policy.value.clusterSchedulingPolicyPreference == \
        fake.CUclusterSchedulingPolicy.CU_CLUSTER_SCHEDULING_POLICY_SPREAD
    assert all(c[4] == 0xC001 for c in launches)
    assert _balanced(fake.calls) and not fake.current


def test_a_failed_launch_raises_and_still_pops_the_context(fake):
    function = cuda.DriverFunction("// ptx", "k", 1)
    launch = function.launcher((1, 1, 1), (32, 1, 1), (2, 1, 1), 0)
    fake.fail = "cuLaunchKernelEx"
    with pytest.raises(cuda.CudaError, match="cuLaunchKernelEx failed: CUDA_ERROR_INVALID_VALUE"):
        launch(0, None, None, 0)
    assert _balanced(fake.calls) and not fake.current


@pytest.mark.parametrize("cluster, allowed", [((16, 1, 1), True), ((8, 2, 1), True),
                                              ((8, 1, 1), False), ((2, 2, 2), False)])
def test_the_runtime_path_opts_into_clusters_of_more_than_8(fake, monkeypatch, cluster, allowed):
    """MLIR's runtime launches a cluster of more than 8 CTAs without the function's
    non-portable opt-in (CUDA_ERROR_INVALID_CLUSTER_SIZE on the H200): the launcher sets it
    through cuda-python first, on the function the runtime loaded, in its device's context."""
    from tilemlir.runtime import launch
    monkeypatch.setattr(launch, "_runtime", type("Runtime", (), {
        "mgpuLaunchKernel": print, "mgpuLaunchClusterKernel": print})())
    monkeypatch.setattr(launch, "_device", 0)
    function = launch.LoadedFunction.__new__(launch.LoadedFunction)
    function.function = 0xF123
    function.launcher((32, 1, 1), (128, 1, 1), cluster, 0)
    attributes = [c for c in fake.calls if c[0] == "cuFuncSetAttribute"]
    a = fake.CUfunction_attribute
    assert [(c[1], c[2], c[3]) for c in attributes] == \
        ([(a.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1, 0xC000)] if allowed else [])
    assert _balanced(fake.calls) and not fake.current
