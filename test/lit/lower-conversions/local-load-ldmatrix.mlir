// RUN: ll-opt %s -p 'll-lower-conversions{only=local_load remarks=true}' 2>&1 | FileCheck %s
// RUN: ll-opt %s -p 'll-lower-conversions' | FileCheck %s --check-prefix=DEFAULT
// RUN: ll-opt %s -p 'll-lower-conversions{only=local_load mode=legacy remarks=true}' 2>&1 | FileCheck %s --check-prefix=LEGACY

// The A operand of an mma v2 dot (sm_80), staged through a swizzled buffer: Triton's own
// lowering reads it with ldmatrix.x4, and so do we (the buffer realises the ldmatrix tile:
// 16-byte rows on offset bits 0-2, left division).  One guard barrier before the loads (the
// buffer was just written by Triton's ttg.local_alloc); none after: nothing of Triton's
// touches shared memory later.  local_load is opt-in: by default the op stays Triton's.

// CHECK: remark: [ll-lower-conversions] lowered: local_load, guard bar.sync=1, ldmatrix=4
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : !ttg.memdesc<64x32xf16, #shared, #smem> to !llvm.struct<(ptr<3>, i32, i32)>
// CHECK: "// guard"
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"
// CHECK-COUNT-4: nvvm.ldmatrix %{{[0-9]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NOT: "llvm.nvvm.barrier.cta
// CHECK-NOT: ttg.local_load
// CHECK: tt.store

// DEFAULT: ttg.local_load

// The legacy baseline read mma operands with ldmatrix too (SharedToDotOperandMMAv2):
// LEGACY: remark: [ll-lower-conversions] lowered: local_load, guard bar.sync=1, ldmatrix=4
// DEFAULT-NOT: ldmatrix

#src = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#dst = #ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>, kWidth = 2}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @operand_a(%X: !tt.ptr<f16>, %Y: !tt.ptr<f16>) {
    %s_r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #src}>>
    %s_r2 = tt.expand_dims %s_r {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #src}>> -> tensor<64x1xi32, #src>
    %s_n = arith.constant dense<32> : tensor<64x1xi32, #src>
    %s_rs = arith.muli %s_r2, %s_n : tensor<64x1xi32, #src>
    %s_rb = tt.broadcast %s_rs : tensor<64x1xi32, #src> -> tensor<64x32xi32, #src>
    %s_c = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #src}>>
    %s_c2 = tt.expand_dims %s_c {axis = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #src}>> -> tensor<1x32xi32, #src>
    %s_cb = tt.broadcast %s_c2 : tensor<1x32xi32, #src> -> tensor<64x32xi32, #src>
    %s_off = arith.addi %s_rb, %s_cb : tensor<64x32xi32, #src>
    %s_p0 = tt.splat %X : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>, #src>
    %s_p = tt.addptr %s_p0, %s_off : tensor<64x32x!tt.ptr<f16>, #src>, tensor<64x32xi32, #src>
    %v = tt.load %s_p : tensor<64x32x!tt.ptr<f16>, #src>
    %a = ttg.local_alloc %v : (tensor<64x32xf16, #src>) -> !ttg.memdesc<64x32xf16, #shared, #smem>
    %c = ttg.local_load %a : !ttg.memdesc<64x32xf16, #shared, #smem> -> tensor<64x32xf16, #dst>
    %d_r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #dst}>>
    %d_r2 = tt.expand_dims %d_r {axis = 1 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #dst}>> -> tensor<64x1xi32, #dst>
    %d_n = arith.constant dense<32> : tensor<64x1xi32, #dst>
    %d_rs = arith.muli %d_r2, %d_n : tensor<64x1xi32, #dst>
    %d_rb = tt.broadcast %d_rs : tensor<64x1xi32, #dst> -> tensor<64x32xi32, #dst>
    %d_c = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #dst}>>
    %d_c2 = tt.expand_dims %d_c {axis = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #dst}>> -> tensor<1x32xi32, #dst>
    %d_cb = tt.broadcast %d_c2 : tensor<1x32xi32, #dst> -> tensor<64x32xi32, #dst>
    %d_off = arith.addi %d_rb, %d_cb : tensor<64x32xi32, #dst>
    %d_p0 = tt.splat %Y : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>, #dst>
    %d_p = tt.addptr %d_p0, %d_off : tensor<64x32x!tt.ptr<f16>, #dst>, tensor<64x32xi32, #dst>
    tt.store %d_p, %c : tensor<64x32x!tt.ptr<f16>, #dst>
    tt.return
  }
}
