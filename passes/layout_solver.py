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
from typing import Callable, Optional

import numpy as np

from .layout_graph import LayoutGraph
from .pipe_time import Work

TIME_LIMIT_SECONDS = 2.0


@dataclass(frozen=True)
class Costs:
    """The model, as functions of encodings (see :mod:`.layout_costs`)."""

    node: Callable[[int, str], float]                     # (node index, key) -> work, loop-weighted
    conversion: Callable[[object, str, str], float]       # (use, from, to) -> one conversion, unweighted
    # The same, per pipe (.pipe_time.Work); None: a model with the scalar costs only.
    node_work: Optional[Callable[[int, str], Work]] = None
    conversion_work: Optional[Callable[[object, str, str], Work]] = None
    fixed_work: Work = Work()                             # ops no assignment changes


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


def assignment_work(graph: LayoutGraph, keys: list[str], costs: Costs) -> Work:
    """:func:`assignment_cost` per pipe (needs ``costs.node_work`` and ``costs.conversion_work``)."""
    total = costs.fixed_work
    for i, key in enumerate(keys):
        total = total + costs.node_work(i, key)
    needed: dict[tuple[int, str], Work] = {}
    for use in graph.uses:
        provided, required = graph.value_encoding(use.value, keys), graph.requirement(use, keys)
        work = costs.conversion_work(use, provided, required).scaled(use.weight)
        if use.private:
            total = total + work
        else:
            needed[(id(use.value), required)] = work
    for work in needed.values():
        total = total + work
    return total


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
    program, x = _build_program(graph, costs)
    result = _run_milp(program)
    if result.x is None:
        return Solution(stock, assignment_cost(graph, stock, costs), False, f"solver: {result.message}")
    keys = []
    for i, node in enumerate(graph.nodes):
        if x[i][0] is None:
            keys.append(node.candidates[0])
        else:
            keys.append(node.candidates[int(np.argmax([result.x[v] for v in x[i]]))])
    return Solution(keys, assignment_cost(graph, keys, costs), result.status == 0, result.message)


def _build_program(graph: LayoutGraph, costs: Costs) -> tuple[_Program, list[list]]:
    """The program's variables and rows; ``x[n][k]``: node n's choice variable for candidate k
    (``[None]`` for a node with one candidate, always taken).  Terms that no choice changes are
    left out: they are the same for every assignment."""
    program = _Program()
    x: list[list] = []
    for i, node in enumerate(graph.nodes):
        if len(node.candidates) == 1:
            x.append([None])
            continue
        x.append([program.variable(costs.node(i, key), True) for key in node.candidates])
        program.row({v: 1.0 for v in x[-1]}, 1.0, 1.0)
    stock = graph.stock_keys()

    def choices(node_index, fixed_encoding, as_result: bool, position: int = -1):
        """(variable or None, encoding) per choice of a producer/consumer (None: fixed);
        ``position``: the consumer's operand number."""
        if node_index is None:
            return [(None, fixed_encoding)]
        node = graph.nodes[node_index]
        return [(x[node_index][k], node.rule.result(key) if as_result else
                 key if node.rule.kind == "convert" else node.rule.operand(key, position))
                for k, key in enumerate(node.candidates)]

    needs: dict[int, dict[str, list]] = {}       # id(value) -> layout -> consumer variables (None: fixed)
    first_use: dict[int, object] = {}
    for use in graph.uses:
        required = choices(use.consumer, graph.requirement(use, stock), False, use.operand)
        if use.private:
            for var_p, enc_p in choices(use.producer, graph.value_encoding(use.value, stock), True):
                for var_c, enc_c in required:
                    _charge_pair(program, var_p, var_c, use.weight * costs.conversion(use, enc_p, enc_c))
            continue
        first_use.setdefault(id(use.value), use)
        for var_c, enc_c in required:
            needs.setdefault(id(use.value), {}).setdefault(enc_c, []).append(var_c)
    for value_id, per_layout in needs.items():
        use = first_use[value_id]
        provided = choices(use.producer, graph.value_encoding(use.value, stock), True)
        for layout, consumer_vars in per_layout.items():
            charges = [use.weight * costs.conversion(use, enc_p, layout) for _, enc_p in provided]
            if not any(charges):
                continue
            needed = None                        # a fixed consumer: always needed
            if None not in consumer_vars:
                needed = program.variable(0.0, False)
                for var_c in consumer_vars:
                    program.row({needed: 1.0, var_c: -1.0}, 0.0, np.inf)
            for (var_p, _), cost in zip(provided, charges):
                _charge_pair(program, var_p, needed, cost)
    return program, x


def _charge_pair(program: _Program, var_a, var_b, cost: float) -> None:
    """Charge ``cost`` when both choices are taken (a variable of None: always taken)."""
    if cost == 0 or (var_a is None and var_b is None):
        return
    if var_a is None or var_b is None:
        program.objective[var_a if var_b is None else var_b] += cost
        return
    z = program.variable(cost, False)
    program.row({z: 1.0, var_a: -1.0, var_b: -1.0}, -1.0, np.inf)


def _run_milp(program: _Program):
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

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
    return milp(np.array(program.objective), integrality=np.array(program.integer),
                bounds=Bounds(np.zeros(count), np.ones(count)),
                constraints=[LinearConstraint(matrix, np.array(low), np.array(high))],
                options={"time_limit": TIME_LIMIT_SECONDS, "presolve": True})
