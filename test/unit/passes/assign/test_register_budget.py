"""Registers as a hard limit of ll-assign-layouts (passes/assign/register_budget.py): the data loops
carry, counted as a lower bound of what a thread must hold, may not exceed the target's registers
per thread where Triton's layouts stay within them."""

from __future__ import annotations

import os

import pytest

from linear_layouts.lowering.target import target_named
from linear_layouts.passes.assign import assign_layouts
from linear_layouts.passes.assign.assign_layouts import assign_module
from linear_layouts.passes.assign.layout_graph import build_graph, propose_candidates
from linear_layouts.passes.ir.module_lines import ModuleLines
from linear_layouts.passes.assign.register_budget import peak_registers, register_overflow, value_registers
from linear_layouts.passes.ir.snapshot import parse_module

SM90 = target_named("sm_90")
B = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
# B's bases with every warp basis zero: each warp holds the whole 128x128 tile
REPLICATED = ("#ttg.linear<{register = [[0, 1], [0, 2], [0, 16], [0, 32], [0, 64], [16, 0], [32, 0], [64, 0], "
              "[8, 0]], lane = [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], warp = [[0, 0], [0, 0]], block = []}>")
HEADER = ('module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", '
          '"ttg.threads-per-warp" = 32 : i32} {')
# an outer loop carrying a 128x128 f32 tile and an inner loop carrying a 64x64 one (and pointers)
NESTED = f"""
#B = {B}
{HEADER}
  tt.func public @k(%x: tensor<128x128xf32, #B>, %y: tensor<64x64xf32, #B>, %p: tensor<64x64x!tt.ptr<f32>, #B>,
                    %out: tensor<128x128x!tt.ptr<f32>, #B>) {{
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c8 = arith.constant 8 : i32
    %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %x) -> (tensor<128x128xf32, #B>) : i32 {{
      %s:2 = scf.for %j = %c0 to %c8 step %c1 iter_args(%b = %y, %q = %p) -> (tensor<64x64xf32, #B>, tensor<64x64x!tt.ptr<f32>, #B>) : i32 {{
        %e = math.exp %b : tensor<64x64xf32, #B>
        scf.yield %e, %q : tensor<64x64xf32, #B>, tensor<64x64x!tt.ptr<f32>, #B>
      }}
      tt.store %s#1, %s#0 : tensor<64x64x!tt.ptr<f32>, #B>
      %n = math.exp %a : tensor<128x128xf32, #B>
      scf.yield %n : tensor<128x128xf32, #B>
    }}
    tt.store %out, %r : tensor<128x128x!tt.ptr<f32>, #B>
    tt.return
  }}
}}
"""


def _graph(text: str):
    module = parse_module(text)
    out = []

    def read(t):
        lines = ModuleLines(module, t)
        function = next(op for op in module.walk() if op.name == "tt.func")
        graph = build_graph(function, lines)
        propose_candidates(graph)
        out.append(graph)
        return t

    module.rewrite_text(read)
    return out[0]



def test_registers_of_a_value_count_distinct_elements_and_bits():
    graph = _graph(NESTED)
    x, y, p = graph.function.regions[0].blocks[0].arguments[:3]
    assert value_registers(B, x) == 128           # 128 x 128 / 128 threads
    assert value_registers(B, y) == 32            # 64 x 64 / 128 threads
    assert value_registers(REPLICATED, x) == 512  # every warp holds the tile: 128 x 128 / 32 lanes
    assert value_registers(B, p) == 0             # pointers: rebuilt from a base, not counted
    f16 = parse_module(NESTED.replace("128x128xf32", "128x128xf16")
                       .replace("128x128x!tt.ptr<f32>", "128x128x!tt.ptr<f16>"))
    x16 = next(op for op in f16.walk() if op.name == "tt.func").regions[0].blocks[0].arguments[0]
    assert value_registers(B, x16) == 64          # two 16-bit elements may share a register


def test_peak_is_the_inner_loop_with_what_the_outer_one_carries():
    graph = _graph(NESTED)
    peak, where = peak_registers(graph, graph.stock_keys())
    assert peak == 128 + 32 and where.name == "scf.for"
    inner = where
    assert inner.parent_op.name == "scf.for"      # the inner loop, inside the outer one


def _replicating_keys(graph):
    """Triton's keys, except the outer loop's carried tile in the replicated layout."""
    keys = graph.stock_keys()
    node = next(n for n in graph.nodes if n.op.name == "scf.for" and n.position == 0
                and n.op.parent_op.name == "tt.func")
    keys[node.index] = REPLICATED
    return keys


def test_an_assignment_over_the_limit_is_refused_with_the_numbers():
    graph = _graph(NESTED)
    assert register_overflow(graph, graph.stock_keys(), SM90) is None
    keys = _replicating_keys(graph)
    assert peak_registers(graph, keys)[0] == 512 + 32
    message = register_overflow(graph, keys, SM90)
    assert message is not None
    assert "needs at least 544 registers per thread, over sm_90's 255 (with Triton's layouts 160)" in message
    # AMD CDNA's 512 VGPRs and AGPRs: 544 is still over; a target with no known limit: no check
    assert "over gfx942's 512" in register_overflow(graph, keys, target_named("gfx942"))


def test_nothing_is_refused_where_tritons_layouts_are_over_the_limit_too():
    big = NESTED.replace("128x128", "256x256")      # 512 registers carried with Triton's layouts
    graph = _graph(big)
    assert peak_registers(graph, graph.stock_keys())[0] == 512 + 32
    assert register_overflow(graph, graph.stock_keys(), SM90) is None


def test_the_pass_keeps_tritons_layouts_when_the_assignment_would_spill(monkeypatch):
    """The pass asks the budget after the scratch check and keeps Triton's layouts with the
    budget's reason (a corpus kernel the pass changes, with the budget made to refuse)."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "lit", "corpus", "cuda90", "max_axis1.ttgir")
    text = open(path).read()
    accepted = assign_module(parse_module(text, path), SM90)
    assert accepted.functions[0].accepted
    calls = []

    def refuse(graph, keys, target):
        calls.append(target.name)
        return "it would spill (test)"
    monkeypatch.setattr(assign_layouts, "register_overflow", refuse)
    module = parse_module(text, path)
    kept = assign_module(module, SM90)
    assert calls == ["sm_90"] and not kept.functions[0].accepted
    assert kept.functions[0].reason == "registers: it would spill (test)"
    assert kept.functions[0].converts_after == kept.functions[0].converts_before
