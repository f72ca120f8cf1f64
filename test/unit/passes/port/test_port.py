"""The port (passes/port): Triton kernels as Gluon source, each construct compiled for the
targets it names and read back against Triton's compile of the original."""

import inspect
import os
import re
import subprocess
import sys

import pytest

from linear_layouts.passes.port.check import global_accesses
from linear_layouts.passes.port.port import PortError, port

from . import port_kernels as k

HERE = os.path.dirname(os.path.abspath(__file__))
ADD = dict(x_ptr="*fp32", y_ptr="*fp32", out_ptr="*fp32", n="i32", BLOCK=1024)
MATMUL = dict(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", M="i32", N="i32", K="i32", stride_am="i32",
              stride_bk="i32", stride_cm="i32", BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)


def _ported(kernel, target, **launch):
    made = port(kernel, target, check=True, details=True, **launch)
    assert made.check.compiled and made.check.same_arguments, made.check.summary()
    assert made.check.as_wide, made.check.summary()
    assert not made.check.slower_assembly, made.check.summary()
    return made


def test_elementwise_kernel_keeps_its_text_and_names_its_layout():
    made = _ported(k.add_kernel, "sm90", **ADD)
    source = made.source
    assert "@gluon.jit\ndef add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: gl.constexpr):" in source
    assert "OFFS_LAYOUT: gl.constexpr = gl.BlockedLayout([4], [32], [4], [0])" in source
    assert "gl.arange(0, BLOCK, layout=OFFS_LAYOUT)" in source
    assert "SCALE = gl.constexpr(2)" in source
    assert "tl." not in source.replace("tl.dot", "")
    assert made.check.ported.loads == [16, 16, 16, 16] and made.check.ported.stores == [16, 16]
    assert made.check.ported_conversions == 0


def test_helpers_and_triton_library_functions_are_ported_beside_the_kernel():
    made = _ported(k.bias_gelu_kernel, "sm90", x_ptr="*fp16", b_ptr="*fp32", out_ptr="*fp16", n="i32", BLOCK=512)
    assert "def _gelu(x):" in made.source and "def _tl_sigmoid(" in made.source
    assert "gl.where(x > 0, _gelu(x + b), _tl_sigmoid(x) * 0.0)" in made.source


@pytest.mark.parametrize("target", ["sm80", "sm90", "gfx942"])
def test_reductions_and_atomics(target):
    made = _ported(k.row_sum_kernel, target, x_ptr="*fp32", out_ptr="*fp32", n_cols="i32", ROWS=16, COLS=256)
    assert "gl.sum(x, axis=1)" in made.source and "gl.atomic_add(" in made.source


def test_transpose_converts_where_two_layouts_meet():
    made = _ported(k.transpose_kernel, "sm90", x_ptr="*fp16", y_ptr="*fp16", M="i32", N="i32", BM=64, BN=64)
    assert "gl.convert_layout(gl.permute(x, (1, 0)), " in made.source
    assert made.check.ported.loads == made.check.original.loads == [16] * 4
    assert made.check.ported.stores == made.check.original.stores == [16] * 4


@pytest.mark.parametrize("target, instruction, helper", [
    ("sm80", "mma.sync", "_dot_mma_v2"), ("sm90", "wgmma.mma_async", "_dot_wgmma_shared_overlapped"),
    ("sm100", "tcgen05.mma", "_dot_tcgen05_shared"), ("gfx942", "v_mfma", "_dot_mfma")])
def test_dot_becomes_the_targets_matrix_instruction(target, instruction, helper):
    made = _ported(k.matmul_kernel, target, num_warps=4, **MATMUL)
    assert f"acc = {helper}(a, b, acc, DOT_" in made.source
    assert made.check.original_mma == made.check.ported_mma == {instruction}


@pytest.mark.parametrize("target, read", [("sm80", "a_ring.index((k - k_first) % 2).load(DOT_"),
                                          ("sm90", "a = a_ring.index((k - k_first) % 3)\n"),
                                          ("sm100", "a = a_ring.index((k - k_first) % 3)\n")])
def test_a_dot_loop_is_pipelined_as_triton_pipelines_it(target, read):
    # Triton keeps a ring of num_stages (sm_80 here: 2) tiles per operand in shared memory and
    # copies ahead; the port writes the same ring, copies and waits in the source.
    made = _ported(k.matmul_kernel, target, num_warps=4, **MATMUL)
    stages = 2 if target == "sm80" else 3
    assert [(stages, names) for _, stages, names in made.pipelines.loops] == [(stages, ["a", "b"])]
    assert f"a_ring = gl.allocate_shared_memory(gl.float16, [{stages}, 128, 64], A_RING_LAYOUT)" in made.source
    assert f"for stage in gl.static_range({stages - 1}):" in made.source
    assert f"async_copy.wait_group({stages - 2})" in made.source and "async_copy.wait_group(0)" in made.source
    assert read in made.source
    assert set(made.check.ported.loads) == {16}      # every copy 16 bytes, as Triton's


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_offsets_the_loop_computes_from_its_index_are_written_into_the_load_ahead(target):
    # offs_k = k + tl.arange(...) each iteration: the copy two iterations ahead reads it at k + 2 steps
    made = _ported(k.matmul_offsets_kernel, target, num_warps=4, **MATMUL)
    assert [names for _, _, names in made.pipelines.loops] == [["a", "b"]]
    ahead = "(k + 2 * BLOCK_K)" if target == "sm90" else "(k + 1 * BLOCK_K)"
    assert f"a_ptr + offs_m[:, None] * stride_am + ({ahead} + gl.arange(0, BLOCK_K, layout=" in made.source
    assert set(made.check.ported.loads) == {16}


def test_the_inner_loop_of_a_persistent_kernel_is_pipelined_in_place():
    made = _ported(k.persistent_matmul_kernel, "sm90", num_warps=4, **MATMUL)
    assert [(stages, names) for _, stages, names in made.pipelines.loops] == [(3, ["a", "b"])]
    assert "\n        a_ring = gl.allocate_shared_memory(" in made.source       # inside the tile loop
    assert ("\n        async_copy.wait_group(0)  # no copy outlives the loop\n"
            "        acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])  # nor an MMA\n        gl.store(") in made.source
    assert set(made.check.ported.loads) == {16} and made.check.ported_mma == {"wgmma.mma_async"}


ATTENTION = dict(q_ptr="*fp16", k_ptr="*fp16", v_ptr="*fp16", o_ptr="*fp16", N_CTX="i32", stride_m="i32",
                 BLOCK_M=128, BLOCK_N=64, HEAD=64)


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_an_attention_loop_pipelines_k_and_v_and_keeps_q_in_shared_memory(target):
    # Triton's sm_90 compile stores q to shared memory once and keeps p (the softmax) in registers
    # for the second wgmma; the port writes the same
    made = _ported(k.attention_kernel, target, num_warps=4, **ATTENTION)
    assert [names for _, _, names in made.pipelines.loops] == [["k", "v"]]
    if target == "sm90":
        assert "q_shared = gl.allocate_shared_memory(q.dtype, q.shape, DOT_" in made.source
        assert "qk = _dot_wgmma_shared(q_shared, k, None, DOT_" in made.source
        assert "acc = _dot_wgmma_registers_shared(p.to(gl.float16), v, acc, DOT_" in made.source
        assert made.check.ported_mma == {"wgmma.mma_async"}
    assert set(made.check.ported.loads) == {16}


def test_the_wgmma_is_left_running_and_the_copy_waits_for_the_one_before():
    # Triton's pipelined sm_90 loop keeps one wgmma in flight (warp_group_dot_wait {pendings = 1})
    # and copies into the slot the previous MMA read only after that wait: the port writes the
    # copies after the dot, and waits for the last MMA after the loop
    made = _ported(k.matmul_kernel, "sm90", num_warps=4, **MATMUL)
    body = made.source[made.source.index("    for k in range("):]
    started = body.index("acc = _dot_wgmma_shared_overlapped(a, b, acc, DOT_")
    assert body.index("async_copy.wait_group(1)") < started < body.index("_load_ahead(a_ring.index(") \
        < body.index("async_copy.commit_group()") < body.index("a_ptrs += BLOCK_K")
    assert "warpgroup_mma_wait(num_outstanding=1, deps=[acc, a_smem, b_smem])" in made.source
    assert "acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])  # nor an MMA" in body
    assert made.check.ported.loads == made.check.original.loads


def test_a_loop_whose_accumulator_is_read_in_the_loop_keeps_the_mma_synchronous():
    # attention reads qk in the loop (the softmax): each wgmma there is waited for at once
    made = _ported(k.attention_kernel, "sm90", num_warps=4, **ATTENTION)
    assert "= _dot_wgmma_shared_overlapped(" not in made.source and "num_outstanding=0, deps=[acc])" not in made.source


def test_an_operand_triton_loads_into_registers_is_stored_beside_the_ring():
    # K = 1000: a's rows are not 16-byte aligned, so Triton copies only b ahead and stores a to
    # shared memory each iteration; the port does the same, and keeps that wgmma synchronous
    arguments = dict(MATMUL, K=1000, stride_am=1000)
    made = _ported(k.matmul_offsets_kernel, "sm90", num_warps=4, **arguments)
    assert [names for _, _, names in made.pipelines.loops] == [["b"]]
    assert "_dot_wgmma_shared(gl.allocate_shared_memory(a.dtype, a.shape, DOT_" in made.source
    assert "= _dot_wgmma_shared_overlapped(" not in made.source
    assert made.check.ported_mma == {"wgmma.mma_async"}


def test_a_1d_stores_offsets_are_converted_once_for_its_pointers_and_mask():
    # the column sums come out of the reduction in a slice of the tile's layout, the store wants
    # Triton's coalesced 1-D layout: cols is converted once (one tensor of i32) and the pointers
    # and mask build from it, where the pointers (i64) and the mask would each be converted
    made = _ported(k.column_sums_kernel, "sm90", num_warps=4, X="*fp32", OUT="*fp32", M="i32", N="i32",
                   BLOCK_M=32, BLOCK_N=128)
    assert ("gl.store(OUT + gl.convert_layout(cols, STORE_LAYOUT), gl.convert_layout(gl.sum(acc, axis=0), "
            "STORE_LAYOUT), mask=gl.convert_layout(cols, STORE_LAYOUT) < N)") in made.source
    assert made.check.ported_conversions == 2       # cols and the sums (Triton's compile converts the sums)


def test_an_epilogues_row_offsets_are_converted_where_its_pointer_tile_was():
    # c_ptr + offs_m[:, None] * stride_cm meets offs_n[None, :] in another layout: offs_m (128 i32)
    # is converted once and the pointers and the mask build from it, where the 128x1 pointer tile
    # and the mask's rows were each converted (5 conversions that change a layout, now 4)
    made = _ported(k.matmul_masked_store_kernel, "sm90", num_warps=4, **MATMUL)
    rows = re.search(r"c_ptrs = c_ptr \+ gl\.convert_layout\(offs_m, (\w+)\)\[:, None\] \* stride_cm", made.source)
    assert rows, made.source
    assert f"mask=(gl.convert_layout(offs_m, {rows.group(1)})[:, None] < M)" in made.source
    assert made.check.ported_conversions == 4


def test_tcgen05_with_an_operand_in_tensor_memory_is_named_in_one_line():
    with pytest.raises(PortError, match=r"line \d+: Triton's tcgen05 keeps an operand in registers or tensor memory"):
        port(k.attention_kernel, "sm100", num_warps=4, **ATTENTION)


def test_a_loop_that_also_stores_is_pipelined_where_triton_pipelines_it():
    # Triton's compile copies the loop's tiles ahead of its stores: the port does the same
    made = _ported(k.matmul_store_kernel, "sm90", num_warps=4, **MATMUL)
    assert [loop[2] for loop in made.pipelines.loops] == [["a", "b"]] and not made.pipelines.skipped
    assert "acc = _dot_wgmma_shared(a, b, acc, " in made.source and "\n        gl.store(" in made.source


def test_a_loop_counting_down_is_pipelined_with_its_tiles_below():
    made = _ported(k.matmul_descending_kernel, "sm90", num_warps=4, **MATMUL)
    assert made.pipelines.loops, made.pipelines.skipped
    assert "a_ring.index(((k - k_first) // -1 + 2) % 3), k + 2 * -1 > k_end, " in made.source


def test_the_report_says_which_dot_loops_are_pipelined():
    from linear_layouts.tools.port.report import report_text
    made = _ported(k.matmul_kernel, "sm90", num_warps=4, **MATMUL)
    line = made.pipelines.loops[0][0]
    assert (f"  line {line}: 3 tiles of a, b in shared memory, copied 2 iterations ahead; the wgmma left running, "
            "one in flight") in report_text(made, k.matmul_kernel, rows=[])
    made = _ported(k.matmul_kernel, "gfx942", num_warps=4, num_stages=2, **MATMUL)
    assert (f"  line {line}: 1 tile of a, b in shared memory, loaded into registers 1 iteration ahead and "
            "stored there after the dot") in report_text(made, k.matmul_kernel, rows=[])


def test_argument_list_is_the_originals():
    from linear_layouts.passes.port.module_file import loaded_module
    made = _ported(k.matmul_kernel, "sm90", **MATMUL)
    with loaded_module(made.source) as (module, _):
        ported = module.matmul_kernel.fn
        assert ported.__name__ == "matmul_kernel"
        assert list(inspect.signature(ported).parameters) == list(inspect.signature(k.matmul_kernel.fn).parameters)


def test_bad_input_gets_one_clear_error():
    with pytest.raises(PortError, match="not a @triton.jit function"):
        port(k.not_a_kernel, "sm90")
    with pytest.raises(PortError, match="unknown target 'sm91'"):
        port(k.add_kernel, "sm91", **ADD)
    with pytest.raises(PortError, match="missing launch constexpr 'BLOCK'"):
        port(k.add_kernel, "sm90", **{name: v for name, v in ADD.items() if name != "BLOCK"})
    with pytest.raises(PortError, match=r"port_kernels.py:\d+: the port cannot express random numbers \(tl.rand\)"):
        port(k.random_kernel, "sm90", x_ptr="*fp32", seed="i32", BLOCK=128)


def test_the_command_writes_nothing_on_error(tmp_path):
    out = tmp_path / "port.py"
    kernels = os.path.join(HERE, "port_kernels.py")
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "port", f"{kernels}:random_kernel",
                          "--arg", "x_ptr=*fp32", "--arg", "seed=i32", "--arg", "BLOCK=128", "-o", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 1 and not out.exists()
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("ll-port: error: ")
    assert "Traceback" not in run.stderr
    run = subprocess.run([sys.executable, "-m", "linear_layouts", "port", f"{kernels}:add_kernel", "--check",
                          *[f"--arg={name}={value}" for name, value in ADD.items()], "-o", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: gl.constexpr):" in out.read_text()
    arguments = [f"--arg={name}={value}" for name, value in MATMUL.items()]
    for flags, pipelined in (([], True), (["--no-pipeline"], False)):
        run = subprocess.run([sys.executable, "-m", "linear_layouts", "port", f"{kernels}:matmul_kernel", *arguments,
                              *flags, "-o", str(out)], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert ("async_copy.wait_group" in out.read_text()) is pipelined


def test_access_widths_are_read_from_the_assembly():
    ptx = ("ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];\n st.global.b16 [%rd2], %rs1;\n ld.global.nc.v2.f32 {%f1,%f2}\n"
           "cp.async.cg.shared.global [ %r5 + 0 ], [ %rd3 + 0 ], 0x10, %r6;\n"
           "cp.async.cg.shared.global [ %r5 + 0 ], [ %rd3 + 0 ], 16, %r6;")
    assert global_accesses(ptx).loads == [16, 8, 16, 16] and global_accesses(ptx).stores == [2]
    amd = "global_load_dwordx4 v[0:3], v[4:5], off\n buffer_store_short v1\n global_store_dword v2"
    assert global_accesses(amd).loads == [16] and global_accesses(amd).stores == [2, 4]


def test_report_sets_the_port_beside_triton_and_its_translation(tmp_path):
    from linear_layouts.tools.port.report import write_report
    made = _ported(k.transpose_kernel, "sm90", x_ptr="*fp16", y_ptr="*fp16", M="i32", N="i32", BM=64, BN=64)
    written = write_report(made, k.transpose_kernel, str(tmp_path))
    text = (tmp_path / "report.txt").read_text()
    assert "Triton (the original): modelled cost" in text and "Triton's translation: modelled cost" in text
    assert "the port: modelled cost" in text and "global loads 4 x 16 B; stores 4 x 16 B" in text
    assert "RM_LAYOUT = gl.SliceLayout(1, RM_2D_LAYOUT)" in text and "expand_dims needs a slice" in text
    assert "Changed from Triton's choice: nothing" in text    # the advice on the port finds no cheaper layout
    assert "  none: no change of the port's layouts prices the whole kernel lower" in text
    page = (tmp_path / "index.html").read_text()
    assert "<h2>Layouts the port names</h2>" in page and "def transpose_kernel" in page
    assert str(tmp_path / "rm_layout.png") in written      # a picture per layout (matplotlib is a test extra)


def test_equal_zeros_in_two_loops_each_get_their_layout():
    made = _ported(k.two_loops_kernel, "sm90", x_ptr="*fp32", out_ptr="*fp32", n="i32", BLOCK=1024)
    assert made.source.count("gl.zeros([BLOCK], dtype=gl.float32, layout=") == 2


def test_rank_broadcast_and_barrier():
    made = _ported(k.row_scale_kernel, "sm90", x_ptr="*fp32", scale_ptr="*fp32", out_ptr="*fp32", ROWS=16, COLS=128)
    assert "x * gl.expand_dims(" in made.source
    import triton.experimental.gluon.language as gl
    assert ("gl.barrier()" if hasattr(gl, "barrier") else "gl.thread_barrier()") in made.source


def test_the_originals_jit_options_are_kept():
    made = _ported(k.unspecialized_kernel, "sm90", x_ptr="*fp32", out_ptr="*fp32", n=4096, BLOCK=1024)
    assert "@gluon.jit(do_not_specialize=['n'])" in made.source
    assert "n" not in made.launch.divisible and made.launch.signature["n"] == "i32"
    # as the original: the mask's bound is not known divisible, so neither compile vectorizes
    assert made.check.ported.loads == made.check.original.loads


def test_none_is_a_constant_of_the_launch():
    made = _ported(k.optional_bias_kernel, "sm90", x_ptr="*fp32", bias_ptr=None, out_ptr="*fp32", n="i32", BLOCK=1024)
    assert made.launch.constexprs["bias_ptr"] is None and made.check.ported.loads == [16] * 2


def test_the_demo_shows_a_port_before_and_after():
    from linear_layouts.tools.demo import port_section
    text = "\n".join(port_section(None))
    assert "The Triton kernel:\n    @triton.jit\n    def transpose(" in text
    assert "Its port, every layout Triton chose written out:\n    @gluon.jit\n    def transpose(" in text
    assert "Triton's translation: modelled cost" in text and "the port: modelled cost" in text


def test_an_autotuned_kernel_keeps_its_launch_line():
    from linear_layouts.passes.port.check import gluon_function
    from linear_layouts.passes.port.module_file import loaded_module
    made = port(k.autotuned_copy_kernel, "sm90", config=1, check=True, details=True,
                x_ptr="*fp32", out_ptr="*fp32", n="i32")
    assert made.check.ok, made.check.summary()
    assert ("@triton.autotune(configs=[triton.Config({'BLOCK': 1024}, num_warps=4, num_stages=3)], key=['n'])"
            in made.source)
    with loaded_module(made.source) as (module, _):
        tuner = module.autotuned_copy_kernel
        assert [c.kwargs for c in tuner.configs] == [{"BLOCK": 1024}] and tuner.keys == ["n"]
        assert gluon_function(tuner).is_gluon()


def test_the_port_page_states_what_its_result_files_say():
    """docs/port.md's numbers are the committed results' (GPU: the geomean, worst and best without
    the dot kernel, the matmul and its unpipelined original; CPU: each target's count, both releases)."""
    import re
    from pathlib import Path
    repo = Path(__file__).resolve().parents[4]
    page = " ".join((repo / "docs" / "port.md").read_text().split())
    gpu = (repo / "benchmarks" / "results" / "port_gpu_3.6.0.md").read_text()
    found = re.search(r"without the dot kernels\b.*?geomean port/original ([\d.]+) over (\d+) \(worst ([\d.]+), best ([\d.]+)\)", gpu)
    geomean, count, worst, best = found.groups()
    assert f"geomean {geomean} over the {count} kernels without `tl.dot` (worst {worst}, best {best})" in page
    matmul = re.search(r"\| tutorial_matmul \|[^|]*\|[^|]*\|[^|]*\| ([\d.]+) \|", gpu).group(1)
    unpipelined = re.search(r"tutorial_matmul: the original with num_stages=1 .* runs at ([\d.]+)x", gpu).group(1)
    assert f"runs at {float(matmul):.2f}x the original's time" in page
    assert f"(`num_stages=1`) runs at {float(unpipelined):.2f}x" in page
    aa, spread = re.search(r"\| tutorial_matmul \|(?:[^|]*\|){5} ([\d.]+) \(([\d.]+)\)", gpu).groups()
    assert f"the original timed against itself gives {float(aa):.2f} (spread {float(spread):.2f})" in page
    overall = re.search(r"geomean port/original ([\d.]+) over (\d+) \(worst ([\d.]+)\)", gpu).groups()
    assert "geomean {} over all {} (worst {}".format(*overall) in page
    cpu = (repo / "benchmarks" / "results" / "port_cpu_3.9.0.md").read_text()
    assert "ok per target: sm80 35/35, sm90 35/35, sm100 35/35, gfx942 35/35" in cpu
    cpu = (repo / "benchmarks" / "results" / "port_cpu_3.6.0.md").read_text()
    assert "ok per target: sm80 43/43, sm90 43/43, sm100 41/43, gfx942 43/43" in cpu
    assert "for sm_100 under 3.9 (35 of 35) and 3.6 (41 of 43" in page


def test_a_cached_compile_of_the_same_text_from_another_file_does_not_mislead_the_port(tmp_path, monkeypatch):
    # Triton's cache keys a kernel by its text and first line, not its file: compiled first from a
    # copy, the original's positions would name the copy and the port would miss the store's layout.
    import importlib.util
    from linear_layouts.passes.port.launch import launch_for
    from linear_layouts.passes.port.original import compile_original
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    copy_path = tmp_path / "port_kernels.py"
    copy_path.write_text(open(os.path.join(HERE, "port_kernels.py")).read())
    spec = importlib.util.spec_from_file_location("port_kernels_copy", copy_path)
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    assert copy.row_sum_kernel.cache_key == k.row_sum_kernel.cache_key
    arguments = dict(x_ptr="*fp32", out_ptr="*fp32", n_cols="i32", ROWS=16, COLS=256)
    compile_original(copy.row_sum_kernel, launch_for(copy.row_sum_kernel, "sm90", arguments=arguments))
    made = _ported(k.row_sum_kernel, "sm90", x_ptr="*fp32", out_ptr="*fp32", n_cols="i32", ROWS=16, COLS=256)
    assert made.check.ported_conversions == 2


def test_pipelining_can_be_declined():
    made = _ported(k.matmul_kernel, "sm90", num_warps=4, pipeline=False, **MATMUL)
    assert made.pipelines.loops == [] and "async_copy" not in made.source
    assert "acc = _dot_wgmma(a, b, acc, DOT_" in made.source


@pytest.mark.parametrize("target, stages, ring", [("gfx942", 2, "gl.SharedLinearLayout("),
                                                  ("gfx942", 3, "gl.SharedLinearLayout("),
                                                  ("gfx950", 2, None)])
def test_an_amd_dot_loop_is_pipelined_through_registers_as_triton_pipelines_it(target, stages, ring):
    # Triton's AMD stream pipelining: the tiles of the iterations ahead loaded into registers and
    # stored to a ring of num_stages - 1 slots after the dot (gfx950 copies straight to shared
    # memory; Gluon's asynchronous copy is NVIDIA's, so the port loads through registers there)
    made = _ported(k.matmul_kernel, target, num_warps=4, num_stages=stages, **MATMUL)
    [(_, depth, names)] = made.pipelines.loops
    assert names == ["a", "b"] and f"ttg.local_alloc : () -> !ttg.memdesc<{depth}x128x64xf16" in made.original.ttgir
    # a ring Triton fills through registers is loaded as many iterations ahead as it has tiles;
    # one it copies straight to shared memory (gfx950 under the newer releases), one fewer
    ahead = depth - 1 if "ttg.async_copy_global_to_local" in made.original.ttgir else depth
    assert f"a = a_ring.index((k - k_first) % {depth}).load(DOT_" in made.source
    assert f"a_ahead = gl.load(a_ptrs, mask=(k + {ahead} < k_end), other=0)" in made.source
    assert f"a_ring.index((k - k_first + {ahead}) % {depth}).store(a_ahead)" in made.source
    assert "async_copy" not in made.source and made.check.ported_mma == {"v_mfma"}
    if ring:     # Triton's rotating swizzle for b, written as the linear layout it is
        assert f"B_RING_LAYOUT = gl.constexpr({ring}" in made.source
    assert made.check.ported.loads == [16] * len(made.check.ported.loads)


def test_a_slice_of_a_linear_layout_keeps_the_rows_its_parent_spans():
    # gfx950's b tile is a linear layout whose lanes walk 32 rows: offs_n, a slice of it, is
    # written with a parent of those rows (written with one, every tile built from it held the
    # whole tile in each thread: 512 registers, 3,084 spilled, 512 stores where Triton has 8)
    made = _ported(k.matmul_kernel, "gfx950", num_warps=4, num_stages=2, pipeline=False, **MATMUL)
    assert "shape=[1, 128]" not in made.source
    assert made.check.ported.stores == made.check.original.stores == [16] * 8


def test_the_report_places_the_advice_on_the_ports_lines():
    from linear_layouts.passes.advice.findings import Finding
    from linear_layouts.passes.port.comparison import Priced
    from linear_layouts.tools.port.report import _advice
    finding = Finding("/tmp/ll_port_x.py:42:17", "tt.store", "GLOBAL_ACCESS", "4-byte stores", "gl.BlockedLayout([4], [32], [4], [0])", 1.25)
    rows = [Priced("the port", True, findings=[finding])]
    assert _advice(rows) == ["  port line 42: GLOBAL_ACCESS: 4-byte stores; instead: gl.BlockedLayout([4], [32], [4], [0]) "
                             "(the kernel's modelled cost 1.25x lower)"]
    assert _advice([Priced("the port", True, advice_problem="no layout rule for tt.foo")]) == [
        "  the advice could not read the port: no layout rule for tt.foo"]


def test_a_variable_converted_at_every_read_is_converted_where_assigned_or_above_the_loop():
    from types import SimpleNamespace

    from linear_layouts.passes.port.converted_names import assigned_conversions
    from linear_layouts.passes.port.translation import translate
    t = translate(k.row_scores_kernel)
    text = t.source
    reads = {}
    for node in __import__("ast").walk(text.tree):
        if getattr(node, "id", None) in ("p_k", "m_i") and type(node.ctx).__name__ == "Load":
            reads.setdefault(node.id, []).append((text.start(node), text.end(node)))
    loop_line = next(n for n in __import__("ast").walk(text.tree) if type(n).__name__ == "For").lineno + text.first_line - 1
    inside = [r for r in reads["m_i"] if r[0][0] < loop_line + 5]
    converted = [(t, *r) for r in reads["p_k"] + inside]
    trial = SimpleNamespace(conversions=[SimpleNamespace(span=span, encoding="L", shape=(128,), why="the load's layout")
                                         for span in converted])
    moves = assigned_conversions([t], None, trial, lambda placement, span: span)
    kinds = {(text.lines[start[0] - text.first_line][start[1]:end[1]], why[0]) for _, start, end, _, _, why in moves}
    # p_k (assigned once, then only advanced) converted where assigned; m_i (read after the loop
    # in another layout) converted once above the loop
    assert kinds == {("k_ptr + o_k", "assigned"), ("m_i", "hoisted")}
    assert next(why for *_, why in moves if why[0] == "hoisted")[2] == loop_line


def test_the_loop_reads_a_converted_mask_made_above_it():
    made = _ported(k.row_scores_kernel, "sm90", q_ptr="*fp16", k_ptr="*fp16", out_ptr="*fp32", n="i32", K=128, BC=16)
    assert re.search(r"\n    m_i_converted = gl.convert_layout\(m_i, \w+\)  # once, above the loop that reads it\n"
                     r"    for j in range\(0, n\):\n", made.source), made.source
    assert "mask=m_i_converted)" in made.source


def test_a_dot_operand_the_loop_does_not_change_is_converted_once_above_it():
    made = _ported(k.attention_kernel, "sm80", num_warps=4, **ATTENTION)
    assert re.search(r"\n    q_operand = gl.convert_layout\(q, (DOT_\d+_A_OPERAND)\)  # the loop does not change it: "
                     r"converted once\n(?:.*\n)*?    for .*\n(?:.*\n)*?        qk = _dot_mma_v2\(q_operand, k, None, \1, ",
                     made.source), made.source


def test_rings_of_two_depths_are_filled_as_far_ahead_as_the_deeper_allows():
    # Triton keeps 3 tiles of a (the wgmma reads them in place) and 2 of b_raw (read into
    # registers, scaled): b_raw's tile is read at the top of the iteration, then the copy two
    # iterations ahead lands in the slot it came from
    made = _ported(k.matmul_scaled_b_kernel, "sm90", num_warps=4, **MATMUL)
    assert list(made.pipelines.described.values()) == [
        "3 tiles of a and 2 tiles of b_raw in shared memory, copied 2 iterations ahead"]
    assert "        b_raw = b_raw_ring.index((k - k_first) % 2).load(" in made.source
    assert "_load_ahead(b_raw_ring.index((k - k_first + 2) % 2), k + 2 < k_end, b_ptrs, None)" in made.source


def test_offsets_a_loop_does_not_change_are_converted_above_it_not_the_pointers_they_build():
    # out_ptr + o_i * n + j in the loop: o_i (16 i32) converted once above the loop, the store's
    # pointers built from it, where the loop converted a tile of pointers each iteration
    made = _ported(k.row_scores_kernel, "sm90", q_ptr="*fp16", k_ptr="*fp16", out_ptr="*fp32", n="i32", K=128, BC=16)
    assert re.search(r"\n    o_i_converted = gl.convert_layout\(o_i, \w+\)  # once, above the loop that reads it\n",
                     made.source), made.source
    assert "gl.store(out_ptr + o_i_converted * n + j, " in made.source
