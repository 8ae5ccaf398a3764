// tile-to-ptx{line-info=true}: the PTX carries .file/.loc directives naming the source of the
// ops' locations (the kernel's Python lines, or a .mlir input's lines), only directives: no
// DWARF sections, no `.target ..., debug` (ptxas would then compile without optimisation).
// ptxas assembles it, and turns the directives into the cubin's line table.
//
// Inputs/mma_demo.mlir: its lines 20, 21 (the fragment copies), 22 (tile.gemm), 25 (D stored).
// RUN: tilemlir-opt %S/../Inputs/mma_demo.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80 line-info=true})' --emit=ptx -o %t.demo.ptx
// RUN: FileCheck %s --check-prefix=DEMO < %t.demo.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_80 %t.demo.ptx -o %t.demo.cubin %}
//
// Inputs/debug_kernels.py (a kernel in the language): the Python lines.
// RUN: env PYTHONPATH=%S/../Inputs tilemlir-kernel debug_kernels:show --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a line-info=1})' --emit=ptx > %t.py.ptx
// RUN: FileCheck %s --check-prefix=PY < %t.py.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_90a %t.py.ptx -o %t.py.cubin %}
//
// A bad value is an error naming the option.
// RUN: not tilemlir-opt %S/../Inputs/mma_demo.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_80 line-info=yes})' 2>&1 | FileCheck %s --check-prefix=BAD

// DEMO: .target sm_80{{$}}
// DEMO: .loc 1 20 7
// DEMO-COUNT-4: ld.global.b32
// DEMO: .loc 1 21 7
// DEMO-COUNT-4: ld.global.b16
// DEMO: .loc 1 22 7
// DEMO: mma.sync.aligned.m16n8k16
// DEMO: .loc 1 25 7
// DEMO: st.global.v2.b32
// DEMO: st.global.v2.b32
// DEMO-NOT: .section .debug_info
// DEMO: .file 1 "{{.*}}Inputs{{/|\\}}mma_demo.mlir"

// PY: .target sm_90a{{$}}
// PY: .loc 1 13 5
// PY: ld.global
// PY: .loc 1 15 9
// PY: call.uni (retval0), vprintf,
// PY: .loc 1 16 9
// PY: call.uni (retval0), vprintf,
// PY: .loc 1 18 9
// PY: call.uni (retval0), vprintf,
// PY-NOT: .section .debug_info
// PY: .file 1 "{{.*}}Inputs{{/|\\}}debug_kernels.py"

// BAD: option line-info of tile-to-ptx must be true or false, got 'yes'
