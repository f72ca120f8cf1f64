// RUN: ll-opt %s -p 'll-lower-conversions{only=local_load remarks=true}' 2>&1 | FileCheck %s

// As a software-pipelined loop stages operands: three buffers in one allocation, the last one
// picked by ttg.memdesc_index, written by ttg.local_store, read into the B operand of an mma v2
// dot.  The view's descriptor points at its own buffer (offsets zero), so the island reads it
// like an allocation; B is column-major for the mma, so the loads are ldmatrix.trans.

// CHECK: remark: [ll-lower-conversions] lowered: local_load, guard bar.sync=1, ldmatrix.trans=4
// CHECK: [[VIEW:%[0-9]+]] = ttg.memdesc_index
// CHECK: builtin.unrealized_conversion_cast [[VIEW]] : !ttg.memdesc<32x64xf16, #shared, #smem, mutable> to !llvm.struct<(ptr<3>, i32, i32)>
// CHECK-COUNT-4: nvvm.ldmatrix %{{[0-9]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NOT: ttg.local_load

#src = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#dst = #ttg.dot_op<{opIdx = 1, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>, kWidth = 2}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @operand_b(%X: !tt.ptr<f16>, %Y: !tt.ptr<f16>) {
    %s_r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #src}>>
    %s_r2 = tt.expand_dims %s_r {axis = 1 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #src}>> -> tensor<32x1xi32, #src>
    %s_n = arith.constant dense<64> : tensor<32x1xi32, #src>
    %s_rs = arith.muli %s_r2, %s_n : tensor<32x1xi32, #src>
    %s_rb = tt.broadcast %s_rs : tensor<32x1xi32, #src> -> tensor<32x64xi32, #src>
    %s_c = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #src}>>
    %s_c2 = tt.expand_dims %s_c {axis = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #src}>> -> tensor<1x64xi32, #src>
    %s_cb = tt.broadcast %s_c2 : tensor<1x64xi32, #src> -> tensor<32x64xi32, #src>
    %s_off = arith.addi %s_rb, %s_cb : tensor<32x64xi32, #src>
    %s_p0 = tt.splat %X : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>, #src>
    %s_p = tt.addptr %s_p0, %s_off : tensor<32x64x!tt.ptr<f16>, #src>, tensor<32x64xi32, #src>
    %v = tt.load %s_p : tensor<32x64x!tt.ptr<f16>, #src>
    %buffers = ttg.local_alloc : () -> !ttg.memdesc<3x32x64xf16, #shared, #smem, mutable>
    %last = arith.constant 2 : i32
    %a = ttg.memdesc_index %buffers[%last] : !ttg.memdesc<3x32x64xf16, #shared, #smem, mutable> -> !ttg.memdesc<32x64xf16, #shared, #smem, mutable>
    ttg.local_store %v, %a : tensor<32x64xf16, #src> -> !ttg.memdesc<32x64xf16, #shared, #smem, mutable>
    %c = ttg.local_load %a : !ttg.memdesc<32x64xf16, #shared, #smem, mutable> -> tensor<32x64xf16, #dst>
    %d_r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #dst}>>
    %d_r2 = tt.expand_dims %d_r {axis = 1 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #dst}>> -> tensor<32x1xi32, #dst>
    %d_n = arith.constant dense<64> : tensor<32x1xi32, #dst>
    %d_rs = arith.muli %d_r2, %d_n : tensor<32x1xi32, #dst>
    %d_rb = tt.broadcast %d_rs : tensor<32x1xi32, #dst> -> tensor<32x64xi32, #dst>
    %d_c = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #dst}>>
    %d_c2 = tt.expand_dims %d_c {axis = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 0, parent = #dst}>> -> tensor<1x64xi32, #dst>
    %d_cb = tt.broadcast %d_c2 : tensor<1x64xi32, #dst> -> tensor<32x64xi32, #dst>
    %d_off = arith.addi %d_rb, %d_cb : tensor<32x64xi32, #dst>
    %d_p0 = tt.splat %Y : !tt.ptr<f16> -> tensor<32x64x!tt.ptr<f16>, #dst>
    %d_p = tt.addptr %d_p0, %d_off : tensor<32x64x!tt.ptr<f16>, #dst>, tensor<32x64xi32, #dst>
    tt.store %d_p, %c : tensor<32x64x!tt.ptr<f16>, #dst>
    tt.return
  }
}
