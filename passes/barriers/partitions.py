"""The warp group that runs each op of a warp-specialized kernel (``ttg.warp_specialize``).

A ``ttg.warp_specialize`` op has a default region, run by the kernel's ``num_warps`` warps, and
worker partitions, each run by warps of its own (``partition0(...) num_warps(4) {...}``)::

    tt.func @kernel(...) {
      ...                                   <- default warp group (warps 0..3)
      ttg.warp_specialize(%a, %b)
      default { ... ttg.warp_yield }        <- default warp group
      partition0(%x: ...) num_warps(4) {    <- partition 0: warps 4..7, barrier 2
        ... ttg.warp_return }
      partition1(%x: ...) num_warps(2) {    <- partition 1: warps 8..9, barrier 3
        ... ttg.warp_return } : (...) -> ()
      ...                                   <- default warp group
    }

This module answers, for an op, which ``lowering.thread_group.ThreadGroup`` runs it, the way
Triton's own lowering assigns warps and barriers (3.6 to 3.9: ``AllocateWarpGroups`` places the
partitions after the default warps, the largest first; the warp-specialize lowering gives the
default group barrier 0 and partition i barrier 2 + i, and rewrites every CTA barrier of the
function accordingly).  Ops of kernels without warp specialization run in the whole CTA (None).

Where an island could not be made exactly right, the answer is a reason, and the op is left to
Triton: a function called from a warp-specialized kernel (Triton does not rewrite the callee's
barriers: they wait for the whole CTA), a partition that would not start at a multiple of its
size (our warp ids are masked), more partitions than the hardware has named barriers, or a
module whose text does not say a partition's warp count.
"""

from __future__ import annotations

import re
from typing import Optional, Union

from ...lowering.thread_group import (DEFAULT_GROUP_BARRIER, FIRST_PARTITION_BARRIER, HARDWARE_BARRIERS,
                                      ThreadGroup)
from ..ir.snapshot import Module, Operation, ops_under

WARP_SPECIALIZE = "ttg.warp_specialize"
PARTITIONS = "ttg.warp_specialize.partitions"

# partition0(%arg3: !tt.ptr<f32> loc(unknown)) num_warps(4) {   (one line per partition header)
_PARTITION_HEADER = re.compile(r"^\s*partition(\d+)\(.*\) num_warps\((\d+)\) \{\s*$", re.M)


class WarpGroups:
    """Which warp group runs each op of ``module``: ``group_of(op)`` is a ``ThreadGroup`` (None
    for the whole CTA of a kernel without warp specialization) or a string saying why an island
    there is left to Triton."""

    def __init__(self, module: Module):
        self.module = module
        self._specializes = [op for op in module.walk() if op.name == WARP_SPECIALIZE]
        self._problem = ""
        # (ws op id, partition index) -> its group, or why an island there is left to Triton
        self._partition_groups: dict[tuple[int, int], Union[ThreadGroup, str]] = {}
        self._default: dict[int, ThreadGroup] = {}                         # function op id -> group
        self._unsafe_functions: dict[str, str] = {}                        # symbol -> why
        if self._specializes:
            self._assign(module)

    # ------------------------------------------------------------------ the assignment
    def _assign(self, module: Module) -> None:
        base = module.num_warps
        warp_counts = _partition_warp_counts(module.print(), len(self._specializes))
        if base is None or warp_counts is None:
            self._problem = ("a warp-specialized kernel whose partition warp counts (or ttg.num-warps) could not "
                             "be read")
            return
        # Triton pads every warp_specialize to the same number of extra warp groups of 4 warps.
        extra = max(sum(counts) for counts in warp_counts)
        cta_warps = base + -(-extra // 4) * 4
        for ws, counts in zip(self._specializes, warp_counts):
            function = _function_of(ws)
            self._default[id(function)] = ThreadGroup(base, 0, cta_warps, DEFAULT_GROUP_BARRIER,
                                                      "default warp group")
            starts = _start_warps(base, counts)
            for index, (warps, start) in enumerate(zip(counts, starts)):
                barrier = FIRST_PARTITION_BARRIER + index
                key = (id(ws), index)
                if barrier >= HARDWARE_BARRIERS:
                    self._partition_groups[key] = (f"partition {index} of a warp-specialized kernel: Triton has no "
                                                   f"named barrier left for it")
                elif warps & (warps - 1) or start % warps:
                    self._partition_groups[key] = (f"partition {index} of a warp-specialized kernel: its {warps} "
                                                   f"warps start at warp {start}, not a multiple of its warp count "
                                                   f"(our warp ids are masked to the partition)")
                else:
                    self._partition_groups[key] = ThreadGroup(warps, start, cta_warps, barrier, f"partition {index}")
        for function_op in {id(_function_of(ws)): _function_of(ws) for ws in self._specializes}.values():
            self._mark_callees(function_op)

    def _mark_callees(self, function_op: Operation) -> None:
        """Functions called (transitively) from a warp-specialized kernel: their barriers stay
        whole-CTA barriers in Triton's lowering, which the worker warps never reach."""
        functions = {op.symbol: op for op in self.module.walk() if op.name in ("tt.func", "func.func")}
        work = [function_op]
        while work:
            current = work.pop()
            for op in ops_under(current):
                if op.name != "tt.call":
                    continue
                callee = op.callee
                if callee and callee not in self._unsafe_functions:
                    self._unsafe_functions[callee] = (f"in function @{callee}, called from the warp-specialized "
                                                      f"kernel @{function_op.symbol}: its barriers would wait for "
                                                      f"every warp of the CTA")
                    if callee in functions:
                        work.append(functions[callee])

    # ------------------------------------------------------------------ queries
    def group_of(self, op: Operation) -> Union[Optional[ThreadGroup], str]:
        if not self._specializes:
            return None
        function = _function_of(op)
        if function is not None and function.symbol in self._unsafe_functions:
            return self._unsafe_functions[function.symbol]
        if function is None or id(function) not in self._default:
            return None      # a function without warp specialization, not called from one
        if self._problem:
            return self._problem
        partition = _partition_of(op)
        if partition is None:
            return self._default[id(function)]
        ws, index = partition
        return self._partition_groups.get((id(ws), index), f"partition {index} of a warp-specialized kernel: "
                                                           f"its warp count could not be read")


def layout_warps_problem(group: Optional[ThreadGroup], *layouts) -> str:
    """Why an island for these distributed layouts cannot run in ``group`` ("" if it can)."""
    if group is None:
        return ""
    for layout in layouts:
        warps = layout.in_dims.get("warp", 1)
        if warps != group.warps:
            return f"a layout of {warps} warps in the {group.name} of {group.warps} warps"
    return ""


def _partition_warp_counts(text: str, expected: int) -> Optional[list[list[int]]]:
    """The warp count of each partition of each ``ttg.warp_specialize`` of the printed module,
    in text order (None if the text does not show them all)."""
    starts = [m.start() for m in re.finditer(r"\bttg\.warp_specialize\(", text)]
    if len(starts) != expected:
        return None
    counts = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(text)
        headers = [(int(m.group(1)), int(m.group(2))) for m in _PARTITION_HEADER.finditer(text, start, end)]
        if [index for index, _ in headers] != list(range(len(headers))) or not headers:
            return None
        counts.append([warps for _, warps in headers])
    return counts


def _start_warps(base: int, counts: list[int]) -> list[int]:
    """Each partition's first warp, as Triton's AllocateWarpGroups places them: after the default
    warps, the largest partition first (ties in index order)."""
    starts = [0] * len(counts)
    start = base
    for index in sorted(range(len(counts)), key=lambda i: -counts[i]):
        starts[index] = start
        start += counts[index]
    return starts


def _function_of(op: Operation) -> Optional[Operation]:
    current = op
    while current is not None and current.name not in ("tt.func", "func.func"):
        current = current.parent_op
    return current


def _partition_of(op: Operation) -> Optional[tuple[Operation, int]]:
    """(the ``ttg.warp_specialize``, partition index) whose worker partition holds ``op``."""
    current = op
    while current is not None:
        parent = current.parent_op
        if parent is not None and parent.name == PARTITIONS:
            region = current.parent.parent
            return parent.parent_op, next(i for i, r in enumerate(parent.regions) if r is region)
        current = parent
    return None
