// RUN: ll-opt %s -p 'll-lower-conversions' --remarks 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: ll-opt %s -p 'll-lower-conversions{stock_gate=false}' --remarks 2>&1 | FileCheck %s --check-prefix=OFF

// Past the register file (lowering/choosing/register_file.py).  The replicated slice's layouts
// (Inputs/replicated-slice-round-trips.ttgir): the bf16 slice holds 1,024 registers a thread,
// the linear layout 32; together 1,056 values, more than the 255 registers an sm_90 thread has,
// so the kernel spills whoever lowers the conversion and the default leaves both directions to
// Triton without planning.  With the gate off the planner lowers them (one round through shared
// memory each way).

// DEFAULT: remark: [ll-lower-conversions] left to Triton: stock Triton's lowering: the two layouts hold 1056 32-bit values a thread (1024 + 32), more than the 255 registers a thread has on sm_90
// DEFAULT: remark: [ll-lower-conversions] left to Triton: stock Triton's lowering: the two layouts hold 1056 32-bit values a thread (32 + 1024), more than the 255 registers a thread has on sm_90
// DEFAULT-NOT: lowered:
// OFF: remark: [ll-lower-conversions] lowered: shared
// OFF: remark: [ll-lower-conversions] lowered: shared
// OFF-NOT: left to Triton

#src = #ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [8, 8], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]}>}>
#dst = #ttg.linear<{register = [[512], [256], [64], [4096], [1024]], lane = [[16], [2048], [8], [32], [4]], warp = [[128], [2], [1]], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @there_and_back(%x: tensor<8192xbf16, #src>) -> tensor<8192xbf16, #src> {
    %0 = ttg.convert_layout %x : tensor<8192xbf16, #src> -> tensor<8192xbf16, #dst>
    %1 = ttg.convert_layout %0 : tensor<8192xbf16, #dst> -> tensor<8192xbf16, #src>
    tt.return %1 : tensor<8192xbf16, #src>
  }
}
