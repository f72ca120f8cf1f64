// RUN: ll-opt %s -p 'll-lower-conversions{only=local_store remarks=true}' 2>&1 | FileCheck %s

// A Hopper epilogue: the wgmma accumulator (mma v3 layout) stored into a 128-byte-swizzled
// nvmma buffer, one of two in a pipelined allocation (ttg.memdesc_index), then read back by
// Triton's own ttg.local_load.  Our island writes it with stmatrix.x4 (the buffer realises the
// stmatrix tile), between two guard barriers: one orders it after earlier users of the bytes,
// one before Triton's load, which Triton's barrier analysis cannot order after our stores.

// CHECK: remark: [ll-lower-conversions] lowered: local_store, guard bar.sync=2, stmatrix=4
// CHECK: builtin.unrealized_conversion_cast %{{[0-9]+}} : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> to !llvm.struct<(ptr<3>, i32, i32)>
// CHECK: "// guard"
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"
// CHECK-COUNT-4: nvvm.stmatrix %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// CHECK-NEXT: "// guard"
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"
// CHECK-NOT: ttg.local_store
// CHECK: ttg.local_load

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
