// RUN: ll-opt %s -p 'll-resolve-auto-layouts' | FileCheck %s
// RUN: ll-opt %s -p 'll-resolve-auto-layouts' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p 'll-resolve-auto-layouts{compare=false},ll-lower-conversions' --emit ptx | FileCheck %s --check-prefix=PTX

// An accumulator with no layout carried by an scf.for (gluon: acc = gl.zeros([1024],
// gl.float32); for k in range(K): acc += gl.load(src + k * 1024 + i); gl.store(dst + i,
// acc)).  Stock Triton rejects it ("Failed to infer return type").  Ours gives the loop's
// iteration argument, its initial value, the yielded sum and the loads in the loop one
// layout: the coalesced one (4 f32 per access, the loop's offsets are multiples of 1024):
// nothing converts, in the loop or out of it.

// CHECK: #[[V:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
// CHECK-NOT: gluon
// CHECK: arith.constant dense<0.000000e+00> : tensor<1024xf32, #[[V]]>
// CHECK: scf.for {{.*}} -> (tensor<1024xf32, #[[V]]>)
// CHECK: tt.load %{{.*}} : tensor<1024x!tt.ptr<f32>, #[[V]]>
// CHECK: arith.addf {{.*}} : tensor<1024xf32, #[[V]]>
// CHECK: scf.yield {{.*}} : tensor<1024xf32, #[[V]]>
// CHECK: tt.store %{{.*}}, %{{.*}} : tensor<1024x!tt.ptr<f32>, #[[V]]>
// CHECK-NOT: ttg.convert_layout

// REMARK: group 1 (10 ops, tt.load at {{.*}}): #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>: coalesced for its pointers (dim 0 contiguous, 4 elements per access)
// REMARK: conversions added: 0; modelled cost (loop-weighted) ours {{[0-9.]+}}, Triton's resolution fails: 'tt.make_range' op Failed to infer return type

// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32

module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @accumulate(%src: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %dst: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %K: i32) {
    %i = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #gluon.auto_encoding>
    %zero = arith.constant dense<0.000000e+00> : tensor<1024xf32, #gluon.auto_encoding>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c1024 = arith.constant 1024 : i32
    %acc = scf.for %k = %c0 to %K step %c1 iter_args(%sum = %zero) -> (tensor<1024xf32, #gluon.auto_encoding>) : i32 {
      %o = arith.muli %k, %c1024 : i32
      %base = tt.addptr %src, %o : !tt.ptr<f32>, i32
      %ps = tt.splat %base : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #gluon.auto_encoding>
      %p = tt.addptr %ps, %i : tensor<1024x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<1024xi32, #gluon.auto_encoding>
      %x = tt.load %p : tensor<1024x!tt.ptr<f32>, #gluon.auto_encoding>
      %next = arith.addf %sum, %x : tensor<1024xf32, #gluon.auto_encoding>
      scf.yield %next : tensor<1024xf32, #gluon.auto_encoding>
    }
    %qs = tt.splat %dst : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>, #gluon.auto_encoding>
    %q = tt.addptr %qs, %i : tensor<1024x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<1024xi32, #gluon.auto_encoding>
    tt.store %q, %acc : tensor<1024x!tt.ptr<f32>, #gluon.auto_encoding>
    tt.return
  }
}
