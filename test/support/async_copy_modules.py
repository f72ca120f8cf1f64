"""The modules of an asynchronous copy into shared memory (``ttg.async_copy_global_to_local``)
that the tests of the copies' requirements on each target share (``cp.async`` on NVIDIA,
direct-to-LDS loads on AMD):

* ``automatic_copy``: a 64 x 64 f16 tile copied in and stored back with every distributed layout
  automatic, for ``ll-resolve-auto-layouts``;
* ``laid_out_copy``: 4096 f16 copied in a 1-D blocked layout, and ``advice_on_copy_widths``: what
  the advice (``ll-apply-advice``) says of replacing that layout by one with another
  ``sizePerThread``."""

from linear_layouts.passes.ir.snapshot import parse_module

_AUTOMATIC = """\
#shared = SHARED
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "TARGET", "ttg.threads-per-warp" = LANES : i32} {
  tt.func public @copy(%src: !tt.ptr<f16>SOURCE_ALIGNMENT, %dst: !tt.ptr<f16> {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #gluon.auto_encoding>
    %r2 = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32, #gluon.auto_encoding> -> tensor<64x1xi32, #gluon.auto_encoding>
    %c64 = arith.constant dense<64> : tensor<64x1xi32, #gluon.auto_encoding>
    %rows = arith.muli %r2, %c64 : tensor<64x1xi32, #gluon.auto_encoding>
    %rb = tt.broadcast %rows : tensor<64x1xi32, #gluon.auto_encoding> -> tensor<64x64xi32, #gluon.auto_encoding>
    %c = tt.expand_dims %r {axis = 0 : i32} : tensor<64xi32, #gluon.auto_encoding> -> tensor<1x64xi32, #gluon.auto_encoding>
    %cb = tt.broadcast %c : tensor<1x64xi32, #gluon.auto_encoding> -> tensor<64x64xi32, #gluon.auto_encoding>
    %offsets = arith.addi %rb, %cb : tensor<64x64xi32, #gluon.auto_encoding>
    %base = tt.splat %src : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #gluon.auto_encoding>
    %pointers = tt.addptr %base, %offsets : tensor<64x64x!tt.ptr<f16>, #gluon.auto_encoding>, tensor<64x64xi32, #gluon.auto_encoding>
    %smem = ttg.local_alloc : () -> !ttg.memdesc<64x64xf16, #shared, #smem, mutable>
    %token = ttg.async_copy_global_to_local %pointers, %smem : tensor<64x64x!tt.ptr<f16>, #gluon.auto_encoding> -> <64x64xf16, #shared, #smem, mutable>
    %group = ttg.async_commit_group
    %done = ttg.async_wait {num = 0 : i32}
    %x = ttg.local_load %smem : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #gluon.auto_encoding>
    %out = tt.splat %dst : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #gluon.auto_encoding>
    %to = tt.addptr %out, %offsets : tensor<64x64x!tt.ptr<f16>, #gluon.auto_encoding>, tensor<64x64xi32, #gluon.auto_encoding>
    tt.store %to, %x : tensor<64x64x!tt.ptr<f16>, #gluon.auto_encoding>
    tt.return
  }
}
"""


def automatic_copy(target, lanes, shared, source_divisibility=16):
    """The automatic copy's module for ``target`` ("cuda:80", "hip:gfx942") with ``lanes`` a warp,
    through a buffer of encoding ``shared``; the source pointer ``source_divisibility``-byte
    aligned (0: nothing known of its alignment)."""
    alignment = f" {{tt.divisibility = {source_divisibility} : i32}}" if source_divisibility else ""
    return (_AUTOMATIC.replace("SHARED", shared).replace("TARGET", target).replace("LANES", str(lanes))
            .replace("SOURCE_ALIGNMENT", alignment))

_LAID_OUT = """\
#L = #ttg.blocked<{sizePerThread = [PER_THREAD], threadsPerWarp = [LANES], warpsPerCTA = [4], order = [0]}>
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "TARGET", "ttg.threads-per-warp" = LANES : i32} {
  tt.func public @copy(%src: !tt.ptr<f16> {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %i = tt.make_range {end = 4096 : i32, start = 0 : i32} : tensor<4096xi32, #L>
    %base = tt.splat %src : !tt.ptr<f16> -> tensor<4096x!tt.ptr<f16>, #L>
    %pointers = tt.addptr %base, %i : tensor<4096x!tt.ptr<f16>, #L>, tensor<4096xi32, #L>
    %smem = ttg.local_alloc : () -> !ttg.memdesc<4096xf16, #shared, #smem, mutable>
    %token = ttg.async_copy_global_to_local %pointers, %smem : tensor<4096x!tt.ptr<f16>, #L> -> <4096xf16, #shared, #smem, mutable>
    tt.return
  }
}
"""


def laid_out_copy(target, lanes, per_thread):
    """The copy's module for ``target`` ("cuda:80", "hip:gfx942") with ``lanes`` a warp, laid out
    in ``sizePerThread = [per_thread]``."""
    return _LAID_OUT.replace("PER_THREAD", str(per_thread)).replace("LANES", str(lanes)).replace("TARGET", target)


def advice_on_copy_widths(target, lanes, per_thread, widths):
    """(the copy's layout, {width: the layouts the advice keeps when asked to replace the copy's
    ``sizePerThread = [per_thread]`` by ``[width]``}).  Example: on ``cuda:80`` with 32 lanes,
    per_thread 8 and widths (1, 4) the advice keeps the layout at width 1 (a 2-byte cp.async)
    and lets width 4 through: ``{1: [layout], 4: []}``."""
    from linear_layouts.passes.advice.advice_edits import _breaking_requirements
    from linear_layouts.passes.ir.module_lines import ModuleLines
    module = parse_module(laid_out_copy(target, lanes, per_thread), "laid_out.mlir", safe=False)
    lines = ModuleLines(module, module.print(debuginfo=True))
    laid_out = module.ops_named("ttg.async_copy_global_to_local")[0].operands[0].tensor_type.encoding
    kept = {width: _breaking_requirements(
        {laid_out: laid_out.replace(f"sizePerThread = [{per_thread}]", f"sizePerThread = [{width}]")},
        module, lines) for width in widths}
    return laid_out, kept
