// RUN: ll-opt %s -p "ll-lower-conversions{stock_gate=false}" --remarks 2>&1 | FileCheck %s --check-prefix=IR
// RUN: ll-opt %s -p "ll-lower-conversions{stock_gate=false}" --emit ptx | FileCheck %s --check-prefix=PTX

// A Hopper matmul epilogue: the wgmma accumulator (fp16, 4 warps) goes to a row-major
// blocked layout for the global store.  The plan stores with stmatrix.x4 (each lane supplies
// one 16-byte row address, 4 matrices per instruction), one CTA barrier, and loads 128-bit
// vectors: 4 stmatrix + 1 bar.sync + 16 ld.shared.v4, with no bank conflicts.
// (The inline-PTX form of these accesses is a study's switch, emit_nvidia.SHARED_ACCESS_FORM,
// not a setting ll-opt reads: test/unit/passes/test_shared_access_forms.py compiles both forms.)

#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  // IR: remark: [ll-lower-conversions] lowered: shared, bar.sync=1, ld.shared.b128=16, stmatrix=4, scratch=8192B
  tt.func public @epilogue(%acc: tensor<64x64xf16, #mma>, %Y: !tt.ptr<f16>) {
    // IR: ttg.local_alloc : () -> !ttg.memdesc<8192xi8
    // IR-COUNT-4: nvvm.stmatrix %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
    // IR: "// island barrier"
    // IR-NEXT: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"
    // IR-COUNT-16: llvm.load %{{[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
    // IR-NOT: llvm.load
    // IR: ttg.local_dealloc
    %c = ttg.convert_layout %acc : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #blocked>
    %ys = tt.splat %Y : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.store %ys, %c : tensor<64x64x!tt.ptr<f16>, #blocked>
    tt.return
  }
}

// PTX-LABEL: .entry epilogue
// PTX-COUNT-4: stmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-NOT: stmatrix.sync
// PTX: bar.sync 0;
// PTX-COUNT-16: ld.shared.v4.b32
// PTX-NOT: ld.shared
// PTX: ret;
