// T.print (tilemlir/dsl/debug.py): device printf with the kernel's Python file and line, from
// Inputs/debug_kernels.py:show; gpu.printf in the tile IR, a vprintf call per print and the
// format as a global string in the PTX, for each chip, assembled by ptxas.
//
// RUN: env PYTHONPATH=%S/../Inputs tilemlir-kernel debug_kernels:show | FileCheck %s --check-prefix=IR
// RUN: env PYTHONPATH=%S/../Inputs tilemlir-kernel debug_kernels:show --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80})' --emit=ptx > %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm80.ptx
// Without line-info=true the PTX names no source file.
// RUN: not grep -E '^\s*\.(loc|file)\s' %t.sm80.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin %}
// RUN: env PYTHONPATH=%S/../Inputs tilemlir-kernel debug_kernels:show --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx > %t.sm90a.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.sm90a.ptx -o %t.sm90a.cubin %}
// RUN: env PYTHONPATH=%S/../Inputs tilemlir-kernel debug_kernels:show --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_100a})' --emit=ptx > %t.sm100a.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm100a.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a %t.sm100a.ptx -o %t.sm100a.cubin %}

// Python-print style: the index thread id as %lld, the f32 load widened to f64 for %g, the i32
// parameter as %d, a literal '%' doubled; f-string specs become printf's; Python values
// (the tuple) are formatted while building.
// IR: scf.if
// IR: %[[TID:.*]] = arith.index_cast %{{.*}} : index to i64
// IR-NEXT: %[[X:.*]] = arith.extf %{{.*}} : f32 to f64
// IR-NEXT: gpu.printf "[debug_kernels.py:15] tid %lld x = %g n%% %d\0A", %[[TID]], %[[X]], %arg1 : i64, f64, i32
// IR: gpu.printf "[debug_kernels.py:16] tid=%lld x=%.3f hex=%04llx shape=(2, 3)\0A", %{{.*}}, %{{.*}}, %{{.*}} : i64, f64, i64
// IR: scf.if
// IR: gpu.printf "[debug_kernels.py:18] last: %g!\0A", %{{.*}} : f64

// PTX: .extern .func  (.param .b32 func_retval0) vprintf
// PTX-DAG: .global .align 1 .b8 printfFormat_0[46] = {91, 100, 101, 98, 117, 103, 95, 107, 101, 114, 110, 101, 108, 115, 46, 112, 121, 58, 49, 53, 93, 32,
// PTX-DAG: .global .align 1 .b8 printfFormat_1[63] =
// PTX-DAG: .global .align 1 .b8 printfFormat_2[33] =
// PTX: .visible .entry show(
// The arguments go through a local buffer whose address is vprintf's second parameter.
// PTX: st.local.b64 [%rd{{[0-9]+}}+8],
// PTX: mov.b64 %rd{{[0-9]+}}, printfFormat_0;
// PTX: call.uni (retval0), vprintf, (param0, param1);
// PTX: mov.b64 %rd{{[0-9]+}}, printfFormat_1;
// PTX: call.uni (retval0), vprintf, (param0, param1);
// PTX: mov.b64 %rd{{[0-9]+}}, printfFormat_2;
// PTX: call.uni (retval0), vprintf, (param0, param1);
