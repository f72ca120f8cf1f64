"""The drop-in's cheap path (passes.drop_in.hook): a read-only snapshot of Triton's own module
(``snapshot_of``), islands spliced by their op's position in Triton's print of it
(``island_splicing.OpPositions``), and kernels with nothing for us told by their op names.

What must hold: the module Triton handed us is never changed (a fallback compiles it as it was),
the spliced text is the same as the marker-based path's on the same kernel, and a print that is
not the walked module's is refused, never spliced at the wrong op."""

import glob
import os

import pytest

triton = pytest.importorskip("triton")

from linear_layouts.lowering.emit.emit_llvm import Island  # noqa: E402
from linear_layouts.passes.drop_in import hook, stage_wrappers# noqa: E402
from linear_layouts.passes.framework import PassFailure, run_pipeline  # noqa: E402
from linear_layouts.passes.ir.bindings import bindings, new_context  # noqa: E402
from linear_layouts.passes.ir.diagnostics import IRError  # noqa: E402
from linear_layouts.passes.ir.snapshot import parse_module, snapshot_of  # noqa: E402
from linear_layouts.passes.islands.island_splicing import OpPositions, splice_islands  # noqa: E402
from linear_layouts.passes.lower_conversions import LowerConversions  # noqa: E402

from support import REPO  # noqa: E402

CORPUS = REPO / "test" / "lit" / "corpus" / "liger_kernel"
# Kernels with several conversions (rope: 4, neighborhood attention: 6) and one with none.
WITH_CONVERTS = ["rope_fwd_bf16.cuda90.ttgir", "neighborhood_attention_qk_bf16_64.cuda90.ttgir"]
WITHOUT = "element_mul_bf16_4096.cuda90.ttgir"


def triton_module(name: str):
    """A corpus file as Triton's parser gives it (the module a compile's llir stage gets)."""
    context = new_context()
    module = bindings().parse_mlir_module(str(CORPUS / name), context)
    module.context = context
    return module


@pytest.mark.parametrize("name", WITH_CONVERTS)
def test_the_given_module_is_left_as_it_was(name):
    module = triton_module(name)
    before = module.str()
    snapshot = snapshot_of(module, before, "<k>")
    run_pipeline(snapshot, [LowerConversions(target="sm_90")])
    assert snapshot.has_rewrites and "ttg.convert_layout" in before
    assert module.str() == before          # no marker, no attribute, no op changed


@pytest.mark.parametrize("name", WITH_CONVERTS)
def test_same_text_as_the_marked_copy(name):
    """The read-only path and the copy with markers (parse_module, as ll-opt runs) splice the
    same islands at the same ops: the texts they hand Triton are equal."""
    module = triton_module(name)
    text = module.str()
    read_only = snapshot_of(module, text, "<k>")
    run_pipeline(read_only, [LowerConversions(target="sm_90")])
    marked = parse_module(text, filename="<k>", safe=False, printed=True)
    run_pipeline(marked, [LowerConversions(target="sm_90")])
    assert read_only.text_for_triton() == marked.text_for_triton()
    assert read_only.text_for_triton().count("= ttg.convert_layout") < text.count("= ttg.convert_layout")


def test_edits_of_the_given_module_are_refused():
    module = triton_module(WITH_CONVERTS[0])
    snapshot = snapshot_of(module, module.str(), "<k>")
    convert = next(op for op in snapshot.walk() if op.name == "ttg.convert_layout")
    with pytest.raises(IRError, match="read-only snapshot"):
        snapshot.set_attribute(convert, "ll.note", '"x"')


TEXT = """\
  %3 = ttg.convert_layout %2 : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(#loc1)
  %4 = ttg.convert_layout %3 {x = 1 : i32} : tensor<4xf32, #b> -> tensor<4xf32, #c> loc(#loc2)
  ttg.local_store %4, %m : tensor<4xf32, #c> -> !ttg.memdesc<4xf32, #s, #smem, mutable> loc(#loc3)
"""


def island(body: str) -> Island:
    return Island(text=body)


def test_splices_the_op_at_its_position():
    islands = {7: island("%RESULT = ours %SOURCE : @SRC_TYPE@ -> @DST_TYPE@"), 9: island("mine %SOURCE %BUFFER")}
    positions = OpPositions(islands={("ttg.convert_layout", 1): 7, ("ttg.local_store", 0): 9},
                            totals={"ttg.convert_layout": 2, "ttg.local_store": 1})
    assert splice_islands(TEXT, islands, positions=positions) == (
        "  %3 = ttg.convert_layout %2 : tensor<4xf32, #a> -> tensor<4xf32, #b> loc(#loc1)\n"
        "  %4 = ours %3 : tensor<4xf32, #b> -> tensor<4xf32, #c> loc(#loc2)\n"
        "  mine %4 %m loc(#loc3)\n")


def test_a_print_that_is_not_the_walked_module_is_refused():
    positions = OpPositions(islands={("ttg.convert_layout", 0): 0}, totals={"ttg.convert_layout": 3})
    with pytest.raises(PassFailure, match="2 ttg.convert_layout ops, its walk 3"):
        splice_islands(TEXT, {0: island("%RESULT = x")}, positions=positions)


def test_nothing_to_do_is_told_by_op_names():
    config = hook.PluginConfig(hook.Mode.LINEAR, (LowerConversions(),))
    assert stage_wrappers.has_work_for(config, stage_wrappers.op_names(triton_module(WITH_CONVERTS[0])))
    names = stage_wrappers.op_names(triton_module(WITHOUT))
    assert "tt.func" in names and not stage_wrappers.has_work_for(config, names)


def test_every_corpus_kernel_with_converts_is_named_by_its_ops():
    checked = 0
    for path in sorted(glob.glob(str(CORPUS / "*.ttgir"))):
        try:
            module = triton_module(os.path.basename(path))
        except RuntimeError:      # ops newer than this Triton (3.6 parses 99 of the 120)
            continue
        names = stage_wrappers.op_names(module)
        assert names.count("ttg.convert_layout") == open(path).read().count("= ttg.convert_layout")
        checked += 1
    assert checked >= 99
