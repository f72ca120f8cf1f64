"""Advice for layouts picked by hand: what a kernel's layouts cost it, and what to write instead.

In Gluon the author writes every layout and no pass repairs a poor one; in Triton's own
language the compiler picks them.  For either, the report (``python -m linear_layouts report``)
reads each kernel's TTGIR and prices, with the cost model of ``ll-assign-layouts``
(``passes.assign.layout_costs``), these kinds of choice:

* **global accesses**: a ``tt.load`` or ``tt.store``'s vector width and the 32-byte sectors one
  warp touches, in the layout its pointers have, against the coalesced layout those pointers
  allow (``passes.assign.pointer_contiguity`` reads which dim is contiguous and how aligned; the
  coalesced layout keeps the kernel's lanes and warps).  Example: a 1024-element f32 copy with
  one element per thread uses 4-byte loads, 4 sectors per warp instruction and 8 instructions
  for 1024 elements over 4 warps; ``gl.BlockedLayout([4], [32], [4], [0])`` reads 16 bytes per
  thread, twice, with the same sectors in a quarter of the instructions;
* **conversions in loops**: a ``ttg.convert_layout`` inside a loop whose operand is defined
  outside it (the same conversion every iteration: convert once before the loop), or whose
  operand is a load in the loop that could load in the destination layout directly, at no
  higher access cost (the conversion goes);
* **shared-memory accesses**: the bank conflicts (extra wavefronts) of every store into and load
  from one ``ttg.local_alloc`` buffer with its shared layout, against the
  ``gl.SwizzledSharedLayout`` that makes the whole set cheapest (instructions plus wavefronts;
  swizzles searched over vector, phase and repeat).  Buffers a tensor-core op reads directly
  keep the layout the hardware asks for;
* **replicated data**: a loaded or stored tensor whose layout holds each element more than
  once, in several registers or several threads (the layout's tile is larger than the
  tensor): registers, work and accesses spent on copies.
* **epilogue stores**: a ``tt.store`` whose value is in a layout the hardware forces (an MMA
  accumulator's: ``#ttg.nvidia_mma`` v2/v3, ``#ttg.amd_mfma``, ``#ttg.amd_wmma``; a tcgen05
  ``tmem_load``'s result; ``epilogue_edit.forced_layout``) and whose pointers allow a wider
  access in a coalesced layout (a global-access finding of its own).  No layout variable is
  the author's to edit there: the suggestion is a conversion, ``y = gl.convert_layout(y,
  gl.BlockedLayout(...))``, with the work after it and the store's indices in that layout's
  slices.  Where to convert and into what are chosen by ``ll-resolve-auto-layouts`` on the
  kernel with the store and every op that only feeds it left automatic (:mod:`.epilogue_edit`);
  that edit is the one priced and applied.  Example: ``benchmarks/studies/epilogue_store.py``'s
  direct epilogue (bias and ReLU in the ``wgmma`` layout, 4-byte stores) is advised to convert
  right after ``acc.to(gl.float16)`` into ``gl.BlockedLayout([1, 8], ...)``: the bias loaded
  coalesced and 16-byte stores, the expert's converted epilogue.  The store's own
  global-access finding (its layout alone) gives way to it.

Each finding names the op's location, what the layout gives, the layout to write instead as a
Gluon expression (``gl.BlockedLayout(...)``, ``gl.SliceLayout(...)``; any other distributed
layout as ``gl.DistributedLinearLayout(...)``), and the modelled gain of the **whole kernel**:
its cost as written over its cost with the suggestion applied as ``ll-apply-advice`` applies it
(``advice_edits.advised_module``: the layout variable edited everywhere it is used, loops
included; an epilogue store's conversion as :mod:`.epilogue_edit` makes it), both priced by
the model ``ll-resolve-auto-layouts`` minimizes (``kernel_price``: every op, loop-weighted).
The access, buffer or value a finding names is only where the advice looked: a store after a loop advised 4-byte accesses in the layout the loop's loads
share would make those loads narrower on every iteration, and the kernel's price says so where
the store's alone would not.  A finding whose whole-kernel gain is under ``MIN_KERNEL_GAIN``,
or whose edit would make a loop's data spill (``passes.assign.register_budget``), is dropped.
Modelled; ``report --measure`` on a GPU also times each Gluon kernel with its advice applied
(``tools.report.launch_timing``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import Optional

from ...dialect.attributes import BlockedEncoding
from ...dialect.linear_layout import LayoutError
from ...lowering.remark_words import counted
from ...lowering.target import Target, target_named
from ..assign.backend_requirements import AsyncCopyFacts, layout_problem, requirement_facts
from ..assign.layout_costs import SECTOR_BYTES, _sectors_touched, access_vector, conversion_cost
from ..assign.layout_graph import loop_weight
from ..assign.layout_rules import ASYNC_COPY, encoding_of, global_access
from ..assign.layout_seeds import _deal, blocked_encoding, coalesced
from ..ir.module_lines import ModuleLines, TextMismatch
from ..ir.diagnostics import IRError
from ..assign.pointer_contiguity import PointerAnalysis, pointee_bytes
from ..gluon.auto_seeds import default_blocked
from ..gluon.resolution_record import alignment_limit
from ..ir.layouts import tensor_layout_of
from ..ir.snapshot import Operation, ops_under, parse_module
from ..ir.op_locations import no_result_locations, users_of
from .advice_edits import Trials
from .epilogue_edit import forced_layout
from .shared_findings import shared_buffer_findings
from .findings import (APPLIED, CONVERSION_IN_LOOP, EPILOGUE_STORE, GLOBAL_ACCESS, LOOPS, MIN_GAIN, MIN_KERNEL_GAIN,  # noqa: F401
                       REPLICATED, SHARED_ACCESS, Finding, access_cost, gluon_expression, has_copies, op_keys)
from ..gluon.kernel_price import kernel_price

def advise(ttgir: str, target: "str | Target", filename: str = "<kernel>", merged: bool = True) -> list[Finding]:
    """Every finding for the module ``ttgir`` compiled for ``target`` (see the module docstring);
    ``merged=False``: one finding per op (what ``ll-apply-advice`` needs), none counted as alike."""
    hw_target = target if isinstance(target, Target) else target_named(target)
    module = parse_module(ttgir, filename)
    return advise_module(module, ttgir, hw_target, merged)


def advise_module(module, ttgir: str, hw_target: Target, merged: bool = True,
                  trials: Optional[Trials] = None) -> list[Finding]:
    """:func:`advise` on a parsed module (``ttgir``: its text, for the locations of stores).
    ``trials``: the :class:`~.advice_edits.Trials` of ``module`` its caller goes on to try
    (``ll-apply-advice``), where the edits are priced, so that an edit tried again is not
    parsed again."""
    lines = ModuleLines(module, module.print(debuginfo=True))
    num_warps = module.num_warps or 4
    findings: list[Finding] = []
    users = users_of(module)
    placed = no_result_locations(module, ttgir)
    for function in [op for op in module.walk() if op.name in ("tt.func", "func.func")]:
        pointers = PointerAnalysis.of_function(lines, function)
        required = [(op, facts) for op in ops_under(function)
                    if (facts := requirement_facts(op, pointers)) is not None]
        for op in ops_under(function):
            found = []
            if op.name in ("tt.load", "tt.store"):
                accesses = _global_access(op, pointers, lines, hw_target, num_warps)
                found += [_kept_for_requirements(f, op, required) for f in accesses]
                found += _epilogue_store(op, accesses)
            elif op.name == "ttg.convert_layout":
                found += _conversion_in_loop(op, pointers, lines, hw_target, users)
            found += _replicated_data(op)
            findings += [(op, f) for f in found]
    findings += [(op, f) for op, f in shared_buffer_findings(module, users, hw_target)]
    keys = op_keys(module)
    findings = [replace(f, op_key=keys[id(op)], location=placed.get(id(op), f.location)
                        if f.location == "unknown" else f.location) for op, f in findings]
    groups = _merged(findings) if merged else [[f] for f in findings]
    return _priced_on_the_kernel(module, groups, hw_target, trials)


def without_resolved(findings: list[Finding], resolution) -> list[Finding]:
    """``findings`` less those that would change a layout ``ll-resolve-auto-layouts`` chose
    (``resolution``: its :class:`~..gluon.resolution_record.Resolution`, None for a kernel
    it did not resolve): a layout of one of its groups, or a slice of one.  The resolution
    minimized the model the advice prices with (``kernel_price``), so a finding it leaves is
    one whose edit the resolution had no candidate for, not one the model prefers to the
    resolution's own; its choices are final (the report reads the resolved kernel, where an
    author's layouts and the resolution's look alike)."""
    if resolution is None or not getattr(resolution, "resolved", False):
        return findings
    chosen = {_root(g.layout) for g in resolution.groups} | \
        {_root(other[2]) for g in resolution.groups for other in g.others}
    return [f for f in findings if not any(_root(layout) in chosen for layout in f.changes)]


def _root(layout: str):
    from ..gluon.resolution_record import root_layout as root
    return root(layout)


def _merged(findings: list[Finding]) -> list[list[Finding]]:
    """The findings grouped by (op, kind, finding, suggestion): a load and the store of the same
    pointers, every op of a replicated tile.  Each group is shown once (:func:`_shown`) and
    priced as one edit: an author told "and 2 more like it" changes all three."""
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        key = (f.op if f.kind in (GLOBAL_ACCESS, EPILOGUE_STORE) else "", f.kind, f.finding, f.suggestion)
        groups.setdefault(key, []).append(f)
    return list(groups.values())


def _shown(group: list[Finding], gain: float) -> Finding:
    """A group as one finding: at the first known location, the others counted, the group's gain,
    and the group's layout edits (``edits``: what ``ll-apply-advice`` applies for it, the edit priced)."""
    first = next((f for f in group if f.location != "unknown"), group[0])
    return replace(first, alike=len(group) - 1, gain=gain,
                   edits=tuple(f for f in group if f.kind in APPLIED and f.layout))


def _priced_on_the_kernel(module, groups: list[list[Finding]], target: Target,
                          trials: Optional[Trials] = None) -> list[Finding]:
    """Each group with the whole kernel's gain (module docstring), those under
    ``MIN_KERNEL_GAIN`` dropped.  A layout edit (the kinds ``ll-apply-advice`` applies) is
    applied to a copy of the module (``advice_edits.advised_module``) and the copy priced; a
    conversion in a loop (a move of code, not of a layout) is priced by what it saves, loop-weighted,
    against the kernel's cost; a replicated tile with no layout to suggest is left unpriced (1.0)."""
    if not groups:
        return []
    if trials is None or trials.module is not module:
        trials = Trials(module, module.print(debuginfo=True), target)
    before = kernel_price(module, target)
    out: list[tuple[int, Finding]] = []
    converted: set = set()      # op keys of the stores an epilogue-store finding kept converts before
    # (epilogue stores first: a store converted before is advised so, not also in a layout of
    # its own, whose edit is then not priced)
    for index, group in sorted(enumerate(groups), key=lambda ig: ig[1][0].kind != EPILOGUE_STORE):
        if group[0].kind == GLOBAL_ACCESS and all(f.op_key in converted for f in group):
            continue
        edits = [f for f in group if f.kind in APPLIED and f.layout]
        if edits:
            try:
                trial, after = trials.priced(edits)
            except (TextMismatch, IRError, LayoutError):
                continue            # an edit that does not read back is not advice
            if after.spills_where(before, target):
                continue
            gain = before.cost / after.cost if after.cost > 0 else 1.0
            whole = _whole_kernel_words(module, trial, before.cost, after.cost, target)
            group = [replace(f, finding=f"{f.finding}; {whole}") for f in group]
            if group[0].kind == EPILOGUE_STORE and gain >= MIN_KERNEL_GAIN:
                group = [_epilogue_said(f, trial) for f in group]
                converted |= {f.op_key for f in group}
        elif any(f.saving > 0 for f in group):
            saving = sum(f.saving for f in group)
            gain = before.cost / (before.cost - saving) if before.cost > saving else 1.0
        else:
            out.append((index, _shown(group, 1.0)))
            continue
        if gain >= MIN_KERNEL_GAIN:
            out.append((index, _shown(group, gain)))
    return [f for _, f in sorted(out, key=lambda item: item[0])]


def _whole_kernel_words(module, trial, before: float, after: float, target: Target) -> str:
    """What an edit does to the whole kernel, in words: its modelled cost before and after, and
    its layout conversions where the edit changes them (a conversion an edit removes, adds or
    makes cheaper is often most of a finding's gain).  Example: ``the whole kernel: modelled cost
    41.3 -> 32.2, its layout conversions 1 costing 26.2 -> 1 costing 17.1``."""
    said = f"the whole kernel: modelled cost {before:.1f} -> {after:.1f}"
    (count_before, cost_before), (count_after, cost_after) = _conversions(module, target), _conversions(trial, target)
    if count_before != count_after or abs(cost_before - cost_after) > 0.05:
        said += (f", its layout conversions {count_before} costing {cost_before:.1f} -> {count_after} costing "
                 f"{cost_after:.1f}")
    return said


def _conversions(module, target: Target) -> tuple[int, float]:
    """The ``ttg.convert_layout`` ops of ``module`` that move data, and their modelled cost (once each)."""
    count, total = 0, 0.0
    for op in module.ops_named("ttg.convert_layout"):
        source, result = op.operands[0].tensor_type, op.results[0].tensor_type
        if source is None or result is None or source.encoding is None or result.encoding is None:
            continue
        try:
            cost = conversion_cost(source.encoding, result.encoding, tuple(result.shape), result.element.logical_bits,
                                   target)
        except LayoutError:
            continue
        count, total = count + (cost > 0), total + cost
    return count, total


def _epilogue_store(op: Operation, accesses: list[Finding]) -> list[Finding]:
    """A store (``accesses``: its global-access finding, if it has one) whose value is in a
    layout the hardware forces (``epilogue_edit.forced_layout``: an MMA accumulator's, a
    ``tmem_load``'s): converted before the store, with the work feeding it, by the edit of
    :mod:`.epilogue_edit`.  Its suggestion is what the priced edit chose (:func:`_epilogue_said`)."""
    if op.name != "tt.store" or not accesses or len(op.operands) < 2:
        return []
    forced = forced_layout(op.operands[1])
    if forced is None:
        return []
    access = accesses[0]
    shape = tuple(op.operands[1].tensor_type.shape)
    finding = (f"stored in the layout the hardware gives the accumulator, {_short(forced, shape)}: "
               + access.finding.replace(f" in {_short(op.operands[0].tensor_type.encoding, shape)}", "", 1))
    return [Finding(op.location, op.name, EPILOGUE_STORE, finding,
                    f"y = gl.convert_layout(y, {access.suggestion}) before the store", access.gain,
                    layout=access.layout, changes=(forced,))]


def _epilogue_said(finding: Finding, trial) -> Finding:
    """``finding`` (an epilogue store) saying what its edit, priced on ``trial``, chose: the
    layout the store takes and where the value is converted to it (the op that makes the value
    converted, as the author's source names it)."""
    keys = op_keys(trial)
    store = next((op for op in trial.walk() if keys[id(op)] == finding.op_key), None)
    if store is None:
        return finding
    shape = tuple(store.operands[0].tensor_type.shape)
    layout = store.operands[0].tensor_type.encoding
    forced = finding.changes[0]
    conversions = [op for op in trial.walk() if op.name == "ttg.convert_layout"
                   and op.operands[0].tensor_type.encoding == forced and op.parent_op is store.parent_op]
    where = ""
    if conversions:
        source = conversions[0].operands[0]
        made = source.defining_op if not source.is_block_argument else None
        target_layout = conversions[0].results[0].tensor_type.encoding
        if made is not None and made.location != "unknown":
            where = f" on the value made at {made.location}"
        if target_layout != layout:
            where += f" (to {gluon_expression(target_layout, tuple(conversions[0].results[0].tensor_type.shape))})"
    expression = gluon_expression(layout, shape)
    suggestion = (f"y = gl.convert_layout(y, {expression}){where}, the work after it and the store's offsets in that "
                  f"layout (gl.arange(..., layout=gl.SliceLayout(d, that layout)))")
    return replace(finding, suggestion=suggestion, layout=layout)


def _global_access(op: Operation, pointers: PointerAnalysis, lines: ModuleLines, target: Target,
                   num_warps: int) -> list[Finding]:
    pointer = op.operands[0]
    tensor_type = pointer.tensor_type
    if tensor_type is None or tensor_type.encoding is None:
        return []
    contiguity = pointers.contiguity(pointer)
    if contiguity is None:
        return []
    shape, encoding = tuple(tensor_type.shape), tensor_type.encoding
    element_bytes = pointee_bytes(tensor_type.element_type)
    bits = 8 * element_bytes
    key = encoding if blocked_encoding(encoding) is not None else default_blocked(len(shape), num_warps, target.warp_size)
    best = _coalesced_without_copies(key, shape, contiguity.dim, contiguity.vector, element_bytes)
    if best is None:
        return []
    best = _with_warps_kept(best, encoding, shape, contiguity.dim, contiguity.vector, bits, target)
    try:
        now = access_cost(encoding, shape, bits, contiguity.dim, contiguity.vector, target)
        then = access_cost(best, shape, bits, contiguity.dim, contiguity.vector, target)
    except LayoutError:
        return []
    if then <= 0 or now / then < MIN_GAIN:
        return []
    as_written = _WarpAccesses.of(encoding, shape, contiguity.dim, contiguity.vector, element_bytes)
    suggested = _WarpAccesses.of(best, shape, contiguity.dim, contiguity.vector, element_bytes)
    allowed = min(contiguity.vector * element_bytes, 16)
    finding = (f"{as_written.vector_bytes}-byte accesses in {_short(encoding, shape)}: "
               f"{as_written.what_is_wrong(allowed)}; its pointers are contiguous along dim {contiguity.dim} and "
               f"{_allow(contiguity, shape, element_bytes)} (the suggestion: {suggested.instead_of(as_written)})")
    return [Finding(op.location, op.name, GLOBAL_ACCESS, finding, gluon_expression(best, shape), now / then,
                    layout=best, changes=(encoding,))]


def _allow(contiguity, shape: tuple, element_bytes: int) -> str:
    """What the pointers allow, and why no more where their alignment is what limits it
    (``resolution_record.alignment_limit``, as the resolution's remarks say it)."""
    allowed = min(contiguity.vector * element_bytes, 16)
    return alignment_limit(contiguity, shape, element_bytes) or f"allow {allowed}-byte accesses"


def _kept_for_requirements(finding: Finding, op: Operation, required: list) -> Finding:
    """A suggestion for a load or store whose layout an op the backend requires something of
    shares (``required``: (op, facts) of :func:`..assign.backend_requirements.requirement_facts`:
    a ``cp.async``, an AMD direct-to-LDS load through pointers or a buffer
    (``DIRECT_TO_SHARED_OPS``), a packed buffer atomic), where the backend would reject that op
    in the suggestion: said to be for the load or store alone."""
    layout = op.operands[0].tensor_type.encoding
    for other, facts in required:
        shares = encoding_of(global_access(other).addresses) == layout
        problem = layout_problem(finding.layout, facts) if shares else None
        if problem:
            # a cp.async copying under 4 bytes says so; every other op (on AMD, a direct-to-LDS
            # load, a packed atomic) has rules of its own: the problem says which
            nvidia_copy = isinstance(facts, AsyncCopyFacts) and facts.amd_architecture is None
            broken = "copy under 4 bytes a thread" if nvidia_copy else f"be rejected ({problem})"
            name = "the cp.async" if other.name == ASYNC_COPY else f"the {other.name}"
            return replace(finding, suggestion=f"{finding.suggestion} for this {op.name} alone ({name} at "
                                               f"{other.location} keeps {_short(layout, op.operands[0].tensor_type.shape)}: in the suggestion it would "
                                               f"{broken})")
    return finding


def _coalesced_without_copies(key: str, shape: tuple, dim: int, vector: int, element_bytes: int) -> Optional[str]:
    """The coalesced layout (``passes.assign.layout_seeds.coalesced``) with the widest vector whose tile
    still fits the tensor (no thread or register holding a copy), else the widest one.  Example:
    256 f32 over 4 warps: 16-byte vectors would tile 512 elements, so 8-byte ones:
    ``gl.BlockedLayout([2], [32], [4], [0])``."""
    widest = coalesced(key, shape, dim, vector, element_bytes)
    width = vector
    while width >= 1:
        candidate = coalesced(key, shape, dim, width, element_bytes)
        if candidate is not None and not has_copies(candidate, shape):
            return candidate
        width //= 2
    return widest


def _with_warps_kept(best: str, encoding: str, shape: tuple, dim: int, vector: int, bits: int, target: Target) -> str:
    """``best`` with the warps where the kernel's layout has them, when that holds no copies and
    its accesses cost no more: a reduction the author laid out inside each warp stays so.
    Example: a 4x1024 row softmax in ``[1, 1], [1, 32], [4, 1]`` is advised
    ``gl.BlockedLayout([1, 4], [1, 32], [4, 1], [1, 0])`` (a warp per row), not ``[1, 4]`` warps
    across the row (its two row reductions would cross warps)."""
    now, chosen = blocked_encoding(encoding), blocked_encoding(best)
    if now is None or chosen is None or now.rank != chosen.rank or now.warps_per_cta == chosen.warps_per_cta:
        return best
    kept = str(replace(chosen, warps_per_cta=list(now.warps_per_cta)))
    try:
        if has_copies(kept, shape) or access_cost(kept, shape, bits, dim, vector, target) > \
                access_cost(best, shape, bits, dim, vector, target):
            return best
    except LayoutError:
        return best
    return kept


@dataclass(frozen=True)
class _WarpAccesses:
    """One warp's global loads or stores of a tensor in a layout, counted as the cost model
    counts them (``layout_costs.memory_work``), to say in a finding what is wrong with them and
    what a suggestion changes.  Example: a 32x32 f32 tile in ``[1, 4], [4, 8], [4, 1]`` with
    unknown alignment: 4-byte accesses, 8 a warp, each spreading its 128 bytes over 16 sectors
    (a lane's 4 elements of a row are not one access, so the row's lanes are 16 bytes apart)."""

    vector_bytes: int    # bytes a thread accesses at once
    accesses: int        # warp instructions
    sectors: int         # 32-byte sectors they touch, summed over instructions
    bytes: int           # bytes a warp moves, copies included
    copies: int          # how many times the kernel accesses each element (1: once)

    @classmethod
    def of(cls, encoding: str, shape: tuple, dim: int, vector: int, element_bytes: int) -> "_WarpAccesses":
        layout = tensor_layout_of(encoding, shape)
        registers = [basis for basis in layout.bases.get("register", ()) if any(basis)]
        lanes = layout.bases.get("lane", ())
        elements = access_vector(layout, dim, vector, 8 * element_bytes)
        accesses = (1 << len(registers)) // elements
        sectors = _sectors_touched(registers, lanes, len(layout.out_dim_names), accesses, elements, dim, element_bytes)
        # a register repeating another is not accessed again (as the model counts); a lane or a
        # warp holding a copy accesses it again
        held = (1 << (len(registers) + len(lanes) + len(layout.bases.get("warp", ())))) // prod(shape)
        moved = accesses * (1 << len(lanes)) * elements * element_bytes
        return cls(elements * element_bytes, accesses, sectors, moved, max(1, held))

    @property
    def tight_sectors(self) -> int:
        """The fewest sectors that hold what one access moves."""
        return -(-self.bytes // self.accesses // SECTOR_BYTES)

    def what_is_wrong(self, allowed_bytes: int) -> str:
        """What these accesses waste, in words (the first half of a global-access finding)."""
        wrong = []
        if self.vector_bytes < allowed_bytes:
            wrong.append(f"narrower than its pointers allow, so a warp needs {counted(self.accesses, 'access')} "
                         f"for its {self.bytes} bytes")
        if self.sectors > self.accesses * self.tight_sectors:
            wrong.append(f"each warp access spreads its {self.bytes // self.accesses} bytes over "
                         f"{self.sectors // self.accesses} 32-byte sectors, where {self.tight_sectors} would hold them")
        if self.copies > 1:
            wrong.append(f"each element is accessed {self.copies} times (the layout's tile is larger than the tensor)")
        return ", and ".join(wrong) or f"{counted(self.accesses, 'access')} a warp touching {self.sectors} sectors"

    def instead_of(self, now: "_WarpAccesses") -> str:
        """What these (suggested) accesses change on ``now``, and why they are better as a whole:
        where they are narrower, what the kernel gains in exchange."""
        said = [f"{self.vector_bytes}-byte accesses"]
        if now.copies > 1 and self.copies == 1:
            said.append("each element once")
        if now.sectors > now.accesses * now.tight_sectors and self.sectors <= self.accesses * self.tight_sectors:
            said.append(f"{self.bytes // self.accesses} bytes in {self.sectors // self.accesses} sectors an access")
        counts = (f"a warp moves {self.bytes} bytes in {counted(self.accesses, 'access')} over "
                  f"{counted(self.sectors, 'sector')} instead of {now.bytes} in {now.accesses} over {now.sectors}")
        if self.vector_bytes < now.vector_bytes:
            return ", ".join(said) + f": narrower, but {counts}"
        return ", ".join(said) + f": {counts}"


def _short(encoding: str, shape: Optional[tuple] = None) -> str:
    return gluon_expression(encoding, shape)


def _enclosing_loop(op: Operation) -> Optional[Operation]:
    parent = op.parent_op
    while parent is not None and parent.name not in LOOPS:
        parent = parent.parent_op
    return parent


def _inside(op: Optional[Operation], loop: Operation) -> bool:
    while op is not None:
        if op is loop:
            return True
        op = op.parent_op
    return False


def _conversion_in_loop(op: Operation, pointers: PointerAnalysis, lines: ModuleLines,
                        target: Target, users: dict) -> list[Finding]:
    loop = _enclosing_loop(op)
    if loop is None:
        return []
    source, result = op.operands[0], op.results[0]
    src, dst = source.tensor_type.encoding, result.tensor_type.encoding
    if src is None or dst is None:
        return []
    shape, bits = tuple(result.tensor_type.shape), result.tensor_type.element.logical_bits
    cost = conversion_cost(src, dst, shape, bits, target)
    if cost <= 0:
        return []
    weight = loop_weight(op, lines)
    producer = source.defining_op
    if not source.is_block_argument and producer is not None and not _inside(producer, loop):
        # the same conversion on every iteration: once before the loop
        gain = cost * weight / (cost * loop_weight(loop, lines) + 1e-9) if weight > 1 else 1.0
        finding = (f"converts {_short(src, shape)} -> {_short(dst, shape)} on every iteration, of a value made "
                   f"before the loop")
        return [Finding(op.location, op.name, CONVERSION_IN_LOOP, finding,
                        "convert once before the loop (gl.convert_layout there)", max(gain, 1.0), changes=(src, dst),
                        saving=max(0.0, cost * weight - cost * loop_weight(loop, lines)))]
    if producer is not None and producer.name == "tt.load" and len(users.get(id(source), ())) == 1:
        contiguity = pointers.contiguity(producer.operands[0])
        if contiguity is None:
            return []
        load_now = access_cost(src, shape, bits, contiguity.dim, contiguity.vector, target)
        load_there = access_cost(dst, shape, bits, contiguity.dim, contiguity.vector, target)
        if load_there > load_now:
            return []
        gain = (load_now + cost) / max(load_there, 1e-9)
        finding = (f"converts the load's {_short(src, shape)} to {_short(dst, shape)} on every iteration; loading "
                   f"in {_short(dst, shape)} costs no more")
        return [Finding(op.location, op.name, CONVERSION_IN_LOOP, finding,
                        f"load in {gluon_expression(dst, shape)} (its offsets in that layout)", gain, changes=(src, dst),
                        saving=(load_now + cost - load_there) * weight)]
    return []


def _replicated_data(op: Operation) -> list[Finding]:
    """A loaded or stored tensor whose layout holds each element more than once: in several
    registers of a thread (zero register bases) or in several threads (zero lane or warp bases)
    -- the layout's tile is larger than the tensor, and the copies cost registers, work and
    repeated accesses.  Index arithmetic is left alone: only the data a load gives or a store takes,
    and only where the tensor has at least as many elements as the kernel has threads."""
    value = op.results[0] if op.name == "tt.load" else op.operands[1] if op.name == "tt.store" else None
    tensor_type = value.tensor_type if value is not None else None
    if tensor_type is None or tensor_type.encoding is None:
        return []
    attr = blocked_encoding(tensor_type.encoding)
    if attr is None:
        return []
    shape = tuple(tensor_type.shape)
    try:
        layout = tensor_layout_of(tensor_type.encoding, shape)
    except LayoutError:
        return []
    copies = {dim: sum(1 for basis in layout.bases.get(dim, ()) if not any(basis))
              for dim in ("register", "lane", "warp")}
    threads = 1 << (len(layout.bases.get("lane", ())) + len(layout.bases.get("warp", ())))
    if not any(copies.values()) or prod(shape) < threads:
        return []     # fewer elements than threads (a row of sums): some thread must hold a copy
    times = 1 << sum(copies.values())
    where = " and ".join(f"{n} {dim} bit{'s' if n > 1 else ''}" for dim, n in copies.items() if n)
    verb = "repeat" if sum(copies.values()) > 1 else "repeats"
    fitted = _fitted_layout(attr, shape)
    suggestion = gluon_expression(fitted, shape) if fitted else "a layout whose lanes and warps fit the tensor's shape"
    finding = (f"each element of the {'x'.join(map(str, shape))} tensor is held {times} times ({where} {verb} "
               f"it): the layout's tile is larger than the tensor")
    return [Finding(op.location, op.name, REPLICATED, finding, suggestion, float(times), layout=fitted or "",
                    changes=(tensor_type.encoding,))]


def _fitted_layout(attr: BlockedEncoding, shape: tuple) -> Optional[str]:
    """The first of these that holds no element twice, else None: ``attr`` with fewer elements
    per thread; with its warps dealt again over the dims with room for them (fastest first);
    with its lanes and warps dealt again.  Example: a 1x2048 tile in ``[1, 1], [1, 32], [4, 1]``
    (four warps on a dim of 1, each holding the whole row) -> ``[1, 1], [1, 32], [1, 4]``."""
    per_thread = [min(s, max(1, n // (t * w))) for s, n, t, w in
                  zip(attr.size_per_thread, shape, attr.threads_per_warp, attr.warps_per_cta)]
    order = list(attr.order)
    lanes_room = [max(1, n // p) for n, p in zip(shape, per_thread)]
    lanes = _deal(prod(attr.threads_per_warp), order, lanes_room)
    candidates = [BlockedEncoding(per_thread, attr.threads_per_warp, attr.warps_per_cta, attr.order)]
    for lane_counts in (list(attr.threads_per_warp), lanes):
        room = [max(1, n // (p * t)) for n, p, t in zip(shape, per_thread, lane_counts)]
        candidates.append(BlockedEncoding(per_thread, lane_counts, _deal(prod(attr.warps_per_cta), order, room),
                                          attr.order))
    for candidate in candidates:
        text = str(candidate)
        try:
            if not has_copies(text, shape):
                return text
        except LayoutError:
            continue
    return None
