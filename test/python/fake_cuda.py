"""Stand-ins for CUDA objects on a machine without a GPU: a DLPack exporter of a "CUDA tensor"
that is never dereferenced, and a recording fake of cuda.bindings.driver."""

from __future__ import annotations

import ctypes

# DLPack's C structures (dlpack.h), to export a capsule as a CUDA framework would.


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int),
                ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Managed))
_Managed._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p),
                     ("deleter", _DELETER)]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

# DLPack type codes and devices.
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BFLOAT = 0, 1, 2, 4
KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13


@_DELETER
def _keep(_managed):            # the exporter object owns the memory: nothing to free
    pass


class FakeDLPackTensor:
    """Exports a DLPack capsule describing memory at `address` on `device` (never touched)."""

    def __init__(self, shape, code=KDL_FLOAT, bits=16, strides=None, device=KDL_CUDA,
                 device_id=0, address=0x7000_0000, byte_offset=0, lanes=1):
        self._shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self._strides = (ctypes.c_int64 * max(len(shape), 1))(*strides) if strides else None
        self._device = (device, device_id)
        self._managed = _Managed()
        t = self._managed.dl_tensor
        t.data, t.ndim, t.byte_offset = address, len(shape), byte_offset
        t.device = _Device(device, device_id)
        t.dtype = _DataType(code, bits, lanes)
        t.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        if self._strides is not None:
            t.strides = ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64))
        self._managed.deleter = _keep

    def __dlpack_device__(self):
        return self._device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        # An unversioned capsule: what a DLPack 0.x exporter (older torch, cupy) gives.
        return _capsule_new(ctypes.addressof(self._managed), b"dltensor", None)


class FakeDriver:
    """Records the cuda.bindings.driver calls the runtime makes and answers them; the types
    (CUlaunchConfig, enums, ...) are cuda.bindings' own, which need no driver. `fail` names a
    call to answer with CUDA_ERROR_INVALID_VALUE; `device_count` and `capability` describe
    the GPUs."""

    def __init__(self, device_count=2, capability=(9, 0), fail=None):
        from cuda.bindings import driver
        self._real = driver
        self.calls: list = []
        self.device_count, self.capability, self.fail = device_count, capability, fail
        self.current: list = []          # the context stack

    def __getattr__(self, name):          # types and enums
        return getattr(self._real, name)

    def _answer(self, name, *values):
        status = self._real.CUresult.CUDA_SUCCESS
        if name == self.fail:
            status = self._real.CUresult.CUDA_ERROR_INVALID_VALUE
        return (status, *values)

    def cuInit(self, flags):
        self.calls.append(("cuInit", flags))
        return self._answer("cuInit")

    def cuDeviceGetCount(self):
        return self._answer("cuDeviceGetCount", self.device_count)

    def cuDeviceGet(self, ordinal):
        return self._answer("cuDeviceGet", self._real.CUdevice(ordinal))

    def cuDeviceGetAttribute(self, attribute, device):
        a = self._real.CUdevice_attribute
        value = {a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: self.capability[0],
                 a.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: self.capability[1]}[attribute]
        return self._answer("cuDeviceGetAttribute", value)

    def cuDevicePrimaryCtxRetain(self, device):
        self.calls.append(("cuDevicePrimaryCtxRetain", int(device)))
        return self._answer("cuDevicePrimaryCtxRetain",
                            self._real.CUcontext(0xC000 + int(device)))

    def cuCtxPushCurrent(self, context):
        self.current.append(int(context))
        self.calls.append(("push", int(context)))
        return self._answer("cuCtxPushCurrent")

    def cuCtxPopCurrent(self):
        context = self.current.pop()
        self.calls.append(("pop", context))
        return self._answer("cuCtxPopCurrent", self._real.CUcontext(context))

    def cuModuleLoadData(self, image):
        self.calls.append(("cuModuleLoadData", bytes(image), self._context()))
        return self._answer("cuModuleLoadData", self._real.CUmodule(0xA000))

    def cuModuleGetFunction(self, module, name):
        self.calls.append(("cuModuleGetFunction", int(module), name, self._context()))
        return self._answer("cuModuleGetFunction", self._real.CUfunction(0xF000))

    def cuFuncSetAttribute(self, function, attribute, value):
        self.calls.append(("cuFuncSetAttribute", attribute, value, self._context()))
        return self._answer("cuFuncSetAttribute")

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        self.calls.append(("cuLaunchKernel", (gx, gy, gz), (bx, by, bz), shared, stream,
                           params, self._context()))
        return self._answer("cuLaunchKernel")

    def cuLaunchKernelEx(self, config, function, params, extra):
        self.calls.append(("cuLaunchKernelEx", config, int(config.hStream), params,
                           self._context()))
        return self._answer("cuLaunchKernelEx")

    def _context(self):
        return self.current[-1] if self.current else None
