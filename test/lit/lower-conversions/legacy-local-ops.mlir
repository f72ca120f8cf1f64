// RUN: ll-opt %s -p 'll-lower-conversions{only=local_store,local_load remarks=true}' 2>&1 | FileCheck %s --check-prefix=LINEAR
// RUN: ll-opt %s -p 'll-lower-conversions{only=local_store,local_load mode=legacy remarks=true}' 2>&1 | FileCheck %s --check-prefix=LEGACY

// The legacy baseline for local stores and loads (mode=legacy): Triton before linear layouts
// stored an mma accumulator with vector st.shared (stmatrix came with linear layouts) and read
// a blocked tensor with vector ld.shared.  The same Hopper epilogue in both modes: the linear
// planner stores with stmatrix.x4, the legacy one with sixteen 32-bit stores (two f16 per
// thread and row: the accumulator's contiguity); both read back with 128-bit loads.

// LINEAR: remark: [ll-lower-conversions] lowered: local_store, guard bar.sync=1, stmatrix=4
// LINEAR: remark: [ll-lower-conversions] lowered: local_load, guard bar.sync=1, ld.shared.b128=4
// LINEAR-NOT: {{st\.shared|llvm\.store}}

// LEGACY: remark: [ll-lower-conversions] lowered: local_store, guard bar.sync=1, st.shared.b32=16
// LEGACY: remark: [ll-lower-conversions] lowered: local_load, guard bar.sync=1, ld.shared.b128=4
// LEGACY-NOT: stmatrix
// LEGACY-COUNT-16: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// LEGACY-NOT: llvm.store
// LEGACY-NOT: ttg.local_store
// LEGACY-NOT: ttg.local_load


#src = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#dst = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @epilogue(%X: !tt.ptr<f16>, %Y: !tt.ptr<f16>) {
    %s_r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #src}>>
    %s_r2 = tt.expand_dims %s_r {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #src}>> -> tensor<64x1xi32, #src>
    %s_n = arith.constant dense<64> : tensor<64x1xi32, #src>
    %s_rs = arith.muli %s_r2, %s_n : tensor<64x1xi32, #src>
    %s_rb = tt.broadcast %s_rs : tensor<64x1xi32, #src> -> tensor<64x64xi32, #src>
    %s_c = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #src}>>
    %s_c2 = tt.expand_dims %s_c {axis = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #src}>> -> tensor<1x64xi32, #src>
    %s_cb = tt.broadcast %s_c2 : tensor<1x64xi32, #src> -> tensor<64x64xi32, #src>
    %s_off = arith.addi %s_rb, %s_cb : tensor<64x64xi32, #src>
    %s_p0 = tt.splat %X : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #src>
    %s_p = tt.addptr %s_p0, %s_off : tensor<64x64x!tt.ptr<f16>, #src>, tensor<64x64xi32, #src>
    %v = tt.load %s_p : tensor<64x64x!tt.ptr<f16>, #src>
    %buffers = ttg.local_alloc : () -> !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>
    %last = arith.constant 1 : i32
    %a = ttg.memdesc_index %buffers[%last] : !ttg.memdesc<2x64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    ttg.local_store %v, %a : tensor<64x64xf16, #src> -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %c = ttg.local_load %a : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #dst>
    %d_r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #dst}>>
    %d_r2 = tt.expand_dims %d_r {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #dst}>> -> tensor<64x1xi32, #dst>
    %d_n = arith.constant dense<64> : tensor<64x1xi32, #dst>
    %d_rs = arith.muli %d_r2, %d_n : tensor<64x1xi32, #dst>
    %d_rb = tt.broadcast %d_rs : tensor<64x1xi32, #dst> -> tensor<64x64xi32, #dst>
    %d_c = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #dst}>>
    %d_c2 = tt.expand_dims %d_c {axis = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #dst}>> -> tensor<1x64xi32, #dst>
    %d_cb = tt.broadcast %d_c2 : tensor<1x64xi32, #dst> -> tensor<64x64xi32, #dst>
    %d_off = arith.addi %d_rb, %d_cb : tensor<64x64xi32, #dst>
    %d_p0 = tt.splat %Y : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #dst>
    %d_p = tt.addptr %d_p0, %d_off : tensor<64x64x!tt.ptr<f16>, #dst>, tensor<64x64xi32, #dst>
    tt.store %d_p, %c : tensor<64x64x!tt.ptr<f16>, #dst>
    tt.return
  }
}
