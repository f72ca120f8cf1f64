// RUN: not ll-opt %s -p ll-attach-layouts,ll-classify-conversions --print-ir-after-all 2>&1 | FileCheck %s

// A failing pass stops the pipeline: the passes after it do not run.

// CHECK: ll-opt: error: {{.*}}stops-pipeline.mlir:{{.*}}: [ll-attach-layouts] (tt.make_range)
// CHECK-NOT: IR Dump After
module {
  tt.func public @ttir() {
    %0 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    tt.return
  }
}
