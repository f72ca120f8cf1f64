"""Unit tests of the ll-opt command line (tools/ll_opt.py), run in-process through main()."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from linear_layouts.tools.ll_opt import _error_lines, main, split_input
from support.nested_module import nested_convert_module

TRANSPOSE = """#blocked = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @transpose(%x: tensor<32x32xf32, #blocked>) -> tensor<32x32xf32, #blocked1> {
    %0 = ttg.convert_layout %x : tensor<32x32xf32, #blocked> -> tensor<32x32xf32, #blocked1>
    tt.return %0 : tensor<32x32xf32, #blocked1>
  }
}
"""


@pytest.fixture
def transpose_file(tmp_path):
    path = tmp_path / "transpose.mlir"
    path.write_text(TRANSPOSE)
    return path


def test_split_input_keeps_line_numbers_of_the_file():
    text = "a\nb\n// -----\nc\n// -----  \nd\ne\n"
    chunks = split_input(text, True)
    assert [(c.text, c.first_line) for c in chunks] == [("a\nb\n", 1), ("c\n", 4), ("d\ne\n", 6)]
    assert [(c.text, c.first_line) for c in split_input(text, False)] == [(text, 1)]


def test_error_lines_put_the_tool_name_first():
    assert _error_lines("f.mlir:3:4: error: bad thing\nnote: see op") == "ll-opt: error: f.mlir:3:4: bad thing\n  note: see op"
    assert _error_lines("something broke") == "ll-opt: error: something broke"


def test_pipeline_to_stdout(transpose_file, capsys):
    assert main([str(transpose_file), "-p", "ll-classify-conversions"]) == 0
    out = capsys.readouterr().out
    assert 'ttg.convert_layout %arg0 {ll.scope = "warp"}' in out


def test_output_file_and_report_on_stderr(transpose_file, tmp_path, capsys):
    out_path = tmp_path / "out.mlir"
    assert main([str(transpose_file), "-p", "ll-classify-conversions{report=true}", "-o", str(out_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "scope=warp bits=32" in captured.err
    assert "ll.scope" in out_path.read_text()


def test_list_passes(capsys):
    assert main(["--list-passes"]) == 0
    out = capsys.readouterr().out
    assert "ll-attach-layouts" in out and "ll-merge-equivalent-layouts" in out and "report=bool" in out


@pytest.mark.parametrize("argv,message", [
    (["-p", "ll-nope"], "ll-opt: error: invalid pipeline: unknown pass 'll-nope'"),
    (["-p", "ll-classify-conversions{x=1}"], "has no option 'x'"),
    (["--bogus"], "ll-opt: error: unrecognized arguments: --bogus"),
    (["--emit", "sass"], "ll-opt: error: argument --emit: invalid choice"),
    (["-p", "ll-lower-conversions{target=cuda:70}"], "option target='cuda:70': unknown target"),
    (["-p", "ll-lower-conversions{only=nonsense}"], "unknown lowering 'nonsense'"),
    (["-p", "ll-lower-conversions{mode=fast}"], "option mode='fast'"),
    (["-p", "ll-lower-conversions{verify=never}"], "option verify='never'"),
])
def test_usage_errors_exit_1_with_one_line(transpose_file, capsys, argv, message):
    assert main([str(transpose_file)] + argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_missing_input(tmp_path, capsys):
    assert main([str(tmp_path / "nope.mlir")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_malformed_input_reports_location_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    bad.write_text("module {\n  tt.func @f() {\n    %0 = arith.addf %x, %x : f32\n  }\n}\n")
    out = tmp_path / "out.mlir"
    assert main([str(bad), "-o", str(out)]) == 1
    assert f"ll-opt: error: {bad}:3:21: use of undeclared SSA value name" in capsys.readouterr().err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.mlir"]  # no temporary left behind


def test_existing_output_is_kept_on_failure(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("not mlir")
    out = tmp_path / "out.mlir"
    out.write_text("keep me")
    assert main([str(bad), "-o", str(out)]) == 1
    assert out.read_text() == "keep me"


def test_split_input_file_outputs_are_separated(tmp_path, capsys):
    path = tmp_path / "two.mlir"
    path.write_text(TRANSPOSE + "\n// -----\n" + TRANSPOSE)
    assert main([str(path), "--split-input-file", "-p", "ll-classify-conversions"]) == 0
    out = capsys.readouterr().out
    assert out.count("// -----") == 1 and out.count('ll.scope = "warp"') == 2


def test_print_ir_after_all(transpose_file, capsys):
    assert main([str(transpose_file), "-p", "ll-attach-layouts,ll-classify-conversions", "--print-ir-after-all"]) == 0
    err = capsys.readouterr().err
    assert err.index("IR Dump After ll-attach-layouts") < err.index("IR Dump After ll-classify-conversions")


def test_emit_without_target_is_an_error(tmp_path, capsys):
    path = tmp_path / "t.mlir"
    path.write_text(TRANSPOSE.replace('ttg.target = "cuda:90", ', ""))
    assert main([str(path), "--emit", "llir"]) == 1
    assert "needs a target" in capsys.readouterr().err


def test_console_script_runs_as_a_process(transpose_file):
    """The installed entry point: exit status 1 and a one-line error, no traceback."""
    ll_opt = os.path.join(os.path.dirname(sys.executable), "ll-opt")
    if not os.path.exists(ll_opt):
        pytest.skip("ll-opt console script not installed in this environment")
    ok = subprocess.run([ll_opt, str(transpose_file), "-p", "ll-classify-conversions"], capture_output=True, text=True)
    assert ok.returncode == 0 and "ll.scope" in ok.stdout
    bad = subprocess.run([ll_opt, str(transpose_file), "-p", "nope"], capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stdout == "" and bad.stderr.startswith("ll-opt: error:")


# -- where the output goes: as a shell redirection would put it ---------------------------------

def test_output_through_a_symlink_writes_its_target(transpose_file, tmp_path):
    target = tmp_path / "real.mlir"
    target.write_text("old\n")
    link = tmp_path / "link.mlir"
    link.symlink_to(target)
    assert main([str(transpose_file), "-p", "ll-classify-conversions", "-o", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert "ll.scope" in target.read_text()


def test_output_to_a_fifo_is_written_not_replaced(transpose_file, tmp_path):
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo).read()))
    reader.start()
    assert main([str(transpose_file), "-p", "ll-classify-conversions", "-o", str(fifo)]) == 0
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)   # still a FIFO, not a regular file
    assert "ll.scope" in received[0]


def test_output_keeps_the_existing_files_permissions(transpose_file, tmp_path):
    out = tmp_path / "out.mlir"
    out.write_text("old\n")
    os.chmod(out, 0o640)
    assert main([str(transpose_file), "-p", "ll-classify-conversions", "-o", str(out)]) == 0
    assert os.stat(out).st_mode & 0o777 == 0o640


@pytest.mark.parametrize("attribute", ["ll.island = 0 : i32", "ll.op_id = 0 : i32"])
def test_reserved_attributes_in_the_input_are_refused(tmp_path, capsys, attribute):
    # An input convert carrying ll.island = 0 was once replaced by island 0's code although the
    # pass had left it to Triton.  Our bookkeeping attributes are never read from input.
    bad = tmp_path / "bad.mlir"
    bad.write_text(TRANSPOSE.replace("ttg.convert_layout %x :", f"ttg.convert_layout %x {{{attribute}}} :"))
    out = tmp_path / "out.mlir"
    assert main([str(bad), "-p", "ll-lower-conversions", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"bad.mlir:5:" in err and attribute.split(" ")[0] in err and "reserved" in err
    assert "Traceback" not in err and not out.exists()


def test_target_option_reaches_the_lowering(transpose_file, capsys):
    # The module says cuda:90; --target gfx1100 (AMD RDNA3, 32-lane waves like the module's warps)
    # makes ll-lower-conversions plan for AMD: LDS instructions, and the target named.
    assert main([str(transpose_file), "-p", "ll-lower-conversions", "--remarks", "--target", "gfx1100"]) == 0
    err = capsys.readouterr().err
    assert "ds_write" in err and "gfx1100" in err


@pytest.mark.parametrize("target", ["hip:gfx942", "gfx90a"])
def test_a_target_with_another_warp_size_is_refused(transpose_file, tmp_path, capsys, target):
    # A 32-lane module planned or compiled for 64-lane waves would be wrong code: refused, not
    # lowered with a note (as before) nor compiled (as --emit amdgcn did).
    out = tmp_path / "out.s"
    assert main([str(transpose_file), "-p", "ll-lower-conversions", "--target", target, "--emit", "amdgcn",
                 "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and not out.exists()
    assert "the module is made for 32-lane warps (ttg.threads-per-warp = 32) but target" in err
    assert "has 64 lanes per warp" in err


# -- target names: one table (lowering.target), the same names everywhere ----------------------

def _one_line(text: str) -> str:
    return " ".join(text.split())   # argparse wraps help text: compare without the line breaks


def test_every_tool_takes_both_spellings_of_every_target():
    from linear_layouts.lowering.target import TARGETS
    from linear_layouts.passes.pipeline import parse_pipeline
    from linear_layouts.tools.viewers import viz
    from linear_layouts.tools.ll_opt import _argument_parser

    for target in TARGETS.values():
        for spelling in (target.name, target.triton_name):
            assert _argument_parser().parse_args(["--target", spelling]).target is target
            assert viz.target_option(spelling) is target
            (lower,) = parse_pipeline(f"ll-lower-conversions{{target={spelling}}}")
            assert lower.target is target


def test_help_and_errors_list_the_same_targets(capsys):
    from linear_layouts.lowering.target import known_target_names
    from linear_layouts.passes.pipeline import PipelineError, parse_pipeline
    from linear_layouts.tools.viewers import viz
    from linear_layouts.tools.ll_opt import _argument_parser

    known = known_target_names()
    assert "sm_90 (cuda:90)" in known and "gfx942 (hip:gfx942)" in known and "gfx1201 (hip:gfx1201)" in known
    helps = [_one_line(_argument_parser().format_help()), _one_line(viz.build_parser().format_help())]
    assert all(known in text for text in helps)
    assert main(["--target", "sm_70", "-"]) == 1
    assert viz.main(["--plan", "A", "B", "--target", "sm_70"]) == 1
    errors = capsys.readouterr().err.splitlines()
    with pytest.raises(PipelineError) as option_error:
        parse_pipeline("ll-lower-conversions{target=sm_70}")
    for error in errors + [str(option_error.value)]:
        assert f"unknown target 'sm_70'; known targets: {known}" in error


def test_a_convert_nested_a_thousand_ifs_deep_is_lowered(tmp_path, capsys):
    """Once ``internal error: RecursionError`` (900 levels worked, 1,000 did not)."""
    path = tmp_path / "deep.mlir"
    path.write_text(nested_convert_module(1000))
    assert main([str(path), "-p", "ll-lower-conversions", "--remarks"]) == 0
    captured = capsys.readouterr()
    assert "remark: [ll-lower-conversions] lowered: shared" in captured.err
    assert "ttg.convert_layout" not in captured.out


def test_nesting_deeper_than_tritons_parser_takes_is_a_clear_error(tmp_path):
    """Triton's recursive parser crashes (stack overflow) a few thousand levels down: the parse
    in a forked child turns that into one message that names the depth.  The stack is set to
    8 MiB (Linux's usual) so that the crash comes at the same depth everywhere."""
    import resource

    path = tmp_path / "deeper.mlir"
    path.write_text(nested_convert_module(6000))
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    stack = 8 << 20 if hard == resource.RLIM_INFINITY else min(8 << 20, hard)
    result = subprocess.run([sys.executable, "-m", "linear_layouts.tools.ll_opt", str(path), "-p",
                             "ll-classify-conversions"], capture_output=True, text=True, timeout=120,
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_STACK, (stack, hard)))
    assert result.returncode == 1 and result.stdout == ""
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "Triton aborted while parsing the module" in result.stderr
    assert "nests regions 6002 deep" in result.stderr, result.stderr


# -- MLIR_ENABLE_DUMP=1 files (tools/mlir_dump.py) --------------------------------------------

def _copy(header: str, module: str = TRANSPOSE) -> str:
    return header + "\n" + module + "\n\n"


def test_dump_headers_in_both_mlir_spellings_and_after_copies():
    from linear_layouts.tools.mlir_dump import dumped_modules, is_dump, pick_module

    llvm = "module {\n  llvm.func @k() {\n    llvm.return\n  }\n}\n"
    text = ("some warning a Python process printed\n"
            + _copy("// -----// IR Dump Before TritonGPUCoalesce: tritongpu-coalesce ('builtin.module' operation) //----- //")
            + _copy("// -----// IR Dump Before Canonicalizer (canonicalize) ('tt.func' operation: @k(1,)c) //----- //",
                    "tt.func @k() {\n}\n")
            + _copy("// -----// IR Dump Before TritonGPURemoveLayoutConversions (tritongpu-remove-layout-conversions) "
                    "('builtin.module' operation) //----- //")
            + _copy("// -----// IR Dump Before ConvertTritonGPUToLLVM: convert-triton-gpu-to-llvm{compute-capability=90} "
                    "('builtin.module' operation) //----- //")
            + _copy("// -----// IR Dump After ll-attach-layouts //----- //", llvm))
    assert is_dump(text) and not is_dump(TRANSPOSE)
    modules = dumped_modules(text)
    # the function-only copy is no module; both spellings give the class name and the argument
    assert [(m.when, m.pass_name, m.pass_argument) for m in modules] == [
        ("Before", "TritonGPUCoalesce", "tritongpu-coalesce"),
        ("Before", "TritonGPURemoveLayoutConversions", "tritongpu-remove-layout-conversions"),
        ("Before", "ConvertTritonGPUToLLVM", "convert-triton-gpu-to-llvm"),
        ("After", "ll-attach-layouts", "")]
    assert modules[0].first_line == 3 and modules[0].text == TRANSPOSE   # the blank lines after it left out
    assert pick_module(modules) is modules[2]     # the last TTGIR one: the fourth is the LLVM dialect
    assert pick_module(modules, after="tritongpu-coalesce") is modules[1]
    assert pick_module(modules, before="TritonGPURemoveLayoutConversions") is modules[1]


def test_a_dump_module_keeps_the_dumps_line_numbers(tmp_path, capsys):
    header = "// -----// IR Dump Before TritonGPUCoalesce: tritongpu-coalesce ('builtin.module' operation) //----- //"
    path = tmp_path / "dump.txt"
    path.write_text(_copy(header) + _copy(header, TRANSPOSE.replace("%x :", "%nope :")))
    assert main([str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:13: reading the module printed before TritonGPUCoalesce" in err   # the second copy
    assert f"ll-opt: error: {path}:17:29: use of undeclared SSA value name" in err
