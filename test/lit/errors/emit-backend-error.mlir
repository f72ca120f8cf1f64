// RUN: not ll-opt %s --emit ptx 2>&1 | FileCheck %s

// Triton's back end rejects the module (no ttg.num-warps): its error is reported, not raised.

// CHECK: ll-opt: error:
// CHECK-NOT: Traceback
module attributes {ttg.target = "cuda:90"} {
  tt.func public @f() {
    tt.return
  }
}
