"""Choosing one key per node of a layout graph at the least modelled cost: an integer program.

The cost of an assignment (:func:`assignment_cost`) is the nodes' own work (elementwise ops,
reductions) plus every conversion it needs, each times how often it runs.  Conversions depend
on *pairs* of choices (what the producer gives, what the consumer asks for), and a value that
several consumers need in one layout is converted once, so the program has, as in Alpa's and
TVM's layout tuners:

* ``x[n, k]`` (binary): node ``n`` takes its candidate ``k``; one per node;
* ``a[v, t]`` (0..1): value ``v`` is needed in layout ``t`` (``>= x`` of every consumer choice
  that asks for ``t``; 1 when a fixed consumer does);
* ``z[v, s, t]`` (0..1): ``v`` is produced in ``s`` and needed in ``t``
  (``>= x[producer, s] + a[v, t] - 1``), at the cost of converting ``s`` to ``t``;
* for a ``ttg.convert_layout`` (a private use): ``y >= x[producer, s] + x[convert, k] - 1``.

Minimising makes ``a``, ``z`` and ``y`` take the values 0 or 1 that the binaries imply, so the
optimum of the program is the cheapest assignment.  SciPy's ``milp`` (HiGHS) solves it with a
time limit; a graph whose nodes all have one candidate needs no solver at all.  Deterministic:
variables are numbered in the graph's order, and HiGHS is run single-threaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .layout_graph import LayoutGraph

TIME_LIMIT_SECONDS = 2.0


@dataclass(frozen=True)
class Costs:
    """The model, as functions of encodings (see :mod:`.layout_costs`)."""

    node: Callable[[int, str], float]                     # (node index, key) -> work, loop-weighted
    conversion: Callable[[object, str, str], float]       # (use, from, to) -> one conversion, unweighted


@dataclass(frozen=True)
class Solution:
    keys: list[str]
    cost: float
    optimal: bool
    status: str


def assignment_cost(graph: LayoutGraph, keys: list[str], costs: Costs) -> float:
    """The modelled cost of the assignment ``keys`` (node i takes ``keys[i]``)."""
    total = sum(costs.node(i, key) for i, key in enumerate(keys))
    needed: dict[tuple[int, str], float] = {}
    for use in graph.uses:
        provided, required = graph.value_encoding(use.value, keys), graph.requirement(use, keys)
        if use.private:
            total += use.weight * costs.conversion(use, provided, required)
        else:
            needed[(id(use.value), required)] = use.weight * costs.conversion(use, provided, required)
    return total + sum(needed.values())


class _Program:
    """Variables, objective and constraints of the integer program, built up in order."""

    def __init__(self):
        self.objective: list[float] = []
        self.integer: list[int] = []
        self.rows: list[tuple[dict[int, float], float, float]] = []   # (coefficients, low, high)

    def variable(self, cost: float, integer: bool) -> int:
        self.objective.append(cost)
        self.integer.append(1 if integer else 0)
        return len(self.objective) - 1

    def row(self, coefficients: dict[int, float], low: float, high: float) -> None:
        self.rows.append((coefficients, low, high))


def solve(graph: LayoutGraph, costs: Costs) -> Solution:
    """The cheapest assignment of the graph's candidates."""
    stock = graph.stock_keys()
    if all(len(node.candidates) == 1 for node in graph.nodes):
        return Solution(stock, assignment_cost(graph, stock, costs), True, "no choice")
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    program = _Program()
    # x[n][k]: a variable index, or None where the node has a single candidate (always taken).
    x: list[list] = []
    for i, node in enumerate(graph.nodes):
        if len(node.candidates) == 1:
            x.append([None])
            continue
        x.append([program.variable(costs.node(i, key), True) for key in node.candidates])
        program.row({v: 1.0 for v in x[-1]}, 1.0, 1.0)
    constant = sum(costs.node(i, node.candidates[0]) for i, node in enumerate(graph.nodes)
                   if len(node.candidates) == 1)

    def choices(node_index, fixed_encoding, as_result: bool):
        """(variable or None, encoding) per choice of a producer/consumer (None: fixed)."""
        if node_index is None:
            return [(None, fixed_encoding)]
        node = graph.nodes[node_index]
        out = []
        for k, key in enumerate(node.candidates):
            if as_result:
                encoding = node.rule.result(key)
            else:
                encoding = key if node.rule.kind == "convert" else node.rule.operand(key)
            out.append((x[node_index][k], encoding))
        return out

    def pair(var_a, var_b, cost: float) -> float:
        """Charge ``cost`` when both choices are taken; returns the part that is constant."""
        if cost == 0:
            return 0.0
        if var_a is None and var_b is None:
            return cost
        if var_a is None or var_b is None:
            program.objective[var_a if var_b is None else var_b] += cost
            return 0.0
        z = program.variable(cost, False)
        program.row({z: 1.0, var_a: -1.0, var_b: -1.0}, -1.0, np.inf)
        return 0.0

    needs: dict[int, dict[str, list]] = {}       # id(value) -> layout -> consumer variables (None: fixed)
    value_uses: dict[int, object] = {}
    for use in graph.uses:
        from_encoding = graph.value_encoding(use.value, graph.stock_keys())
        provided = choices(use.producer, from_encoding, True)
        required = choices(use.consumer, graph.requirement(use, graph.stock_keys()), False)
        if use.private:
            for var_p, enc_p in provided:
                for var_c, enc_c in required:
                    constant += pair(var_p, var_c, use.weight * costs.conversion(use, enc_p, enc_c))
            continue
        value_uses.setdefault(id(use.value), use)
        per_layout = needs.setdefault(id(use.value), {})
        for var_c, enc_c in required:
            per_layout.setdefault(enc_c, []).append(var_c)
    for value_id, per_layout in needs.items():
        use = value_uses[value_id]
        provided = choices(use.producer, graph.value_encoding(use.value, graph.stock_keys()), True)
        for layout, consumer_vars in per_layout.items():
            costs_here = [use.weight * costs.conversion(use, enc_p, layout) for _, enc_p in provided]
            if not any(costs_here):
                continue
            if None in consumer_vars:
                needed = None                    # a fixed consumer: always needed
            else:
                needed = program.variable(0.0, False)
                for var_c in consumer_vars:
                    program.row({needed: 1.0, var_c: -1.0}, 0.0, np.inf)
            for (var_p, _), cost in zip(provided, costs_here):
                constant += pair(var_p, needed, cost)

    count = len(program.objective)
    rows, cols, data, low, high = [], [], [], [], []
    for r, (coefficients, lo, hi) in enumerate(program.rows):
        for c, value in coefficients.items():
            rows.append(r)
            cols.append(c)
            data.append(value)
        low.append(lo)
        high.append(hi)
    matrix = coo_matrix((data, (rows, cols)), shape=(len(program.rows), count)).tocsr()
    result = milp(np.array(program.objective), integrality=np.array(program.integer),
                  bounds=Bounds(np.zeros(count), np.ones(count)),
                  constraints=[LinearConstraint(matrix, np.array(low), np.array(high))],
                  options={"time_limit": TIME_LIMIT_SECONDS, "presolve": True})
    if result.x is None:
        return Solution(stock, assignment_cost(graph, stock, costs), False, f"solver: {result.message}")
    keys = []
    for i, node in enumerate(graph.nodes):
        if x[i][0] is None:
            keys.append(node.candidates[0])
        else:
            keys.append(node.candidates[int(np.argmax([result.x[v] for v in x[i]]))])
    return Solution(keys, assignment_cost(graph, keys, costs), result.status == 0, result.message)
