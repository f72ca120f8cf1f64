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
optimum of the program is the cheapest assignment.

**Objective.**  Summed (``pipes=False``): the scalar costs, added up.  Busiest pipe
(``pipes=True``, what ``ll-assign-layouts`` does by default): every variable carries a
:class:`.pipe_time.Work` vector instead of a number, and one more variable ``t`` must be at
least each pipe's total (the work no choice changes, a constant, plus the chosen terms) and at
least the DRAM floor; the program minimises ``t + TIE * summed cost``, the small second term
breaking ties (where the floor or an unchanged pipe bounds ``t``, the cheapest assignment in
instructions is taken).  A sum of terms is linear, so ``max`` over pipes stays a linear program
in this form.  Worked example: stock puts 60 units on the shared pipe and 30 on the ALU; a
candidate moves 20 shared units to 25 ALU units.  Summed, it costs 5 more and loses; as the
busiest pipe it gives ``max(40, 55) = 55 < 60`` and wins, which is what the row-sum study of
docs/studies.md measured where the shared pipe was the bound.  SciPy's ``milp`` (HiGHS) solves it with a
time limit; a graph whose nodes all have one candidate needs no solver at all, and one with at
most ``ENUMERATION_LIMIT`` assignments is solved exactly by trying each (the continuous variables
then take the least values their rows allow, which is what minimising gives them, since no
variable's work is negative).  Deterministic: variables are numbered in the graph's order, ties
between enumerated assignments go to the first in the candidates' order, and HiGHS is run
single-threaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .layout_graph import LayoutGraph
from .pipe_time import PIPES, Work

TIME_LIMIT_SECONDS = 2.0
TIE = 1e-3        # weight of the summed cost beside the busiest pipe's time (pipes=True)
# Programs with at most this many assignments of their binaries are solved by trying them all
# (:func:`_enumerate`): exact, and an order of magnitude faster than setting up and solving HiGHS
# for even a program of ten variables (most kernels' programs are that small; timings:
# docs/layout-assignment.md, 'What the model rests on').
ENUMERATION_LIMIT = 1024


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
    return sum(costs.node(i, key) for i, key in enumerate(keys)) + conversion_cost(graph, keys, costs)


def conversion_cost(graph: LayoutGraph, keys: list[str], costs: Costs) -> float:
    """The conversions' part of :func:`assignment_cost`: every use whose value arrives in
    another layout than it needs, loop-weighted; uses that may share one conversion (the same
    value needed in the same layout) pay for it once."""
    total = 0.0
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
    return _plus_conversions(total, graph, graph.uses, keys, costs)


def _plus_conversions(total: Work, graph: LayoutGraph, uses, keys: list[str], costs: Costs) -> Work:
    """``total`` plus the work of the conversions ``uses`` need under ``keys``, loop-weighted;
    uses that may share one conversion (the same value needed in the same layout) pay for it
    once."""
    needed: dict[tuple[int, str], Work] = {}
    for use in uses:
        provided, required = graph.value_encoding(use.value, keys), graph.requirement(use, keys)
        work = costs.conversion_work(use, provided, required).scaled(use.weight)
        if use.private:
            total = total + work
        else:
            needed[(id(use.value), required)] = work
    for work in needed.values():
        total = total + work
    return total


def least_work(graph: LayoutGraph, costs: Costs) -> Work:
    """A lower bound, per pipe, of :func:`assignment_work` over *every* assignment of the graph's
    candidates, without pricing a single candidate conversion: the fixed ops' work, each node's
    least work over its candidates (pipe by pipe, so the bound may mix candidates), and only the
    conversions no choice changes (both ends fixed or with one candidate); every other conversion
    might be free.  ``ll-assign-layouts`` skips the solver where even this bound does not beat
    Triton's assignment by the margin: most kernels, where the conversions a choice could touch
    are a small part of their time, pay for pricing their stock conversions and nothing more.

    Example: stock's shared pipe holds 100 units, 8 of them a conversion the assignment could
    remove, and its only changeable node does the same ALU work in every candidate: the bound is
    92 on that pipe, a gain of at most 8%, under a 10% margin, so no assignment can be accepted."""
    total = costs.fixed_work
    for i, node in enumerate(graph.nodes):
        works = [costs.node_work(i, key) for key in node.candidates]
        total = total + Work(*(min(getattr(w, name) for w in works) for name in ("shared", "alu", "sync", "total")))

    def settled(index) -> bool:
        return index is None or len(graph.nodes[index].candidates) == 1

    fixed_uses = [use for use in graph.uses if settled(use.producer) and settled(use.consumer)]
    return _plus_conversions(total, graph, fixed_uses, graph.stock_keys(), costs)


class _Program:
    """Variables, their work and the constraints of the integer program, built up in order.
    ``constant``: the work no choice changes (it matters to the busiest pipe, not to a sum)."""

    def __init__(self):
        self.work: list[Work] = []
        self.integer: list[int] = []
        self.rows: list[tuple[dict[int, float], float, float]] = []   # (coefficients, low, high)
        self.constant = Work()

    def variable(self, work: Work, integer: bool) -> int:
        self.work.append(work)
        self.integer.append(1 if integer else 0)
        return len(self.work) - 1

    def row(self, coefficients: dict[int, float], low: float, high: float) -> None:
        self.rows.append((coefficients, low, high))


def solve(graph: LayoutGraph, costs: Costs, pipes: bool = False, floor: float = 0.0) -> Solution:
    """The cheapest assignment of the graph's candidates: the least summed cost, or with
    ``pipes`` (which needs ``costs.node_work`` and ``costs.conversion_work``) the least busiest
    pipe (:meth:`.pipe_time.Work.time` with the DRAM ``floor``), ties broken by the sum."""
    stock = graph.stock_keys()
    if all(len(node.candidates) == 1 for node in graph.nodes):
        # each node's one candidate: its own key, unless a backend requirement took that out
        only = [node.candidates[0] for node in graph.nodes]
        return Solution(only, assignment_cost(graph, only, costs), True, "no choice")
    if pipes and (costs.node_work is None or costs.conversion_work is None):
        raise ValueError("solve(pipes=True) needs the per-pipe costs (Costs.node_work, Costs.conversion_work)")
    program, x = _build_program(graph, costs, pipes)
    assignments = 1
    for node in graph.nodes:
        assignments *= len(node.candidates)
    if assignments <= ENUMERATION_LIMIT:
        return _read_solution(graph, costs, x, _enumerate(program, x, pipes, floor), stock)
    # With pipes, half the time limit each for the two programs below (a compile waits at most
    # the limit, as with the summed program alone).
    result = _run_milp(program, pipes, floor, TIME_LIMIT_SECONDS / 2 if pipes else TIME_LIMIT_SECONDS)
    solution = _read_solution(graph, costs, x, result, stock)
    if pipes and not solution.optimal:
        # The busiest-pipe program's relaxation is weak (a max of sums): on a large graph HiGHS
        # may stop at the time limit far from the optimum, where the summed program, whose
        # relaxation is tight, has an answer within a few percent.  Take whichever is faster.
        summed_program, summed_x = _build_program(graph, costs)
        summed = _read_solution(graph, costs, summed_x, _run_milp(summed_program, time_limit=TIME_LIMIT_SECONDS / 2),
                                stock)
        if assignment_work(graph, summed.keys, costs).time(floor) < assignment_work(graph, solution.keys, costs).time(floor):
            return Solution(summed.keys, summed.cost, False, f"{solution.status}; the summed program's answer is faster")
    return solution


def _read_solution(graph: LayoutGraph, costs: Costs, x: list[list], result, stock: list[str]) -> Solution:
    if result.x is None:
        return Solution(stock, assignment_cost(graph, stock, costs), False, f"solver: {result.message}")
    keys = []
    for i, node in enumerate(graph.nodes):
        if x[i][0] is None:
            keys.append(node.candidates[0])
        else:
            keys.append(node.candidates[int(np.argmax([result.x[v] for v in x[i]]))])
    return Solution(keys, assignment_cost(graph, keys, costs), result.status == 0, result.message)


def _build_program(graph: LayoutGraph, costs: Costs, pipes: bool = False) -> tuple[_Program, list[list]]:
    """The program's variables and rows; ``x[n][k]``: node n's choice variable for candidate k
    (``[None]`` for a node with one candidate, always taken).  Terms that no choice changes go
    to ``program.constant``."""
    program = _Program()
    program.constant = costs.fixed_work if pipes else Work()

    def node_work(i: int, key: str) -> Work:
        return costs.node_work(i, key) if pipes else Work(total=costs.node(i, key))

    def conversion_work(use, provided: str, required: str) -> Work:
        if pipes:
            return costs.conversion_work(use, provided, required).scaled(use.weight)
        return Work(total=use.weight * costs.conversion(use, provided, required))

    x: list[list] = []
    for i, node in enumerate(graph.nodes):
        if len(node.candidates) == 1:
            x.append([None])
            program.constant = program.constant + node_work(i, node.candidates[0])
            continue
        x.append([program.variable(node_work(i, key), True) for key in node.candidates])
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
                    _charge_pair(program, var_p, var_c, conversion_work(use, enc_p, enc_c))
            continue
        first_use.setdefault(id(use.value), use)
        for var_c, enc_c in required:
            needs.setdefault(id(use.value), {}).setdefault(enc_c, []).append(var_c)
    for value_id, per_layout in needs.items():
        use = first_use[value_id]
        provided = choices(use.producer, graph.value_encoding(use.value, stock), True)
        for layout, consumer_vars in per_layout.items():
            charges = [conversion_work(use, enc_p, layout) for _, enc_p in provided]
            if not any(_nonzero(work) for work in charges):
                continue
            needed = None                        # a fixed consumer: always needed
            if None not in consumer_vars:
                needed = program.variable(Work(), False)
                for var_c in consumer_vars:
                    program.row({needed: 1.0, var_c: -1.0}, 0.0, np.inf)
            for (var_p, _), work in zip(provided, charges):
                _charge_pair(program, var_p, needed, work)
    return program, x


def _nonzero(work: Work) -> bool:
    return any((work.total, work.sync, *(getattr(work, pipe) for pipe in PIPES)))


def _charge_pair(program: _Program, var_a, var_b, work: Work) -> None:
    """Charge ``work`` when both choices are taken (a variable of None: always taken)."""
    if not _nonzero(work):
        return
    if var_a is None and var_b is None:
        program.constant = program.constant + work
        return
    if var_a is None or var_b is None:
        var = var_a if var_b is None else var_b
        program.work[var] = program.work[var] + work
        return
    z = program.variable(work, False)
    program.row({z: 1.0, var_a: -1.0, var_b: -1.0}, -1.0, np.inf)


@dataclass(frozen=True)
class _Enumerated:
    """The best assignment found by :func:`_enumerate`, shaped as ``milp``'s result."""

    x: np.ndarray
    fun: float
    status: int = 0
    message: str = "every assignment tried"


def _enumerate(program: _Program, x: list[list], pipes: bool = False, floor: float = 0.0) -> _Enumerated:
    """The program's optimum by trying every assignment of its binaries (one candidate per node,
    in ``itertools.product`` order of the candidates).  Every other variable is a conversion's
    indicator whose rows read ``v - sum(others) >= low``; with no negative work, the optimum sets
    it to ``max(0, low + sum(others))`` over its rows, computed in the order the variables were
    made (a row refers only to earlier ones).  Example: ``z >= x_a + x_b - 1`` gives z = 1 exactly
    when both choices are taken."""
    count = len(program.work)
    choosing = [variables for variables in x if variables[0] is not None]
    shape = [len(variables) for variables in choosing]
    total = int(np.prod(shape)) if shape else 1
    values = np.zeros((total, count))
    picks = np.indices(shape).reshape(len(shape), -1).T if shape else np.zeros((1, 0), dtype=int)
    for n, variables in enumerate(choosing):
        values[np.arange(total), np.array(variables)[picks[:, n]]] = 1.0
    binary = {v for variables in choosing for v in variables}
    lower_rows: dict[int, list] = {}
    for coefficients, low, _high in program.rows:
        own = [v for v, c in coefficients.items() if c == 1.0 and v not in binary]
        if len(own) == 1 and all(c == -1.0 for v, c in coefficients.items() if v != own[0]):
            lower_rows.setdefault(own[0], []).append((low, [v for v in coefficients if v != own[0]]))
    for v in range(count):
        if v in binary:
            continue
        bound = np.zeros(total)
        for low, others in lower_rows.get(v, []):
            bound = np.maximum(bound, low + values[:, others].sum(axis=1))
        values[:, v] = bound
    summed = values @ np.array([work.total for work in program.work])
    if pipes:
        busiest = np.full(total, floor, dtype=float)
        for pipe in PIPES:
            busiest = np.maximum(busiest, program.constant.pipe(pipe)
                                 + values @ np.array([work.pipe(pipe) for work in program.work]))
        objective = busiest + TIE * summed
    else:
        objective = summed
    best = int(np.argmin(objective))   # the first of equal ones: candidates' order
    return _Enumerated(values[best], float(objective[best]))


def _run_milp(program: _Program, pipes: bool = False, floor: float = 0.0, time_limit: float = TIME_LIMIT_SECONDS):
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    count = len(program.work)
    objective = [work.total for work in program.work]
    upper = [1.0] * count
    lower = [0.0] * count
    integer = list(program.integer)
    rows_in = list(program.rows)
    if pipes:
        # t >= constant_p + sum_v work_p(v) x_v for each pipe p, t >= floor; minimise t + TIE*sum.
        t = count
        count += 1
        objective = [TIE * cost for cost in objective] + [1.0]
        lower.append(floor)
        upper.append(np.inf)
        integer.append(0)
        for pipe in PIPES:
            coefficients = {v: work.pipe(pipe) for v, work in enumerate(program.work) if work.pipe(pipe)}
            coefficients[t] = -1.0
            rows_in.append((coefficients, -np.inf, -program.constant.pipe(pipe)))
    rows, cols, data, low, high = [], [], [], [], []
    for r, (coefficients, lo, hi) in enumerate(rows_in):
        for c, value in coefficients.items():
            rows.append(r)
            cols.append(c)
            data.append(value)
        low.append(lo)
        high.append(hi)
    matrix = coo_matrix((data, (rows, cols)), shape=(len(rows_in), count)).tocsr()
    return milp(np.array(objective), integrality=np.array(integer),
                bounds=Bounds(np.array(lower), np.array(upper)),
                constraints=[LinearConstraint(matrix, np.array(low), np.array(high))],
                options={"time_limit": time_limit, "presolve": True})
