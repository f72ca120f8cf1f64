"""The advice never suggests a layout the backend would reject for an op laid out alike: a
layout shared with AMD's ``amdg.buffer_load_to_local`` (Gluon's
``cdna4.async_copy.buffer_load_to_shared``, a direct-to-LDS load) is checked against the
direct-to-LDS requirements as one shared with ``ttg.async_copy_global_to_local`` is
(``passes/assign/backend_requirements.py``; ``DIRECT_TO_SHARED_OPS`` of ``layout_rules.py``).

The kernel, for gfx942: a 64 x 64 f16 tile staged with ``buffer_load_to_shared`` in
``[1, 2]`` (4 bytes a lane, the only width gfx942's direct-to-LDS loads have), stored back, and
15 tiles zeroed by stores in that same layout.  The stores alone would gain from 16-byte
vectors (``[1, 8]``); laid out so, the staging load would load 16 bytes a lane, which Triton's
AMD lowering rejects on gfx942.  Before, the advice suggested ``[1, 8]`` for the layout and
``ll-apply-advice`` gave it to the staging load too."""

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")

from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402
from triton.experimental.gluon.language.amd.cdna4 import async_copy as cp  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

from linear_layouts.passes.advice.advice_edits import _breaking_requirements  # noqa: E402
from linear_layouts.passes.advice.apply_advice import apply_advice  # noqa: E402
from linear_layouts.passes.advice.layout_advice import GLOBAL_ACCESS, advise  # noqa: E402
from linear_layouts.passes.assign.backend_requirements import layout_problem, requirement_facts  # noqa: E402
from linear_layouts.passes.assign.pointer_contiguity import PointerAnalysis  # noqa: E402
from linear_layouts.passes.ir.module_lines import ModuleLines  # noqa: E402
from linear_layouts.passes.ir.snapshot import parse_module  # noqa: E402

GFX942 = GPUTarget("hip", "gfx942", 64)
TWO = "gl.BlockedLayout([1, 2], [2, 32], [4, 1], [1, 0])"
EIGHT = "gl.BlockedLayout([1, 8], [8, 8], [4, 1], [1, 0])"


@gluon.jit
def staged_and_zeroed(src, dst, M: gl.constexpr, N: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([1, 2], [2, 32], [4, 1], [1, 0])
    r = gl.arange(0, M, layout=gl.SliceLayout(1, L))[:, None]
    c = gl.arange(0, N, layout=gl.SliceLayout(0, L))[None, :]
    offsets = r * N + c
    smem = gl.allocate_shared_memory(src.dtype.element_ty, [M, N], gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    cp.buffer_load_to_shared(smem, src, offsets)
    cp.commit_group()
    cp.wait_group(0)
    gl.store(dst + offsets, smem.load(L))
    for t in range(1, 16):
        gl.store(dst + t * M * N + offsets, gl.zeros([M, N], gl.float16, L))


@pytest.fixture(scope="module")
def ttgir(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:       # a private cache; Triton 3.9's default fusion, said
        patch.setenv("TRITON_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        patch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
        aligned = {(i,): [["tt.divisibility", 16]] for i in range(2)}
        compiled = triton.compile(GluonASTSource(staged_and_zeroed, {"src": "*fp16", "dst": "*fp16"},
                                                 {"M": 64, "N": 64}, attrs=aligned), target=GFX942)
    return compiled.asm["ttgir"]


def _staging_problem(module):
    """What gfx942 would say of the staging load's layout in ``module`` (None: nothing)."""
    lines = ModuleLines(module, module.print(debuginfo=True))
    (function,) = module.ops_named("tt.func")
    pointers = PointerAnalysis.of_function(lines, function)
    (copy,) = module.ops_named("amdg.buffer_load_to_local")
    return layout_problem(copy.operands[2].tensor_type.encoding, requirement_facts(copy, pointers))


def test_the_suggestion_for_a_store_sharing_the_layout_is_for_the_store_alone(ttgir):
    (finding,) = [f for f in advise(ttgir, "gfx942") if f.kind == GLOBAL_ACCESS]
    assert finding.op == "tt.store" and finding.suggestion.startswith(EIGHT + " for this tt.store alone (")
    assert finding.suggestion.endswith(
        f"keeps {TWO}: in the suggestion it would be rejected (the direct-to-LDS load "
        "(amdg.buffer_load_to_local on gfx942) would load 16 bytes a lane (gfx942 has 4)))")
    assert "the amdg.buffer_load_to_local at " in finding.suggestion


def test_the_advice_applied_leaves_the_staging_load_a_width_gfx942_has(ttgir):
    module = parse_module(ttgir, "<kernel>")
    assert _staging_problem(module) is None
    (copy,) = module.ops_named("amdg.buffer_load_to_local")
    laid_out = copy.operands[2].tensor_type.encoding
    eight = laid_out.replace("sizePerThread = [1, 2], threadsPerWarp = [2, 32]",
                             "sizePerThread = [1, 8], threadsPerWarp = [8, 8]")
    lines = ModuleLines(module, module.print(debuginfo=True))
    assert _breaking_requirements({laid_out: eight}, module, lines) == [laid_out]
    apply_advice(module, "gfx942")
    assert _staging_problem(module) is None
