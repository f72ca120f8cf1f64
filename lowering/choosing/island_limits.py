"""What an island may be: limits that leave a conversion to stock Triton whatever its plan.

Four limits, each checked before an island is emitted, each naming itself in the remark:

* ``MAX_ELEMENTS_PER_THREAD``: every island is printed, re-parsed and simulated register by
  register, and that work grows with the square of the registers (each struct op carries the
  whole struct type).  A thread holding more 32-bit values than a GPU has registers spills on
  every target anyway, so larger tensors go to Triton.
* ``MAX_SHARED_ACCESSES_PER_THREAD`` (NVIDIA, from ``SHARED_ACCESS_LIMIT_SINCE``): LLVM's SLP
  vectorizer in those releases can take many times stock's compile time on a module holding
  an island with that many shared-memory accesses (it works on Triton's own address graphs
  around the island), and no property of the island was found that tells the slow modules
  from the fast ones; so every island of that size is handed back.  What that costs is the run
  time of a few large conversions, never compile time.  The measurements are on
  docs/compile-time.md (the SLP section).
* ``AMD_REGISTER_FILE_LIMIT_BEFORE`` (AMD, releases before it): a side holding more elements
  a thread than the target has registers a lane (``Target.registers_per_thread``, 512 on CDNA)
  puts the kernel past the register file, and there LLVM's AMDGPU back end of those releases
  spends its time in the machine scheduler's high-pressure stages, growing with the spills: on
  gfx942 under triton 3.6, a 1,024-register bf16 slice converted there and back twice compiled in
  5x stock's time with our islands (ours spilled 2,003 VGPRs, stock 1,325), and in 1.07x under
  3.9 (docs/compile-time.md, the bound on every island).  Such a kernel spills whoever lowers the
  conversion, so stock's lowering is kept; by default the floor hands these conversions to
  Triton anyway, so the limit shows with the stock gate off.
* the compile-cost bound of ``lowering.compile_cost`` (``work_problem``): the plan's predicted
  instructions per value moved, so that LLVM's optimizer time stays linear in the island.

Example: a 512-register f32 conversion through 128-bit accesses stores and loads 4 registers
an access, 256 accesses in all: over 255, left to Triton under triton 3.9, kept under 3.6.
"""

from __future__ import annotations

from ...dialect.conventions import release_of
from ..compile_cost import work_problem
from ..plan import SharedAccess
from ..target import Target, Vendor

MAX_ELEMENTS_PER_THREAD = 1024
MAX_SHARED_ACCESSES_PER_THREAD = 255
SHARED_ACCESS_LIMIT_SINCE = (3, 9)    # the first release whose LLVM was measured slow on such islands
AMD_REGISTER_FILE_LIMIT_BEFORE = (3, 9)   # the first release whose AMDGPU back end was measured fast there


def elements_per_thread(*layouts) -> int:
    """The most registers a thread holds on any of these distributed layouts (copies counted)."""
    return max(layout.in_dims.get("register", 1) for layout in layouts)


def elements_problem(*layouts) -> str:
    """Why an island for these distributed layouts holds too many elements a thread ("" if not)."""
    per_thread = elements_per_thread(*layouts)
    if per_thread > MAX_ELEMENTS_PER_THREAD:
        return (f"{per_thread} elements per thread; islands are limited to {MAX_ELEMENTS_PER_THREAD} "
                f"per thread (MAX_ELEMENTS_PER_THREAD)")
    return ""


def shared_accesses_problem(plan, target: Target, triton: str) -> str:
    """Why a conversion's island would make too many shared-memory accesses a thread for LLVM's
    O3 on this target and Triton release ``triton`` ("" if it would not)."""
    release = release_of(triton) or SHARED_ACCESS_LIMIT_SINCE     # unreadable: limited, as the newest
    if target.vendor is not Vendor.NVIDIA or release < SHARED_ACCESS_LIMIT_SINCE:
        return ""
    shared = getattr(plan, "shared", None)
    if shared is None:
        return ""
    accesses = sum(1 for op in shared.ops if isinstance(op, SharedAccess))
    if accesses <= MAX_SHARED_ACCESSES_PER_THREAD:
        return ""
    return (f"{accesses} shared-memory accesses per thread; islands are limited to "
            f"{MAX_SHARED_ACCESSES_PER_THREAD} on NVIDIA from triton {'.'.join(map(str, SHARED_ACCESS_LIMIT_SINCE))} "
            f"(MAX_SHARED_ACCESSES_PER_THREAD: LLVM's SLP vectorizer can take many times stock's compile time "
            f"on such a module)")


def register_file_problem(plan, target: Target, triton: str) -> str:
    """Why a conversion's island would hold more elements a thread than an AMD lane has registers,
    under a release whose AMDGPU back end is slow past the register file ("" if not).  Example:
    gfx942 (512 registers a lane), triton 3.6, a bf16 slice of 1,024 registers a thread: left to
    Triton; the same under triton 3.9, or with 512 registers: kept."""
    release = release_of(triton) or AMD_REGISTER_FILE_LIMIT_BEFORE      # unreadable: as the newest
    if target.vendor is not Vendor.AMD or release >= AMD_REGISTER_FILE_LIMIT_BEFORE or not target.registers_per_thread:
        return ""
    per_thread = elements_per_thread(*(side for side in (plan.src, plan.dst) if side is not None))
    if per_thread <= target.registers_per_thread:
        return ""
    return (f"{per_thread} elements per thread, more than {target.name}'s {target.registers_per_thread} registers a "
            f"lane: the kernel spills whoever lowers the conversion, and before triton "
            f"{'.'.join(map(str, AMD_REGISTER_FILE_LIMIT_BEFORE))} LLVM's AMDGPU back end takes many times stock's "
            "compile time on such an island's spills (AMD_REGISTER_FILE_LIMIT_BEFORE)")


def island_size_problem(plan, target: Target, triton: str) -> str:
    """Why a planned conversion's island is too large to emit ("" if it is not): the shared-access
    limit, the AMD register-file limit, then the compile-cost bound."""
    return shared_accesses_problem(plan, target, triton) or register_file_problem(plan, target, triton) \
        or work_problem(plan)
