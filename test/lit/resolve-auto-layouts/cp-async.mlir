// RUN: ll-opt %s -p 'll-resolve-auto-layouts' | FileCheck %s
// RUN: ll-opt %s -p 'll-resolve-auto-layouts' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p 'll-resolve-auto-layouts{compare=false},ll-lower-conversions' --emit ptx | FileCheck %s --check-prefix=PTX

// cp.async into shared memory, then a local load with no layout (gluon, as 03-async-copy's
// memcpy_1d_cpasync in auto form: i = gl.arange(0, 4096, gl.CoalescedLayout());
// cp.async_copy_global_to_shared(smem, src + i); smem.load(gl.AutoLayout()); gl.store(dst + i, ..)).
// Stock Triton's resolution aborts on it (an assertion in GluonInferCoalescedEncodingsPass).
// Ours: the async copy's pointers take the rule of a load (their layout is free, the shared
// destination keeps its own), priced by coalescing with the vector capped by what one cp.async
// can write into the buffer; the local load's result is free, priced by our local-load plan's
// wavefronts.  Both get the 16-byte layout; the store needs no conversion.

// CHECK: #[[V:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-NOT: gluon
// CHECK: ttg.async_copy_global_to_local %{{.*}}, %{{.*}} : tensor<4096x!tt.ptr<f32>, #[[V]]> -> <4096xf32, #shared, #smem, mutable>
// CHECK: ttg.local_load %{{.*}} : !ttg.memdesc<4096xf32, #shared, #smem, mutable> -> tensor<4096xf32, #[[V]]>
// CHECK: tt.store %{{.*}}, %{{.*}} : tensor<4096x!tt.ptr<f32>, #[[V]]>
// CHECK-NOT: ttg.convert_layout

// REMARK: group 1 (9 ops, ttg.async_copy_global_to_local at {{.*}}): #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>: coalesced for its pointers (dim 0 contiguous, 4 elements per access)
// REMARK: resolved 1 group(s) of automatic layouts; conversions added: 0; modelled cost (loop-weighted) ours {{[0-9.]+}}, Triton's resolution fails: {{.*}}

// PTX-DAG: cp.async.cg.shared.global [ %r{{[0-9]+}} + 0 ], [ %rd{{[0-9]+}} + 0 ], 0x10
// PTX-DAG: ld.shared.v4.b32
// PTX-DAG: st.global.v4.b32
// PTX-NOT: cp.async.ca

#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @cp_async_copy(%src: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %dst: !tt.ptr<f32> {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %i = tt.make_range {end = 4096 : i32, start = 0 : i32} : tensor<4096xi32, #gluon.coalesced_encoding>
    %smem = ttg.local_alloc : () -> !ttg.memdesc<4096xf32, #shared, #smem, mutable>
    %0 = tt.splat %src : !tt.ptr<f32> -> tensor<4096x!tt.ptr<f32>, #gluon.coalesced_encoding>
    %1 = tt.addptr %0, %i : tensor<4096x!tt.ptr<f32>, #gluon.coalesced_encoding>, tensor<4096xi32, #gluon.coalesced_encoding>
    %2 = ttg.async_copy_global_to_local %1, %smem : tensor<4096x!tt.ptr<f32>, #gluon.coalesced_encoding> -> <4096xf32, #shared, #smem, mutable>
    %3 = ttg.async_commit_group
    %4 = ttg.async_wait {num = 0 : i32}
    %5 = tt.splat %dst : !tt.ptr<f32> -> tensor<4096x!tt.ptr<f32>, #gluon.coalesced_encoding>
    %6 = tt.addptr %5, %i : tensor<4096x!tt.ptr<f32>, #gluon.coalesced_encoding>, tensor<4096xi32, #gluon.coalesced_encoding>
    %7 = ttg.local_load %smem : !ttg.memdesc<4096xf32, #shared, #smem, mutable> -> tensor<4096xf32, #gluon.auto_encoding>
    %8 = gluon.set_auto_layout %7 : tensor<4096xf32, #gluon.auto_encoding> -> tensor<4096xf32, #gluon.coalesced_encoding>
    tt.store %6, %8 : tensor<4096x!tt.ptr<f32>, #gluon.coalesced_encoding>
    tt.return
  }
}
