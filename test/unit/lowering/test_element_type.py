"""One ElementType for every layer: logical bits (what a plan moves) and storage bits (what
Triton keeps in registers' words and shared memory) differ for i1 only."""

import pytest

from linear_layouts.lowering.element_type import ElementType, UnknownElementType, storage_bits_of
from linear_layouts.lowering.planner import element_bits_of
from linear_layouts.passes.ir.types import parse_tensor_type


@pytest.mark.parametrize("ttgir, logical, storage, llvm", [
    ("i1", 1, 8, "i1"), ("i8", 8, 8, "i8"), ("i16", 16, 16, "i16"), ("i32", 32, 32, "i32"), ("i64", 64, 64, "i64"),
    ("f16", 16, 16, "f16"), ("bf16", 16, 16, "bf16"), ("f32", 32, 32, "f32"), ("f64", 64, 64, "f64"),
    ("f8E4M3FN", 8, 8, "i8"), ("f8E5M2", 8, 8, "i8"), ("!tt.ptr<f32>", 64, 64, "!llvm.ptr<1>"),
    ("!tt.ptr<f16, 3>", 64, 64, "!llvm.ptr<3>"), ("tf32", 32, 32, None), ("index", 64, 64, None),
    ("f4E2M1FN", 4, 4, None),
])
def test_widths_and_struct_types(ttgir, logical, storage, llvm):
    element = ElementType.of(ttgir)
    assert (element.logical_bits, element.storage_bits, element.llvm) == (logical, storage, llvm)
    assert element.int_type == f"i{storage}"


@pytest.mark.parametrize("ttgir", ["i1", "i8", "f16", "bf16", "f32", "i64", "f8E5M2", "!tt.ptr<f32>"])
def test_every_layer_reads_the_same_widths(ttgir):
    element = ElementType.of(ttgir)
    # the IR layer's tensor types, the planner's element widths and the shared-memory storage rule
    assert parse_tensor_type(f"tensor<16x{ttgir}>").element == element
    assert element_bits_of(ttgir) == element.logical_bits
    assert storage_bits_of(element.logical_bits) == element.storage_bits


def test_unknown_text_is_named():
    with pytest.raises(UnknownElementType, match="unknown element type 'complex<f32>'"):
        ElementType.of("complex<f32>")
