// RUN: ll-opt %s -p 'll-lower-conversions{only=local_load remarks=true}' 2>&1 | FileCheck %s --check-prefix=TTGIR
// RUN: ll-opt %s -p 'll-lower-conversions{only=local_load}' --emit ptx | FileCheck %s --check-prefix=PTX
// RUN: ll-opt %s --emit ptx | FileCheck %s --check-prefix=STOCK

// Guard barriers, emitted and pruned.  Triton stages an mma operand through shared memory
// (ttg.local_alloc), our island reads it with ldmatrix (ttg.local_load, opt-in here), and
// Triton converts the result back through shared memory (ttg.convert_layout, left to Triton
// by only=local_load).  Triton's barrier analysis cannot see our reads, so the island comes
// with two guards (TTGIR).  In the LLVM IR, passes/barriers/guard_barriers.py keeps the first (Triton's
// stores are behind it, our reads ahead) and drops the second: Triton's own barrier before the
// conversion's stores already follows our reads.  The PTX has stock's five barriers.

// TTGIR: remark: [ll-lower-conversions] lowered: local_load, guard bar.sync=2, ldmatrix=4
// TTGIR-COUNT-2: "// guard"

// PTX: st.shared{{(::cta)?}}.v4.b32
// PTX: {{^[[:space:]]*}}// guard
// PTX-COUNT-4: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-NOT: {{^[[:space:]]*}}// guard
// PTX: bar.sync 0;
// PTX: st.shared{{(::cta)?}}.v4.b32
// PTX-COUNT-3: bar.sync
// PTX-NOT: bar.sync

// STOCK-COUNT-5: bar.sync
// STOCK-NOT: bar.sync

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
    %e = ttg.convert_layout %c : tensor<64x32xf16, #dst> -> tensor<64x32xf16, #src>
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
    %y_p0 = tt.splat %Y : !tt.ptr<f16> -> tensor<64x32x!tt.ptr<f16>, #src>
    %y_p = tt.addptr %y_p0, %s_off : tensor<64x32x!tt.ptr<f16>, #src>, tensor<64x32xi32, #src>
    tt.store %y_p, %e : tensor<64x32x!tt.ptr<f16>, #src>
    tt.return
  }
}
