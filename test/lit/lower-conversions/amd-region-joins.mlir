// RUN: ll-opt %s --split-input-file -p 'll-lower-conversions{stock_gate=false}' --remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: ll-opt %s --split-input-file -p 'll-lower-conversions{stock_gate=false}' --emit amdgcn | FileCheck %s --check-prefix=AMD

// On AMD, Triton's conversion to LLVM runs its axis analysis after scf became cf, and that
// analysis forwards an unrealized_conversion_cast's operand info to its result: for an
// island, the info of an LLVM struct, whose rank is not the tensor's.  Where that result
// meets another value at a block argument (a loop's or branch's scf.yield, a loop's initial
// value, an scf.condition) the join of the two fails an assertion ("Mismatched ranks") and the
// kernel does not compile (triton 3.6 and 3.9, CDNA and RDNA).  So such a conversion is left
// to Triton, with the reason; one whose result meets an ordinary op first is lowered.
// Every module below compiles to AMDGCN.

// A loop-carried accumulator: the conversion into the body's layout is lowered, the one whose
// result the body yields is left to Triton.
// REMARK: remark: [ll-lower-conversions] lowered: shared
// REMARK: remark: [ll-lower-conversions] left to Triton: on AMD (gfx942) the result is joined with another value where a loop or branch begins or ends
// AMD: .amdgcn_target "{{.*}}gfx942"

#A = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [16, 4], warpsPerCTA = [2, 2], order = [1, 0]}>
#B = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 16], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @loop(%p: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %init = tt.splat %n : i32 -> tensor<32x64xi32, #A>
    %x = tt.splat %n : i32 -> tensor<32x64xi32, #B>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<32x64xi32, #A>) : i32 {
      %c = ttg.convert_layout %acc : tensor<32x64xi32, #A> -> tensor<32x64xi32, #B>
      %s = arith.addi %c, %x : tensor<32x64xi32, #B>
      %back = ttg.convert_layout %s : tensor<32x64xi32, #B> -> tensor<32x64xi32, #A>
      scf.yield %back : tensor<32x64xi32, #A>
    }
    %ps = tt.splat %p : !tt.ptr<i32> -> tensor<32x64x!tt.ptr<i32>, #A>
    tt.store %ps, %r : tensor<32x64x!tt.ptr<i32>, #A>
    tt.return
  }
}

// -----

// A loop's initial value converted before the loop (RDNA, wave32): left to Triton.
// REMARK: remark: [ll-lower-conversions] left to Triton: on AMD (gfx1100) the result is joined with another value where a loop or branch begins or ends
// AMD: .amdgcn_target "{{.*}}gfx1100"

#A = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#B = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx1100", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @init(%p: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %x = tt.splat %n : i32 -> tensor<32x64xi32, #B>
    %x2 = arith.addi %x, %x : tensor<32x64xi32, #B>
    %init = ttg.convert_layout %x2 : tensor<32x64xi32, #B> -> tensor<32x64xi32, #A>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<32x64xi32, #A>) : i32 {
      %s = arith.addi %acc, %acc : tensor<32x64xi32, #A>
      scf.yield %s : tensor<32x64xi32, #A>
    }
    %ps = tt.splat %p : !tt.ptr<i32> -> tensor<32x64x!tt.ptr<i32>, #A>
    tt.store %ps, %r : tensor<32x64x!tt.ptr<i32>, #A>
    tt.return
  }
}

// -----

// A branch that yields a converted value: left to Triton.  The same conversion outside the
// branch, read by an add: lowered.
// REMARK: remark: [ll-lower-conversions] left to Triton: on AMD (gfx942) the result is joined with another value where a loop or branch begins or ends
// REMARK: remark: [ll-lower-conversions] lowered: shared
// AMD: .amdgcn_target "{{.*}}gfx942"

#A = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [16, 4], warpsPerCTA = [2, 2], order = [1, 0]}>
#B = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 16], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @branch(%p: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %n: i32) {
    %c1 = arith.constant 1 : i32
    %cond = arith.cmpi sgt, %n, %c1 : i32
    %x = tt.splat %n : i32 -> tensor<32x64xi32, #B>
    %x2 = arith.addi %x, %x : tensor<32x64xi32, #B>
    %y = tt.splat %c1 : i32 -> tensor<32x64xi32, #A>
    %r = scf.if %cond -> (tensor<32x64xi32, #A>) {
      %xa = ttg.convert_layout %x2 : tensor<32x64xi32, #B> -> tensor<32x64xi32, #A>
      scf.yield %xa : tensor<32x64xi32, #A>
    } else {
      scf.yield %y : tensor<32x64xi32, #A>
    }
    %xc = ttg.convert_layout %x2 : tensor<32x64xi32, #B> -> tensor<32x64xi32, #A>
    %twice = arith.addi %xc, %xc : tensor<32x64xi32, #A>
    %sum = arith.addi %r, %twice : tensor<32x64xi32, #A>
    %ps = tt.splat %p : !tt.ptr<i32> -> tensor<32x64x!tt.ptr<i32>, #A>
    tt.store %ps, %sum : tensor<32x64x!tt.ptr<i32>, #A>
    tt.return
  }
}
