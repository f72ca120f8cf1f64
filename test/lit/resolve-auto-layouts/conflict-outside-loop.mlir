// RUN: ll-opt %s -p 'll-resolve-auto-layouts' | FileCheck %s
// RUN: ll-opt %s -p 'll-resolve-auto-layouts' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p 'll-resolve-auto-layouts{compare=false},ll-lower-conversions' --emit ptx | FileCheck %s --check-prefix=PTX

// A vector loaded with no layout before a loop (%w) reaches two layouts the author fixed
// inside the loop: #A for one store, #B for another (gluon: gl.set_auto_layout(w, A),
// gl.set_auto_layout(w, B)).  Stock Triton rejects it ("found conflicting encodings for
// value").  Ours loads %w once in one of the two layouts and converts it once to the other,
// before the loop: no conversion runs in the loop.  (Index arithmetic in two layouts is
// recomputed instead of converted: %o below is, in #A and in #B.)

// CHECK-DAG: #[[A:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-DAG: #[[B:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-NOT: gluon
// CHECK: %[[W:.*]] = tt.load {{.*}} : tensor<512x!tt.ptr<f32>, #[[X:blocked[0-9]*]]>
// CHECK: ttg.convert_layout %[[W]] : tensor<512xf32, #[[X]]> -> tensor<512xf32, #{{blocked[0-9]*}}>
// CHECK: scf.for
// CHECK-NOT: ttg.convert_layout
// CHECK: tt.store {{.*}} : tensor<512x!tt.ptr<f32>, #[[A]]>
// CHECK-NOT: ttg.convert_layout
// CHECK: tt.store {{.*}} : tensor<512x!tt.ptr<f32>, #[[B]]>
// CHECK-NOT: ttg.convert_layout
// CHECK: tt.return

// REMARK: group 1 ({{[0-9]+}} ops, tt.load at {{.*}}): #ttg.blocked<{{.*}}>: {{.*}}
// REMARK: resolved 1 group(s) of automatic layouts; conversions added: 1{{.*}}; modelled cost (loop-weighted) ours {{[0-9.]+}}, Triton's resolution fails: {{.*}}found conflicting encodings for value

// PTX: .entry conflict

#A = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#B = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @conflict(%wp: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %dst: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %start: i32, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %i = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #gluon.auto_encoding>
    %s = tt.splat %start : i32 -> tensor<512xi32, #gluon.auto_encoding>
    %o = arith.addi %i, %s : tensor<512xi32, #gluon.auto_encoding>
    %pw = tt.splat %wp : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>
    %qw = tt.addptr %pw, %o : tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<512xi32, #gluon.auto_encoding>
    %w = tt.load %qw : tensor<512x!tt.ptr<f32>, #gluon.auto_encoding>
    scf.for %k = %c0 to %n step %c1 : i32 {
      %oa = gluon.set_auto_layout %o : tensor<512xi32, #gluon.auto_encoding> -> tensor<512xi32, #A>
      %wa = gluon.set_auto_layout %w : tensor<512xf32, #gluon.auto_encoding> -> tensor<512xf32, #A>
      %pa = tt.splat %dst : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #A>
      %qa = tt.addptr %pa, %oa : tensor<512x!tt.ptr<f32>, #A>, tensor<512xi32, #A>
      tt.store %qa, %wa : tensor<512x!tt.ptr<f32>, #A>
      %ob = gluon.set_auto_layout %o : tensor<512xi32, #gluon.auto_encoding> -> tensor<512xi32, #B>
      %wb = gluon.set_auto_layout %w : tensor<512xf32, #gluon.auto_encoding> -> tensor<512xf32, #B>
      %pb = tt.splat %dst : !tt.ptr<f32> -> tensor<512x!tt.ptr<f32>, #B>
      %qb = tt.addptr %pb, %ob : tensor<512x!tt.ptr<f32>, #B>, tensor<512xi32, #B>
      tt.store %qb, %wb : tensor<512x!tt.ptr<f32>, #B>
    }
    tt.return
  }
}
