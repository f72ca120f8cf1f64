// RUN: ll-opt %s -p 'll-resolve-auto-layouts' | FileCheck %s
// RUN: ll-opt %s -p 'll-resolve-auto-layouts' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p 'll-resolve-auto-layouts{compare=false},ll-lower-conversions' --emit ptx | FileCheck %s --check-prefix=PTX

// A copy written with no layout at all (gluon: i = gl.arange(0, 512); gl.store(dst + i,
// gl.load(src + i))).  Stock Triton rejects it: no fixed layout reaches the index vector
// ("'tt.make_range' op Failed to infer return type", the remark below quotes Triton's own
// resolution run on a copy).  Ours gives the whole group the coalesced layout its pointers
// allow: 16-byte aligned f32 pointers, 4 elements per access, and the kernel compiles to PTX
// with 128-bit loads and stores.

// CHECK: #[[V:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-NOT: gluon
// CHECK: tt.make_range {{.*}} : tensor<512xi32, #[[V]]>
// CHECK: tt.load %{{.*}} : tensor<512x!tt.ptr<f32>, #[[V]]>
// CHECK: tt.store %{{.*}}, %{{.*}} : tensor<512x!tt.ptr<f32>, #[[V]]>
// CHECK-NOT: ttg.convert_layout

// REMARK: remark: [ll-resolve-auto-layouts] group 1 (7 ops, tt.load at {{.*}}copy-no-layout.mlir:{{[0-9]+}}:{{[0-9]+}}): #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>: coalesced for its pointers (dim 0 contiguous, 4 elements per access)
// REMARK: resolved 1 group(s) of automatic layouts; conversions added: 0; modelled cost (loop-weighted) ours {{[0-9.]+}}, Triton's resolution fails: 'tt.make_range' op Failed to infer return type

// PTX-DAG: ld.global.v4.b32
// PTX-DAG: st.global.v4.b32

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @copy(%src: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %dst: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %i = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #gluon.auto_encoding>
    %0 = tt.splat %dst : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>
    %1 = tt.addptr %0, %i : tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<512xi32, #gluon.auto_encoding>
    %2 = tt.splat %src : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>
    %3 = tt.addptr %2, %i : tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<512xi32, #gluon.auto_encoding>
    %4 = tt.load %3 : tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>
    tt.store %1, %4 : tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>
    tt.return
  }
}
