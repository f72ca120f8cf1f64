"""Unit tests of the pass framework (passes/framework.py) and pipeline strings."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from linear_layouts.passes.ir.diagnostics import IRError
from linear_layouts.passes.framework import ModulePass, PassContext, PassFailure, run_pipeline
from linear_layouts.passes.pipeline import PipelineError, parse_pipeline, pipeline_text
from linear_layouts.passes.registry import register_pass, registered_passes
from linear_layouts.passes.ir.snapshot import parse_module

TRANSPOSE = """
#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @transpose(%x: tensor<32x32xf32, #blocked>) -> tensor<32x32xf32, #blocked1> {
    %0 = ttg.convert_layout %x : tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
    tt.return %0 : tensor<32x32xf32, #blocked1>
  }
}
"""


# --------------------------------------------------------------------------- registry

def test_the_project_passes_are_registered_with_kebab_case_names_and_descriptions():
    passes = registered_passes()
    assert {"ll-attach-layouts", "ll-classify-conversions", "ll-merge-equivalent-layouts"} <= set(passes)
    for name, cls in passes.items():
        assert name == cls.name and name == name.lower() and " " not in name
        assert cls.description and "\n" not in cls.description
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen


def test_passes_are_frozen_dataclasses_whose_fields_are_options():
    cls = registered_passes()["ll-classify-conversions"]
    p = cls(report=True)
    assert p.report is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.report = False
    assert [f.name for f in cls.options()] == ["report"]


def test_register_pass_rejects_names_that_are_not_kebab_case():
    with pytest.raises(ValueError, match="kebab-case"):
        @register_pass
        @dataclass(frozen=True)
        class Bad(ModulePass):
            name = "Bad Name"


# --------------------------------------------------------------------------- pipeline strings

def test_parse_pipeline_with_options():
    pipeline = parse_pipeline("ll-attach-layouts,ll-classify-conversions{report=true}")
    assert [p.name for p in pipeline] == ["ll-attach-layouts", "ll-classify-conversions"]
    assert pipeline[1].report is True


@pytest.mark.parametrize("text", ["", "  ", "builtin.module()"])
def test_empty_pipelines(text):
    assert parse_pipeline(text) == []


def test_builtin_module_wrapper_and_spaces():
    pipeline = parse_pipeline(" builtin.module( ll-attach-layouts , ll-classify-conversions{ report=false } ) ")
    assert [p.name for p in pipeline] == ["ll-attach-layouts", "ll-classify-conversions"]
    assert pipeline[1].report is False


@pytest.mark.parametrize("value,expected", [("true", True), ("1", True), ("on", True),
                                            ("false", False), ("0", False), ("off", False)])
def test_boolean_option_spellings(value, expected):
    assert parse_pipeline(f"ll-classify-conversions{{report={value}}}")[0].report is expected


def test_bare_flag_means_true():
    assert parse_pipeline("ll-classify-conversions{report}")[0].report is True


def test_pipeline_text_round_trips():
    text = "ll-merge-equivalent-layouts{report=true},ll-attach-layouts,ll-classify-conversions"
    assert pipeline_text(parse_pipeline(text)) == text


@pytest.mark.parametrize("text,message", [
    ("ll-nope", "unknown pass 'll-nope' (known passes: ll-apply-advice, ll-assign-layouts, ll-attach-layouts"),
    ("ll-classify-conversions{verbose=1}", "has no option 'verbose' (its options: report)"),
    ("ll-attach-layouts{x=1}", "has no option 'x' (its options: none)"),
    ("ll-classify-conversions{report=maybe}", "expects true or false, got 'maybe'"),
    ("ll-classify-conversions{report=true", "unclosed brace"),
    ("ll-attach-layouts}", "unbalanced '}' at column 18"),
    ("ll-attach-layouts,,ll-classify-conversions", "empty pass name"),
    ("ll-attach-layouts,", "empty pass name"),
    ("ll-classify-conversions{report=true}x", "must end with '}'"),
])
def test_pipeline_errors_say_what_is_wrong(text, message):
    with pytest.raises(PipelineError) as error:
        parse_pipeline(text)
    assert message in str(error.value)


def test_integer_options_are_converted_and_checked():
    @dataclass(frozen=True)
    class Counting(ModulePass):
        name = "ll-test-counting"
        description = "test pass with an integer option"
        times: int = 1

    register_pass(Counting)
    assert parse_pipeline("ll-test-counting{times=3}")[0].times == 3
    with pytest.raises(PipelineError, match="expects an integer, got 'three'"):
        parse_pipeline("ll-test-counting{times=three}")


# --------------------------------------------------------------------------- running

@register_pass
@dataclass(frozen=True)
class _FailOnConvert(ModulePass):
    name = "ll-test-fail-on-convert"
    description = "test pass that fails on the first ttg.convert_layout"

    def apply(self, module, context):
        for op in module.walk():
            if op.name == "ttg.convert_layout":
                raise PassFailure(op, "refusing this conversion")


def test_a_failing_pass_reports_the_op_location_and_stops_the_pipeline():
    module = parse_module(TRANSPOSE, "t.mlir")
    ran = []
    context = PassContext(after_pass=lambda p, m: ran.append(p.name))
    with pytest.raises(IRError) as error:
        run_pipeline(module, parse_pipeline("ll-attach-layouts,ll-test-fail-on-convert,ll-classify-conversions"), context)
    assert str(error.value) == ("t.mlir:6:10: error: [ll-test-fail-on-convert] (ttg.convert_layout) "
                                "refusing this conversion")
    assert ran == ["ll-attach-layouts"]


def test_passes_run_in_order_and_the_dump_hook_sees_each_result():
    module = parse_module(TRANSPOSE, "t.mlir")
    dumps = []
    context = PassContext(after_pass=lambda p, m: dumps.append((p.name, m.print())))
    run_pipeline(module, parse_pipeline("ll-attach-layouts,ll-classify-conversions"), context)
    assert [name for name, _ in dumps] == ["ll-attach-layouts", "ll-classify-conversions"]
    assert "ll.layout" in dumps[0][1] and "ll.scope" not in dumps[0][1]
    assert 'll.scope = "warp"' in dumps[1][1]


def test_report_lines_go_to_the_context_stream(capsys):
    import io
    stream = io.StringIO()
    module = parse_module(TRANSPOSE, "t.mlir")
    run_pipeline(module, parse_pipeline("ll-classify-conversions{report=true}"), PassContext(report_stream=stream))
    assert stream.getvalue() == ("t.mlir:6:10: tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>: "
                                 "scope=warp bits=32\n")


def test_attach_layouts_remarks_on_a_value_it_cannot_translate(monkeypatch):
    # One tensor whose layout cannot be translated gets a remark and `unit`, never a failed file.
    import io

    from linear_layouts.passes import attach_layouts
    from linear_layouts.passes.framework import PassFailure
    real = attach_layouts.layout_attribute

    def fail_on_results_of_convert(value, op):
        if op.name == "ttg.convert_layout":
            raise PassFailure(op, "cannot translate this layout (injected)")
        return real(value, op)
    monkeypatch.setattr(attach_layouts, "layout_attribute", fail_on_results_of_convert)
    module = parse_module(TRANSPOSE, "t.mlir")
    stream = io.StringIO()
    run_pipeline(module, parse_pipeline("ll-attach-layouts"), PassContext(report_stream=stream))
    text = module.print()
    assert "remark: [ll-attach-layouts] no layout for result 0: cannot translate" in stream.getvalue()
    assert "ll.arg_layouts" in text            # the function argument still got its layout
    assert "ttg.convert_layout %arg0 :" in text  # the convert got none


PIPELINED = """
#nvmma = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func @f(%i: i32) {
    %a = ttg.local_alloc : () -> !ttg.memdesc<3x64x64xbf16, #nvmma, #smem, mutable>
    %b = ttg.memdesc_index %a[%i] : !ttg.memdesc<3x64x64xbf16, #nvmma, #smem, mutable> -> !ttg.memdesc<64x64xbf16, #nvmma, #smem, mutable>
    %c = ttg.memdesc_subslice %b[32, 0] : !ttg.memdesc<64x64xbf16, #nvmma, #smem, mutable> -> !ttg.memdesc<32x64xbf16, #nvmma, #smem, mutable, 64x64>
    tt.return
  }
}
"""


def test_memdesc_values_one_buffer_and_the_count_for_lowerings():
    from linear_layouts.passes.ir.layouts import memdesc_layout, value_layout
    module = parse_module(PIPELINED, "p.mlir")
    alloc, index, subslice = [op for op in module.walk() if op.name.startswith("ttg.")][:3]
    whole = memdesc_layout(alloc.results[0], alloc)
    assert whole.buffers == 3 and whole.buffer_elements == 4096
    assert memdesc_layout(index.results[0], index).buffer == whole.buffer
    view = memdesc_layout(subslice.results[0], subslice)
    assert view.buffer == whole.buffer and view.view_shape == (32, 64) and view.buffer_shape == (64, 64)
    assert value_layout(index.results[0], index) == whole.buffer
    with pytest.raises(PassFailure, match="3 buffers of 64x64: no linear layout covers a number of buffers"):
        value_layout(alloc.results[0], alloc)
    arg = [op for op in module.walk() if op.name == "tt.func"][0].block_arguments[0]
    with pytest.raises(PassFailure, match="value of type i32 is not a shared-memory descriptor"):
        memdesc_layout(arg)
