// RUN: not ll-opt %S/../ll-opt/Inputs/transpose.mlir --target hip:gfx942 --emit amdgcn 2>&1 | FileCheck %s --check-prefix=CUDA-ON-AMD
// RUN: not ll-opt %S/../ll-opt/Inputs/transpose.mlir --target gfx90a -p ll-lower-conversions 2>&1 | FileCheck %s --check-prefix=PASSES
// RUN: not ll-opt %S/../ll-opt/emit-amdgcn.mlir --target cuda:90 --emit ptx 2>&1 | FileCheck %s --check-prefix=AMD-ON-CUDA
// RUN: not ll-opt %s --target gfx942 --emit llir 2>&1 | FileCheck %s --check-prefix=LAYOUTS
// RUN: ll-opt %S/../ll-opt/Inputs/transpose.mlir --target gfx1100 | FileCheck %s --check-prefix=SAME

// A module's layouts spread a warp over its lanes: compiled for a target whose warps have
// another number of lanes, the code is wrong (Triton compiles it anyway). Refused, whatever
// --target and --emit, naming both numbers.

// CUDA-ON-AMD: ll-opt: error: {{.*}}transpose.mlir: the module is made for 32-lane warps (ttg.threads-per-warp = 32) but target gfx942 (hip:gfx942) has 64 lanes per warp
// PASSES: ll-opt: error: {{.*}}transpose.mlir: the module is made for 32-lane warps (ttg.threads-per-warp = 32) but target gfx90a (hip:gfx90a) has 64 lanes per warp
// AMD-ON-CUDA: ll-opt: error: {{.*}}emit-amdgcn.mlir: the module is made for 64-lane warps (ttg.threads-per-warp = 64) but target sm_90 (cuda:90) has 32 lanes per warp

// Without ttg.threads-per-warp, the lanes of the module's layouts say it.
// LAYOUTS: ll-opt: error: {{.*}}emit-warp-size.mlir: the module is made for 32-lane warps (its layouts' threadsPerWarp = [4, 8]) but target gfx942 (hip:gfx942) has 64 lanes per warp

// A target with as many lanes (RDNA's wave32) is accepted.
// SAME: ttg.convert_layout
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32} {
  tt.func public @f() {
    %c = arith.constant dense<0.0> : tensor<16x16xf32, #blocked>
    tt.return
  }
}
