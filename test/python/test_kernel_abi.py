"""The kernel ABI (tilemlir/ir/kernel_abi.py): what the language writes is what the runtime and
the interpreter read, and tensor-map records survive the trip to the lowered module."""

from mlir import ir

from tilemlir.ir import kernel_abi
from tilemlir.ir.context import make_context
from tilemlir.ir.kernel_abi import KernelDeclaration, TensorMapRecord

KERNEL = """
gpu.module @m {
  gpu.func @k(%a: !llvm.ptr, %n: i32) kernel {
    gpu.return
  }
}
"""


def _func(module: ir.Module) -> ir.Operation:
    gpu_module = module.body.operations[0].operation
    return gpu_module.regions[0].blocks[0].operations[0].operation


def test_a_declaration_reads_back_as_written():
    with make_context():
        module = ir.Module.parse(KERNEL)
        func = _func(module)
        assert kernel_abi.read(func) == KernelDeclaration(None, None)
        declared = KernelDeclaration(("A", "n"), (128, 1, 1), (4, 2, 1), (2, 1, 1))
        kernel_abi.declare(func, declared)
        assert kernel_abi.read(func) == declared
        text = str(func)
        assert 'tile.params = ["A", "n"]' in text
        assert "tile.grid = array<i32: 4, 2, 1>" in text
        assert "tile.cluster = array<i32: 2, 1, 1>" in text
        assert kernel_abi.block_size(func) == (128, 1, 1)
        assert kernel_abi.cluster_shape(func) == (2, 1, 1)


def test_parameter_names_fall_back_when_absent_or_miscounted():
    assert KernelDeclaration(("A", "B"), None).param_names(2) == ["A", "B"]
    assert KernelDeclaration(("A",), None).param_names(2) == ["arg0", "arg1"]
    assert KernelDeclaration(None, None).param_names(1) == ["arg0"]


def test_tensor_maps_go_from_the_kernel_to_the_lowered_module():
    records = [TensorMapRecord(0, 2, (128, 64), 128), TensorMapRecord(0, 3, (64, 64), 0)]
    with make_context():
        module = ir.Module.parse(KERNEL)
        func = _func(module)
        assert kernel_abi.tensor_maps(func) == []
        kernel_abi.set_tensor_maps(func, records)
        assert kernel_abi.tensor_maps(func) == records
        kernel_abi.publish_tensor_maps(module.operation, {("m", "k"): records})
        assert kernel_abi.lowered_tensor_maps(module) == {("m", "k"): records}
