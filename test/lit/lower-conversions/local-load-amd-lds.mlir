// RUN: ll-opt %s -p 'll-lower-conversions{only=local_load remarks=true}' 2>&1 | FileCheck %s

// An AMD (gfx942) LDS load: a row-major unswizzled 64x64 f16 buffer read into 8 contiguous
// elements per thread: two 128-bit ds_read per thread (llvm.load of vector<4xi32> from LDS),
// after an s_barrier that orders Triton's stores into the buffer.  Each load's eight halves come
// out of a bitcast to vector<8xi16> (no shifts: the back end picks the registers, as for stock's
// code), so the remark counts no packing instruction.

// CHECK: remark: [ll-lower-conversions] lowered: local_load, ds_read.b128=2, guard s_barrier=1; cost model
// CHECK: rocdl.s.barrier
// CHECK: llvm.load %{{[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-NEXT: llvm.bitcast %{{[0-9]+}} : vector<4xi32> to vector<8xi16>
// CHECK: llvm.load %{{[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-NEXT: llvm.bitcast %{{[0-9]+}} : vector<4xi32> to vector<8xi16>
// CHECK-NOT: ttg.local_load

#src = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#dst = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @lds_load(%X: !tt.ptr<f16>, %Y: !tt.ptr<f16>) {
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
