"""The pipe-aware time of ``ll-assign-layouts`` and the reduction model beneath it: ``Work``
arithmetic, Triton's redux.sync (which combiners, which targets, which layouts), the cross-warp
stage as Triton lowers it, the work of ops no assignment changes, and an oracle: Triton's own
PTX has ``redux.sync`` exactly where the model says."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from linear_layouts.lowering.target import target_named
from linear_layouts.passes.assign.assign_layouts import assign_module
from linear_layouts.passes.assign.layout_costs import partial_warp_redux, reduction_work, uses_redux
from linear_layouts.passes.assign.layout_rules import combiner_is_redux, combiner_ops
from linear_layouts.passes.assign.pipe_time import Work
from linear_layouts.passes.ir.snapshot import parse_module

SM90 = target_named("sm_90")
ROWS = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 8], order = [1, 0]}>"
HEADER = ('module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:90", '
          '"ttg.threads-per-warp" = 32 : i32} {')


def test_work_adds_scales_and_takes_the_busiest_pipe():
    a, b = Work(shared=10.0, alu=4.0, sync=1.0, total=15.0), Work(shared=1.0, alu=20.0, total=21.0)
    s = a + b
    assert (s.shared, s.alu, s.sync, s.total) == (11.0, 24.0, 1.0, 36.0)
    assert a.scaled(2.0) == Work(20.0, 8.0, 2.0, 30.0)
    assert a.time() == 11.0 and a.bound() == "shared"        # barriers wait on every pipe
    assert s.time() == 25.0 and s.bound() == "alu"
    assert s.time(floor=30.0) == 30.0 and s.bound(floor=30.0) == "dram"
    assert Work().time() == 0.0


def _reduce_module(element: str, combiner: str, operands: int = 1) -> str:
    args = ", ".join(f"%x{i}: tensor<8x512x{element}, #R>" for i in range(operands))
    xs = ", ".join(f"%x{i}" for i in range(operands))
    block_args = ", ".join(f"%a{i}: {element}, %b{i}: {element}" for i in range(operands))
    types = ", ".join([f"tensor<8x512x{element}, #R>"] * operands)
    results = ", ".join([f"tensor<8x{element}, #ttg.slice<{{dim = 1, parent = #R}}>>"] * operands)
    body = f"%c = {combiner} %a0, %b0 : {element}\n        tt.reduce.return " + ", ".join(["%c"] * operands) \
        + " : " + ", ".join([element] * operands)
    return f"""
#R = {ROWS}
{HEADER}
  tt.func public @k({args}) {{
    %r{":" + str(operands) if operands > 1 else ""} = "tt.reduce"({xs}) <{{axis = 1 : i32}}> ({{
      ^bb0({block_args}):
        {body}
    }}) : ({types}) -> ({results})
    tt.return
  }}
}}
"""


def _reduce_op(text: str):
    return next(op for op in _walk(parse_module(text)) if op.name == "tt.reduce")


def _walk(module):
    from linear_layouts.passes.ir.snapshot import functions_with_bodies, ops_under
    for function in functions_with_bodies(module):
        yield from ops_under(function)


@pytest.mark.parametrize("element, combiner, operands, redux", [
    ("i32", "arith.addi", 1, True), ("i32", "arith.maxsi", 1, True), ("i16", "arith.xori", 1, True),
    ("i64", "arith.addi", 1, False),       # wider than 32 bits
    ("f32", "arith.addf", 1, False),       # not an integer
    ("i32", "arith.muli", 1, False),       # not a redux kind
    ("i32", "arith.addi", 2, False),       # two operands
])
def test_which_combiners_triton_lowers_with_redux(element, combiner, operands, redux):
    op = _reduce_op(_reduce_module(element, combiner, operands))
    assert combiner_is_redux(op) is redux
    assert combiner_ops(op) == 1


@pytest.mark.parametrize("target, lane_rounds, group_bits, partial, expected", [
    ("sm_90", 5, 0, False, 1), ("sm_80", 5, 0, False, 1), ("sm_90", 4, 1, False, 0), ("sm_90", 0, 5, True, 0),
    ("gfx942", 6, 0, True, 0), ("gfx942", 5, 0, True, 0),
    ("sm_90", 4, 1, True, 2),     # 16 lanes, one other group: a redux per group
    ("sm_90", 3, 1, True, 0),     # 8 lanes and another group: shuffles
    ("sm_90", 2, 0, True, 1),     # 4 lanes, the rest copies
    ("sm_90", 1, 0, True, 0),     # 2 lanes
    ("sm_90", 3, 2, True, 0),     # two other groups
])
def test_redux_needs_nvidia_sm80_and_enough_lanes(target, lane_rounds, group_bits, partial, expected):
    assert uses_redux(lane_rounds, target_named(target), group_bits, partial) == expected


def test_row_sums_cost_what_tritons_lowering_does():
    """The worked example of ``uses_redux`` and the cross-warp stage (8x512 i32, 8 warps along
    the rows, sm_90's constants): 8 redux + 8 stores, 1 load, 3 shuffle rounds, 1 store, 8 loads."""
    w = SM90.weights
    work = reduction_work(ROWS, (8, 512), 1, SM90, redux=True)
    access = w.shared_access + w.shared_wavefront
    assert work.shared == pytest.approx(8 * w.shuffle + 18 * access + 3 * w.shuffle)
    assert work.alu == pytest.approx(8 * w.alu_op + 3 * w.alu_op)
    assert work.sync == pytest.approx(2 * w.cta_barrier)
    assert work.total == pytest.approx(work.shared + work.alu + work.sync)
    # Without redux (a float sum): 5 shuffle rounds and adds for each of the 8 rows.
    plain = reduction_work(ROWS, (8, 512), 1, SM90, redux=False)
    assert plain.shared - work.shared == pytest.approx((40 - 8) * w.shuffle)
    assert plain.alu - work.alu == pytest.approx(40 * w.alu_op)
    # argmax: two values shuffled and stored, a combiner of 4 ops.
    pair = reduction_work(ROWS, (8, 512), 1, SM90, redux=False, operands=2, combine_ops=4)
    assert pair.shared == pytest.approx(2 * plain.shared)
    assert pair.alu == pytest.approx(4 * plain.alu)


LOOP_REDUCE = f"""
#R = {ROWS}
#V = #ttg.blocked<{{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}}>
{HEADER}
  tt.func public @k(%p: tensor<8x512x!tt.ptr<i32>, #R> {{tt.divisibility = 16 : i32}}, %out: tensor<8x!tt.ptr<i32>, #V>) {{
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %n = arith.constant 1024 : i32
    %zero = arith.constant dense<0> : tensor<8xi32, #ttg.slice<{{dim = 1, parent = #R}}>>
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<8xi32, #ttg.slice<{{dim = 1, parent = #R}}>>) : i32 {{
      %x = tt.load %p : tensor<8x512x!tt.ptr<i32>, #R>
      %r = "tt.reduce"(%x) <{{axis = 1 : i32}}> ({{
        ^bb0(%l: i32, %m: i32):
          %s = arith.addi %l, %m : i32
          tt.reduce.return %s : i32
      }}) : (tensor<8x512xi32, #R>) -> tensor<8xi32, #ttg.slice<{{dim = 1, parent = #R}}>>
      %b = arith.addi %a, %r : tensor<8xi32, #ttg.slice<{{dim = 1, parent = #R}}>>
      scf.yield %b : tensor<8xi32, #ttg.slice<{{dim = 1, parent = #R}}>>
    }}
    %c = ttg.convert_layout %acc : tensor<8xi32, #ttg.slice<{{dim = 1, parent = #R}}>> -> tensor<8xi32, #V>
    tt.store %out, %c : tensor<8x!tt.ptr<i32>, #V>
    tt.return
  }}
}}
"""


def test_fixed_loads_keep_the_shared_pipe_busy_and_the_remark_names_the_bound():
    """The loop's load is fixed (memory_ops off) but its L1 wavefronts count in the time: 1024
    iterations x 16 wavefronts a warp; the reduction's redux and cross-warp stage add to the same
    pipe, so the shared pipe is the bound and the remark says so."""
    f = assign_module(parse_module(LOOP_REDUCE), "sm_90", apply=False, dram_floor=False).functions[0]
    assert f.bound_before == "shared"
    w = SM90.weights
    reduce = reduction_work(ROWS, (8, 512), 1, SM90, redux=True)
    load_shared = 16 * w.shared_access + 16 * w.shared_wavefront       # 16 instructions of 128 bytes
    assert f.time_before >= 1024 * (reduce.shared + reduce.sync + load_shared) - 1e-6
    assert "bound: shared" in f.remark()


ORACLE = r"""
import json, sys
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget

@triton.jit
def k(X, Y, N: tl.constexpr, BLOCK_M: tl.constexpr, OP: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    x = tl.load(X + rows[:, None] * N + tl.arange(0, N)[None, :])
    if OP == 0:
        r = tl.sum(x, axis=1)
    elif OP == 1:
        r = tl.max(x, axis=1)
    else:
        r = tl.argmax(x, axis=1)
    tl.store(Y + rows, r)

out = {}
for name, dtype, op, n, warps in [("sum_i32", "*i32", 0, 512, 8), ("max_i32", "*i32", 1, 512, 4),
                                  ("sum_f32", "*fp32", 0, 512, 8), ("argmax_i32", "*i32", 2, 512, 8),
                                  ("sum_i32_narrow", "*i32", 0, 16, 4)]:
    src = triton.compiler.ASTSource(fn=k, signature={"X": dtype, "Y": dtype if op != 2 else "*i32",
                                    "N": "constexpr", "BLOCK_M": "constexpr", "OP": "constexpr"},
                                    constexprs={"N": n, "BLOCK_M": 8, "OP": op})
    c = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
    out[name] = {"ttgir": c.asm["ttgir"], "redux": c.asm["ptx"].count("redux.sync")}
json.dump(out, sys.stdout)
"""


def test_tritons_ptx_has_redux_exactly_where_the_model_says(tmp_path):
    """Oracle (Triton's own compiler, in a subprocess): for each reduction of a small kernel, the
    model's verdict (``combiner_is_redux`` and ``uses_redux`` for the operand's layout) agrees
    with whether Triton's PTX for sm_90 has ``redux.sync``."""
    script = tmp_path / "redux_oracle.py"       # @triton.jit needs its source in a file
    script.write_text(ORACLE)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "TRITON_DEFAULT_FP_FUSION": "1"})
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(run.stdout)
    from linear_layouts.passes.ir.layouts import tensor_layout_of
    from linear_layouts.passes.assign.layout_rules import encoding_of
    verdicts = {}
    for name, result in results.items():
        op = next(op for op in _walk(parse_module(result["ttgir"])) if op.name == "tt.reduce")
        operand = op.operands[0]
        layout = tensor_layout_of(encoding_of(operand), operand.tensor_type.shape)
        axis = layout.out_dim_names[1]
        lanes = layout.bases.get("lane", [])
        lane_rounds = sum(1 for basis in lanes if basis[layout.out_dim_names.index(axis)])
        group_bits = sum(1 for basis in lanes if any(basis)) - lane_rounds
        predicted = combiner_is_redux(op) and uses_redux(lane_rounds, SM90, group_bits, partial_warp_redux()) > 0
        verdicts[name] = (predicted, result["redux"] > 0)
    assert verdicts["sum_i32"] == (True, True)
    assert verdicts["sum_f32"] == (False, False)
    assert all(predicted == seen for predicted, seen in verdicts.values()), repr(verdicts)
