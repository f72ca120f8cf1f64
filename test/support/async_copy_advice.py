"""What the advice (``ll-apply-advice``) says of relaying out an asynchronous copy into shared
memory: one 4096-element f16 ``ttg.async_copy_global_to_local`` laid out in a 1-D blocked layout,
its replacements by the same layout with other ``sizePerThread``.  Shared by the tests of the
copies' requirements on each target (``cp.async`` on NVIDIA, direct-to-LDS loads on AMD)."""

from linear_layouts.passes.ir.snapshot import parse_module

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
