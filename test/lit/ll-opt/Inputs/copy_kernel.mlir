#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @copy_transposed(%in: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %offsets = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked}>>
    %row = tt.expand_dims %offsets {axis = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 0, parent = #blocked}>> -> tensor<1x32xi32, #blocked>
    %all = tt.broadcast %row : tensor<1x32xi32, #blocked> -> tensor<32x32xi32, #blocked>
    %base = tt.splat %in : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>, #blocked>
    %ptrs = tt.addptr %base, %all : tensor<32x32x!tt.ptr<f32>, #blocked>, tensor<32x32xi32, #blocked>
    %x = tt.load %ptrs : tensor<32x32x!tt.ptr<f32>, #blocked>
    %y = ttg.convert_layout %x : tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
    %offsets1 = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #blocked1}>>
    %col = tt.expand_dims %offsets1 {axis = 1 : i32} : tensor<32xi32, #ttg.slice<{dim = 1, parent = #blocked1}>> -> tensor<32x1xi32, #blocked1>
    %all1 = tt.broadcast %col : tensor<32x1xi32, #blocked1> -> tensor<32x32xi32, #blocked1>
    %base1 = tt.splat %out : !tt.ptr<f32> -> tensor<32x32x!tt.ptr<f32>, #blocked1>
    %ptrs1 = tt.addptr %base1, %all1 : tensor<32x32x!tt.ptr<f32>, #blocked1>, tensor<32x32xi32, #blocked1>
    tt.store %ptrs1, %y : tensor<32x32x!tt.ptr<f32>, #blocked1>
    tt.return
  }
}
