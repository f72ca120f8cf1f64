"""Hardware targets for conversion planning: warp size, shared-memory banks, which instructions exist.

A plan is built for one target.  What the planner needs to know about a GPU is small:

* ``warp_size`` - 32 lanes on NVIDIA, 64 on AMD CDNA (a "wave64");
* the shared-memory (NVIDIA) / LDS (AMD) bank model: ``num_banks`` banks of ``bank_bytes`` bytes,
  bank = (byte address / 4) mod 32, and how one access of the whole warp is split into *phases*
  (groups of lanes served together; only lanes of the same phase can conflict);
* which special instructions exist: ``ldmatrix`` (sm >= 75), ``stmatrix`` (sm >= 90), AMD's
  ``ds_bpermute`` (a lane permute through the LDS crossbar without storing anything).

Phases, worked out for NVIDIA (32 banks x 4 bytes = 128 bytes per wavefront): a warp-wide access
of 128 bits per lane moves 512 bytes, so it takes at least 4 wavefronts; the hardware serves it as
4 quarter-warps, lanes 0-7, 8-15, 16-23, 24-31 (a 64-bit access: 2 half-warps).  A bank conflict is
two lanes of the same phase touching *different* 4-byte words of the same bank; lanes reading the
same word are served by one broadcast.

AMD CDNA (gfx90a = MI200, gfx942 = MI300), facts from AMD's documentation:

* "LDS is organized into 32 banks, each 4 bytes wide; bank index = (byte_address / 4) % 32"
  (ROCm blog "Avoiding LDS Bank Conflicts on AMD GPUs Using CK-Tile", and the CK-Tile docs page
  "Understanding AMD GPU LDS and Bank Conflicts", rocm.docs.amd.com/projects/composable_kernel).
* "Bank conflicts are determined by what addresses are accessed on each half wavefront boundary.
  Threads 0 through 31 are checked for conflicts as are threads 32 through 63" (AMD APP OpenCL
  programming guide, LDS optimizations) - so a 32-bit access of a wave64 has 2 phases of 32 lanes.
* Wider accesses are split further so that one phase moves at most 128 bytes: "ds_write_b128 ...
  will be divided into 8 phases for 64 lane wavefront: lane0~lane7, lane8~lane15, ..." (CK-Tile
  docs above); ds_read/write_b64 therefore has 4 phases of 16 lanes.
* Triton's AMD backend (``TargetInfo::getSharedLdStTiles``,
  ``third_party/amd/lib/TritonAMDGPUToLLVM/TargetInfo.cpp``) models
  CDNA3's 128-bit *reads* (ds_read_b128) with the lanes of one phase being lane bits {0, 1, 4}
  (lanes 0-3 together with 16-19); we follow that for gfx942 loads.

The newer targets (all but the first four, ``ORIGINAL_TARGETS``; docs/targets.md), facts read
from Triton's sources and checked by compiling a kernel for each with triton 3.6.0 and 3.9.0
(``triton.compile(src, target=t.gpu_target())``: every one compiles, and the TTGIR says
``ttg.target = "cuda:100"`` / ``"hip:gfx950"`` ... and ``"ttg.threads-per-warp"`` = 32, 64 for
gfx950):

* NVIDIA sm_86 (A10, RTX 30xx), sm_89 (Ada: L40, RTX 40xx), sm_100 (B200/GB200), sm_120 (RTX 50xx):
  32 lanes (``backends/nvidia/compiler.py``: ``warp_size: int = 32``).  ``ldmatrix`` (with
  ``.trans``) on sm >= 75, ``stmatrix`` on sm >= 90: Triton's NVIDIA ``TargetInfo``
  (``supportLdMatrix``: ``computeCapability >= 75``, ``supportStMatrix``: ``computeCapability >=
  90``; 8-bit ``ldmatrix/stmatrix ... .b8`` only from sm_100, which we do not emit).  Clusters
  (distributed shared memory, ``ld.shared::cluster``): sm_90 and sm_100 only; Triton's
  ``TargetFeatures::supportClusterOps`` (triton-lang/triton,
  ``include/triton/Dialect/TritonNvidiaGPU/IR/TargetFeatures.h``, beside ``supportLdMatrix`` and
  ``supportStMatrix``) is ``computeCapability >= 90 && computeCapability / 10 !=
  12``, so sm_120 has none.  Shared memory per block (opt-in maximum, CUDA C Programming Guide,
  "Technical Specifications per Compute Capability"): 163 KiB (sm_80), 99 KiB (sm_86, sm_89,
  sm_120), 227 KiB (sm_90, sm_100); Triton reads it from the driver at run time, the planner only
  records it.  Banks: 32 x 4 bytes on every NVIDIA GPU since Maxwell (same guide).
* AMD gfx950 (CDNA4, MI350/MI355): wave64; LDS 160 KiB (``TargetInfo::getSharedMemorySize``:
  ``CDNA4 -> 160 * 1024``, every other family but gfx1250 64 KiB); MFMA layouts version 4
  (``getMfmaVersion``: CDNA4 -> 4).  We keep gfx942's model of 128-bit reads for it (cost only).
  It has LDS transpose reads (``ds_read_*_tr_*``; Triton's ``TargetInfo::canUseLDSTransLoad``: CDNA4
  and 4/6/8/16-bit elements only), recorded as ``has_lds_transpose_read``: our emitters never write
  them (Triton keeps using them in its own local loads).  No AMD target has ``ldmatrix`` /
  ``stmatrix`` (the AMD ``TargetInfo``: "AMD does not support stmatrix").
* AMD RDNA3 gfx1100 (RX 7900) and RDNA4 gfx1201 (RX 9070): wave32 (``backends/amd/compiler.py``:
  ``warp_size = 32 if gfx_major >= 10 else 64``; ``TargetInfo::getWarpSize`` is 32 for RDNA); LDS 64
  KiB; WMMA layouts version 1 (RDNA3) and 2 (RDNA4) (``getWmmaVersion``), no MFMA.  Cross-lane
  moves: Triton itself lowers a warp-local ``tt.gather`` on gfx1100/gfx1201 to
  ``llvm.amdgcn.ds.bpermute`` with the byte index ``lane * 4`` (checked in its LLVM IR), which is
  what our emitter writes; the indices we emit stay below ``4 * 32`` (the simulator rejects any
  beyond the last lane), so nothing relies on how the hardware wraps larger ones.  The LDS bank
  model (32 banks x 4 bytes, phases of 128 bytes) is an estimate for RDNA: it only ranks plans,
  it never decides what is correct.

How Triton spells a target: ``ttg.target = "cuda:90"`` / ``"hip:gfx942"`` in TTGIR, and
``GPUTarget("cuda", 90, 32)`` / ``GPUTarget("hip", "gfx942", 64)`` for ``triton.compile``
(:attr:`Target.triton_name`, :meth:`Target.gpu_target`); :func:`target_named` reads both our
names and Triton's.  Every module of the project that names a target uses this one table.

L2 size, ``l2_bytes``: the product's published L2 (H100 SXM: 50 MB), given only where the L2
rate was measured (``lowering/calibrated_weights.json``'s ``l2_byte``, sm_90): the DRAM floor counts
loads that every program shares at L2's rate while their working set fits it.

DRAM bandwidth per SM (per CU on AMD) and cycle, ``dram_bytes_per_cycle``: the product's
published peak bandwidth over its SM count times its boost clock, for one product of the target
(``ll-assign-layouts``' DRAM floor, ``passes/assign/dram_floor.py``; it only decides whether a modelled
gain could show, never what code is emitted): sm_80 A100 SXM 80 GB, 2039 GB/s / (108 x 1.41 GHz)
= 13.4; sm_86 A10, 600 / (72 x 1.695) = 4.9; sm_89 L40, 864 / (142 x 2.49) = 2.4; sm_90 H100
SXM, 3352 / (132 x 1.98) = 12.8; sm_100 B200, 8000 / (148 x 2.0) = 27.0; sm_120 RTX 5090, 1792 /
(170 x 2.41) = 4.4; gfx90a MI250X, 3277 / (220 x 1.7) = 8.8; gfx942 MI300X, 5300 / (304 x 2.1) =
8.3; gfx950 MI355X, 8000 / (256 x 2.4) = 13.0; gfx1100 RX 7900 XTX, 960 / (96 x 2.5) = 4.0;
gfx1201 RX 9070 XT, 645 / (64 x 2.97) = 3.4.

Registers per thread, ``registers_per_thread`` (``ll-assign-layouts``' register limit,
``passes/assign/register_budget.py``): NVIDIA's 255 32-bit registers per thread (every target here, per the CUDA
programming guide's table of technical specifications); AMD CDNA2-4 (gfx90a, gfx942, gfx950) 512, the unified
file of 256 VGPRs and 256 AGPRs a work-item may use (LLVM's AMDGPU back end: ``getTotalNumVGPRs`` is 512 on
gfx90a); RDNA3/4 (gfx1100, gfx1201) 256 VGPRs.

The model of a phase used everywhere here: ``phase_lane_bits(width_bits, is_load)`` returns the
lane bits that vary *inside* one phase; the remaining lane bits enumerate the phases.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cost_weights import CostWeights, weights_for
from .words import Word


class Vendor(Word):
    """Whose GPU: which instructions an island may use, and which emitter writes it."""

    NVIDIA = "nvidia"
    AMD = "amd"


class UnknownTarget(ValueError):
    """A target name that is none of ours (the message lists the known ones)."""


@dataclass(frozen=True)
class Target:
    name: str                 # "sm_80", "sm_90", "gfx942", "gfx1100", ...
    vendor: Vendor
    warp_size: int            # 32 or 64
    triton_arch: "int | str"  # GPUTarget's arch: the compute capability (90) or the gfx name
    product: str              # for people: "NVIDIA Hopper", "AMD MI300"
    num_banks: int = 32
    bank_bytes: int = 4
    has_ldmatrix: bool = False
    has_stmatrix: bool = False
    has_distributed_shared_memory: bool = False  # sm_90 clusters: ld.shared::cluster
    # AMD CDNA3 reads of 128 bits group lanes {0-3, 16-19}, ... (see the module docstring).
    wide_read_lane_bits: tuple[int, ...] | None = None
    shared_memory_bytes: int = 0  # per block (NVIDIA's opt-in maximum) / per workgroup (AMD LDS)
    family: str = ""              # "ampere", "hopper", "cdna3", "rdna3", ...
    mfma_version: int = 0         # AMD: the amd_mfma layouts' version (0: no MFMA)
    wmma_version: int = 0         # AMD: the amd_wmma layouts' version (0: no WMMA layouts)
    has_lds_transpose_read: bool = False  # gfx950 ds_read_*_tr_*: recorded, never emitted by us
    dram_bytes_per_cycle: float = 0.0     # per SM (CU) and cycle, at peak (module docstring)
    l2_bytes: int = 0                     # L2 cache size of the product (module docstring); 0: not used
    registers_per_thread: int = 0         # 32-bit registers a thread may hold (module docstring); 0: unknown

    @property
    def triton_backend(self) -> str:
        """Triton's back-end name: ``cuda`` or ``hip``."""
        return {Vendor.NVIDIA: "cuda", Vendor.AMD: "hip"}[self.vendor]

    @property
    def triton_name(self) -> str:
        """The ``ttg.target`` module attribute: ``cuda:90``, ``hip:gfx942``."""
        return f"{self.triton_backend}:{self.triton_arch}"

    @property
    def assembly_stage(self) -> str:
        """The compiled kernel's stage (``kernel.asm[...]``) with the final assembly text."""
        return {Vendor.NVIDIA: "ptx", Vendor.AMD: "amdgcn"}[self.vendor]

    @property
    def title(self) -> str:
        """``sm_90 (NVIDIA Hopper, 32 lanes per warp)``."""
        unit = "warp" if self.vendor is Vendor.NVIDIA else "wave"
        return f"{self.name} ({self.product}, {self.warp_size} lanes per {unit})"

    def gpu_target(self, warp_size: "int | None" = None):
        """Triton's ``GPUTarget`` for ``triton.compile`` (imports triton)."""
        from triton.backends.compiler import GPUTarget
        return GPUTarget(self.triton_backend, self.triton_arch, warp_size or self.warp_size)

    @property
    def weights(self) -> CostWeights:
        """The cost model's constants for this target: measured where it was calibrated,
        estimated from a measured one elsewhere (``lowering.cost_weights``)."""
        return weights_for(self.name)

    @property
    def lane_bits(self) -> int:
        return self.warp_size.bit_length() - 1

    def bank_of_byte(self, byte_offset: int) -> int:
        """The bank holding byte ``byte_offset`` of shared memory: banks take turns every
        ``bank_bytes`` bytes (byte 4 is in bank 1, byte 128 in bank 0 again)."""
        return byte_offset // self.bank_bytes % self.num_banks

    @property
    def wavefront_bytes(self) -> int:
        """Bytes one conflict-free phase moves: all banks once (128 bytes on every target here)."""
        return self.num_banks * self.bank_bytes

    def phase_lane_bits(self, width_bits: int, is_load: bool) -> tuple[int, ...]:
        """Lane bits that vary inside one phase of a warp-wide access of ``width_bits`` per lane.

        A phase moves at most ``wavefront_bytes``: with w-bit accesses that is 1024 / w lanes
        (capped by the warp).  NVIDIA 128-bit: 8 lanes -> bits (0, 1, 2).  AMD wave64 32-bit:
        32 lanes -> bits (0..4) (a half wave).
        """
        lanes_per_phase = min(self.warp_size, max(1, self.wavefront_bytes * 8 // max(width_bits, 32)))
        k = lanes_per_phase.bit_length() - 1
        if is_load and width_bits == 128 and self.wide_read_lane_bits is not None:
            return self.wide_read_lane_bits
        return tuple(range(k))


KIB = 1024
# NVIDIA (see the module docstring for the sources of each fact)
SM80 = Target("sm_80", Vendor.NVIDIA, 32, 80, "NVIDIA Ampere", has_ldmatrix=True,
              shared_memory_bytes=163 * KIB, family="ampere", dram_bytes_per_cycle=13.4, registers_per_thread=255)
SM86 = Target("sm_86", Vendor.NVIDIA, 32, 86, "NVIDIA Ampere GA10x: A10, RTX 30xx", has_ldmatrix=True,
              shared_memory_bytes=99 * KIB, family="ampere", dram_bytes_per_cycle=4.9, registers_per_thread=255)
SM89 = Target("sm_89", Vendor.NVIDIA, 32, 89, "NVIDIA Ada: L40, RTX 40xx", has_ldmatrix=True,
              shared_memory_bytes=99 * KIB, family="ada", dram_bytes_per_cycle=2.4, registers_per_thread=255)
SM90 = Target("sm_90", Vendor.NVIDIA, 32, 90, "NVIDIA Hopper", has_ldmatrix=True, has_stmatrix=True,
              has_distributed_shared_memory=True, shared_memory_bytes=227 * KIB, family="hopper",
              dram_bytes_per_cycle=12.8, l2_bytes=50 * 1000 * 1000, registers_per_thread=255)
SM100 = Target("sm_100", Vendor.NVIDIA, 32, 100, "NVIDIA Blackwell: B200, GB200", has_ldmatrix=True,
               has_stmatrix=True, has_distributed_shared_memory=True, shared_memory_bytes=227 * KIB,
               family="blackwell", dram_bytes_per_cycle=27.0, registers_per_thread=255)
SM120 = Target("sm_120", Vendor.NVIDIA, 32, 120, "NVIDIA Blackwell consumer: RTX 50xx", has_ldmatrix=True,
               has_stmatrix=True, shared_memory_bytes=99 * KIB, family="blackwell-consumer", dram_bytes_per_cycle=4.4,
               registers_per_thread=255)
# AMD
GFX90A = Target("gfx90a", Vendor.AMD, 64, "gfx90a", "AMD MI200", shared_memory_bytes=64 * KIB, family="cdna2",
                mfma_version=2, dram_bytes_per_cycle=8.8, registers_per_thread=512)
GFX942 = Target("gfx942", Vendor.AMD, 64, "gfx942", "AMD MI300", wide_read_lane_bits=(0, 1, 4),
                shared_memory_bytes=64 * KIB, family="cdna3", mfma_version=3, dram_bytes_per_cycle=8.3,
                registers_per_thread=512)
GFX950 = Target("gfx950", Vendor.AMD, 64, "gfx950", "AMD MI350/MI355", wide_read_lane_bits=(0, 1, 4),
                shared_memory_bytes=160 * KIB, family="cdna4", mfma_version=4, has_lds_transpose_read=True,
                dram_bytes_per_cycle=13.0, registers_per_thread=512)
GFX1100 = Target("gfx1100", Vendor.AMD, 32, "gfx1100", "AMD RDNA3: RX 7900", shared_memory_bytes=64 * KIB,
                 family="rdna3", wmma_version=1, dram_bytes_per_cycle=4.0, registers_per_thread=256)
GFX1201 = Target("gfx1201", Vendor.AMD, 32, "gfx1201", "AMD RDNA4: RX 9070", shared_memory_bytes=64 * KIB,
                 family="rdna4", wmma_version=2, dram_bytes_per_cycle=3.4, registers_per_thread=256)

TARGETS = {t.name: t for t in (SM80, SM86, SM89, SM90, SM100, SM120, GFX90A, GFX942, GFX950, GFX1100, GFX1201)}
# The project's first four targets (tools whose seeded draws must stay reproducible default to
# these, so that a recorded seed draws the same cases; ``--targets`` names the others).
ORIGINAL_TARGETS = ("sm_80", "sm_90", "gfx90a", "gfx942")


def known_target_names() -> str:
    """Every target we know, in both spellings, as help texts and error messages list them:
    ``sm_80 (cuda:80), ..., gfx942 (hip:gfx942), ...``.  Every tool names targets from this one
    text, so that ``--help`` and an error never disagree about which targets exist."""
    return ", ".join(f"{t.name} ({t.triton_name})" for t in TARGETS.values())


def target_from_triton_name(name: str) -> Target:
    """Triton's name (``ttg.target``: ``cuda:90``, ``hip:gfx942``) -> Target."""
    for target in TARGETS.values():
        if name == target.triton_name:
            return target
    raise UnknownTarget(f"unknown target '{name}'; known targets: {known_target_names()}")


def target_named(name: str) -> Target:
    """``"sm_90"``, ``"cuda:90"``, ``"gfx942"``, ``"hip:gfx942"`` -> Target."""
    key = name.strip().lower()
    for target in TARGETS.values():
        if key in (target.name, target.triton_name):
            return target
    raise UnknownTarget(f"unknown target '{name}'; known targets: {known_target_names()}")
