"""Translation validation: execute the island we actually emitted, for every thread of the CTA.

The plan verifier (``lowering.verify``) proves a *plan*; this module proves the *text* that
``emit_island`` printed from it.  It reads the island's LLVM-dialect lines back (never the
plan's steps), runs them for every (block, warp, lane) at once with numpy, and checks that every
field of the output struct, broadcast copies included, holds the element the destination layout
assigns to that register of that thread.  The plan is used only for the two layouts, the target
and the element width.

How an element's identity survives packing.  Values are real bit patterns: an f16 is 16 bits,
an i8 8 bits, packed into 32-bit words by ``prmt`` or shifts exactly as the GPU would.  So the
tag of an element must fit its width.  The island runs in several *passes*; in pass p element e
holds ``mix(bits p*b .. p*b+b-1 of e)`` (b = the element's width, ``mix`` a bijection on b-bit
integers that sets high bits too, so a dropped upper half of an i64 shows).  Reassembling the
passes gives back the element id that reached each output field: a wrong element anywhere is
caught exactly.  Example: a 64x64 i8 tensor (4096 elements, 12 bits) takes 2 passes; an f32
tensor always 1.  A conversion's passes run side by side in one execution of the island, pass
p on CTA copies p*B .. p*B+B-1 of the machine (an i1 tensor of 4096 elements: 12 copies of the
CTA, each with its own shared memory): CTAs never exchange data in an island (there is no
cross-CTA op to simulate, and ``%tid.x`` counts within a CTA), so each copy runs exactly as a
pass of its own would, and the island's lines are read once instead of once per pass.

What else is checked, with the line of the island that broke it:
* struct arity and field type of both casts (the struct Triton's type converter makes for the
  installed release: ``emit_llvm.struct_registers``);
* undefined values (``llvm.mlir.undef`` fields, shared bytes never stored) reaching an output,
  a store or a shuffle;
* every shared-memory access inside the scratch buffer and naturally aligned; ``ldmatrix`` /
  ``stmatrix`` row addresses 16-byte aligned;
* races: a load of a byte another thread stored, or a store over a byte another thread read or
  wrote, with no barrier that orders the two (``bar.sync`` / AMD ``s_barrier`` orders the
  whole CTA, ``bar.warp.sync`` / a lone AMD fence only the warp); the guard barriers the site
  asks for around the island's shared-memory use;
* shuffle sources inside the warp (``shfl.sync.idx`` lane < 32, ``ds_bpermute`` index a
  multiple of 4 below 4 * 64);
* inline PTX read as LLVM does: ``$k`` is output k below the number of ``=r`` constraints, else
  operand k - outputs (a store whose ``{$1, $2}`` were swapped stores them swapped); memory
  accesses and barriers must be ``has_side_effects``; ``llvm.load`` / ``llvm.store`` of shared
  memory (AMD LDS, NVIDIA's default form) claim their natural alignment, and the address has it;
  ``nvvm.ldmatrix`` / ``nvvm.stmatrix`` run as their inline-PTX spellings;
* the AMD barrier sequence ``fence release; s_barrier; fence acquire`` complete before the next
  LDS access; vendor ops (``nvvm.*``, ``rocdl.*``, inline PTX) only on their vendor's target;
* the text itself: the island starts with the source cast, defines every SSA name once, and
  casts back exactly once, to the convert's result name and type.

Shared bytes that no thread stored load as *undefined* values (loading them is no error; using
them in an output, a store or an address is).

Any op or inline-asm text it does not know is a failure: the simulator fails closed.

This module sets the run up and checks what it produced (``check_emitted``); the interpreter
that executes the lines, op by op, is ``sim_llvm._Island``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..element_type import ElementType
from ..emit.emit_llvm import IslandSite, struct_registers
from ..hardware import HardwareLayout
from ..plan import ConversionPlan
from .sim_llvm import _Island
from .sim_machine import Machine, Scalar, SimulationError, mask, mix, struct_fields, unmix
from ..verify import VerificationResult

MAX_LINES = 200_000
MAX_THREAD_REGISTERS = 1 << 22


# ---------------------------------------------------------------------------------- the check


def _element_ids(hw: HardwareLayout, struct_regs: list[int]) -> np.ndarray:
    """Element id of every (thread, struct field): shape (T, fields), threads ordered as the
    machine's (block, warp, lane)."""
    table = hw.element_table()                   # (B, W, L, R)
    B, W, L, R = table.shape
    return table.reshape(B * W * L, R)[:, struct_regs]


def check_emitted(island_text: str, plan: ConversionPlan, site: IslandSite) -> VerificationResult:
    """Execute ``island_text`` (``Island.text`` as emitted for ``site``: its source operand is
    ``site.source``) for every thread and check it converts ``plan.src`` into ``plan.dst``; see
    the module docstring."""
    try:
        _check(island_text, plan, site)
    except SimulationError as error:
        return VerificationResult(False, (str(error),))
    return VerificationResult(True)


@dataclass
class _CheckSetup:
    """What every checker starts from: the island's lines, the element type, and the register
    side of the op (the source of a conversion or store, the destination of a load): its
    hardware layout, the struct's registers, the machine's (blocks, warps, lanes), and how many
    passes it takes to send every element's id through elements this wide."""

    lines: list[str]
    element: ElementType
    hw: HardwareLayout
    regs: list[int]
    shape: tuple[int, int, int]
    passes: int


def _set_up(island_text: str, plan, site: IslandSite, layout, order, what: str,
            registers_elsewhere: int = 0) -> _CheckSetup:
    """The checks every checker makes first (the island's length, the warp size, the size of
    the simulation: ``registers_elsewhere`` counts the other side's struct, if larger), and
    what it runs on.  ``what`` names the op in messages: ``conversion``, ``load``, ``store``."""
    lines = island_text.splitlines()
    if len(lines) > MAX_LINES:
        raise SimulationError(f"the island has {len(lines)} lines; the simulator stops at {MAX_LINES}")
    element = ElementType.of(site.element_type)
    hw = HardwareLayout.of(layout, order)
    regs = struct_registers(hw, site.unique_struct)
    B, W, L = 1 << len(hw.block), 1 << len(hw.warp), 1 << len(hw.lane)
    if L != plan.target.warp_size:
        layouts = "the layouts have" if what == "conversion" else "the layout has"
        raise SimulationError(f"{layouts} {L} lanes, a {plan.target.name} warp {plan.target.warp_size}")
    if B * W * L * max(len(regs), registers_elsewhere) > MAX_THREAD_REGISTERS:
        raise SimulationError(f"the {what} is too large to simulate")
    passes = max(1, -(-max(1, hw.element_bits) // element.logical_bits))
    return _CheckSetup(lines, element, hw, regs, (B, W, L), passes)


def _check(island_text: str, plan: ConversionPlan, site: IslandSite) -> None:
    dst_hw = HardwareLayout.of(plan.dst, plan.src.out_dim_names)
    dst_regs = struct_registers(dst_hw, site.unique_struct)
    setup = _set_up(island_text, plan, site, plan.src, None, "conversion", len(dst_regs))
    lines, element, src_regs, (B, W, L) = setup.lines, setup.element, setup.regs, setup.shape
    src_ids = _element_ids(setup.hw, src_regs)
    expected = _element_ids(dst_hw, dst_regs)
    value_bits = element.logical_bits
    got = np.zeros_like(expected, dtype=np.uint64)
    threads = B * W * L
    # As many passes side by side as the simulation's size limit allows (all of them, but for
    # the largest tensors of the narrowest types); see the module docstring.
    side_by_side = max(1, min(setup.passes, MAX_THREAD_REGISTERS // (threads * max(len(src_regs), len(dst_regs), 1))))
    for first in range(0, setup.passes, side_by_side):
        passes = range(first, min(first + side_by_side, setup.passes))
        machine = Machine(B * len(passes), W, L, plan.target.vendor, site.threads)
        tagged = np.concatenate([mix((src_ids.astype(np.uint64) >> np.uint64(p * value_bits)) & mask(value_bits),
                                     value_bits) for p in passes])
        field_bits = element.logical_bits  # a struct field holds the value: an i1 is 1 bit
        source = [Scalar(field_bits, tagged[:, i].copy(), np.ones(machine.T, dtype=bool))
                  for i in range(len(src_regs))]
        island = _Island(lines, machine, source, site)
        island.run()
        if first == 0:
            _check_struct("source", island.input_type, element, len(src_regs))
            _check_struct("destination", island.output_type, element, len(dst_regs))
            _check_guards(machine, site)
        _read_output(island, machine, got, value_bits, passes)
    _compare_output(got, expected, machine)


def _read_output(island: "_Island", machine: Machine, got: np.ndarray, value_bits: int, passes) -> None:
    """Add the slices ``passes`` of every output field's element id to ``got`` (fails on undefined
    ones): pass ``passes[k]`` ran on the machine's k-th copy of the CTA, threads
    ``k*T .. k*T+T-1`` for the ``T`` rows of ``got``."""
    threads = got.shape[0]
    for i, field in enumerate(island.output):
        if field is None or not field.defined.all():
            t = 0 if field is None else int(np.nonzero(~field.defined)[0][0])
            cause = f" (first use of undefined shared memory: {machine.undefined_load})" \
                if machine.undefined_load else ""
            copy = f" (bits {passes[t // threads] * value_bits}.. of the element ids)" if len(passes) > 1 else ""
            raise SimulationError(f"output field {i} is undefined in {machine.who(t % threads)}{copy}{cause}")
    if not island.output:
        return
    # All fields and passes at once: (pass copy k, thread, field), each pass's bits shifted to
    # their place; the passes' bit ranges are disjoint, so OR-ing over k puts them together.
    values = np.stack([field.value for field in island.output], axis=1).reshape(len(passes), threads, -1)
    shifts = np.array([p * value_bits for p in passes], dtype=np.uint64).reshape(-1, 1, 1)
    slices = unmix(values & mask(value_bits), value_bits) << shifts
    got |= np.bitwise_or.reduce(slices, axis=0)


def _compare_output(got: np.ndarray, expected: np.ndarray, machine: Machine) -> None:
    wrong = got != expected.astype(np.uint64)
    if wrong.any():
        t, i = (int(x) for x in np.argwhere(wrong)[0])
        raise SimulationError(f"{int(wrong.sum())} output fields hold the wrong element; first: output field {i} "
                              f"of {machine.who(t)} holds element {int(got[t, i])}, the destination layout names "
                              f"element {int(expected[t, i])}")


def _check_struct(which: str, struct_type, element: ElementType, count: int) -> None:
    if struct_type is None:
        raise SimulationError(f"the {which} cast was not found")
    fields = struct_fields(struct_type)
    if len(fields) != count:
        raise SimulationError(f"the {which} struct has {len(fields)} fields; Triton's type converter gives this "
                              f"layout {count}")
    if any(f != element.llvm for f in fields):
        raise SimulationError(f"the {which} struct's fields are not {element.llvm}: {struct_type}")


def _check_guards(machine: Machine, site: IslandSite) -> None:
    if machine.shared_ops_seen == 0:
        return
    if site.guard_before and not machine.barrier_before_first_shared:
        raise SimulationError("no CTA barrier before the island's first shared-memory access (guard_before)")
    if site.guard_after and not machine.barrier_since_last_shared:
        raise SimulationError("no CTA barrier after the island's last shared-memory access (guard_after)")

