"""The port of tensor descriptors made in the kernel (``tl.make_tensor_descriptor``): Gluon's TMA
where Triton's compile copies with the TMA, a checked tile of pointers where it reads through
pointers (sm_80, AMD)."""

import re

import pytest

from linear_layouts.passes.port.port import PortError, port

from . import descriptor_kernels as k

SCALE = dict(x_ptr="*fp16", y_ptr="*fp16", M="i32", N="i32", BM=64, BN=64, num_warps=4)
MATMUL = dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", M="i32", N="i32", K="i32", BM=128, BN=128, BK=64,
              num_warps=8, num_stages=3)


def _ported(kernel, target, **launch):
    made = port(kernel, target, check=True, details=True, **launch)
    assert made.check.compiled and made.check.same_arguments, made.check.summary()
    assert made.check.as_wide and not made.check.slower_assembly, made.check.summary()
    assert made.check.original_mma == made.check.ported_mma, made.check.summary()
    return made


@pytest.mark.parametrize("target", ["sm90", "sm100"])
def test_a_descriptor_is_read_and_written_with_the_tma_in_tritons_layouts(target):
    made = _ported(k.descriptor_scale_kernel, target, **SCALE)
    source = made.source
    assert re.search(r"x_desc = _make_tensor_descriptor\(x_ptr, shape=\[M, N\], strides=\[N, 1\], block_shape=\[BM, BN\], "
                     r"layout=(DESC_\d+)\)", source)
    assert re.search(r"^DESC_\d+ = gl.constexpr\(gl.NVMMASharedLayout\(swizzle_byte_width=128, element_bitwidth=16, "
                     r"rank=2\)\)  # Triton's shared layout for the tensor descriptor made at line \d+$", source, flags=re.M)
    assert re.search(r"y_desc\.store\(\[m, n\], x_desc\.load\(\[m, n\], layout=LOAD_\d+\) \* 2, layout=STORE_\d+\)", source)
    assert "tma.make_tensor_descriptor(base, shape, strides, block_shape, layout, padding_option)" in source
    assert "mbarrier.expect(barrier, self.tma.block_type.nbytes)" in source
    assert "cp.async.bulk.tensor" in made.original.ptx and not made.check.ported.loads


@pytest.mark.parametrize("target", ["sm80", "gfx942"])
def test_where_triton_reads_through_pointers_the_port_does_too(target):
    made = _ported(k.descriptor_scale_kernel, target, **SCALE)
    assert "class _BlockPointer:" in made.source and "def _every_dimension(block_shape):" in made.source
    assert made.check.ported.loads and len(made.check.ported.loads) == len(made.check.original.loads)


@pytest.mark.parametrize("target", ["sm80", "gfx942"])
def test_a_descriptor_matmul_read_through_pointers_is_pipelined(target):
    made = _ported(k.descriptor_matmul_kernel, target, **MATMUL)
    assert made.pipelines.loops, made.pipelines.skipped
    assert re.search(r"a_desc\._block\(\[off_m, \(k \+ 1 \* BK\)\]\)\.pointers\(LOAD_\d+\)", made.source) or \
        re.search(r"a_desc\._block\(\[off_m, \(k \+ \d \* BK\)\]\)", made.source), made.source


@pytest.mark.parametrize("target", ["sm90", "sm100"])
def test_a_descriptor_matmul_is_pipelined_with_tma_copies_and_a_barrier_a_slot(target):
    made = _ported(k.descriptor_matmul_kernel, target, **MATMUL)
    source = made.source
    assert made.pipelines.described[25].startswith("3 tiles of a, b in shared memory, copied 2 iterations ahead")
    assert "    a_ready = gl.allocate_shared_memory(gl.int64, [3, 1], mbarrier.MBarrierLayout())\n" in source
    assert ("        _tma_ahead(a_desc.tma, [off_m, (k_first + stage * BK)], a_ring.index(stage), a_ready.index(stage), "
            "k_first + stage * BK < k_end)\n") in source
    assert ("        mbarrier.wait(a_ready.index(((k - k_first) // BK) % 3), ((k - k_first) // BK) // 3 & 1)  "
            "# this iteration's tiles have landed\n") in source
    assert "async_copy.commit_group" not in source and "mbarrier.invalidate(b_ready.index(" in source
    # two tiles ahead and one each iteration, and the store (Triton's sm_100 compile under 3.8 and
    # 3.9 peels the loop's last iteration: two copies more there)
    assert made.check.ported_tma_copies == 7
    assert made.check.original_tma_copies in ((7, 9) if target == "sm100" else (7,))


def test_a_descriptor_made_on_the_host_is_one_clear_error():
    with pytest.raises(PortError, match=r"argument 'x_desc' is a tensor descriptor made on the host"):
        port(k.host_descriptor_kernel, "sm90", x_desc="tensordesc<fp16[64, 64]>", y_ptr="*fp16", BM=64, BN=64)
