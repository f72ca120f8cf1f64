// RUN: not ll-opt %s --emit llir 2>&1 | FileCheck %s

// --emit needs a target: from the module's ttg.target, or from --target.

// CHECK: ll-opt: error: {{.*}}emit-no-target.mlir: --emit llir needs a target: the module has no ttg.target attribute; pass --target
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @f() {
    tt.return
  }
}
