// RUN: ll-opt %s -p 'll-lower-conversions{only=local_load remarks=true}' 2>&1 | FileCheck %s

// Local loads from ttg.memdesc_subslice views.  A 32x16 f32 tile is put in a swizzled buffer
// (vec = 4, maxPhase = 4: row r XORs its columns by 4 * (r % 4)); its right half, the view at
// [0, 8], is read once, and its left half (view [0, 0]) enters a loop as a block argument,
// which then carries the right half.  A view's start o lives in the descriptor struct
// (!llvm.struct<(ptr<3>, i32, i32)>: base pointer, then o per dim, as ttg.memdesc_subslice
// leaves it); both Triton 3.6 and 3.9 read element c of a view at L^-1(c) xor L^-1(o).  Here
// only bit 3 of o's column (column 8) can be set, and L^-1((0, 8)) = offset 8, so every island
// reads field 2 and XORs (o1 & 8) << 2 (offset 8 of 4 bytes) into the thread part of its byte
// addresses; LLVM folds it for the constant view and keeps it for the block argument.

// CHECK: remark: [ll-lower-conversions] lowered: local_load, guard bar.sync=1, ld.shared.b64=1
// CHECK: remark: [ll-lower-conversions] lowered: local_load, guard bar.sync=2, ld.shared.b64=1

// The view at [0, 8]: its start read from the descriptor, not assumed.
// CHECK: [[RIGHT:%[0-9]+]] = ttg.memdesc_subslice %{{[0-9]+}}[0, 8]
// CHECK: [[DESC:%[0-9]+]] = builtin.unrealized_conversion_cast [[RIGHT]] : !ttg.memdesc<32x8xf32, #shared, #smem, 32x16> to !llvm.struct<(ptr<3>, i32, i32)>
// CHECK: [[BASE:%[0-9]+]] = llvm.extractvalue [[DESC]][0]
// CHECK: [[COL:%[0-9]+]] = llvm.extractvalue [[DESC]][2]
// CHECK: [[EIGHT:%[0-9]+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK: [[START:%[0-9]+]] = llvm.and [[COL]], [[EIGHT]] : i32
// CHECK: [[TWO:%[0-9]+]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: [[BYTES:%[0-9]+]] = llvm.shl [[START]], [[TWO]] : i32
// CHECK: [[OFFSET:%[0-9]+]] = llvm.xor %{{[0-9]+}}, [[BYTES]] : i32
// CHECK: [[ADDRESS:%[0-9]+]] = llvm.getelementptr [[BASE]]{{\[}}[[OFFSET]]{{\]}} : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: llvm.load [[ADDRESS]] {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xi32>

// The loop's view is a block argument: the same island, reading its own descriptor.
// CHECK: scf.for {{.*}} iter_args({{.*}}, [[HALF:%arg[0-9]+]] = %{{[0-9]+}})
// CHECK: [[LOOPDESC:%[0-9]+]] = builtin.unrealized_conversion_cast [[HALF]] : !ttg.memdesc<32x8xf32, #shared, #smem, 32x16> to !llvm.struct<(ptr<3>, i32, i32)>
// CHECK: llvm.extractvalue [[LOOPDESC]][2]
// CHECK: llvm.load {{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xi32>
// CHECK-NOT: ttg.local_load

#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#view = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 4, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @halves(%X: !tt.ptr<f32>, %Y: !tt.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %x_r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #blocked}>>
    %x_r2 = tt.expand_dims %x_r {axis = 1 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<32x1xi32, #blocked>
    %x_16 = arith.constant dense<16> : tensor<32x1xi32, #blocked>
    %x_rs = arith.muli %x_r2, %x_16 : tensor<32x1xi32, #blocked>
    %x_rb = tt.broadcast %x_rs : tensor<32x1xi32, #blocked> -> tensor<32x16xi32, #blocked>
    %x_c = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %x_c2 = tt.expand_dims %x_c {axis = 0 : i32} : tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>> -> tensor<1x16xi32, #blocked>
    %x_cb = tt.broadcast %x_c2 : tensor<1x16xi32, #blocked> -> tensor<32x16xi32, #blocked>
    %x_off = arith.addi %x_rb, %x_cb : tensor<32x16xi32, #blocked>
    %x_p0 = tt.splat %X : !tt.ptr<f32> -> tensor<32x16x!tt.ptr<f32>, #blocked>
    %x_p = tt.addptr %x_p0, %x_off : tensor<32x16x!tt.ptr<f32>, #blocked>, tensor<32x16xi32, #blocked>
    %tile = tt.load %x_p : tensor<32x16x!tt.ptr<f32>, #blocked>
    %buffer = ttg.local_alloc %tile : (tensor<32x16xf32, #blocked>) -> !ttg.memdesc<32x16xf32, #shared, #smem>
    %left = ttg.memdesc_subslice %buffer[0, 0] : !ttg.memdesc<32x16xf32, #shared, #smem> -> !ttg.memdesc<32x8xf32, #shared, #smem, 32x16>
    %right = ttg.memdesc_subslice %buffer[0, 8] : !ttg.memdesc<32x16xf32, #shared, #smem> -> !ttg.memdesc<32x8xf32, #shared, #smem, 32x16>
    %first = ttg.local_load %right : !ttg.memdesc<32x8xf32, #shared, #smem, 32x16> -> tensor<32x8xf32, #view>
    %sum:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %first, %half = %left) -> (tensor<32x8xf32, #view>, !ttg.memdesc<32x8xf32, #shared, #smem, 32x16>) : i32 {
      %x = ttg.local_load %half : !ttg.memdesc<32x8xf32, #shared, #smem, 32x16> -> tensor<32x8xf32, #view>
      %s = arith.addf %acc, %x : tensor<32x8xf32, #view>
      scf.yield %s, %right : tensor<32x8xf32, #view>, !ttg.memdesc<32x8xf32, #shared, #smem, 32x16>
    }
    %y_r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #view}>>
    %y_r2 = tt.expand_dims %y_r {axis = 1 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #view}>> -> tensor<32x1xi32, #view>
    %y_8 = arith.constant dense<8> : tensor<32x1xi32, #view>
    %y_rs = arith.muli %y_r2, %y_8 : tensor<32x1xi32, #view>
    %y_rb = tt.broadcast %y_rs : tensor<32x1xi32, #view> -> tensor<32x8xi32, #view>
    %y_c = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #ttg.slice<{dim = 0, parent = #view}>>
    %y_c2 = tt.expand_dims %y_c {axis = 0 : i32} : tensor<8xi32, #ttg.slice<{dim = 0, parent = #view}>> -> tensor<1x8xi32, #view>
    %y_cb = tt.broadcast %y_c2 : tensor<1x8xi32, #view> -> tensor<32x8xi32, #view>
    %y_off = arith.addi %y_rb, %y_cb : tensor<32x8xi32, #view>
    %y_p0 = tt.splat %Y : !tt.ptr<f32> -> tensor<32x8x!tt.ptr<f32>, #view>
    %y_p = tt.addptr %y_p0, %y_off : tensor<32x8x!tt.ptr<f32>, #view>, tensor<32x8xi32, #view>
    tt.store %y_p, %sum#0 : tensor<32x8x!tt.ptr<f32>, #view>
    tt.return
  }
}
