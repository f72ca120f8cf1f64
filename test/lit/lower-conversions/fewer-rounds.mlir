// RUN: ll-opt %s -p 'll-lower-conversions{stock_gate=false}' --remarks 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: env LINEAR_LAYOUTS_ROUND_SCRATCH=32768 ll-opt %s -p 'll-lower-conversions{stock_gate=false}' --remarks 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: env LINEAR_LAYOUTS_ROUND_SCRATCH=0 ll-opt %s -p 'll-lower-conversions{stock_gate=false}' --remarks 2>&1 | FileCheck %s --check-prefix=TRITON
// RUN: env LINEAR_LAYOUTS_ROUND_SCRATCH=16k not ll-opt %s -p 'll-lower-conversions' 2>&1 | FileCheck %s --check-prefix=BAD

// Fewer shared-memory rounds (lowering.planner.with_fewer_rounds).  32x256 i32 over 4 warps:
// Triton's swizzle converts it in 4 rounds through an 8 KB buffer (a store, a barrier, a load
// and a barrier before the next round: 7 barriers).  The same 16 stores and 16 loads through a
// 16 KB buffer (the default budget) take 2 rounds and 3 barriers; through 32 KB, 1 round and 1.

// DEFAULT: remark: [ll-lower-conversions] lowered: shared, bar.sync=3, ld.shared.b128=16, st.shared.b128=16, scratch=16384B
// ONE: remark: [ll-lower-conversions] lowered: shared, bar.sync=1, ld.shared.b128=16, st.shared.b128=16, scratch=32768B
// TRITON: remark: [ll-lower-conversions] lowered: shared, bar.sync=7, ld.shared.b128=16, st.shared.b128=16, scratch=8192B
// BAD: LINEAR_LAYOUTS_ROUND_SCRATCH='16k': expected a number of bytes, 0 or more (0: Triton's rounds only)
// BAD-NOT: Traceback

#src = #ttg.linear<{register = [[0, 64], [0, 1], [0, 2], [0, 16], [0, 8], [0, 128]], lane = [[16, 0], [0, 4], [4, 0], [0, 32], [1, 0]], warp = [[2, 0], [8, 0]], block = []}>
#dst = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [2, 2], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @rounds(%x: tensor<32x256xi32, #src>) -> tensor<32x256xi32, #dst> {
    %0 = ttg.convert_layout %x : tensor<32x256xi32, #src> -> tensor<32x256xi32, #dst>
    tt.return %0 : tensor<32x256xi32, #dst>
  }
}
