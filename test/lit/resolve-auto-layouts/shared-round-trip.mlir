// RUN: ll-opt %s -p 'll-resolve-auto-layouts' | FileCheck %s
// RUN: ll-opt %s -p 'll-resolve-auto-layouts' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s -p 'll-resolve-auto-layouts{compare=false},ll-lower-conversions' --emit ptx | FileCheck %s --check-prefix=PTX

// A 32x64 f32 tile through a 128-byte swizzled NVMMA buffer, every distributed layout left out
// (gluon: smem = gl.allocate_shared_memory(gl.float32, [32, 64], nvmma, gl.load(src + offs));
// x = smem.load(gl.AutoLayout()); smem.store(x * 2.0); gl.store(dst + offs, smem.load(gl.AutoLayout()))).
// Stock Triton's resolution rejects it ("'ttg.local_load' op Failed to infer return type").
// Ours: the local_alloc's source, the local loads' results and the local store's operand are
// free (the buffer keeps its layout), priced by our local-load / local-store plans; a
// candidate with 16-byte vectors along the buffer's rows is offered, and one where each
// thread holds a 2-D tile (16 bytes along the rows, the rest down the columns).  Group 1 (the global
// load, the allocation, the last local load, the store) takes the coalesced 16-byte layout
// its pointers allow.  Group 2 (local load, x * 2, local store: no pointer in it) is a tie
// the model states: its one-element-per-thread seed reads and writes the swizzled rows with
// ldmatrix / stmatrix, 128 bits a lane, as cheap as 16-byte vectors (modelled equal), so it
// keeps the seed.  No conversion, and no shared access narrower than 128 bits.

// CHECK-DAG: #[[V:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[W:blocked[0-9]*]] = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
// CHECK-NOT: gluon
// CHECK: ttg.local_alloc %{{.*}} : (tensor<32x64xf32, #[[V]]>) -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
// CHECK: ttg.local_load %{{.*}} -> tensor<32x64xf32, #[[W]]>
// CHECK: ttg.local_store %{{.*}}, %{{.*}} : tensor<32x64xf32, #[[W]]> -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
// CHECK: ttg.local_load %{{.*}} -> tensor<32x64xf32, #[[V]]>
// CHECK-NOT: ttg.convert_layout

// REMARK: group 1 (19 ops, tt.load at {{.*}}): #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>: coalesced for its pointers (dim 1 contiguous, 4 elements per access)
// REMARK: group 2 (4 ops, {{.*}}): #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>: the cheapest of 3 candidates by the cost model
// REMARK: resolved 2 group(s) of automatic layouts; conversions added: 0; modelled cost (loop-weighted) ours {{[0-9.]+}}, Triton's resolution fails: {{.*}}Failed to infer return type

// PTX-DAG: ld.global.v4.b32
// PTX-DAG: st.global.v4.b32
// PTX-DAG: ld.shared{{(::cta)?}}.v4.b32
// PTX-DAG: st.shared{{(::cta)?}}.v4.b32
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: stmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-NOT: {{(ld|st)}}.shared{{(::cta)?}}.b32

#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @shared_round_trip(%src: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %dst: !tt.ptr<f32> {tt.divisibility = 16 : i32}) {
    %c64 = arith.constant dense<64> : tensor<32x1xi32, #gluon.auto_encoding>
    %two = arith.constant dense<2.000000e+00> : tensor<32x64xf32, #gluon.auto_encoding>
    %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #gluon.auto_encoding>
    %r2 = tt.expand_dims %r {axis = 1 : i32} : tensor<32xi32, #gluon.auto_encoding> -> tensor<32x1xi32, #gluon.auto_encoding>
    %c = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #gluon.auto_encoding>
    %c2 = tt.expand_dims %c {axis = 0 : i32} : tensor<64xi32, #gluon.auto_encoding> -> tensor<1x64xi32, #gluon.auto_encoding>
    %rows = arith.muli %r2, %c64 : tensor<32x1xi32, #gluon.auto_encoding>
    %cols = tt.broadcast %c2 : tensor<1x64xi32, #gluon.auto_encoding> -> tensor<32x64xi32, #gluon.auto_encoding>
    %0 = tt.splat %src : !tt.ptr<f32> -> tensor<32x1x!tt.ptr<f32>, #gluon.auto_encoding>
    %1 = tt.addptr %0, %rows : tensor<32x1x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<32x1xi32, #gluon.auto_encoding>
    %2 = tt.broadcast %1 : tensor<32x1x!tt.ptr<f32>, #gluon.auto_encoding> -> tensor<32x64x!tt.ptr<f32>, #gluon.auto_encoding>
    %3 = tt.addptr %2, %cols : tensor<32x64x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<32x64xi32, #gluon.auto_encoding>
    %4 = tt.load %3 : tensor<32x64x!tt.ptr<f32>, #gluon.auto_encoding>
    %smem = ttg.local_alloc %4 : (tensor<32x64xf32, #gluon.auto_encoding>) -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
    %x = ttg.local_load %smem : !ttg.memdesc<32x64xf32, #shared, #smem, mutable> -> tensor<32x64xf32, #gluon.auto_encoding>
    gpu.barrier
    %5 = arith.mulf %x, %two : tensor<32x64xf32, #gluon.auto_encoding>
    ttg.local_store %5, %smem : tensor<32x64xf32, #gluon.auto_encoding> -> !ttg.memdesc<32x64xf32, #shared, #smem, mutable>
    gpu.barrier
    %6 = tt.splat %dst : !tt.ptr<f32> -> tensor<32x1x!tt.ptr<f32>, #gluon.auto_encoding>
    %7 = tt.addptr %6, %rows : tensor<32x1x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<32x1xi32, #gluon.auto_encoding>
    %8 = tt.broadcast %7 : tensor<32x1x!tt.ptr<f32>, #gluon.auto_encoding> -> tensor<32x64x!tt.ptr<f32>, #gluon.auto_encoding>
    %9 = tt.addptr %8, %cols : tensor<32x64x!tt.ptr<f32>, #gluon.auto_encoding>, tensor<32x64xi32, #gluon.auto_encoding>
    %10 = ttg.local_load %smem : !ttg.memdesc<32x64xf32, #shared, #smem, mutable> -> tensor<32x64xf32, #gluon.auto_encoding>
    tt.store %9, %10 : tensor<32x64x!tt.ptr<f32>, #gluon.auto_encoding>
    tt.return
  }
}
