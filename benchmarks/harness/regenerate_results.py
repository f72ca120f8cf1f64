"""How to get back the raw benchmark data, and the study scripts, that are no longer in the repository.

``benchmarks/results`` keeps what a reader needs: the Markdown summaries, the plots, and the
small JSON files (under 12 KB).  The raw JSON of the large runs (every case, every timing: 11 MB
in all) was taken out, and so were the ``*_before*`` snapshots of earlier runs; git history keeps
every one of them.  For each removed file this script knows the command that writes it (most
need a GPU: the machine the summary names, ``- gpu:``), and it can restore the file exactly as
it was from history::

    python benchmarks/harness/regenerate_results.py                     # the table: file, command, GPU
    python benchmarks/harness/regenerate_results.py --restore plan_choice.json kernel_choice.json
    python benchmarks/harness/regenerate_results.py --restore-all       # every removed file, from history
    python benchmarks/harness/regenerate_results.py --command fuzz_gpu.json   # how to run it again

A restored file lands in ``benchmarks/results`` (a study in ``benchmarks/studies``; git status shows it as new: do not commit it).
Example: rebuilding ``lowering/choosing/measured_choices.json`` (``plan_choice.py --write-choices``, see
the README) reads ``plan_choice_measured_pruned.json``, ``kernel_choice.json`` and
``kernel_choice_paper.json``: restore them first.

The files a command writes go to its ``--out`` folder under the names below, except where the
note says the run's files were renamed afterwards (e.g. the fuzz runs per seed).

Summaries no page cites (per-seed GPU runs whose verdict the docs state in prose) were taken out
the same way, and so were the scripts of answered studies (``folder="studies"``: docs/studies.md
keeps each one's question, finding, command and numbers, and names the commit that holds it);
``--restore NAME`` puts a script back in ``benchmarks/studies`` (it ran against the tree of that
commit: ``git worktree add`` it there if today's package has moved on).  A command below that
names an archived study runs once that study is restored.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass

BENCHMARKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(BENCHMARKS, "results")
REPO = os.path.dirname(BENCHMARKS)


@dataclass(frozen=True)
class Removed:
    """A file taken out of benchmarks/results: the command that writes it, and on what."""

    name: str
    command: str
    needs: str = "an H100 GPU"
    note: str = ""
    folder: str = "results"     # under benchmarks/: "results", or "studies" for an archived study

    @property
    def path(self) -> str:
        return f"benchmarks/{self.folder}/{self.name}"


_OUT = "--out benchmarks/results"
_FUZZ = "python benchmarks/fuzz_gpu.py --cases 3000"

# common_vector_both_ways.md (benchmarks/studies/ab_rows.py) compares two runs of the same rows:
# those the change of common_vector moves in four fresh draws, and in the eight committed draws
# it was found on; each with the wheel before the change and with the change's.
_BOTH_WAYS_ROWS = {
    "sym_fresh": ("10103 10211 10313 10427",
                  "fresh10103/1: fresh10103/3: fresh10103/27: fresh10211/2: fresh10211/24: fresh10211/31: "
                  "fresh10211/48: fresh10211/50: fresh10313/9: fresh10313/29: fresh10313/45: fresh10313/52: "
                  "fresh10313/53: fresh10427/1: fresh10427/9: fresh10427/20: fresh10427/22: fresh10427/45: "
                  "fresh10427/52: fresh10427/55: fresh10427/57: "),
    "sym_insample": ("8101 8209 9001 9109 9301 9409 9703 9811",
                  "fresh8101/1: fresh8101/6: fresh8101/15: fresh8101/39: fresh8101/46: fresh8101/51: "
                  "fresh8209/9: fresh8209/38: fresh8209/39: fresh8209/41: fresh8209/43: fresh8209/56: "
                  "fresh8209/57: fresh9001/2: fresh9001/19: fresh9001/49: fresh9109/31: fresh9109/35: "
                  "fresh9109/45: fresh9109/57: fresh9301/3: fresh9301/15: fresh9301/28: fresh9301/57: "
                  "fresh9409/10: fresh9409/14: fresh9409/17: fresh9409/25: fresh9409/36: fresh9409/41: "
                  "fresh9703/19: fresh9703/37: fresh9703/41: fresh9811/8: fresh9811/13: fresh9811/16: "
                  "fresh9811/23: fresh9811/33: fresh9811/54: fresh9811/56: fresh9811/58: "),
}
_BOTH_WAYS_WHEELS = {"old": "fe348c2", "new": "4ac6428 (the change)"}


def _both_ways_run(stem: str, side: str) -> Removed:
    seeds, rows = _BOTH_WAYS_ROWS[stem]
    return Removed(f"{stem}_{side}.json",
                   f"python benchmarks/plan_choice.py --fresh {seeds} --count 60 --no-pick --rep 10 --jobs 15 "
                   f"--match {rows.strip()} --stem {stem}_{side} {_OUT}",
                   needs=f"an H100 GPU, with the wheel of {_BOTH_WAYS_WHEELS[side]} installed",
                   note="read by common_vector_both_ways.md's command")


REMOVED: tuple[Removed, ...] = (
    Removed("conversions.json", f"python benchmarks/conversions.py {_OUT}"),
    Removed("fuzz_gpu.json", f"{_FUZZ} --seed 1 {_OUT}"),
    Removed("fuzz_gpu_seed5.json", f"{_FUZZ} --seed 5 {_OUT}", note="fuzz_gpu.json of that run, renamed"),
    Removed("fuzz_gpu_seed7.json", f"{_FUZZ} --seed 7 {_OUT}", note="fuzz_gpu.json of that run, renamed"),
    Removed("fuzz_gpu_seed11.json", f"{_FUZZ} --seed 11 {_OUT}", note="fuzz_gpu.json of that run, renamed"),
    Removed("fuzz_gpu_seed29.json", f"python benchmarks/fuzz_gpu.py --cases 1500 --seed 29 {_OUT}",
            note="fuzz_gpu.json of that run, not committed (its verdict is fuzz_gpu_seed29.md)"),
    Removed("fuzz_gpu_seed9_h200.json", f"{_FUZZ} --seed 9 {_OUT}", needs="an H200 GPU",
            note="fuzz_gpu.json of that run, renamed"),
    Removed("gpu_conversions.json", f"python benchmarks/gpu_conversions.py {_OUT}"),
    Removed("hopper_gluon_gpu_dry_3.6.0.md", f"python benchmarks/peer_gluon_gpu.py hopper --dry {_OUT}",
            needs="no GPU, triton 3.6.0 and the carried sources (harness/carry_hopper_sources.py)",
            note="the CPU compile of every mode; the GPU run (hopper_gluon_gpu.md) says the same of what compiles"),
    Removed("hopper_gluon_gpu_dry_3.6.0.json", f"python benchmarks/peer_gluon_gpu.py hopper --dry {_OUT}",
            needs="no GPU, triton 3.6.0 and the carried sources (harness/carry_hopper_sources.py)",
            note="written beside hopper_gluon_gpu_dry_3.6.0.md, now as .json.gz"),
    Removed("kernel_choice.json", f"python benchmarks/plan_choice.py kernels {_OUT} --rounds 5"),
    Removed("kernel_choice_paper.json",
            f"python benchmarks/plan_choice.py kernels --paper template_attention --rounds 3 --stem kernel_choice_paper {_OUT}"),
    Removed("kernels.json", f"python benchmarks/kernels.py {_OUT} --rounds 4"),
    Removed("kernels_h200.json", f"python benchmarks/kernels.py {_OUT} --rounds 5", needs="an H200 GPU",
            note="kernels.json of that run, renamed"),
    Removed("local_alloc_gpu.json", f"python benchmarks/local_load_gpu.py {_OUT} --only local_load,local_alloc"),
    Removed("local_alloc_gpu_h200.json", f"python benchmarks/local_load_gpu.py {_OUT} --only local_load,local_alloc",
            needs="an H200 GPU", note="local_alloc_gpu.json of that run, renamed"),
    Removed("local_load_gpu.json", f"python benchmarks/local_load_gpu.py {_OUT}"),
    Removed("local_load_gpu_buffers.json", f"python benchmarks/local_load_gpu.py {_OUT} --buffers 3 --per-group 6"),
    Removed("local_load_gpu_subslice.json", f"python benchmarks/local_load_gpu.py --only subslice {_OUT}"),
    Removed("local_store_gpu.json", f"python benchmarks/local_load_gpu.py {_OUT} --buffers 2 --only local_load,local_store"),
    Removed("local_ops_barriers_3.6.0.json", f"python benchmarks/studies/local_ops_barriers.py {_OUT}",
            needs="no GPU (compiles only), in .venv-compat (triton 3.6.0)"),
    Removed("local_ops_barriers_3.9.0.json", f"python benchmarks/studies/local_ops_barriers.py {_OUT}",
            needs="no GPU (compiles only), in .venv (triton 3.9.0)"),
    Removed("paper_kernels.json", f"python benchmarks/paper_kernels.py {_OUT} --rounds 3"),
    Removed("paper_kernels_local_ops.json", f"python benchmarks/paper_kernels.py {_OUT} --rounds 2 --local-ops"),
    Removed("plan_choice.json", f"python benchmarks/plan_choice.py {_OUT}"),
    Removed("plan_fresh_101_202_partial.json",
            f"python benchmarks/plan_choice.py --fresh 101 202 --count 110 --corpus --table --issue-pairs --jobs 16 "
            f"--rep 15 --stem plan_fresh_101_202 {_OUT}",
            note="a run cut off after 100 of 295 conversions; seeds 101 and 202 were later timed in full "
                 "(plan_fresh_101.json.gz, plan_fresh_202.json.gz)"),
    Removed("plan_fresh_101_202_partial.md",
            f"python benchmarks/plan_choice.py --fresh 101 202 --count 110 --corpus --table --issue-pairs --jobs 16 "
            f"--rep 15 --stem plan_fresh_101_202 {_OUT}", note="the report of that cut-off run"),
    Removed("plan_choice_measured.json", f"python benchmarks/plan_choice.py {_OUT}",
            note="plan_choice.json of an earlier run (the measurements of the measured table), renamed"),
    Removed("plan_choice_measured_pruned.json", f"python benchmarks/plan_choice.py {_OUT}",
            note="plan_choice.json of the run after guard pruning, renamed"),
    Removed("triton_language_tests.json",
            "python benchmarks/triton_language_tests.py --out benchmarks/results -n 16 --budget 500 "
            "--mode-budget 235 --timeout 120"),
    Removed("assign_corpus.json", f"python benchmarks/studies/assign_corpus.py --json {_OUT}", needs="no GPU"),
    Removed("assign_corpus_memory_ops.json",
            f"python benchmarks/studies/assign_corpus.py --json --option memory_ops=true --name assign_corpus_memory_ops {_OUT}",
            needs="no GPU"),
    Removed("assign_corpus_all_options.json",
            f"python benchmarks/studies/assign_corpus.py --json --option memory_ops=true --option reorder_reductions=true "
            f"--name assign_corpus_all_options {_OUT}", needs="no GPU"),
    Removed("report_measure_gluon_advice.md", "", needs="git history only (an H100 GPU to measure it again)",
            note="the `report --measure --launch` output of examples/gluon_advice_example.py (commit 6800af2); no page "
                 "cites it: docs/report-measure-gluon-h100/ keeps the report page"),
    Removed("assign_corpus_memory_ops.md",
            f"python benchmarks/studies/assign_corpus.py --option memory_ops=true --name assign_corpus_memory_ops {_OUT}",
            needs="no GPU", note="its finding (2 of 192 kernels changed) is in docs/layout-assignment.md"),
    Removed("assign_corpus_all_options.md",
            f"python benchmarks/studies/assign_corpus.py --option memory_ops=true --option reorder_reductions=true "
            f"--name assign_corpus_all_options {_OUT}", needs="no GPU",
            note="its finding (4 of 192 kernels changed) is in docs/layout-assignment.md"),
    # Raw data of runs whose Markdown summary is kept (issue 45: results under 1.5 MB on disk).
    Removed("assign_fuzz_gpu.json", f"python benchmarks/assign_fuzz_gpu.py --cases 300 --seed 1 {_OUT}",
            note="the verdicts are in assign_fuzz_gpu.md"),
    Removed("assign_fuzz_gpu_seed2.json", f"python benchmarks/assign_fuzz_gpu.py --cases 150 --seed 2 --memory-ops {_OUT}",
            note="assign_fuzz_gpu.json of that run, renamed"),
    Removed("assign_fuzz_gpu_seed41_transposes.json",
            f"python benchmarks/assign_fuzz_gpu.py --cases 300 --seed 41 --transposes {_OUT}",
            note="assign_fuzz_gpu.json of that run, renamed"),
    Removed("assign_fuzz_gpu_seed43.json", f"python benchmarks/assign_fuzz_gpu.py --cases 150 --seed 43 {_OUT}",
            note="assign_fuzz_gpu.json of that run, renamed"),
    Removed("assign_fuzz_gpu_seed71_shape_ops_whiles.json",
            f"python benchmarks/assign_fuzz_gpu.py --cases 200 --seed 71 --shape-ops --whiles {_OUT}",
            note="assign_fuzz_gpu.json of that run, renamed"),
    Removed("assign_fuzz_gpu_seed73_memory_ops_shape_ops_whiles.json",
            f"python benchmarks/assign_fuzz_gpu.py --cases 80 --seed 73 --memory-ops --shape-ops --whiles {_OUT}",
            note="assign_fuzz_gpu.json of that run, renamed"),
    Removed("assign_fuzz_gpu_seed79_transposes_shape_ops_whiles.json",
            f"python benchmarks/assign_fuzz_gpu.py --cases 200 --seed 79 --transposes --shape-ops --whiles {_OUT}",
            note="assign_fuzz_gpu.json of that run, renamed"),
    Removed("assign_fuzz_gpu_seed89_loop_loads.json",
            f"python benchmarks/assign_fuzz_gpu.py --cases 150 --seed 89 --memory-ops --loop-loads {_OUT}",
            note="assign_fuzz_gpu.json of that run, renamed"),
    Removed("assign_gpu.json", f"python benchmarks/studies/assign_gpu.py {_OUT}", note="the table is assign_gpu.md"),
    Removed("broadcast_load_gpu.json", f"python benchmarks/studies/broadcast_load_gpu.py --rounds 3 {_OUT}"),
    Removed("local_alloc_kernels.json",
            f"python benchmarks/studies/local_load_kernels.py {_OUT} --own local_alloc --no-mma-v2 --rounds 3",
            note="local_load_kernels.json of that run, renamed"),
    Removed("local_load_kernels.json", f"python benchmarks/studies/local_load_kernels.py {_OUT} --rounds 3"),
    Removed("local_load_kernels_h200.json", f"python benchmarks/studies/local_load_kernels.py {_OUT} --rounds 3",
            needs="an H200 GPU", note="local_load_kernels.json of that run, renamed"),
    Removed("plan_choice_column_sum.json",
            f"python benchmarks/plan_choice.py {_OUT} --match column_sum_acc --jobs 15",
            note="plan_choice.json of that run, renamed; its summary is plan_choice_column_sum.md"),
    Removed("conversion_headroom_gpu.json.gz", "", needs="git history only",
            note="the rows of conversion_headroom_gpu.md, whose study is archived (docs/studies.md)"),
    Removed("plan_fresh_939_1051_prevgate.json.gz", "", needs="git history only",
            note="the draw of plan_fresh_939_1051 under the gate before sub-word shuffles had a family of their own; "
                 "its summary plan_fresh_939_1051_prevgate.md is kept"),
    Removed("epilogue_probe.json", f"python benchmarks/studies/epilogue_probe.py {_OUT}",
            note="the finding is in docs/studies.md"),
    Removed("epilogue_isolated.json", "", needs="git history only",
            note="isolated epilogue timings of the same study (docs/studies.md)"),
    Removed("kernels_h200.png", f"python benchmarks/kernels.py {_OUT} --rounds 5", needs="an H200 GPU",
            note="the plot of kernels_h200.md's run (kernels.png is the H100 run)"),
    Removed("paper_kernels_local_ops.png", f"python benchmarks/paper_kernels.py {_OUT} --rounds 2 --local-ops",
            note="the plot of paper_kernels_local_ops.md's run (its numbers are in the summary)"),
    Removed("plan_choice_measured.md", "", needs="git history only",
            note="the summary of plan_choice_measured.json, the run before guard pruning; plan_choice.md is the current one"),
    Removed("reduce_in_loop_heldout_dry.md", f"python benchmarks/studies/reduce_in_loop_gpu.py --dry --set heldout {_OUT}",
            needs="no GPU", note="what the model predicted for the held-out set before it was measured"),
    Removed("reduce_in_loop_heldout2_dry.md", "", needs="git history only",
            note="a second dry run of the held-out set, superseded by reduce_in_loop_heldout_gpu.md"),
    Removed("sass_twins.json.gz", "python benchmarks/studies/sass_twins.py --out benchmarks/results/sass_twins.md",
            needs="no GPU (compiles to SASS with triton 3.6's cuobjdump)", note="the rows of sass_twins.md"),
    Removed("compile_time_corpus_3.6.0.json.gz",
            f"python benchmarks/compile_time.py corpus --repeats 3 {_OUT}", needs="triton 3.6 (.venv-compat), no GPU",
            note="the rows of compile_time_corpus_3.6.0.md"),
    Removed("compile_time_corpus_3.9.0.json.gz",
            f"python benchmarks/compile_time.py corpus --repeats 3 {_OUT}", needs="triton 3.9 (.venv), no GPU",
            note="the rows of compile_time_corpus_3.9.0.md"),
    Removed("plan_fresh_shared_ab_partial.json.gz",
            "python benchmarks/plan_choice.py --fresh 101 202 --count 110 --no-pick --shared-asm --held-out-kernels "
            f"{_OUT}", needs="an H100 GPU, LINEAR_LAYOUTS_STOCK_GATE=off in the environment",
            note="the 100 rows with all modes of a run its time limit stopped after 116 of 229 conversions; "
                 "docs/lowering-choice.md ('The LLVM form against inline PTX, timed') gives its figures"),
    Removed("plan_fresh_5003_5113_in_place.json.gz",
            "python benchmarks/plan_choice.py --fresh 5003 5113 --count 40 --held-out-kernels --in-place --no-pick "
            f"--jobs 15 --rep 10 --deadline 230 --stem plan_fresh_5003_5113_in_place {_OUT}",
            needs="an H200 GPU and the tree at 6bd43e4 (the in-place route's first version)",
            note="the rows of plan_fresh_5003_5113_in_place.md"),
    Removed("compile_time_heldout_3.9.0.json.gz",
            "python benchmarks/compile_time.py corpus --corpus test/lit/corpus/fla "
            f"--name compile_time_heldout --repeats 3 {_OUT}",
            needs="triton 3.9 (.venv), no GPU",
            note="the rows of compile_time_heldout_3.9.0.md"),
    Removed("compile_time_heldout_3.6.0.json.gz",
            "python benchmarks/compile_time.py corpus --corpus test/lit/corpus/fla "
            f"--name compile_time_heldout --repeats 3 {_OUT}",
            needs="triton 3.6 (.venv-compat), LINEAR_LAYOUTS_IN_PLACE=0 in the environment (the text route), no GPU",
            note="the rows of compile_time_heldout_3.6.0.md"),
    Removed("compile_time_liger_converts_3.6.0.json.gz",
            f"python benchmarks/compile_time.py corpus --corpus DIR --name compile_time_liger_converts --repeats 3 {_OUT}",
            needs="triton 3.6 (.venv-compat), no GPU; DIR: Liger-Kernel's corpus files that hold a ttg.convert_layout",
            note="the rows of compile_time_liger_converts_3.6.0.md"),
    Removed("compile_time_heldout_in_place_3.6.0.json.gz",
            "python benchmarks/compile_time.py corpus --corpus test/lit/corpus/fla "
            f"--name compile_time_heldout_in_place --repeats 3 {_OUT}",
            needs="triton 3.6 (.venv-compat), LINEAR_LAYOUTS_IN_PLACE=1 in the environment, no GPU",
            note="the rows of compile_time_heldout_in_place_3.6.0.md"),
    Removed("compile_time_heldout_quiet_host_3.6.0.json.gz",
            "python benchmarks/compile_time.py corpus --corpus test/lit/corpus/fla "
            f"--name compile_time_heldout_quiet_host --repeats 3 {_OUT}",
            needs="triton 3.6 and a quiet host of 16 CPUs (the GPU machine), no GPU",
            note="the rows of compile_time_heldout_quiet_host_3.6.0.md (also in git history)"),
    Removed("compile_time_heldout_repeats5_3.6.0.json.gz",
            "python benchmarks/compile_time.py corpus --corpus test/lit/corpus/fla "
            f"--name compile_time_heldout_repeats5 --repeats 5 {_OUT}",
            needs="triton 3.6 (.venv-compat), no GPU",
            note="the rows of compile_time_heldout_repeats5_3.6.0.md (also in git history)"),
    Removed("plan_issue25_pairs.json", "", needs="git history only",
            note="the run of issue 25's three pairs, table off and on; its summary plan_issue25_pairs.md is kept"),
    # Snapshots of earlier runs (the summaries that replaced them are kept); history only.
    Removed("fuzz_gpu_before_simulator.md", "", needs="git history only",
            note="fuzz_gpu.md before the emitted-code simulator existed"),
    Removed("plan_choice_before.json", "", needs="git history only",
            note="plan_choice.json before the measured table (benchmarks/studies/fit_cost_model.py reads it)"),
    Removed("plan_choice_before.md", "", needs="git history only", note="its summary"),
    Removed("plan_choice_before_kernel_pairs.json", "", needs="git history only",
            note="plan_choice.json before kernel pairs were added"),
    Removed("plan_choice_before_pruning.json", "", needs="git history only",
            note="plan_choice.json before guard pruning"),
    Removed("plan_choice_before_pruning.md", "", needs="git history only", note="its summary"),
    # Issue 54: raw runs whose summary is kept, and summaries no page cites (the verdicts are in
    # docs/reliability.md and docs/layout-assignment.md); history has them.
    Removed("gluon_forms_gpu.json", f"python benchmarks/gluon_forms_gpu.py --rounds 3 {_OUT}",
            note="the rows of gluon_forms_gpu.md"),
    Removed("gluon_forms_gpu_memcpy_builtin_elementwise_add.md",
            f"python benchmarks/gluon_forms_gpu.py --only memcpy builtin elementwise_add {_OUT}",
            note="gluon_forms_gpu.md of an earlier run on three tutorials, renamed"),
    *(Removed(f"plan_fresh_{seeds}.json.gz",
              f"python benchmarks/plan_choice.py --fresh {seeds.replace('_', ' ')} {flags} --jobs 16 "
              f"--stem plan_fresh_{seeds} {_OUT}", note=f"the rows of plan_fresh_{seeds}.md")
      for seeds, flags in (("717_828", "--count 110 --no-pick --rep 15 --deadline 440"),
                           ("939_1051", "--count 110 --no-pick --issue-pairs --rep 15 --deadline 240"),
                           ("2311_2419", "--count 30 --rep 10 --deadline 240"),
                           ("2521_2633", "--count 40 --rep 10 --deadline 240"))),
    *(Removed(f"byte_vectors_gpu/{run}.json.gz",
              f"python benchmarks/plan_choice.py --fresh 2741 717 828 939 --count 100 --match :i8: --no-pick "
              f"--jobs 16 --rep 10 --deadline 150 --stem bv_{run} {_OUT}", needs="an H200 GPU",
              note=f"bv_{run}.json.gz of that run, renamed" + (" (LINEAR_LAYOUTS_BYTE_VECTORS=1)" if run == "on_1" else "")
                   + "; the comparison is byte_vectors_gpu/byte_vectors_gpu.md")
      for run in ("off_1", "off_2", "off_3", "on_1")),
    # Issue 53: the raw rows of FLA's whole-op runs; each run's summary and per-kernel table are
    # its .md, whose first line gives the whole command (the variants' keys included).
    *(Removed(f"{name}.jsonl", f"python benchmarks/fla_ops_gpu.py --fla PATH {flags} {_OUT} --name {name}",
              needs=needs, note=f"the rows of {name}.md")
      for name, flags, needs in (
          ("fla_gla_kernels", "--ops chunk_gla --rounds 2 --per-kernel", "an H100 GPU"),
          ("fla_gla_kernels_guards", "--ops chunk_gla --rounds 2 --per-kernel --variants (fla_gla_kernels_guards.md)",
           "an H100 GPU"),
          ("fla_gla_one_warp", "--ops chunk_gla --rounds 2 --per-kernel --variants (fla_gla_one_warp.md)",
           "an H100 GPU"),
          ("fla_ops_gpu_4warps", "--ops chunk_gla,chunk_rwkv6 --rounds 2 --warps 4 --per-kernel", "an H100 GPU"),
          ("fla_ops_gpu_4warps_twins", "--ops chunk_gla,chunk_rwkv6 --rounds 2 --warps 4 --per-kernel", "an H200 GPU"),
          ("fla_ops_gpu_4warps_twins_kernel", "--ops chunk_gla,chunk_rwkv6 --rounds 2 --warps 4 --per-kernel",
           "an H200 GPU"),
          ("fla_rwkv6_attn_one_warp", "--ops chunk_rwkv6,parallel_attn --rounds 2 --per-kernel", "an H100 GPU"),
          ("fla_rwkv6_variants", "--ops chunk_rwkv6 --rounds 2 --per-kernel --variants (fla_rwkv6_variants.md)",
           "an H200 GPU"),
          ("fla_heldout_4warps", "--ops chunk_gated_delta_rule,parallel_attn --rounds 2 --warps 4 --per-kernel",
           "an H200 GPU"),
          ("fla_gla_fwdo_variant", "--ops chunk_gla --rounds 2 --warps 4 --per-kernel --variants "
           "(fla_gla_fwdo_variant.md)", "an H200 GPU"),
          ("fla_in_place_4warps", "--ops chunk_gla,chunk_rwkv6 --rounds 2 --warps 4 --per-kernel --in-place",
           "an H200 GPU"),
          ("fla_hybrid_4warps", "--ops chunk_gla,chunk_rwkv6 --rounds 2 --warps 4 --per-kernel --in-place",
           "an H200 GPU"),
          ("fla_default_4warps", "--ops chunk_gla,chunk_rwkv6 --rounds 2 --warps 4 --per-kernel --text",
           "an H200 GPU"))),
    Removed("local_alloc_gpu_h200.md", f"python benchmarks/local_load_gpu.py {_OUT} --only local_load,local_alloc",
            needs="an H200 GPU", note="local_alloc_gpu.md of that run, renamed (the H100 run is local_alloc_gpu.md)"),
    *(Removed(f"fuzz_gpu_seed{seed}.md", f"python benchmarks/fuzz_gpu.py --cases {cases} --seed {seed} {_OUT}",
              note="fuzz_gpu.md of that run, renamed: PASS, 0 failures")
      for seed, cases in ((7, 1000), (31, 600), (53, 1500), (59, 1500))),
    Removed("fuzz_gpu_seed71_after_refactor.md", f"python benchmarks/fuzz_gpu.py --cases 500 --seed 71 {_OUT}",
            note="fuzz_gpu.md of that run, renamed: PASS, 500 cases, 0 failures"),
    Removed("fuzz_gpu_seed73_llvm_form.md", f"python benchmarks/fuzz_gpu.py --cases 1000 --seed 73 {_OUT}",
            note="fuzz_gpu.md of that run (shared accesses as LLVM loads and stores), renamed: PASS, 1000 cases, 0 "
                 "failures (docs/status.md states it)"),
    Removed("gpu_conversions_llvm_form.md", f"python benchmarks/gpu_conversions.py {_OUT}",
            note="gpu_conversions.md of that run (shared accesses as LLVM loads and stores), renamed: PASS, 396/396 "
                 "(docs/status.md states it)"),
    Removed("peer_gluon_gpu_1round_check.md", f"python benchmarks/peer_gluon_gpu.py --rounds 1 --no-tests {_OUT}",
            note="a one-round check of the paths a refactor touched (commit a127887): enable 0.998, advice 0.979, "
                 "auto 0.835; peer_gluon_gpu.md is the full run"),
    Removed("gluon_matmul_auto_gpu_1round_check.md", "python benchmarks/gluon_forms_gpu.py matmul --rounds 1 --auto",
            note="a one-round check of the same refactor: the automatic matmul 0.710 / 0.637 x the expert's"),
    *(Removed(f"assign_fuzz_gpu_seed{name}.md", f"python benchmarks/assign_fuzz_gpu.py {flags} {_OUT}",
              note="assign_fuzz_gpu.md of that run, renamed: " + (
                  "1 differs of 200: int32 overflow folded differently, not a layout error "
                  "(assign_fuzz_gpu_seed71_case178.txt)" if name.startswith("71_")
                  else "0 wrong"))
      for name, flags in (("2", "--cases 150 --seed 2 --memory-ops"),
                          ("71_shape_ops_whiles", "--cases 200 --seed 71 --shape-ops --whiles"),
                          ("73_memory_ops_shape_ops_whiles", "--cases 80 --seed 73 --memory-ops --shape-ops --whiles"),
                          ("79_transposes_shape_ops_whiles", "--cases 200 --seed 79 --transposes --shape-ops --whiles"),
                          ("97_loop_loads", "--cases 100 --seed 97 --memory-ops --loop-loads"),
                          ("103_memory_ops_transposes_shape_ops_whiles",
                           "--cases 100 --seed 103 --memory-ops --transposes --shape-ops --whiles"),
                          ("107_memory_ops_loop_loads", "--cases 100 --seed 107 --memory-ops --loop-loads"),
                          ("113_memory_ops_whiles_loop_loads", "--cases 100 --seed 113 --memory-ops --whiles --loop-loads"),
                          ("127_memory_ops_transposes_shape_ops_whiles",
                           "--cases 100 --seed 127 --memory-ops --transposes --shape-ops --whiles"))),
    # Issue 54: the scripts of answered studies (docs/studies.md keeps question, finding, command, numbers).
    *(Removed(f"{name}.py", "", needs="git history only", folder="studies",
              note=f"an answered study (docs/studies.md); git show {commit}:benchmarks/studies/{name}.py")
      for name, commit in (
          ("assign_compile_corpus", "fd6ab8f"),
          ("assign_corpus", "fd6ab8f"),
          ("assign_reduce_gpu", "fd6ab8f"),
          ("broadcast_load_gpu", "fd6ab8f"),
          ("byte_vectors_gpu", "9e80bae"),
          ("choice_dominance_eval", "7c9c9e6"),
          ("choice_signal", "54531e4"),
          ("choice_transfer", "7c9c9e6"),
          ("epilogue_ncu", "fd6ab8f"),
          ("epilogue_probe", "fd6ab8f"),
          ("fit_cost_model", "fd6ab8f"),
          ("fuzz_case", "fd6ab8f"),
          ("local_load_kernels", "fd6ab8f"),
          ("matrix_penalty", "7c9c9e6"),
          ("sass_slow_twins", "d78d603"),
          ("sass_twins", "d78d603"),
          ("shape_ops_gpu", "fd6ab8f"),
          ("stock_lowering_oracle", "fd6ab8f"),
          ("verify_cost", "fd6ab8f"),
          ("assign_gpu", "88e399b"),
          ("assign_gpu_kernels", "88e399b"),
          ("assign_rule", "88e399b"),
          ("assigned_converts", "88e399b"),
          ("conversion_headroom_gpu", "88e399b"),
          ("fuzz_planner", "88e399b"),
          ("fuzz_stage_times", "88e399b"),
          ("llvm_opt_time", "88e399b"),
          ("llvm_slp_probe", "88e399b"),
          ("llvm_slp_scan", "88e399b"),
          ("local_ops_barriers", "88e399b"),
          ("plugin_stages", "88e399b"),
          ("reduce_in_loop_gpu", "88e399b"),
          ("shared_limit_gpu", "88e399b"),
          ("stock_truth_check", "88e399b"),
          ("thirdparty_liger", "88e399b"),
      )),
    *(_both_ways_run(stem, side) for stem in _BOTH_WAYS_ROWS for side in _BOTH_WAYS_WHEELS),
    Removed("compile_time_fuzz_issue_case_3.6.0.md", f"python benchmarks/compile_time.py fuzz --issue-case --repeats 2 {_OUT}",
            needs="no GPU, in .venv-compat (triton 3.6.0)",
            note="the rebuilt case of issue 43 (a random 32-register destination); issue 53's case as reported is "
                 "compile_time_fuzz_issue53_case_3.6.0.md; docs/compile-time.md states its figures"),
    Removed("compile_time_fuzz_issue_case_3.9.0.md", f"python benchmarks/compile_time.py fuzz --issue-case --repeats 2 {_OUT}",
            needs="no GPU, in .venv (triton 3.9.0)",
            note="the rebuilt case of issue 43, as above; docs/compile-time.md states its figures"),
    # Issue 76: results under 1.5 MB.  Per-seed CPU runs no page names (docs/compile-time.md states
    # seed 2's gfx942 finding in prose), and the raw rows of whole-op runs whose .md is kept.
    *(Removed(f"compile_time_fuzz_seed2_gfx942_{release}.md",
              f"python benchmarks/compile_time.py fuzz --seed 2 --targets gfx942 --timeout 400 {_OUT}",
              needs=f"no GPU, in {venv} (triton {release})",
              note=f"compile_time_fuzz_{release}.md of that run, renamed")
      for release, venv in (("3.6.0", ".venv-compat"), ("3.9.0", ".venv"))),
    *(Removed(f"{name}.jsonl", f"python benchmarks/fla_ops_gpu.py --fla build/fla_carry {flags} {_OUT}",
              needs=needs, note=f"the rows of {name}.md" + (" (fla_ops_gpu.jsonl of that run, renamed)"
                                                            if "--name" not in flags and name != "fla_ops_gpu" else ""))
      for name, flags, needs in (
          ("fla_ops_gpu", "--ops chunk_rwkv6,chunk_gla --rounds 3 --timeout 150", "an H100 GPU"),
          ("fla_ops_gpu_32k", "--ops chunk_rwkv6,chunk_gla --rounds 2 --tokens 32768 --timeout 130", "an H100 GPU"),
          ("fla_ops_gpu_one_direction", "--ops chunk_gla --rounds 2 --tokens 32768 --per-kernel --timeout 150 "
           "--name fla_ops_gpu_one_direction", "an H200 GPU"),
          ("fla_ops_gpu_sixteen_bits", "--ops chunk_gla,chunk_rwkv6,parallel_attn --rounds 2 --tokens 32768 "
           "--timeout 130 --name fla_ops_gpu_sixteen_bits", "an H200 GPU"),
          ("fla_ops_gpu_text_route", "--ops chunk_gla --rounds 3 --tokens 32768 --timeout 160 --per-kernel "
           "--name fla_ops_gpu_text_route", "an H200 GPU"))),
    *(Removed(f"{name}.jsonl", f"python benchmarks/liger_ops_gpu.py {flags} --name {name} {_OUT}",
              needs=needs, note=f"the rows of {name}.md")
      for name, flags, needs in (
          ("liger_ops_gpu_b", "--ops block_rms_norm,llama4_rope,rope --rounds 2 --timeout 150", "an H200 GPU"),
          ("liger_ops_gpu_c", "--ops neighborhood_attention,mhc,qwen2vl_mrope --rounds 1 --text --timeout 120",
           "an H200 GPU"),
          ("liger_ops_gpu_mhc", "--ops mhc --rounds 2 --timeout 120", "an H200 GPU"),
          ("liger_ops_gpu_na_h100", "--ops neighborhood_attention --rounds 2", "an H100 GPU"),
          ("liger_ops_gpu_na_h100_rounds5", "--ops neighborhood_attention --rounds 5", "an H100 GPU"),
          ("liger_ops_gpu_na_sixteen_bits", "--ops neighborhood_attention --rounds 3", "an H200 GPU"),
          ("liger_ops_gpu_one_direction", "--ops llama4_rope,mhc,neighborhood_attention --rounds 2 --timeout 200",
           "an H200 GPU"))),
    Removed("fuzz_gpu_seed79.md", f"python benchmarks/fuzz_gpu.py --cases 500 --seed 79 {_OUT}",
            note="fuzz_gpu.md of that run, renamed: PASS, 500 cases, 0 failures; no page cites it"),
    Removed("gluon_matmul_gpu_guards.md", "python benchmarks/gluon_forms_gpu.py matmul --rounds 3",
            note="gluon_matmul_gpu.md of the run with guard pruning, renamed: no page cites it"),
)


def removed_named(name: str) -> Removed:
    for entry in REMOVED:
        if entry.name == name:
            return entry
    raise SystemExit(f"regenerate_results: {name} is not a removed file (the list: run without arguments)")


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", REPO, *args], check=True, capture_output=True, text=True).stdout


def restore(entry: Removed) -> str:
    """Write the file as it was in the last commit that had it; return that commit."""
    path = entry.path
    deleted_in = _git("log", "-1", "--diff-filter=D", "--format=%H", "--", path).strip()
    if not deleted_in:
        raise SystemExit(f"regenerate_results: no commit in this checkout's history removed {path}")
    content = subprocess.run(["git", "-C", REPO, "show", f"{deleted_in}^:{path}"], check=True,
                             capture_output=True).stdout
    with open(os.path.join(REPO, path), "wb") as f:
        f.write(content)
    return f"{deleted_in}^"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restore", nargs="+", metavar="FILE", help="restore these files from git history")
    parser.add_argument("--restore-all", action="store_true", help="restore every removed file from git history")
    parser.add_argument("--command", metavar="FILE", help="print the command that writes FILE")
    args = parser.parse_args(argv)
    if args.command:
        entry = removed_named(args.command)
        print(entry.command or f"{entry.name}: {entry.needs} ({entry.note})")
        return 0
    if args.restore or args.restore_all:
        for entry in REMOVED if args.restore_all else [removed_named(n) for n in args.restore]:
            print(f"{entry.name}: restored from {restore(entry)}")
        return 0
    for entry in REMOVED:
        print(f"{entry.name if entry.folder == 'results' else entry.path}\n    needs: {entry.needs}" + (f"\n    run:   {entry.command}" if entry.command else "")
              + (f"\n    note:  {entry.note}" if entry.note else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
