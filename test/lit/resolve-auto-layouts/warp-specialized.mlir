// RUN: ll-opt %s -p 'll-resolve-auto-layouts' | FileCheck %s
// RUN: ll-opt %s -p 'll-resolve-auto-layouts' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p 'll-resolve-auto-layouts{compare=false},ll-lower-conversions' --emit ptx | FileCheck %s --check-prefix=PTX

// Automatic layouts inside a warp-specialized kernel (gluon: gl.warp_specialize([(copy, ...),
// (copy_upper, ...)], [2], [80]); each partition a copy written with no layout).  Gluon's
// front end allows them there (3.6 and 3.9); stock Triton's resolution rejects the kernel
// ("Failed to infer return type").  Ours resolves each partition with its own warps: the
// default partition's layouts span the module's 4 warps, the worker's its num_warps(2), each
// with the 16-byte accesses its pointers allow (the worker's arguments are what the
// ttg.warp_specialize captured: the kernel's 16-byte aligned pointers, plus 256 elements).

// CHECK-DAG: #[[D:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-DAG: #[[W:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]}>
// CHECK-NOT: gluon
// CHECK: default {
// CHECK: tt.load %{{.*}} : tensor<256x!tt.ptr<f32>, #[[D]]>
// CHECK: partition0(
// CHECK: tt.load %{{.*}} : tensor<256x!tt.ptr<f32>, #[[W]]>
// CHECK-NOT: ttg.convert_layout

// REMARK: group 1 (7 ops, tt.load at {{.*}}): #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>: coalesced for its pointers (dim 0 contiguous, 4 elements per access)
// REMARK: group 2 (7 ops, tt.load at {{.*}}): #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]}>: coalesced for its pointers (dim 0 contiguous, 4 elements per access)
// REMARK: resolved 2 group(s) of automatic layouts; conversions added: 0; modelled cost (loop-weighted) ours {{[0-9.]+}}, Triton's resolution fails: 'tt.make_range' op Failed to infer return type

// PTX: ld.global.v4.b32
// PTX: ld.global.v4.b32

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @ws(%src: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %dst: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    ttg.warp_specialize(%src, %dst) attributes {requestedRegisters = array<i32: 80>}
    default {
      %i = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32, #gluon.auto_encoding>
      %0 = tt.splat %dst : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>, #gluon.auto_encoding>
      %1 = tt.addptr %0, %i : tensor<256x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<256xi32, #gluon.auto_encoding>
      %2 = tt.splat %src : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>, #gluon.auto_encoding>
      %3 = tt.addptr %2, %i : tensor<256x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<256xi32, #gluon.auto_encoding>
      %4 = tt.load %3 : tensor<256x!tt.ptr<f32>, #gluon.auto_encoding>
      tt.store %1, %4 : tensor<256x!tt.ptr<f32>, #gluon.auto_encoding>
      ttg.warp_yield
    }
    partition0(%a: !tt.ptr<f32>, %b: !tt.ptr<f32>) num_warps(2) {
      %i = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32, #gluon.auto_encoding>
      %c256 = arith.constant 256 : i32
      %0 = tt.addptr %b, %c256 : !tt.ptr<f32>, i32
      %1 = tt.splat %0 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>, #gluon.auto_encoding>
      %2 = tt.addptr %1, %i : tensor<256x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<256xi32, #gluon.auto_encoding>
      %3 = tt.addptr %a, %c256 : !tt.ptr<f32>, i32
      %4 = tt.splat %3 : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>, #gluon.auto_encoding>
      %5 = tt.addptr %4, %i : tensor<256x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<256xi32, #gluon.auto_encoding>
      %6 = tt.load %5 : tensor<256x!tt.ptr<f32>, #gluon.auto_encoding>
      tt.store %2, %6 : tensor<256x!tt.ptr<f32>, #gluon.auto_encoding>
      ttg.warp_return
    } : (!tt.ptr<f32>, !tt.ptr<f32>) -> ()
    tt.return
  }
}
