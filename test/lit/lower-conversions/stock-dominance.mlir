// RUN: ll-opt %s --split-input-file -p ll-lower-conversions --remarks 2>&1 >/dev/null | FileCheck %s
// RUN: ll-opt %s --split-input-file -p ll-lower-conversions --remarks=detail 2>&1 >/dev/null | FileCheck %s --check-prefix=DETAIL
// RUN: ll-opt %s --split-input-file -p 'll-lower-conversions{remarks=detail}' 2>&1 >/dev/null | FileCheck %s --check-prefix=DETAIL

// Where no timing was measured (sm_80 and gfx942 here, under any Triton release), a conversion is ours only
// where our plan provably gains: it needs no more of any costly instruction than stock's lowering issues at
// least, and fewer of some kind (lowering/choosing/stock_bounds.py); otherwise it is left to Triton and the
// remark names what ours needs more of, or that it needs just as much.  docs/lowering-choice.md.
// Plain remarks say it in words, and end there; the detail level adds the counts by the cost
// model's names and the rule's source file.

// The 64x128 f16 pair, sizePerThread [1, 8] -> [1, 4]: stock shuffles 32 words a thread and
// nothing else; our pick goes through shared memory.
#A = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#B = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @shuffled_by_stock(%x: tensor<64x128xf16, #A>) -> tensor<64x128xf16, #B> {
    // CHECK: remark: [ll-lower-conversions] left to Triton: stock Triton's lowering: our plan needs 32 store and 32 load wavefronts, {{[0-9]+ (warp )?}}barriers: more store wavefronts, load wavefronts and barriers than stock Triton's lowering needs at least (32 warp shuffles){{$}}
    // DETAIL: remark: [ll-lower-conversions] left to Triton: stock Triton's lowering: our plan needs 32 store and 32 load wavefronts, {{[0-9]+ (warp )?}}barriers: more store wavefronts, load wavefronts and barriers than stock Triton's lowering needs at least (32 warp shuffles) (needs more store_wavefronts (32 > 0), load_wavefronts (32 > 0), barriers ({{[0-9]+}} > 0); ours: store_wavefronts=32 load_wavefronts=32 {{(cta|warp)}}_barriers={{[0-9]+}}; stock at least: shuffles=32; lowering/choosing/stock_bounds.py){{$}}
    %y = ttg.convert_layout %x : tensor<64x128xf16, #A> -> tensor<64x128xf16, #B>
    tt.return %y : tensor<64x128xf16, #B>
  }
}

// -----

// Four elements a thread to one across 4 waves of gfx942: both go through shared memory (LDS);
// ours needs 32 bits a lane stored and loaded 4 times over (16 wavefronts each way) and one
// barrier, just what stock needs at least: no gain to pay for the island's compile time, stock.
#C = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [64], warpsPerCTA = [4], order = [0]}>
#D = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [64], warpsPerCTA = [4], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @as_stock_at_least(%x: tensor<2048xi32, #C>) -> tensor<2048xi32, #D> {
    // CHECK: remark: [ll-lower-conversions] left to Triton: stock Triton's lowering: our plan needs just what stock Triton's lowering needs at least (16 store and 16 load wavefronts, 1 barrier) and no fewer of anything: no gain to show for the island's compile time{{$}}
    // DETAIL: remark: [ll-lower-conversions] left to Triton: stock Triton's lowering: our plan needs just what stock Triton's lowering needs at least (16 store and 16 load wavefronts, 1 barrier) and no fewer of anything: no gain to show for the island's compile time (store_wavefronts=16 load_wavefronts=16 cta_barriers=1; lowering/choosing/stock_bounds.py){{$}}
    %y = ttg.convert_layout %x : tensor<2048xi32, #C> -> tensor<2048xi32, #D>
    tt.return %y : tensor<2048xi32, #D>
  }
}
