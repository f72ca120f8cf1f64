"""The port of block pointers (``tl.make_block_ptr``, ``tl.advance``): Triton 3.6 to 3.8 lower
them to pointer tiles and masks, and the port writes the same (``_BlockPointer``)."""

import re

import pytest
import triton

from linear_layouts.passes.port.port import PortError, port

from . import block_pointer_kernels as k

REMOVED = tuple(int(part) for part in triton.__version__.split(".")[:2]) >= (3, 9)
needs_block_pointers = pytest.mark.skipif(REMOVED, reason=f"triton {triton.__version__} removed block pointers")
MATMUL = dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", M="i32", N="i32", K="i32", stride_am="i32", stride_ak=1,
              stride_bk="i32", stride_bn=1, stride_cm="i32", stride_cn=1, BM=128, BN=128, BK=64,
              num_warps=8, num_stages=3)
SCALE_3D = dict(x_ptr="*fp32", y_ptr="*fp32", B="i32", M="i32", N="i32", stride_b="i32", stride_m="i32",
                BB=2, BM=16, BN=32, num_warps=4)


def _ported(kernel, target, **launch):
    made = port(kernel, target, check=True, details=True, **launch)
    assert made.check.compiled and made.check.same_arguments, made.check.summary()
    assert made.check.as_wide, made.check.summary()
    assert not made.check.slower_assembly, made.check.summary()
    assert made.check.original_mma == made.check.ported_mma, made.check.summary()
    return made


@pytest.mark.skipif(not REMOVED, reason="this triton has block pointers")
def test_a_triton_without_block_pointers_gets_one_line():
    with pytest.raises(PortError, match="Triton does not compile block_copy_kernel .*Block pointers have been removed"):
        port(k.block_copy_kernel, "sm90", x_ptr="*fp32", n="i32", BLOCK=128)


@needs_block_pointers
@pytest.mark.parametrize("target", ["sm90", "gfx942"])
def test_each_call_is_renamed_and_its_tile_gets_tritons_layout(target):
    made = _ported(k.block_copy_kernel, target, x_ptr="*fp32", n="i32", BLOCK=1024)
    assert "    block = _make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))\n" in made.source
    load, store = re.search(r"_store_block\(block, _load_block\(block, layout=(LOAD_\d+)\) \+ 1, layout=(STORE_\d+)\)",
                            made.source).groups()
    assert re.search(rf"^{load} = gl.constexpr\(gl.BlockedLayout\(\[4\], \[\d+\], \[4\], \[0\]\)\)  # Triton's layout "
                     r"for the block pointer's load at line \d+$", made.source, flags=re.M)
    assert re.search(rf"^{store} = gl.constexpr\(gl.BlockedLayout\(\[4\], ", made.source, flags=re.M)
    assert "class _BlockPointer:" in made.source and made.check.ported_conversions == 0


@needs_block_pointers
def test_a_block_pointer_loop_is_pipelined_as_tritons():
    made = _ported(k.block_matmul_kernel, "sm90", **MATMUL)
    source = made.source
    assert made.pipelines.described == {
        23: "3 tiles of a, b in shared memory, copied 2 iterations ahead; the wgmma left running, one in flight"}
    assert re.search(r"_load_ahead\(a_ring\.index\(stage\), k_first \+ stage \* BK < k_end, a_bp\.pointers\((LOAD_24)\), "
                     r"a_bp\.mask\(\(0, 1\), \1\)\)", source), source
    assert "        a_bp = _advance(a_bp, (0, BK))\n        b_bp = _advance(b_bp, (BK, 0))\n" in source
    assert "    _store_block(c_bp, acc.to(gl.float16), boundary_check=(0, 1), layout=STORE_31)" in source
    assert len(made.check.ported.loads) == len(made.check.original.loads) == 24


@needs_block_pointers
@pytest.mark.parametrize("target", ["sm80", "sm100", "gfx942"])
def test_the_block_pointer_matmul_ports_for_each_target(target):
    made = _ported(k.block_matmul_kernel, target, **MATMUL)
    assert made.pipelines.loops and made.check.ported_conversions <= made.check.original_conversions


@needs_block_pointers
def test_rank_three_blocks_check_the_dimensions_asked():
    made = _ported(k.block_scale_3d_kernel, "sm90", **SCALE_3D)
    assert re.search(r"v = _load_block\(x, boundary_check=\(0, 2\), padding_option=\"nan\", layout=LOAD_\d+\)",
                     made.source)
    assert re.search(r"_store_block\(y, v \* 2, boundary_check=\(0, 1, 2\), layout=STORE_\d+\)", made.source)


@needs_block_pointers
def test_a_block_pointers_element_type_and_an_access_triton_never_compiles():
    made = _ported(k.block_cast_kernel, "sm90", x_ptr="*fp16", y_ptr="*bf16", n="i32", BLOCK=1024, NEVER=False)
    assert re.search(r"_store_block\(y, v\.to\(y\.dtype\.element_ty\) \+ 1, boundary_check=\(0,\), layout=None\)",
                     made.source), made.source
    assert re.search(r"_store_block\(y, v\.to\(y\.dtype\.element_ty\), boundary_check=\(0,\), layout=STORE_\d+\)",
                     made.source)
