"""What a plan's steps *are*, in words no GPU vendor owns.

Plans (``lowering.plan``) say what every thread does; the planner, the verifier and the cost
model reason about those steps.  None of them needs to know that NVIDIA spells a store
``st.shared.b64`` and AMD ``ds_write_b64``: the steps are typed here, and only the emitters
(``emit_nvidia.mnemonic`` / ``emit_amd.mnemonic``) turn them into instruction names, for the
code they print and for the counts tools show to users.

* ``ShuffleMode``: where a shuffle round reads from (the lane itself, lane ^ c, any lane);
* ``AccessKind`` / ``AccessForm`` / ``MemorySpace``: a shared-memory access stores or loads,
  as per-lane vectors or as 8x8 matrices (``ldmatrix``-like, optionally transposed), in the
  CTA's own scratch buffer or in another CTA's of the cluster;
* ``BarrierScope``: which threads a barrier waits for;
* ``AluOp``: the register-only work around shuffles (selects, byte packing);
* ``AccessShape``: one shared-memory instruction as the cost model counts it (the fields
  above plus its width per lane).

Example: a 64-bit vector store to the CTA's own buffer is
``AccessShape(AccessKind.STORE, AccessForm.VECTOR, MemorySpace.SHARED, 64)``; NVIDIA names it
``st.shared.b64``, AMD ``ds_write.b64``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class ShuffleMode(Enum):
    """Where each lane of a shuffle round reads its word from."""

    LOCAL = "local"   # the lane itself: no cross-lane move at all, only the select
    XOR = "xor"       # lane ^ c for one constant c
    INDEX = "index"   # any other function of the lane (an index computed per lane)


class AccessKind(Enum):
    STORE = "store"
    LOAD = "load"


class AccessForm(Enum):
    """How lanes and registers map to addresses (see ``plan.SharedAccess``)."""

    VECTOR = "vector"              # each lane: consecutive elements at its own address
    MATRIX = "matrix"              # 8x8 matrices of 16-byte rows, 8 row addresses per matrix
    MATRIX_TRANS = "matrix.trans"  # the same, transposed on the way (16-bit elements)

    @property
    def is_matrix(self) -> bool:
        return self is not AccessForm.VECTOR


class MemorySpace(Enum):
    SHARED = "shared"                            # the CTA's own scratch buffer
    DISTRIBUTED_SHARED = "distributed_shared"    # another CTA's buffer in the cluster


class BarrierScope(Enum):
    """Which threads a barrier waits for (and orders the shared-memory accesses of)."""

    WARP = "warp"         # the warp's own lanes: data that never leaves the warp
    CTA = "cta"           # every warp of the CTA
    CLUSTER = "cluster"   # every CTA of the cluster (distributed shared memory)


class AluOp(Enum):
    SELECT = "select"   # pick one of two values per lane
    PACK = "pack"       # put narrow elements into (or take them out of) a 32-bit word


@dataclass(frozen=True)
class AccessShape:
    """One shared-memory instruction as the cost model counts it.  ``bits``: what one lane
    moves (a matrix access moves one 32-bit word per matrix: bits // 32 matrices)."""

    kind: AccessKind
    form: AccessForm
    space: MemorySpace
    bits: int


# What the cost model counts: one of these per distinct instruction of a plan.
InstructionKey = ShuffleMode | AccessShape | BarrierScope | AluOp


class FinalRole(Enum):
    """What an instruction of the final code (PTX, AMDGCN) does, for the tools that count it."""

    MOVES_DATA = "moves data"     # shuffles, shared-memory stores and loads: a conversion's columns
    BARRIER = "barrier"
    ARITHMETIC = "arithmetic"     # selects and byte permutes around shuffles


@dataclass(frozen=True)
class FinalInstruction:
    """One row of an emitter's table of final-code instructions (``emit_nvidia`` /
    ``emit_amd.FINAL_CODE_INSTRUCTIONS``: the one table tools count with).  ``pattern`` matches
    the start of every line holding the instruction, in any form; where group ``detail`` matched
    too, the groups name its form (``tools.fuzz.testcases.ptx_mix``: ``st.shared.b128``), and a form
    without it (``ld.shared::cluster``) is counted by name only (``detail`` 0: no groups)."""

    name: str
    pattern: str
    role: FinalRole
    detail: int = 0
