"""Unit tests of the IR layer (passes/ir/types.py, parsing.py, snapshot.py) on Triton's bindings."""

from __future__ import annotations

import pytest

from linear_layouts.passes.ir.diagnostics import IRError
from linear_layouts.passes.framework import run_pipeline
from linear_layouts.passes.pipeline import parse_pipeline
from linear_layouts.passes.ir.snapshot import parse_module
from linear_layouts.passes.ir.types import TensorType, parse_tensor_type, split_top_level
from support.nested_module import nested_convert_module

LOOP = """
#blocked = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @loop(%n: i32, %p: !tt.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %init = arith.constant dense<0.000000e+00> : tensor<128xf32, #blocked>
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<128xf32, #blocked>) : i32 {
      %next = arith.addf %acc, %acc : tensor<128xf32, #blocked>
      scf.yield %next : tensor<128xf32, #blocked>
    }
    tt.return
  }
}
"""

BLOCKED = "#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"


# --------------------------------------------------------------------------- types

def test_parse_tensor_type():
    t = parse_tensor_type(f"tensor<64x32x!tt.ptr<f16>, {BLOCKED}>")
    assert t == TensorType("tensor", (64, 32), "!tt.ptr<f16>", BLOCKED, f"tensor<64x32x!tt.ptr<f16>, {BLOCKED}>")
    assert t.element.logical_bits == 64 and not t.is_shared


def test_parse_memdesc_type():
    t = parse_tensor_type("!ttg.memdesc<2x64x32xf16, #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, "
                          "order = [1, 0]}>, #ttg.shared_memory, mutable>")
    assert t.kind == "memdesc" and t.shape == (2, 64, 32) and t.element_type == "f16" and t.is_shared
    assert t.encoding.startswith("#ttg.swizzled_shared<")
    assert t.alloc_shape == (2, 64, 32) and t.mutable


def test_parse_memdesc_view_type_with_its_allocation_shape():
    t = parse_tensor_type("!ttg.memdesc<32x8xf64, #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, "
                          "order = [1, 0]}>, #ttg.shared_memory, mutable, 32x16>")
    assert t.shape == (32, 8) and t.alloc_shape == (32, 16) and t.mutable
    immutable = parse_tensor_type("!ttg.memdesc<64x64xf16, #shared, #smem>")
    assert immutable.alloc_shape == (64, 64) and not immutable.mutable
    assert parse_tensor_type("tensor<4x4xf32, #blocked>").alloc_shape == ()


def test_non_tensor_types_are_none():
    assert parse_tensor_type("i32") is None and parse_tensor_type("!tt.ptr<f32>") is None


def test_tensor_without_encoding():
    assert parse_tensor_type("tensor<128xi32>").encoding is None


@pytest.mark.parametrize("element,bits", [("i1", 1), ("i8", 8), ("f16", 16), ("bf16", 16), ("f32", 32),
                                          ("f64", 64), ("i64", 64), ("f8E4M3FN", 8), ("f8E5M2", 8),
                                          ("!tt.ptr<f32>", 64)])
def test_element_bits(element, bits):
    assert parse_tensor_type(f"tensor<4x{element}>").element.logical_bits == bits


def test_unknown_element_type_is_an_ir_error():
    with pytest.raises(IRError, match="unknown element type 'complex<f32>' in tensor<4xcomplex<f32>>"):
        parse_tensor_type("tensor<4xcomplex<f32>>").element


def test_split_top_level_ignores_nested_commas_and_arrows():
    assert split_top_level("64x64xf32, #ttg.slice<{dim = 1, parent = #b}>, x") == \
        ["64x64xf32", "#ttg.slice<{dim = 1, parent = #b}>", "x"]
    assert split_top_level("a -> b, c") == ["a -> b", "c"]


# --------------------------------------------------------------------------- parsing and walking

def test_walk_gives_ops_in_text_order_with_regions_and_block_arguments():
    module = parse_module(LOOP, "loop.mlir")
    names = [op.name for op in module.walk()]
    assert names == ["builtin.module", "tt.func", "arith.constant", "arith.constant", "arith.constant", "scf.for",
                     "arith.addf", "scf.yield", "tt.return"]
    loop = module.ops_named("scf.for")[0]
    assert [a.type for a in loop.block_arguments] == ["i32", f"tensor<128xf32, {BLOCKED}>"]
    assert loop.results[0].tensor_type.shape == (128,)
    add = module.ops_named("arith.addf")[0]
    assert add.parent_op is loop
    assert add.operands[0] is loop.block_arguments[1] and add.operands[0].is_block_argument
    assert module.ops_named("scf.yield")[0].operands[0].defining_op is add
    func = module.ops_named("tt.func")[0]
    assert func.symbol == "loop" and [a.type for a in func.block_arguments] == ["i32", "!tt.ptr<f32>"]


@pytest.mark.parametrize("depth", [1000, 3000])
def test_ops_nested_thousands_deep_are_walked_and_classified(depth):
    """A recursive walk ended in a RecursionError from about 1,000 nested scf.if on; Triton's
    parser takes them (safe=False: the test need not parse twice)."""
    module = parse_module(nested_convert_module(depth), "deep.mlir", safe=False)
    names = [op.name for op in module.walk()]
    assert names[:3 + depth + 1] == ["builtin.module", "tt.func", "arith.constant"] + ["scf.if"] * depth + [
        "ttg.convert_layout"]
    run_pipeline(module, parse_pipeline("ll-classify-conversions"))
    assert 'ttg.convert_layout %cst {ll.scope = "warp"}' in module.print()


def test_locations_point_at_the_users_file_and_lines():
    module = parse_module(LOOP, "loop.mlir", first_line=10)
    assert module.ops_named("scf.for")[0].location == "loop.mlir:17:12"
    assert module.ops_named("tt.func")[0].location == "loop.mlir:13:3"


def test_module_attributes():
    module = parse_module(LOOP, "loop.mlir")
    assert (module.target, module.num_warps, module.threads_per_warp) == ("cuda:80", 1, 32)


def test_aliases_and_short_types():
    module = parse_module(LOOP, "loop.mlir")
    assert module.aliases() == {"#blocked": BLOCKED}
    assert module.short_type(f"tensor<128xf32, {BLOCKED}>") == "tensor<128xf32, #blocked>"


@pytest.mark.parametrize("text,message", [
    ("module {\n  tt.func @f() {\n    %0 = arith.addf %x, %x : f32\n  }\n}\n", "m.mlir:3:21: error: use of undeclared SSA value name"),
    ("garbage", "m.mlir:1:1: error:"),
    ("module {\n  tt.func @f() {\n    tt.frob\n  }\n}\n", "m.mlir:3:5: error: custom op 'tt.frob' is unknown"),
])
def test_parse_errors_carry_tritons_diagnostic_with_the_users_location(text, message):
    with pytest.raises(IRError) as error:
        parse_module(text, "m.mlir")
    assert message in str(error.value)


# --------------------------------------------------------------------------- edits

def test_set_attribute_and_print_without_markers():
    module = parse_module(LOOP, "loop.mlir")
    add = module.ops_named("arith.addf")[0]
    module.set_attribute(add, "ll.note", '"hello"')
    module.set_attribute(module.ops_named("tt.func")[0], "ll.fn", "unit")
    text = module.print()
    assert 'arith.addf %arg3, %arg3 {ll.note = "hello"}' in text
    assert "attributes {ll.fn}" in text
    assert "ll.op_id" not in text and "ll.op_id" not in module.print(debuginfo=True)


def test_attributes_merge_with_existing_ones_and_survive_a_commit():
    module = parse_module(LOOP, "loop.mlir")
    module.set_attribute(module.ops_named("scf.for")[0], "ll.a", "1 : i32")
    module.commit()
    module.set_attribute(module.ops_named("scf.for")[0], "ll.b", "2 : i32")
    assert "} {ll.a = 1 : i32, ll.b = 2 : i32}" in module.print()


def test_setting_an_attribute_an_op_has_replaces_it():
    """MLIR refuses a dictionary with a key twice ("duplicate key"): passes that run again on
    their own output must replace what they set."""
    text = LOOP.replace("%next = arith.addf %acc, %acc :",
                        '%next = arith.addf %acc, %acc {ll.a = "old, {one}", ll.z = array<i32: 1, 2>} :')
    module = parse_module(text, "loop.mlir")
    module.set_attribute(module.ops_named("arith.addf")[0], "ll.a", '"new"')
    module.commit()
    module.set_attribute(module.ops_named("arith.addf")[0], "ll.z", "array<i32: 3>")
    assert 'arith.addf %arg3, %arg3 {ll.a = "new", ll.z = array<i32: 3>} :' in module.print()


def test_setting_an_attribute_a_function_has_replaces_it():
    text = LOOP.replace("tt.func public @loop(%n: i32, %p: !tt.ptr<f32>) {",
                        "tt.func public @loop(%n: i32, %p: !tt.ptr<f32>) attributes {ll.fn = [1, 2], noinline = false} {")
    module = parse_module(text, "loop.mlir")
    module.set_attribute(module.ops_named("tt.func")[0], "ll.fn", "[3]")
    assert "attributes {ll.fn = [3], noinline = false} {" in module.print()


def test_classify_conversions_twice_is_classify_conversions_once():
    text = LOOP.replace("%next = arith.addf %acc, %acc : tensor<128xf32, #blocked>",
                        "%next = arith.addf %acc, %acc : tensor<128xf32, #blocked>\n"
                        "      %moved = ttg.convert_layout %next : tensor<128xf32, #blocked> -> tensor<128xf32, "
                        "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>>")
    once, twice = parse_module(text, "c.mlir"), parse_module(text, "c.mlir")
    run_pipeline(once, parse_pipeline("ll-attach-layouts,ll-classify-conversions"))
    run_pipeline(twice, parse_pipeline("ll-attach-layouts,ll-classify-conversions,ll-attach-layouts,"
                                       "ll-classify-conversions"))
    assert once.print() == twice.print() and once.print().count("ll.scope") == 1


@pytest.mark.parametrize("text, pending, expected", [
    # the four places a marker sits, each with an older value of the attribute set beside it
    ('%0 = op %a {ll.a = 1 : i32, ll.op_id = 7 : i32} : f32', {"ll.a": "2 : i32"}, '%0 = op %a {ll.a = 2 : i32} : f32'),
    ('%0 = op %a {ll.op_id = 7 : i32, ll.z = 1 : i32} : f32', {"ll.z": "2 : i32"}, '%0 = op %a {ll.z = 2 : i32} : f32'),
    ('} attributes {ll.op_id = 7 : i32}', {"ll.a": "unit"}, '} attributes {ll.a = unit}'),
    ('%0 = op {ll.op_id = 7 : i32} : f32', {}, '%0 = op : f32'),
    # values with commas, braces, brackets, strings and arrows are kept whole
    ('%0 = op {a = "x, {\\22}", b = (i32) -> i32, ll.b = [1, {c = 2}], ll.op_id = 7 : i32, z = array<i32: 1, 2>} : f32',
     {"ll.b": "3"}, '%0 = op {a = "x, {\\22}", b = (i32) -> i32, ll.b = 3, z = array<i32: 1, 2>} : f32'),
    # a unit attribute (just its name) replaced
    ('%0 = op {ll.u, ll.op_id = 7 : i32} : f32', {"ll.u": "1 : i32"}, '%0 = op {ll.u = 1 : i32} : f32'),
])
def test_replace_markers_replaces_attributes_of_the_same_name(text, pending, expected):
    from linear_layouts.passes.ir.text_edits import replace_markers
    assert replace_markers(text, {7: pending} if pending else {}) == expected


def test_an_invalid_attribute_is_reported_not_crashed_on():
    module = parse_module(LOOP, "loop.mlir")
    module.set_attribute(module.ops_named("arith.addf")[0], "ll.bad", "#ttg.blocked<{nonsense}>")
    with pytest.raises(IRError):
        module.commit()


def test_ops_without_results_other_than_functions_cannot_take_attributes():
    module = parse_module(LOOP, "loop.mlir")
    with pytest.raises(IRError, match="cannot set attribute 'll.x' on tt.return"):
        module.set_attribute(module.ops_named("tt.return")[0], "ll.x", "unit")


def test_replace_all_uses_with_then_canonicalize_erases_dead_ops():
    module = parse_module(LOOP, "loop.mlir")
    add = module.ops_named("arith.addf")[0]
    loop = module.ops_named("scf.for")[0]
    module.replace_all_uses_with(add.results[0], loop.block_arguments[1])
    module.canonicalize()
    # the loop now yields its own argument: canonicalization removes the whole loop
    assert module.ops_named("arith.addf") == [] and module.ops_named("scf.for") == []


def test_cse_merges_identical_constants():
    text = LOOP.replace("%c1 = arith.constant 1 : i32", "%c1 = arith.constant 1 : i32\n    %c1b = arith.constant 1 : i32")
    module = parse_module(text, "loop.mlir")
    assert len(module.ops_named("arith.constant")) == 4
    module.cse()
    assert len(module.ops_named("arith.constant")) == 3


def test_rewrite_text_reparses_and_rebuilds():
    module = parse_module(LOOP, "loop.mlir")
    module.rewrite_text(lambda text: text.replace("arith.addf", "arith.mulf"))
    assert [op.name for op in module.walk()].count("arith.mulf") == 1


def test_an_abort_inside_tritons_parser_does_not_kill_us():
    # A #ttg.linear that misses half the elements: Triton's parser hits an LLVM fatal error.
    text = ('module attributes {"ttg.num-warps" = 1 : i32, "ttg.threads-per-warp" = 32 : i32} {\n'
            '  tt.func public @f(%x: tensor<64xf32, #ttg.linear<{register = [[64]], lane = [[1], [2], [4], [8], '
            '[16]], warp = [], block = []}>>) {\n    tt.return\n  }\n}\n')
    with pytest.raises(IRError) as error:
        parse_module(text, "abort.mlir")
    assert str(error.value).startswith("abort.mlir:1:1: error: Triton aborted while parsing the module")
    assert "surjective" in str(error.value)


def test_layouts_are_read_through_the_dialect():
    module = parse_module(LOOP, "loop.mlir")
    value = module.ops_named("arith.addf")[0].results[0]
    attribute = value.tensor_type.encoding_attribute()
    assert type(attribute).__name__ == "BlockedEncoding" and attribute.rank == 1
    assert parse_tensor_type("tensor<4xi32>").encoding_attribute() is None
