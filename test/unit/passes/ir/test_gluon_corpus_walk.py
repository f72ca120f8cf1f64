"""Every module of the Gluon corpus (``test/lit/corpus/gluon/triton-<release>/``, written by
``test/support/gen_corpus_gluon.py``: Hopper- and Blackwell-class Gluon kernels, TMA, mbarriers,
``warpgroup_mma``, pipelined and persistent loops, ``ttg.warp_specialize``, tensor memory) is
read by the ``ModuleLines`` walk and by every pass of ours:

* the walk gives every op its own lines (``support/module_lines_law.py``) in the file as written,
  in MLIR's print with locations and without;
* ``ll-resolve-auto-layouts`` resolves each automatic form (``*.input.ttgir``), and every other
  pass runs on each module (an automatic form: on the resolution's module), each on a fresh
  parse;
* no ``TextMismatch`` is raised in ``passes/ir/module_lines.py`` while they run (a pass that
  catches one would quietly leave the kernel as it was: the failure this corpus guards against);
* a pass fails only where ``DECLINES`` says, with that reason; ``NOT_RUN`` names the one pass not
  run on some modules here, and why (its time).

Each release reads the folder its own Triton printed (a 3.9 print does not always parse under
3.6); a release without a folder is skipped with the reason."""

from __future__ import annotations

import glob
import os
import sys

import pytest
import triton

from linear_layouts.passes.framework import run_pipeline
from linear_layouts.passes.ir.diagnostics import IRError
from linear_layouts.passes.ir.module_lines import TextMismatch
from linear_layouts.passes.ir.snapshot import parse_module
from linear_layouts.passes.pipeline import parse_pipeline
from support import REPO
from support.module_lines_law import check_every_op_has_its_own_lines

RELEASE = "triton-" + ".".join(triton.__version__.split(".")[:2])
FOLDER = os.path.join(str(REPO), "test", "lit", "corpus", "gluon", RELEASE)
FILES = sorted(os.path.basename(path) for path in glob.glob(os.path.join(FOLDER, "*.ttgir")))

if not FILES:
    pytest.skip(f"no Gluon corpus for {RELEASE} (test/support/gen_corpus_gluon.py writes one under it)",
                allow_module_level=True)

RESOLVE = "ll-resolve-auto-layouts{compare=false}"   # compare=true would also run stock's resolution
PASSES = ("ll-attach-layouts", "ll-classify-conversions", "ll-merge-equivalent-layouts", "ll-assign-layouts",
          "ll-apply-advice", "ll-lower-conversions")

# (file, pass) -> the reason it declines, the only failures allowed: an op our resolution has no
# rule for (it leaves the kernel to Triton's resolution, which handles it).
DECLINES = {
    ("ours.histogram_fixed_auto.sm90.input.ttgir", "ll-resolve-auto-layouts"):
        "tt.histogram: no layout rule for this op with automatic layouts (left to Triton's resolution)",
}

# (file name prefix, pass) -> why this test does not run the pass there: a cost, not a failure to
# read the module (the walk of the module is checked all the same).
NOT_RUN = {
    ("aiter.", "ll-apply-advice"):
        "the advice's shared-swizzle search (shared_findings._best_swizzle) prices each candidate by "
        "enumerating every shared access: minutes on aiter's 256x256x128 int8/fp8 tiles with 8 warps",
}


@pytest.fixture
def mismatches(monkeypatch):
    """Every TextMismatch raised in module_lines.py while the test runs (caught or not)."""
    raised: list[str] = []
    original = TextMismatch.__init__

    def record(self, *args):
        if sys._getframe(1).f_code.co_filename.endswith("module_lines.py"):
            raised.append(str(args[0]) if args else "")
        original(self, *args)
    monkeypatch.setattr(TextMismatch, "__init__", record)
    return raised


def _run(text: str, name: str, pipeline: str):
    """The module after ``pipeline``, or the reason it declined (an IRError's message)."""
    module = parse_module(text, name)
    try:
        run_pipeline(module, parse_pipeline(pipeline))
    except IRError as error:
        return None, str(error)
    return module, ""


def _as_declared(name: str, pass_name: str, why: str) -> None:
    """The pass ran (``why`` empty) exactly where DECLINES names no reason, else it gave that one."""
    expected = DECLINES.get((name, pass_name))
    if expected is None:
        assert not why, f"{pass_name} failed on {name}: {why}"
    else:
        assert expected in why, f"{pass_name} on {name}: expected to decline ({expected}), got: {why or 'ran'}"


def test_the_corpus_has_the_kernels_it_was_built_from():
    assert {"ours.pipelined_matmul.sm90.ttgir", "ours.pipelined_matmul_auto.sm90.input.ttgir",
            "ours.ws_kernel.sm90.ttgir", "ours.auto_ws_matmul.sm100.ttgir", "ours.tcgen05_matmul.sm100.ttgir",
            "aiter._gemm_a8w8_kernel_i8.gfx950.ttgir", "aiter._gemm_a8w8_kernel_fp8.gfx950.ttgir"} <= set(FILES)
    # Triton's own tutorials and examples: its release's under 3.6 (the Blackwell attention example
    # among them); under 3.9 those of the newest Triton tree that can be had (SOURCES.md says why)
    tutorials = {"triton-3.6": {"triton-tutorials.attention_kernel.sm100.ttgir",
                                "triton-tutorials.matmul_warp_specialized_kernel.sm100.ttgir",
                                "triton-tutorials.memcpy_2d_inout_kernel.sm90.ttgir"},
                 "triton-3.9": {"triton-next.matmul_accumulate_kernel.sm100.ttgir",
                                "triton-next.tcgen05_copy_kernel.sm100.ttgir",
                                "triton-next.elementwise_add_pipelined_kernel.sm90.ttgir"}}
    assert tutorials.get(RELEASE, set()) <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_every_op_is_walked_and_every_pass_reads_the_module(name, mismatches):
    text = open(os.path.join(FOLDER, name)).read()
    module = parse_module(text, name)
    for printed in (text, module.print(debuginfo=True), module.print()):
        check_every_op_has_its_own_lines(module, printed)
    if name.endswith(".input.ttgir"):
        resolved, why = _run(text, name, RESOLVE)
        _as_declared(name, "ll-resolve-auto-layouts", why)
        if resolved is None:
            assert mismatches == [], f"the walk lost its place in {name}: {mismatches}"
            return
        text = resolved.print()
        check_every_op_has_its_own_lines(resolved, text)
    for pass_name in PASSES:
        if any(name.startswith(prefix) and pass_name == skipped for prefix, skipped in NOT_RUN):
            continue
        _result, why = _run(text, name, pass_name)
        _as_declared(name, pass_name, why)
    assert mismatches == [], f"the walk lost its place in {name}: {mismatches}"
