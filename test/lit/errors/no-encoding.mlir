// RUN: not ll-opt %s -p ll-attach-layouts 2>&1 | FileCheck %s

// A tensor without a layout (TTIR, not TTGIR): the pass stops with the op and its location.

// CHECK: ll-opt: error: {{.*}}no-encoding.mlir:[[# @LINE + 4]]:{{[0-9]+}}: [ll-attach-layouts] (tt.make_range) type tensor<128xi32> has no layout encoding (is this TTGIR?)
// CHECK-NOT: Traceback
module {
  tt.func public @ttir() {
    %0 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    tt.return
  }
}
