"""Bank conflicts of a distributed layout's accesses to a shared-memory layout, counted as the
planner's cost model counts them (``lowering.cost.bank_use``).  Used by ``ll-viz`` (pictures of
the conflicts) and by the layout advice (``passes.advice``: which swizzle to suggest)."""

from __future__ import annotations

from ..dialect.linear_layout import LinearLayout
from .target import target_named


def access_conflicts(shared: LinearLayout, access: LinearLayout, bits: int, target):
    """Bank conflicts when ``access`` (a distributed layout) reads ``shared``: one instruction
    per (block, warp, vector of registers), each lane reading its elements.  The vectors are the
    widest the code would use, as Triton's and our local loads/stores pick them
    (``lowering.shared.widest_vector``): registers whose elements lie at consecutive offsets,
    aligned, at most 16 bytes; without such registers, scalar accesses.

    Returns (per-element conflict flag, total extra wavefronts, number of accesses); the vector
    width in elements is ``access_vector(shared, access, bits)``.  The banks are counted by the
    planner's own model (``lowering.cost.bank_use``) on ``target`` (a ``lowering.Target`` or its
    name): the lanes are served in phases (``Target.phase_lane_bits``: 16 lanes for 64-bit
    accesses, 8 for 128-bit ones on NVIDIA), a bank serving k distinct 4-byte words in one phase
    costs k - 1 extra wavefronts, and lanes reading the same word are a broadcast and cost nothing.
    """
    import numpy as np

    from .cost import bank_use
    from .element_type import storage_bits_of
    from .hardware import deposit

    target = target_named(target) if isinstance(target, str) else target
    to_offset = access.invert_and_compose(shared)   # (register, lane, warp, block) -> (offset, block)
    dims = access.in_dims
    element_bytes = storage_bits_of(bits) // 8
    log2_vec, positions = _vector(to_offset, dims, storage_bits_of(bits))
    vector_bytes = element_bytes << log2_vec
    words_per_lane = max(1, vector_bytes // target.bank_bytes)
    phase_bits = target.phase_lane_bits(vector_bytes * 8, True)
    register_bits = dims.get("register", 1).bit_length() - 1
    rest = tuple(p for p in range(register_bits) if p not in positions)
    in_vector = [deposit(i, positions) for i in range(1 << log2_vec)]
    lanes = np.arange(dims.get("lane", 1), dtype=np.int64)
    conflicted = set()
    extra = 0
    accesses = 0
    for block in range(dims.get("block", 1)):
        for warp in range(dims.get("warp", 1)):
            for chunk in range(1 << len(rest)):
                base = deposit(chunk, rest)
                lane_elements, first_words = [], []
                for lane in lanes:
                    hw = {"register": base, "lane": int(lane), "warp": warp, "block": block}
                    hw = {k: v for k, v in hw.items() if k in dims}
                    first_words.append(to_offset.apply(hw)["offset"] * element_bytes // target.bank_bytes)
                    lane_elements.append([tuple(access.apply(dict(hw, **({"register": base | v} if "register" in dims
                                                                          else {}))).values())
                                          for v in in_vector])
                words = np.asarray(first_words, dtype=np.int64)[:, None] + np.arange(words_per_lane)
                use = bank_use(lanes, words, phase_bits, target.num_banks)
                accesses += 1
                extra += use.conflicts
                for elements, flags in zip(lane_elements, use.conflicted):
                    if flags.any():
                        conflicted.update(elements)
    return conflicted, extra, accesses


def _vector(to_offset: LinearLayout, dims: dict, element_bits: int) -> tuple[int, tuple[int, ...]]:
    """(log2 width, register positions) of the widest aligned vector of at most 128 bits."""
    from .shared import widest_vector

    def offset(dim, bit):
        return to_offset.apply({k: (1 << bit if k == dim else 0) for k in dims})["offset"]

    registers = [offset("register", p) for p in range(dims.get("register", 1).bit_length() - 1)]
    threads = [offset(dim, b) for dim in ("lane", "warp") for b in range(dims.get(dim, 1).bit_length() - 1)]
    return widest_vector(registers, threads, max(0, (128 // element_bits).bit_length() - 1))


def access_vector(shared: LinearLayout, access: LinearLayout, bits: int) -> int:
    """Elements per access (1: scalar) of ``access_conflicts``."""
    from .element_type import storage_bits_of

    to_offset = access.invert_and_compose(shared)
    return 1 << _vector(to_offset, access.in_dims, storage_bits_of(bits))[0]
