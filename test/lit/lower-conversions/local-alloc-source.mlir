// RUN: ll-opt %s -p 'll-lower-conversions{only=local_alloc remarks=true}' 2>&1 | FileCheck %s
// RUN: ll-opt %s -p 'll-lower-conversions{only=local_alloc,local_load remarks=true}' 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: ll-opt %s -p 'll-lower-conversions{only=local_load,local_store remarks=true}' 2>&1 | FileCheck %s --check-prefix=DEFAULT

// A Hopper epilogue: the wgmma accumulator (mma v3 layout) put in a fresh, immutable
// 128-byte-swizzled nvmma buffer by `ttg.local_alloc %v` (input below), then read back by
// Triton's own ttg.local_load.  With only=local_alloc the allocation becomes
//   * an allocation without a source, of the same type but `mutable` (Triton wants it so);
//   * our verified, simulated store island into it: stmatrix.x4 (the buffer realises the tile);
//   * the original result as a ttg.memdesc_subslice of the whole buffer (offsets 0) with the
//     original immutable type, so the users are unchanged and Triton's alias analysis still
//     ties them to the allocation (its liveness; its barriers).
// Triton's barrier analysis cannot see our stores, so the island ends with a guard barrier
// before the read; none before the stores: nothing uses shared memory before a fresh buffer.
//
// Input:                                              Output:
//   %a = ttg.local_alloc %v : (tensor<..., #src>)       %B = ttg.local_alloc : () -> !ttg.memdesc<..., mutable>
//          -> !ttg.memdesc<64x64xf16, #shared, #smem>   <cast %B to !llvm.struct<(ptr<3>, i32, i32)>, 4 x stmatrix>
//                                                       "// guard", the barrier
//                                                       %a = ttg.memdesc_subslice %B[0, 0] : ... mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem>
//   %c = ttg.local_load %a : ...                        %c = ttg.local_load %a : ... (unchanged)

// CHECK: remark: [ll-lower-conversions] lowered: local_alloc, guard bar.sync=1, stmatrix=4
// CHECK-NOT: "llvm.nvvm.barrier.cta
// CHECK: %[[BUF:[0-9]+]] = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
// CHECK-NOT: "llvm.nvvm.barrier.cta
// CHECK: builtin.unrealized_conversion_cast %[[BUF]] : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> to !llvm.struct<(ptr<3>, i32, i32)>
// CHECK-NOT: "llvm.nvvm.barrier.cta
// CHECK-COUNT-4: nvvm.stmatrix %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// CHECK-NEXT: "// guard"
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"
// CHECK-NEXT: %[[VIEW:[0-9]+]] = ttg.memdesc_subslice %[[BUF]][0, 0] : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<64x64xf16, #shared, #smem>
// CHECK-NEXT: ttg.local_load %[[VIEW]] : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #blocked>
// CHECK-NOT: ttg.local_alloc %

// With our local loads too, the load island's guard barrier is the one between stores and loads.
// BOTH: lowered: local_alloc, stmatrix=4
// BOTH: lowered: local_load, guard bar.sync=1, ld.shared.b128=4
// BOTH-COUNT-4: nvvm.stmatrix %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// BOTH-NOT: "llvm.nvvm.barrier.cta
// BOTH: %[[VIEW:[0-9]+]] = ttg.memdesc_subslice
// BOTH-NEXT: builtin.unrealized_conversion_cast %[[VIEW]] : !ttg.memdesc<64x64xf16, #shared, #smem> to !llvm.struct<(ptr<3>, i32, i32)>
// BOTH: "// guard"
// BOTH-NEXT: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"
// BOTH-COUNT-4: llvm.load %{{[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// BOTH-NOT: llvm.load
// BOTH-NOT: ttg.local_load

// Opt-in: without local_alloc in `only`, the allocation is Triton's.
// DEFAULT-NOT: lowered: local_alloc
// DEFAULT: ttg.local_alloc %{{[0-9]+}} : (tensor<64x64xf16, #mma>) -> !ttg.memdesc<64x64xf16, #shared, #smem>

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
    %a = ttg.local_alloc %v : (tensor<64x64xf16, #src>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
    %c = ttg.local_load %a : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #dst>
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
