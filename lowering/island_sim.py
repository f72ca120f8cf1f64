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
tensor always 1.

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
  accesses and barriers must be ``has_side_effects``; LDS accesses claim their natural alignment;
* the AMD barrier sequence ``fence release; s_barrier; fence acquire`` complete before the next
  LDS access; vendor ops (``nvvm.*``, ``rocdl.*``, inline PTX) only on their vendor's target;
* the text itself: the island starts with the source cast, defines every SSA name once, and
  casts back exactly once, to the convert's result name and type.

Shared bytes that no thread stored load as *undefined* values (loading them is no error; using
them in an output, a store or an address is).

Any op or inline-asm text it does not know is a failure: the simulator fails closed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from .element_type import ElementType
from .emit_llvm import ConvertSite, memdesc_struct_type, struct_registers
from .hardware import HardwareLayout, xor_table
from .plan import ConversionPlan
from .thread_group import ThreadGroup
from .verify import VerificationResult

MAX_LINES = 200_000
MAX_THREAD_REGISTERS = 1 << 22
SCRATCH_BASE = 0x400        # a nonzero base address: offsets that forget the base show up
_ODD = {1: 1, 8: 0x9D, 16: 0x9E37, 32: 0x9E3779B1, 64: 0x9E3779B97F4A7C15}
_XOR = {1: 0, 8: 0x5A, 16: 0xA55A, 32: 0xA5A55A5A, 64: 0xA5A55A5AC3C33C3C}


_PATTERNS: dict[str, re.Pattern] = {}


def _fullmatch(pattern: str, text: str):
    """``re.fullmatch`` with the pattern compiled once (every island line goes through a few)."""
    compiled = _PATTERNS.get(pattern)
    if compiled is None:
        compiled = _PATTERNS[pattern] = re.compile(pattern)
    return compiled.fullmatch(text)


class SimulationError(Exception):
    """The island does something wrong or something the simulator does not know."""


@dataclass
class Scalar:
    """One SSA scalar over all threads: ``bits`` wide, ``value`` (uint64 per thread) and
    ``defined`` (bool per thread)."""

    bits: int
    value: np.ndarray
    defined: np.ndarray


_MASKS = {bits: np.uint64((1 << bits) - 1) for bits in range(1, 64)}
_MASKS[64] = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mask(bits: int) -> np.uint64:
    mask = _MASKS.get(bits)
    if mask is None:
        return np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    return mask


def _mix(x: np.ndarray, bits: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        return ((x * np.uint64(_ODD[bits])) ^ np.uint64(_XOR[bits])) & _mask(bits)


def _unmix(y: np.ndarray, bits: int) -> np.ndarray:
    inverse = pow(_ODD[bits], -1, 1 << bits) if bits > 1 else 1
    with np.errstate(over="ignore"):
        return ((y ^ np.uint64(_XOR[bits])) * np.uint64(inverse)) & _mask(bits)


# ------------------------------------------------------------------------------------ parsing

# ops that exist on one vendor only: an NVVM op in an AMD island (or the reverse) is a wrong emitter
_VENDOR_FAMILIES = {"nvvm": "nvidia", "rocdl": "amd"}

_ASSIGN = re.compile(r"^(%[\w.$#-]+) = (.*)$")
_INT_TYPE = re.compile(r"^i(\d+)$")


def _type_bits(t: str) -> int:
    return _type_bits_of(t.strip())


@functools.lru_cache(maxsize=256)
def _type_bits_of(t: str) -> int:
    m = _INT_TYPE.match(t)
    if m:
        return int(m.group(1))
    if t in ("f32",):
        return 32
    if t in ("f16", "bf16"):
        return 16
    if t == "f64" or t.startswith("!llvm.ptr"):
        return 64
    raise SimulationError(f"unknown scalar type '{t}'")


def _vector_type(t: str):
    m = _fullmatch(r"vector<(\d+)xi(\d+)>", t.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def _struct_fields(t: str) -> tuple[str, ...]:
    return _struct_fields_cached(t.strip())


@functools.lru_cache(maxsize=64)
def _struct_fields_cached(t: str) -> tuple[str, ...]:
    # An island's struct type (up to thousands of fields) appears on every extract and insert:
    # split it once.
    m = _fullmatch(r"!llvm\.struct<\((.*)\)>", t)
    if not m:
        raise SimulationError(f"not a struct type: '{t}'")
    return tuple(f.strip() for f in m.group(1).split(",")) if m.group(1).strip() else ()


# ------------------------------------------------------------------------------------ the machine


class _Machine:
    """Every thread that runs the island, at once.  ``threads``: the warp group that runs it
    (a warp-specialized kernel's default group or one of its partitions, whose warps start at
    ``first_warp`` of a CTA of ``all_warps``); None: the whole CTA.  Threads of other groups do
    not run the island: a barrier that waits for them never completes."""

    def __init__(self, blocks: int, warps: int, warp_size: int, vendor: str, threads: ThreadGroup | None = None):
        self.B, self.W, self.L = blocks, warps, warp_size
        self.T = blocks * warps * warp_size
        self.group = threads if threads is not None else ThreadGroup(warps)
        if self.group.warps != warps:
            raise SimulationError(f"the layouts have {warps} warps, the island runs in the {self.group.name} "
                                  f"of {self.group.warps} warps")
        t = np.arange(self.T, dtype=np.int64)
        self.block = t // (warps * warp_size)
        self.warp = (t // warp_size) % warps
        self.lane = t % warp_size
        # %tid.x counts from the CTA's first thread, not the group's
        self.tid = ((self.group.first_warp + self.warp) * warp_size + self.lane).astype(np.uint64)
        self.vendor = vendor
        self.env: dict[str, object] = {}
        self.smem = None  # (B, nbytes) uint8 values, plus bookkeeping
        self.cta_epoch = 0
        self.warp_epoch = np.zeros(warps, dtype=np.int64)
        self.shared_ops_seen = 0
        self.barrier_before_first_shared = False
        self.barrier_since_last_shared = False
        self.pending_fence = None   # AMD: "release" seen, waiting for s.barrier; "s_barrier": for acquire
        self.undefined_load = None  # where shared bytes that no thread stored were first loaded
        self.line = None            # the island line being executed (for notes)

    # -- values ----------------------------------------------------------------------------
    def get(self, name: str):
        if name not in self.env:
            raise SimulationError(f"use of undefined SSA value {name}")
        return self.env[name]

    def scalar(self, name: str) -> Scalar:
        v = self.get(name)
        if not isinstance(v, Scalar):
            raise SimulationError(f"{name} is not a scalar")
        return v

    def full(self, bits: int, value: int) -> Scalar:
        return Scalar(bits, np.full(self.T, np.uint64(value & ((1 << bits) - 1)), dtype=np.uint64),
                      np.ones(self.T, dtype=bool))

    # -- shared memory -----------------------------------------------------------------------
    def alloc(self, nbytes: int) -> None:
        if self.smem is not None:
            raise SimulationError("a second scratch buffer in one island")
        self.nbytes = nbytes
        self.smem = np.zeros((self.B, nbytes), dtype=np.uint64)
        self.written = np.zeros((self.B, nbytes), dtype=bool)
        self.writer = np.full((self.B, nbytes), -1, dtype=np.int64)         # thread id
        self.write_cta = np.full((self.B, nbytes), -1, dtype=np.int64)
        self.write_warp_epoch = np.full((self.B, nbytes), -1, dtype=np.int64)
        self.reader = np.full((self.B, nbytes), -1, dtype=np.int64)        # -2: several threads
        self.read_cta = np.full((self.B, nbytes), -1, dtype=np.int64)
        self.read_warp_epoch = np.full((self.B, nbytes), -1, dtype=np.int64)
        self.read_warp = np.full((self.B, nbytes), -1, dtype=np.int64)          # -2: several warps

    def named_barrier(self, barrier_id: int, count: int | None) -> None:
        """``bar.sync id[, count]`` (no count: every thread of the CTA).  It completes only if
        exactly the threads that run the island arrive, on the group's own barrier id."""
        group, arriving = self.group, self.W * self.L
        expected_id = 0 if group.barrier_id is None else group.barrier_id
        waits_for = group.all_warps * self.L if count is None else count
        if waits_for != arriving:
            raise SimulationError(f"barrier {barrier_id} waits for {waits_for} threads, but the {group.name} that "
                                  f"runs the island has {arriving}: it never completes (a hang)"
                                  if waits_for > arriving else
                                  f"barrier {barrier_id} waits for {waits_for} threads, but {arriving} run the "
                                  f"island: it completes before every thread arrives")
        if barrier_id != expected_id:
            raise SimulationError(f"barrier {barrier_id} in the {group.name}, whose barrier is {expected_id}: it "
                                  f"may meet another warp group's barrier")
        self.barrier(cta=True)

    def barrier(self, cta: bool) -> None:
        if cta:
            self.cta_epoch += 1
            if self.shared_ops_seen == 0:
                self.barrier_before_first_shared = True
            self.barrier_since_last_shared = True
        self.warp_epoch += 1

    def _byte_addresses(self, address: Scalar, nbytes: int, align: int, what: str):
        if not address.defined.all():
            raise SimulationError(f"{what}: the address is undefined in some thread")
        a = address.value.astype(np.int64) - SCRATCH_BASE
        if (a % align).any():
            t = int(np.nonzero(a % align)[0][0])
            raise SimulationError(f"{what}: address offset {int(a[t])} of {self._who(t)} is not {align}-byte aligned")
        if self.smem is None:
            raise SimulationError(f"{what}: no scratch buffer was allocated")
        bad = (a < 0) | (a + nbytes > self.nbytes)
        if bad.any():
            t = int(np.nonzero(bad)[0][0])
            raise SimulationError(f"{what}: {self._who(t)} accesses bytes {int(a[t])}..{int(a[t]) + nbytes - 1} "
                                  f"outside the {self.nbytes}-byte scratch buffer")
        return a

    def _who(self, t: int) -> str:
        return f"block {int(self.block[t])} warp {int(self.warp[t])} lane {int(self.lane[t])}"

    def _note_shared(self):
        if self.pending_fence is not None:
            raise SimulationError("shared-memory access inside an unfinished AMD barrier sequence (fence release; "
                                  "s_barrier; fence acquire): the barrier does not order it")
        self.shared_ops_seen += 1
        self.barrier_since_last_shared = False

    def _flat(self, name: str) -> np.ndarray:
        """The (B, nbytes) bookkeeping array ``name`` as a flat view: index block * nbytes + byte
        (one index computed per access instead of one per array read)."""
        return getattr(self, name).reshape(-1)

    def _groups(self, key: np.ndarray, threads: np.ndarray, warps: np.ndarray):
        """Per accessed (block, byte) of one instruction (``key`` = block * nbytes + byte): its
        key, the reading or writing thread if only one, else -2, and its warp if only one, else
        -2.  (Most instructions touch every byte once: then these are the inputs themselves.)"""
        order = np.argsort(key, kind="stable")
        sorted_keys = key[order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        if len(starts) == len(key):
            return key, threads, warps
        by_key_threads, by_key_warps = threads[order], warps[order]
        tmin = np.minimum.reduceat(by_key_threads, starts)
        tmax = np.maximum.reduceat(by_key_threads, starts)
        wmin = np.minimum.reduceat(by_key_warps, starts)
        wmax = np.maximum.reduceat(by_key_warps, starts)
        unique = sorted_keys[starts]
        thread = np.where(tmin == tmax, tmin, -2)
        warp = np.where(wmin == wmax, wmin, -2)
        return unique, thread, warp

    def _ordered_since(self, cta_epoch, warp, warp_epoch, my_warp):
        """An earlier access at (cta_epoch; warp, warp_epoch) is ordered before now for a
        thread of ``my_warp``: a CTA barrier since, or a warp barrier of the same warp."""
        return (cta_epoch < self.cta_epoch) | ((warp == my_warp) & (warp_epoch < self.warp_epoch[my_warp]))

    def store_bytes(self, offsets: np.ndarray, value: np.ndarray, defined: np.ndarray, nbytes: int,
                    threads: np.ndarray, what: str) -> None:
        """Store the low ``nbytes`` bytes of ``value[k]`` (little-endian) at ``offsets[k]`` for
        thread ``threads[k]``."""
        if not defined.all():
            k = int(np.nonzero(~defined)[0][0])
            raise SimulationError(f"{what}: {self._who(int(threads[k]))} stores an undefined value")
        self._note_shared()
        # Every byte of every thread at once: row k of the (threads x bytes) grid is thread
        # threads[k]'s bytes offsets[k] .. offsets[k] + nbytes - 1, little-endian.
        shifts = np.arange(nbytes, dtype=np.uint64) * np.uint64(8)
        addr = (offsets[:, None] + np.arange(nbytes)).ravel()
        byte = ((value[:, None] >> shifts) & np.uint64(0xFF)).ravel()
        threads = np.repeat(threads, nbytes)
        key = self.block[threads] * self.nbytes + addr
        my_warp = self.warp[threads]
        smem, reader, read_warp = self._flat("smem"), self._flat("reader"), self._flat("read_warp")
        writer_of = self._flat("writer")
        # write-after-read: another thread read this byte, no barrier since
        reader_now = reader[key]
        read_ordered = self._ordered_since(self._flat("read_cta")[key], read_warp[key],
                                           self._flat("read_warp_epoch")[key], my_warp)
        war = (reader_now != -1) & (reader_now != threads) & ~read_ordered
        if war.any():
            k = int(np.nonzero(war)[0][0])
            raise SimulationError(f"{what}: {self._who(int(threads[k]))} overwrites byte {int(addr[k])}, which "
                                  f"another thread read with no barrier in between (missing barrier)")
        # write-after-write of a different value by another thread, no barrier since
        writer = writer_of[key]
        write_ordered = self._ordered_since(self._flat("write_cta")[key],
                                            np.where(writer >= 0, self.warp[np.maximum(writer, 0)], -1),
                                            self._flat("write_warp_epoch")[key], my_warp)
        waw = (writer >= 0) & (writer != threads) & ~write_ordered & (smem[key] != byte)
        if waw.any():
            k = int(np.nonzero(waw)[0][0])
            raise SimulationError(f"{what}: {self._who(int(threads[k]))} and another thread store different "
                                  f"values to byte {int(addr[k])} with no barrier in between (a race)")
        group_keys, _, _ = self._groups(key, threads, my_warp)
        smem[key] = byte
        if len(group_keys) < len(key):  # several lanes of this instruction store one byte: they must agree
            if (smem[key] != byte).any():
                raise SimulationError(f"{what}: lanes of one store write different values to one byte")
        self._flat("written")[key] = True
        writer_of[key] = threads
        self._flat("write_cta")[key] = self.cta_epoch
        self._flat("write_warp_epoch")[key] = self.warp_epoch[my_warp]
        reader[group_keys] = -1
        read_warp[group_keys] = -1

    def load_bytes(self, offsets: np.ndarray, nbytes: int, threads: np.ndarray, what: str):
        """The little-endian value of ``nbytes`` bytes at ``offsets[k]`` for thread ``threads[k]``,
        and whether it is defined there (bytes that no thread stored are undefined: loading them
        is allowed, using them is not)."""
        self._note_shared()
        count = len(offsets)
        addr = (offsets[:, None] + np.arange(nbytes)).ravel()    # as in store_bytes: threads x bytes
        reading = np.repeat(threads, nbytes)
        key = self.block[reading] * self.nbytes + addr
        my_warp = self.warp[reading]
        written = self._flat("written")[key]
        if not written.all() and self.undefined_load is None:
            k = int(np.nonzero(~written)[0][0])
            self.undefined_load = (f"line {self.line}: {what} of {self._who(int(reading[k]))} loads byte "
                                   f"{int(addr[k])}, which no thread stored")
        defined = written.reshape(count, nbytes).all(axis=1)
        writer = self._flat("writer")[key]
        ordered = self._ordered_since(self._flat("write_cta")[key], self.warp[np.maximum(writer, 0)],
                                      self._flat("write_warp_epoch")[key], my_warp)
        race = written & (writer != reading) & ~ordered
        if race.any():
            k = int(np.nonzero(race)[0][0])
            raise SimulationError(f"{what}: {self._who(int(reading[k]))} reads byte {int(addr[k])}, which another "
                                  f"thread stored with no barrier in between (missing barrier)")
        shifts = np.arange(nbytes, dtype=np.uint64) * np.uint64(8)
        value = np.bitwise_or.reduce(self._flat("smem")[key].reshape(count, nbytes).astype(np.uint64) << shifts,
                                     axis=1)
        # remember who read it (one thread, or -2 for several) since the last ordering barrier
        group_keys, thread, warp = self._groups(key, reading, my_warp)
        reader, read_warp = self._flat("reader"), self._flat("read_warp")
        read_cta, read_warp_epoch = self._flat("read_cta"), self._flat("read_warp_epoch")
        prev_thread, prev_warp = reader[group_keys], read_warp[group_keys]
        prev_cta_ordered = read_cta[group_keys] < self.cta_epoch
        same_warp_ordered = (prev_warp == warp) & (warp >= 0) & \
            (read_warp_epoch[group_keys] < self.warp_epoch[np.maximum(warp, 0)])
        fresh = (prev_thread == -1) | prev_cta_ordered | same_warp_ordered
        reader[group_keys] = np.where(fresh | (prev_thread == thread), thread, -2)
        read_warp[group_keys] = np.where(fresh | (prev_warp == warp), warp, -2)
        read_cta[group_keys] = self.cta_epoch
        read_warp_epoch[group_keys] = np.where(warp >= 0, self.warp_epoch[np.maximum(warp, 0)], -1)
        return value, defined


# ---------------------------------------------------------------------------------- execution

_BINARY = {
    "and": lambda a, b, m: a & b, "or": lambda a, b, m: a | b, "xor": lambda a, b, m: a ^ b,
    "add": lambda a, b, m: (a + b) & m, "sub": lambda a, b, m: (a - b) & m, "mul": lambda a, b, m: (a * b) & m,
}


def _shift(op: str, a: Scalar, b: Scalar) -> np.ndarray:
    amount = b.value.astype(np.int64)
    out = np.zeros_like(a.value)
    ok = amount < a.bits
    sh = np.where(ok, amount, 0).astype(np.uint64)
    if op == "shl":
        out = np.where(ok, (a.value << sh) & _mask(a.bits), 0)
    else:
        out = np.where(ok, a.value >> sh, 0)
    return out.astype(np.uint64)


def _prmt(a: np.ndarray, b: np.ndarray, selector: int) -> np.ndarray:
    """PTX ``prmt.b32`` default mode: byte k of d = byte (sel >> 4k) & 7 of {b, a}, sign
    replicated when bit 3 of the nibble is set."""
    pair = (b.astype(np.uint64) << np.uint64(32)) | a.astype(np.uint64)
    out = np.zeros_like(a, dtype=np.uint64)
    for k in range(4):
        nibble = (selector >> (4 * k)) & 0xF
        byte = (pair >> np.uint64(8 * (nibble & 7))) & np.uint64(0xFF)
        if nibble & 8:
            byte = np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0))
        out |= byte << np.uint64(8 * k)
    return out


class _Island:
    """Runs the island text once (one pass) on a machine."""

    def __init__(self, lines: list[str], machine: _Machine, source_struct: list[Scalar], site: ConvertSite,
                 has_result: bool = True, buffer_rank: int = 0, buffer_fields=None):
        self.lines = lines
        self.m = machine
        self.source_struct = source_struct
        self.site = site
        self.output = None
        self.output_type = None
        self.input_type = None
        self.has_result = has_result      # False: a local_store's island (it only stores)
        self.buffer_rank = buffer_rank    # a local_store: the rank of its memdesc operand
        # a local_store: the descriptor's offset fields (a subslice view's start; zero otherwise)
        self.buffer_fields = list(buffer_fields) if buffer_fields is not None else [0] * buffer_rank
        self.buffer_type = None

    def run(self):
        self.first_op = True
        for number, line in enumerate(self.lines, start=1):
            text = line.strip()
            if not text or text.startswith("//"):
                continue
            self.m.line = number
            try:
                self.step(text)
            except SimulationError as error:
                raise SimulationError(f"line {number} ({text[:120]}): {error}") from None
            self.first_op = False
        if self.has_result and self.output is None:
            raise SimulationError(f"the island never casts its result back to a tensor ({self.site.result})")
        if self.m.pending_fence is not None:
            raise SimulationError("the island ends inside an AMD barrier sequence (no acquire fence after s_barrier)")

    def step(self, text: str) -> None:
        m = _ASSIGN.match(text)
        name, body = (m.group(1), m.group(2)) if m else (None, text)
        op = body.split(" ", 1)[0].split("(", 1)[0]
        self.result_name = name
        if self.first_op and op != "builtin.unrealized_conversion_cast":
            raise SimulationError(f"the island must start with the cast of {self.site.source} to a struct, not '{op}'")
        family = op.split(".", 1)[0]
        if family in _VENDOR_FAMILIES and _VENDOR_FAMILIES[family] != self.m.vendor:
            raise SimulationError(f"'{op}' is a {_VENDOR_FAMILIES[family]} op; the target is {self.m.vendor}")
        handler = getattr(self, "op_" + op.replace(".", "_"), None)
        if handler is None:
            raise SimulationError(f"unsupported op '{op}'")
        if name is not None and name in self.m.env:
            raise SimulationError(f"SSA value {name} is defined twice")
        result = handler(body)
        if name is not None:
            if result is None:
                raise SimulationError(f"op '{op}' has no result")
            self.m.env[name] = result
        elif result is not None:
            raise SimulationError(f"op '{op}' has a result but no SSA name")

    # -- casts between the tensor and the struct ------------------------------------------
    def op_builtin_unrealized_conversion_cast(self, body):
        m = _fullmatch(r"builtin\.unrealized_conversion_cast (\S+) : (.+?) to (.+)", body)
        if not m:
            raise SimulationError("cannot read the cast")
        operand, from_type, to_type = m.groups()
        if operand == self.site.source:
            if self.input_type is not None:
                raise SimulationError(f"a second cast of {self.site.source}")
            if from_type.strip() != self.site.src_type:
                raise SimulationError(f"the source cast is from {from_type}, the convert's source type is "
                                      f"{self.site.src_type}")
            self.input_type = to_type
            return list(self.source_struct)
        if self.first_op:
            raise SimulationError(f"the first cast must read {self.site.source}, not {operand}")
        if self.site.buffer and operand == self.site.buffer:
            from .emit_llvm import memdesc_struct_type
            if self.buffer_type is not None:
                raise SimulationError(f"a second cast of {self.site.buffer}")
            if from_type.strip() != self.site.buffer_type or to_type.strip() != memdesc_struct_type(self.buffer_rank):
                raise SimulationError(f"the memdesc cast is {from_type} to {to_type}; expected {self.site.buffer_type} "
                                      f"to {memdesc_struct_type(self.buffer_rank)}")
            self.buffer_type = to_type
            return [self.m.full(64, SCRATCH_BASE)] + [self.m.full(32, o) for o in self.buffer_fields]
        if from_type.startswith("!ttg.memdesc"):
            buffer = self.m.get(operand)
            if buffer != "scratch" or to_type.strip() != "!llvm.struct<(ptr<3>, i32)>":
                raise SimulationError("cast of a memdesc that is not our scratch buffer to its (ptr<3>, i32) struct")
            return [self.m.full(64, SCRATCH_BASE), self.m.full(32, 0)]
        if to_type.strip() == self.site.dst_type or to_type.startswith(("tensor<", "@")):
            if to_type.strip() != self.site.dst_type:
                raise SimulationError(f"the result cast is to {to_type}, the convert's result type is "
                                      f"{self.site.dst_type}")
            if self.output is not None:
                raise SimulationError("a second result cast")
            if self.result_name != self.site.result:
                raise SimulationError(f"the result cast defines {self.result_name}, the convert's result is "
                                      f"{self.site.result}")
            value = self.m.get(operand)
            if not isinstance(value, list):
                raise SimulationError(f"{operand} is not a struct")
            self.output = value
            self.output_type = from_type
            return "tensor"
        raise SimulationError(f"unexpected cast from {from_type} to {to_type}")

    # -- constants, arithmetic -------------------------------------------------------------
    def op_llvm_mlir_constant(self, body):
        m = _fullmatch(r"llvm\.mlir\.constant\((-?\d+) : (\w+)\) : (\w+)", body)
        if not m:
            raise SimulationError("cannot read the constant")
        bits = _type_bits(m.group(2))
        return self.m.full(bits, int(m.group(1)) & ((1 << bits) - 1))

    def op_llvm_mlir_undef(self, body):
        t = body.split(":", 1)[1].strip()
        vec = _vector_type(t)
        if vec:
            return [None] * vec[0]
        return [None] * len(_struct_fields(t))

    def _binary(self, body, opname):
        m = _fullmatch(r"llvm\.\w+ (\S+), (\S+) : (\w+)", body)
        if not m:
            raise SimulationError(f"cannot read llvm.{opname}")
        a, b = self.m.scalar(m.group(1)), self.m.scalar(m.group(2))
        bits = _type_bits(m.group(3))
        if a.bits != bits or b.bits != bits:
            raise SimulationError(f"llvm.{opname}: operand widths {a.bits}, {b.bits} differ from i{bits}")
        if opname in ("shl", "lshr"):
            value = _shift(opname, a, b)
        else:
            with np.errstate(over="ignore"):
                value = _BINARY[opname](a.value, b.value, _mask(bits)).astype(np.uint64, copy=False)
        return Scalar(bits, value, a.defined & b.defined)

    def op_llvm_and(self, body): return self._binary(body, "and")      # noqa: E704
    def op_llvm_or(self, body): return self._binary(body, "or")        # noqa: E704
    def op_llvm_xor(self, body): return self._binary(body, "xor")      # noqa: E704
    def op_llvm_add(self, body): return self._binary(body, "add")      # noqa: E704
    def op_llvm_sub(self, body): return self._binary(body, "sub")      # noqa: E704
    def op_llvm_mul(self, body): return self._binary(body, "mul")      # noqa: E704
    def op_llvm_shl(self, body): return self._binary(body, "shl")      # noqa: E704
    def op_llvm_lshr(self, body): return self._binary(body, "lshr")    # noqa: E704

    def op_llvm_icmp(self, body):
        m = _fullmatch(r'llvm\.icmp "(\w+)" (\S+), (\S+) : (\w+)', body)
        if not m:
            raise SimulationError("cannot read llvm.icmp")
        pred, a, b = m.group(1), self.m.scalar(m.group(2)), self.m.scalar(m.group(3))
        ops = {"eq": np.equal, "ne": np.not_equal, "ult": np.less, "ule": np.less_equal, "ugt": np.greater,
               "uge": np.greater_equal}
        if pred not in ops:
            raise SimulationError(f"icmp predicate '{pred}' not supported")
        return Scalar(1, ops[pred](a.value, b.value).astype(np.uint64), a.defined & b.defined)

    def op_llvm_select(self, body):
        m = _fullmatch(r"llvm\.select (\S+), (\S+), (\S+) : i1, (\S+)", body)
        if not m:
            raise SimulationError("cannot read llvm.select")
        c, a, b = self.m.scalar(m.group(1)), self.m.scalar(m.group(2)), self.m.scalar(m.group(3))
        if c.bits != 1 or a.bits != b.bits:
            raise SimulationError("llvm.select: operand types differ")
        if not c.defined.all():
            raise SimulationError("llvm.select on an undefined condition")
        pick = c.value.astype(bool)
        return Scalar(a.bits, np.where(pick, a.value, b.value), np.where(pick, a.defined, b.defined))

    def _cast(self, body, kind):
        m = _fullmatch(r"llvm\.\w+ (\S+) : (.+?) to (.+)", body)
        if not m:
            raise SimulationError(f"cannot read llvm.{kind}")
        value, from_type, to_type = self.m.get(m.group(1)), m.group(2).strip(), m.group(3).strip()
        from_vec, to_vec = _vector_type(from_type), _vector_type(to_type)
        if kind == "bitcast" and (from_vec or to_vec):
            return self._vector_bitcast(value, from_type, to_type, from_vec, to_vec)
        if not isinstance(value, Scalar):
            raise SimulationError(f"llvm.{kind} of a non-scalar")
        from_bits, to_bits = _type_bits(from_type), _type_bits(to_type)
        if value.bits != from_bits:
            raise SimulationError(f"llvm.{kind}: operand is i{value.bits}, the op says {from_type}")
        if kind == "zext":
            if to_bits <= from_bits:
                raise SimulationError("zext to a narrower type")
            return Scalar(to_bits, value.value.copy(), value.defined)
        if kind == "trunc":
            if to_bits >= from_bits:
                raise SimulationError("trunc to a wider type")
            return Scalar(to_bits, value.value & _mask(to_bits), value.defined)
        if from_bits != to_bits:
            if kind not in ("ptrtoint", "inttoptr"):
                raise SimulationError(f"llvm.{kind} between widths {from_bits} and {to_bits}")
            return Scalar(to_bits, value.value & _mask(to_bits), value.defined)
        return Scalar(to_bits, value.value.copy(), value.defined)

    def _vector_bitcast(self, value, from_type, to_type, from_vec, to_vec):
        if from_vec:  # vector -> scalar
            n, bits = from_vec
            if not isinstance(value, list) or len(value) != n:
                raise SimulationError(f"bitcast: operand is not a {from_type}")
            if any(v is None for v in value):
                raise SimulationError("bitcast of a vector with undefined elements")
            total = _type_bits(to_type)
            if total != n * bits:
                raise SimulationError(f"bitcast {from_type} to {to_type}: sizes differ")
            out = np.zeros(self.m.T, dtype=np.uint64)
            defined = np.ones(self.m.T, dtype=bool)
            for i, v in enumerate(value):
                out |= (v.value & _mask(bits)) << np.uint64(i * bits)
                defined &= v.defined
            return Scalar(total, out, defined)
        n, bits = to_vec
        if not isinstance(value, Scalar) or value.bits != n * bits:
            raise SimulationError(f"bitcast {from_type} to {to_type}: sizes differ")
        return [Scalar(bits, (value.value >> np.uint64(i * bits)) & _mask(bits), value.defined) for i in range(n)]

    def op_llvm_zext(self, body): return self._cast(body, "zext")            # noqa: E704
    def op_llvm_trunc(self, body): return self._cast(body, "trunc")          # noqa: E704
    def op_llvm_bitcast(self, body): return self._cast(body, "bitcast")      # noqa: E704
    def op_llvm_ptrtoint(self, body): return self._cast(body, "ptrtoint")    # noqa: E704
    def op_llvm_inttoptr(self, body): return self._cast(body, "inttoptr")    # noqa: E704

    # -- aggregates --------------------------------------------------------------------------
    def op_llvm_extractvalue(self, body):
        m = _fullmatch(r"llvm\.extractvalue (\S+)\[(\d+)\] : (.+)", body)
        if not m:
            raise SimulationError("cannot read llvm.extractvalue")
        struct, index = self.m.get(m.group(1)), int(m.group(2))
        fields = _struct_fields(m.group(3))
        if not isinstance(struct, list) or len(struct) != len(fields):
            raise SimulationError(f"extractvalue: the struct has {len(struct) if isinstance(struct, list) else '?'} "
                                  f"fields, the type {len(fields)}")
        if not 0 <= index < len(struct):
            raise SimulationError(f"extractvalue index {index} out of range")
        if struct[index] is None:
            raise SimulationError(f"extractvalue of undefined field {index}")
        return struct[index]

    def op_llvm_insertvalue(self, body):
        m = _fullmatch(r"llvm\.insertvalue (\S+), (\S+)\[(\d+)\] : (.+)", body)
        if not m:
            raise SimulationError("cannot read llvm.insertvalue")
        value, struct, index = self.m.scalar(m.group(1)), self.m.get(m.group(2)), int(m.group(3))
        fields = _struct_fields(m.group(4))
        if not isinstance(struct, list) or len(struct) != len(fields) or not 0 <= index < len(fields):
            raise SimulationError("insertvalue: struct and type disagree")
        if value.bits != _type_bits(fields[index]):
            raise SimulationError(f"insertvalue: a {value.bits}-bit value into a {fields[index]} field")
        out = list(struct)
        out[index] = value
        return out

    def _vector_index(self, text):
        index = self.m.scalar(text)
        if not index.defined.all() or (index.value != index.value[0]).any():
            raise SimulationError("vector index is not a uniform constant")
        return int(index.value[0])

    def op_llvm_extractelement(self, body):
        m = _fullmatch(r"llvm\.extractelement (\S+)\[(\S+) : i32\] : (.+)", body)
        if not m:
            raise SimulationError("cannot read llvm.extractelement")
        vec, i = self.m.get(m.group(1)), self._vector_index(m.group(2))
        if not isinstance(vec, list) or not 0 <= i < len(vec) or vec[i] is None:
            raise SimulationError(f"extractelement {i}: out of range or undefined")
        return vec[i]

    def op_llvm_insertelement(self, body):
        m = _fullmatch(r"llvm\.insertelement (\S+), (\S+)\[(\S+) : i32\] : (.+)", body)
        if not m:
            raise SimulationError("cannot read llvm.insertelement")
        value, vec, i = self.m.scalar(m.group(1)), self.m.get(m.group(2)), self._vector_index(m.group(3))
        n, bits = _vector_type(m.group(4))
        if not isinstance(vec, list) or len(vec) != n or not 0 <= i < n or value.bits != bits:
            raise SimulationError("insertelement: vector and type disagree")
        out = list(vec)
        out[i] = value
        return out

    # -- thread ids -------------------------------------------------------------------------
    def op_nvvm_read_ptx_sreg_tid_x(self, body):
        return Scalar(32, self.m.tid.copy(), np.ones(self.m.T, dtype=bool))

    def op_rocdl_workitem_id_x(self, body):
        return Scalar(32, self.m.tid.copy(), np.ones(self.m.T, dtype=bool))

    # -- cross-lane moves ----------------------------------------------------------------------
    def _from_lane(self, value: Scalar, source_lane: np.ndarray, what: str) -> Scalar:
        m = self.m
        if (source_lane < 0).any() or (source_lane >= m.L).any():
            raise SimulationError(f"{what}: a source lane is outside the warp")
        source = (np.arange(m.T) - m.lane + source_lane).astype(np.int64)
        defined = value.defined[source]
        return Scalar(32, value.value[source], defined)

    def op_nvvm_shfl_sync(self, body):
        m = _fullmatch(r"nvvm\.shfl\.sync (bfly|idx) (\S+), (\S+), (\S+), (\S+) : i32 -> i32", body)
        if not m:
            raise SimulationError("cannot read nvvm.shfl.sync")
        kind, mask, value, b, clamp = m.group(1), *(self.m.scalar(x) for x in m.groups()[1:])
        if self.m.L != 32:
            raise SimulationError("shfl.sync on a warp that is not 32 lanes")
        if not mask.defined.all() or (mask.value != 0xFFFFFFFF).any():
            raise SimulationError("shfl.sync member mask is not the full warp")
        if not clamp.defined.all() or (clamp.value != 0x1F).any():
            raise SimulationError("shfl.sync clamp value is not 0x1f")
        if not b.defined.all():
            raise SimulationError("shfl.sync lane operand is undefined")
        lane_arg = b.value.astype(np.int64)
        if kind == "idx":
            if (lane_arg >= 32).any():
                raise SimulationError("shfl.sync.idx source lane >= 32")
            source = lane_arg
        else:
            if (lane_arg >= 32).any():
                raise SimulationError("shfl.sync.bfly xor mask >= 32")
            source = self.m.lane ^ lane_arg
        if value.bits != 32:
            raise SimulationError("shfl.sync of a value that is not 32 bits")
        return self._from_lane(value, source, "shfl.sync")

    def op_rocdl_ds_bpermute(self, body):
        m = _fullmatch(r"rocdl\.ds_bpermute (\S+), (\S+) : \(i32, i32\) -> i32", body)
        if not m:
            raise SimulationError("cannot read rocdl.ds_bpermute")
        index, value = self.m.scalar(m.group(1)), self.m.scalar(m.group(2))
        if not index.defined.all():
            raise SimulationError("ds_bpermute index is undefined")
        byte = index.value.astype(np.int64)
        if (byte % 4).any():
            raise SimulationError("ds_bpermute byte index is not a multiple of 4")
        if (byte >= 4 * self.m.L).any():
            raise SimulationError(f"ds_bpermute byte index beyond lane {self.m.L - 1}")
        return self._from_lane(value, byte // 4, "ds_bpermute")

    # -- shared memory ---------------------------------------------------------------------
    def op_ttg_local_alloc(self, body):
        m = _fullmatch(r"ttg\.local_alloc : \(\) -> !ttg\.memdesc<(\d+)xi8,.*", body)
        if not m:
            raise SimulationError("cannot read the scratch buffer's ttg.local_alloc")
        self.m.alloc(int(m.group(1)))
        return "scratch"

    def op_ttg_local_dealloc(self, body):
        return None

    def op_llvm_getelementptr(self, body):
        m = _fullmatch(r"llvm\.getelementptr (\S+)\[(\S+)\] : \(!llvm\.ptr<3>, i32\) -> !llvm\.ptr<3>, i8", body)
        if not m:
            raise SimulationError("cannot read llvm.getelementptr")
        base, offset = self.m.scalar(m.group(1)), self.m.scalar(m.group(2))
        return Scalar(64, (base.value + offset.value) & _mask(64), base.defined & offset.defined)

    @staticmethod
    def _lds_access(t: str, alignment: int, what: str) -> tuple[int, int]:
        """(count, bits) of an LDS access type the AMD emitter makes: i8, i16, i32, vector<2|4xi32>;
        the alignment it claims must be its natural one (LLVM trusts it)."""
        vec = _vector_type(t)
        n, bits = vec if vec else (1, _type_bits(t))
        if vec and (bits != 32 or n not in (2, 4)) or not vec and bits not in (8, 16, 32):
            raise SimulationError(f"{what} of {t} is not an LDS access the AMD emitter makes")
        if alignment != n * bits // 8:
            raise SimulationError(f"{what} of {t} claims alignment {alignment}, its natural alignment is {n * bits // 8}")
        return n, bits

    def op_llvm_store(self, body):
        m = _fullmatch(r"llvm\.store (\S+), (\S+) \{alignment = (\d+) : i64\} : (.+?), !llvm\.ptr<3>", body)
        if not m:
            raise SimulationError("cannot read llvm.store")
        value, address, t = self.m.get(m.group(1)), self.m.scalar(m.group(2)), m.group(4).strip()
        n, bits = self._lds_access(t, int(m.group(3)), "llvm.store")
        values = value if _vector_type(t) else [value]
        if not isinstance(values, list) or len(values) != n or any(v is None for v in values):
            raise SimulationError(f"llvm.store: the value is not a fully defined {t}")
        if any(not isinstance(v, Scalar) or v.bits != bits for v in values):
            raise SimulationError(f"llvm.store: value and type {t} disagree")
        threads = np.arange(self.m.T)
        offsets = self.m._byte_addresses(address, n * bits // 8, n * bits // 8, "llvm.store")
        for i, v in enumerate(values):  # element by element: the same bytes, the same race rules
            self.m.store_bytes(offsets + i * bits // 8, v.value, v.defined, bits // 8, threads, "llvm.store")
        return None

    def op_llvm_load(self, body):
        m = _fullmatch(r"llvm\.load (\S+) \{alignment = (\d+) : i64\} : !llvm\.ptr<3> -> (.+)", body)
        if not m:
            raise SimulationError("cannot read llvm.load")
        address, t = self.m.scalar(m.group(1)), m.group(3).strip()
        n, bits = self._lds_access(t, int(m.group(2)), "llvm.load")
        offsets = self.m._byte_addresses(address, n * bits // 8, n * bits // 8, "llvm.load")
        threads = np.arange(self.m.T)
        out = [Scalar(bits, *self.m.load_bytes(offsets + i * bits // 8, bits // 8, threads, "llvm.load"))
               for i in range(n)]
        return out if _vector_type(t) else out[0]

    # -- inline assembly (NVIDIA) ------------------------------------------------------------
    def op_llvm_inline_asm(self, body):
        """PTX through ``llvm.inline_asm``: ``$k`` names output k for k below the number of
        ``=r`` constraints, else operand k - outputs (LLVM's numbering); every operand and
        result is an i32 register (``r``).  Memory accesses and barriers must be
        ``has_side_effects`` (LLVM would otherwise move loads across barriers, or drop stores)."""
        m = _fullmatch(r'llvm\.inline_asm (has_side_effects )?asm_dialect = att "(.*?)", "(.*?)" ?(.*?) : '
                         r'\((.*?)\) -> (.+)', body)
        if not m:
            raise SimulationError("cannot read llvm.inline_asm")
        side_effects, asm, constraints, args, arg_types, result_type = m.groups()
        if self.m.vendor != "nvidia":
            raise SimulationError(f"PTX inline assembly in an island for a {self.m.vendor} target")
        operands = [self.m.get(a.strip()) for a in args.split(",") if a.strip()]
        types = [t.strip() for t in arg_types.split(",") if t.strip()]
        cons = [c.strip() for c in constraints.split(",")] if constraints.strip() else []
        n_out = sum(c.startswith("=") for c in cons)
        if any(c != "=r" for c in cons[:n_out]) or any(c != "r" for c in cons[n_out:]):
            raise SimulationError(f"inline asm constraints '{constraints}': outputs (=r) first, then inputs (r)")
        if len(cons) - n_out != len(operands) or len(types) != len(operands):
            raise SimulationError(f"inline asm constraints '{constraints}' name {len(cons) - n_out} inputs; "
                                  f"there are {len(operands)} operands of {len(types)} types")
        if any(t != "i32" for t in types) or any(not isinstance(v, Scalar) or v.bits != 32 for v in operands):
            raise SimulationError("inline asm operands must be i32 values")
        rt = result_type.strip()
        if rt == "()":
            n_results = 0
        elif rt == "i32":
            n_results = 1
        elif rt.startswith("!llvm.struct") and set(_struct_fields(rt)) == {"i32"}:
            n_results = len(_struct_fields(rt))
        else:
            raise SimulationError(f"inline asm result type {rt} is not i32 or a struct of i32")
        if n_results != n_out:
            raise SimulationError(f"inline asm has {n_out} output constraints and {n_results} results")
        results: list = [None] * n_out
        asm = asm.strip()

        def reg(token: str) -> int:
            if not _fullmatch(r"\$\d+", token.strip()):
                raise SimulationError(f"'{token}' is not an operand reference")
            k = int(token.strip()[1:])
            if k >= n_out + len(operands):
                raise SimulationError(f"'{token}': there are only {n_out + len(operands)} operands")
            return k

        def inp(token: str) -> Scalar:
            k = reg(token)
            if k < n_out:
                raise SimulationError(f"'{token}' is an output, read as an input")
            return operands[k - n_out]

        def out(token: str, value: Scalar) -> None:
            k = reg(token)
            if k >= n_out:
                raise SimulationError(f"'{token}' is an input, written as an output")
            if results[k] is not None:
                raise SimulationError(f"'{token}' is written twice")
            results[k] = value

        def reg_list(text: str) -> list[str]:
            text = text.strip()
            if text.startswith("{") and text.endswith("}"):
                text = text[1:-1]
            return [t.strip() for t in text.split(",")]

        def needs_side_effects(what: str):
            if not side_effects:
                raise SimulationError(f"{what} without has_side_effects: LLVM may move or drop it")

        pm = _fullmatch(r"mov\.u32 (\$\d+), %tid\.x;", asm)
        if pm:
            out(pm.group(1), Scalar(32, self.m.tid.copy(), np.ones(self.m.T, dtype=bool)))
        elif _fullmatch(r"prmt\.b32 .*", asm):
            pm = _fullmatch(r"prmt\.b32 (\$\d+), (\$\d+), (\$\d+), (0x[0-9a-fA-F]+|\d+);", asm)
            if not pm:
                raise SimulationError(f"cannot read '{asm}'")
            a, b = inp(pm.group(2)), inp(pm.group(3))
            out(pm.group(1), Scalar(32, _prmt(a.value, b.value, int(pm.group(4), 0)), a.defined & b.defined))
        elif _fullmatch(r"bar\.sync (\d+)(?:, (\d+))?;(?: // guard)?", asm):
            bar = _fullmatch(r"bar\.sync (\d+)(?:, (\d+))?;(?: // guard)?", asm)
            needs_side_effects("bar.sync")
            self.m.named_barrier(int(bar.group(1)), int(bar.group(2)) if bar.group(2) else None)
        elif asm == "fence.proxy.async.shared::cta;":
            # Orders this thread's generic-proxy accesses before later async-proxy ones (wgmma,
            # TMA), which islands do not contain: nothing to simulate, but it must stay put.
            needs_side_effects("fence.proxy.async")
        elif asm in ("bar.warp.sync 0xffffffff;", "bar.warp.sync -1;", "bar.warp.sync -1; // guard"):
            needs_side_effects("bar.warp.sync")
            # a one-warp group's barrier (Triton's, in a partition of one warp) orders the group
            self.m.barrier(cta=self.m.W == 1 and self.m.group.barrier_id is not None)
        elif asm.startswith("st.shared"):
            st = _fullmatch(r"st\.shared(?:\.v(\d))?\.b(\d+) \[(\$\d+)\], (\{[^}]*\}|\$\d+);", asm)
            if not st:
                raise SimulationError(f"unsupported inline assembly '{asm}'")
            needs_side_effects("st.shared")
            values = [inp(t) for t in reg_list(st.group(4))]
            self._st_shared(int(st.group(1) or 0), int(st.group(2)), inp(st.group(3)), values)
        elif asm.startswith("ld.shared"):
            ld = _fullmatch(r"ld\.shared(?:\.v(\d))?\.b(\d+) (\{[^}]*\}|\$\d+), \[(\$\d+)\];", asm)
            if not ld:
                raise SimulationError(f"unsupported inline assembly '{asm}'")
            needs_side_effects("ld.shared")
            dests = reg_list(ld.group(3))
            words = self._ld_shared(int(ld.group(1) or 0), int(ld.group(2)), inp(ld.group(4)), len(dests))
            for token, word in zip(dests, words):
                out(token, word)
        elif asm.startswith(("ldmatrix", "stmatrix")):
            mx = _fullmatch(r"(ldmatrix|stmatrix)\.sync\.aligned\.m8n8\.x(\d)(\.trans)?\.shared\.b16 (.*);", asm)
            if not mx or mx.group(2) not in ("1", "2", "4"):
                raise SimulationError(f"unsupported inline assembly '{asm}'")
            kind, count, trans = mx.group(1), int(mx.group(2)), bool(mx.group(3))
            needs_side_effects(kind)
            if kind == "ldmatrix":
                ops = _fullmatch(r"(\{[^}]*\}), \[(\$\d+)\]", mx.group(4))
                if not ops:
                    raise SimulationError(f"cannot read the operands of '{asm}'")
                dests = reg_list(ops.group(1))
                if len(dests) != count:
                    raise SimulationError(f"ldmatrix .x{count} with {len(dests)} destination registers")
                for token, word in zip(dests, self._matrix(kind, count, trans, inp(ops.group(2)), None)):
                    out(token, word)
            else:
                ops = _fullmatch(r"\[(\$\d+)\], (\{[^}]*\})", mx.group(4))
                if not ops:
                    raise SimulationError(f"cannot read the operands of '{asm}'")
                words = [inp(t) for t in reg_list(ops.group(2))]
                if len(words) != count:
                    raise SimulationError(f"stmatrix .x{count} with {len(words)} source registers")
                self._matrix(kind, count, trans, inp(ops.group(1)), words)
        else:
            raise SimulationError(f"unsupported inline assembly '{asm}'")
        if any(r is None for r in results):
            raise SimulationError(f"'{asm}' does not write every output of its constraints")
        if n_out == 0:
            return None
        return results[0] if rt == "i32" else results

    @staticmethod
    def _access_shape(vec: int, bits: int, what: str) -> int:
        """Bytes of ``{ld,st}.shared[.v<vec>].b<bits>`` (vec 0: scalar), if the emitter makes it."""
        if vec == 0 and bits in (8, 16, 32) or vec in (2, 4) and bits == 32:
            return max(vec, 1) * bits // 8
        raise SimulationError(f"{what}{f'.v{vec}' if vec else ''}.b{bits} is not an access the emitter makes")

    def _st_shared(self, vec, bits, address, values):
        nbytes = self._access_shape(vec, bits, "st.shared")
        if len(values) != max(vec, 1):
            raise SimulationError("st.shared operand count differs from the vector width")
        offsets = self.m._byte_addresses(address, nbytes, nbytes, "st.shared")
        threads = np.arange(self.m.T)
        for i, v in enumerate(values):   # a wider register stores its low bits
            self.m.store_bytes(offsets + i * bits // 8, v.value & _mask(bits), v.defined, bits // 8, threads, "st.shared")

    def _ld_shared(self, vec, bits, address, n_dests):
        nbytes = self._access_shape(vec, bits, "ld.shared")
        if n_dests != max(vec, 1):
            raise SimulationError("ld.shared destination count differs from the vector width")
        offsets = self.m._byte_addresses(address, nbytes, nbytes, "ld.shared")
        threads = np.arange(self.m.T)
        # a narrower access zero-extends into the 32-bit register (.b types)
        return [Scalar(32, *self.m.load_bytes(offsets + i * bits // 8, bits // 8, threads, "ld.shared"))
                for i in range(max(vec, 1))]

    def _matrix(self, kind, count, trans, address, words):
        """ldmatrix / stmatrix m8n8 .b16: lane 8j+i gives the address of row i of matrix j;
        thread t's word j is word t%4 of row t//4 (.trans: the 16-bit elements of rows 2(t%4)
        and 2(t%4)+1 at column t//4)."""
        m = self.m
        if m.L != 32:
            raise SimulationError(f"{kind} needs 32-lane warps")
        if not address.defined.all():
            raise SimulationError(f"{kind}: undefined row address")
        rel = address.value.astype(np.int64) - SCRATCH_BASE
        warp_base = np.arange(m.T) - m.lane          # thread index of lane 0 of my warp
        t = m.lane
        threads = np.arange(m.T)
        out = []
        for j in range(count):
            if trans:
                rows = [warp_base + 8 * j + 2 * (t & 3) + h for h in (0, 1)]
                pieces = [(rel[r] + 2 * (t >> 2), 2, 16 * h) for h, r in enumerate(rows)]
            else:
                row = warp_base + 8 * j + (t >> 2)
                pieces = [(rel[row] + 4 * (t & 3), 4, 0)]
            row_starts = rel[warp_base + 8 * j + np.arange(m.T) % 8]
            if (row_starts % 16).any():
                raise SimulationError(f"{kind}: a row address is not 16-byte aligned")
            if m.smem is None:
                raise SimulationError(f"{kind}: no scratch buffer was allocated")
            if (row_starts < 0).any() or (row_starts + 16 > m.nbytes).any():
                raise SimulationError(f"{kind}: a row lies outside the scratch buffer")
            if kind == "ldmatrix":
                value = np.zeros(m.T, dtype=np.uint64)
                defined = np.ones(m.T, dtype=bool)
                for offsets, nbytes, shift in pieces:
                    v, d = m.load_bytes(offsets, nbytes, threads, kind)
                    value |= v << np.uint64(shift)
                    defined &= d
                out.append(Scalar(32, value, defined))
            else:
                word = words[j]
                for offsets, nbytes, shift in pieces:
                    m.store_bytes(offsets, (word.value >> np.uint64(shift)) & _mask(8 * nbytes), word.defined,
                                  nbytes, threads, kind)
        return out

    # -- AMD barriers ----------------------------------------------------------------------
    def op_llvm_fence(self, body):
        m = _fullmatch(r'llvm\.fence syncscope\("workgroup"\) (\w+)', body)
        if not m:
            raise SimulationError("cannot read llvm.fence")
        order = m.group(1)
        if order == "release":
            if self.m.pending_fence is not None:
                raise SimulationError("a release fence inside an unfinished barrier sequence")
            self.m.pending_fence = "release"
        elif order == "acquire":
            if self.m.pending_fence != "s_barrier":
                raise SimulationError("an acquire fence without release; s_barrier before it")
            self.m.pending_fence = None
        elif order == "acq_rel":
            if self.m.pending_fence is not None:
                raise SimulationError("a warp fence inside a barrier sequence")
            self.m.barrier(cta=False)
        else:
            raise SimulationError(f"fence ordering '{order}' not supported")
        return None

    def op_rocdl_s_barrier(self, body):
        if self.m.pending_fence != "release":
            raise SimulationError("s_barrier without a release fence before it (LDS traffic is not waited for)")
        self.m.pending_fence = "s_barrier"
        self.m.barrier(cta=True)
        return None


# ---------------------------------------------------------------------------------- the check


def _element_ids(hw: HardwareLayout, struct_regs: list[int]) -> np.ndarray:
    """Element id of every (thread, struct field): shape (T, fields), threads ordered as the
    machine's (block, warp, lane)."""
    table = hw.element_table()                   # (B, W, L, R)
    B, W, L, R = table.shape
    return table.reshape(B * W * L, R)[:, struct_regs]


def check_emitted(island_text: str, plan: ConversionPlan, site: ConvertSite) -> VerificationResult:
    """Execute ``island_text`` (``Island.text`` as emitted for ``site``: its source operand is
    ``site.source``) for every thread and check it converts ``plan.src`` into ``plan.dst``; see
    the module docstring."""
    try:
        _check(island_text, plan, site)
    except SimulationError as error:
        return VerificationResult(False, (str(error),))
    return VerificationResult(True)


def _check(island_text: str, plan: ConversionPlan, site: ConvertSite) -> None:
    lines = island_text.splitlines()
    if len(lines) > MAX_LINES:
        raise SimulationError(f"the island has {len(lines)} lines; the simulator stops at {MAX_LINES}")
    element = ElementType.of(site.element_type)
    src_hw = HardwareLayout.of(plan.src)
    dst_hw = HardwareLayout.of(plan.dst, plan.src.out_dim_names)
    src_regs = struct_registers(src_hw, site.unique_struct)
    dst_regs = struct_registers(dst_hw, site.unique_struct)
    B, W, L = 1 << len(src_hw.block), 1 << len(src_hw.warp), 1 << len(src_hw.lane)
    if L != plan.target.warp_size:
        raise SimulationError(f"the layouts have {L} lanes, a {plan.target.name} warp {plan.target.warp_size}")
    if B * W * L * max(len(src_regs), len(dst_regs)) > MAX_THREAD_REGISTERS:
        raise SimulationError("the conversion is too large to simulate")
    src_ids = _element_ids(src_hw, src_regs)
    expected = _element_ids(dst_hw, dst_regs)
    value_bits = element.logical_bits
    id_bits = max(1, src_hw.element_bits)
    passes = max(1, -(-id_bits // value_bits))
    got = np.zeros_like(expected, dtype=np.uint64)
    for p in range(passes):
        machine = _Machine(B, W, L, plan.target.vendor, site.threads)
        slice_ = (src_ids.astype(np.uint64) >> np.uint64(p * value_bits)) & _mask(value_bits)
        tagged = _mix(slice_, value_bits)
        field_bits = element.logical_bits  # a struct field holds the value: an i1 is 1 bit
        source = [Scalar(field_bits, tagged[:, i].copy(), np.ones(machine.T, dtype=bool))
                  for i in range(len(src_regs))]
        island = _Island(lines, machine, source, site)
        island.run()
        if p == 0:
            _check_struct("source", island.input_type, element, len(src_regs))
            _check_struct("destination", island.output_type, element, len(dst_regs))
            _check_guards(machine, site)
        _read_output(island, machine, got, value_bits, p)
    _compare_output(got, expected, machine)


def _read_output(island: "_Island", machine: _Machine, got: np.ndarray, value_bits: int, p: int) -> None:
    """Add pass ``p``'s slice of every output field's element id to ``got`` (fails on undefined ones)."""
    for i, field in enumerate(island.output):
        if field is None or not field.defined.all():
            t = 0 if field is None else int(np.nonzero(~field.defined)[0][0])
            cause = f" (first use of undefined shared memory: {machine.undefined_load})" \
                if machine.undefined_load else ""
            raise SimulationError(f"output field {i} is undefined in {machine._who(t)}{cause}")
        got[:, i] |= _unmix(field.value & _mask(value_bits), value_bits) << np.uint64(p * value_bits)


def _compare_output(got: np.ndarray, expected: np.ndarray, machine: _Machine) -> None:
    wrong = got != expected.astype(np.uint64)
    if wrong.any():
        t, i = (int(x) for x in np.argwhere(wrong)[0])
        raise SimulationError(f"{int(wrong.sum())} output fields hold the wrong element; first: output field {i} "
                              f"of {machine._who(t)} holds element {int(got[t, i])}, the destination layout names "
                              f"element {int(expected[t, i])}")


def _check_struct(which: str, struct_type, element: ElementType, count: int) -> None:
    if struct_type is None:
        raise SimulationError(f"the {which} cast was not found")
    fields = _struct_fields(struct_type)
    if len(fields) != count:
        raise SimulationError(f"the {which} struct has {len(fields)} fields; Triton's type converter gives this "
                              f"layout {count}")
    if any(f != element.llvm for f in fields):
        raise SimulationError(f"the {which} struct's fields are not {element.llvm}: {struct_type}")


def _check_guards(machine: _Machine, site: ConvertSite) -> None:
    if machine.shared_ops_seen == 0:
        return
    if site.guard_before and not machine.barrier_before_first_shared:
        raise SimulationError("no CTA barrier before the island's first shared-memory access (guard_before)")
    if site.guard_after and not machine.barrier_since_last_shared:
        raise SimulationError("no CTA barrier after the island's last shared-memory access (guard_after)")


# ------------------------------------------------------------------------------ local loads

def check_emitted_local_load(island_text: str, plan, site: ConvertSite, rank: int) -> VerificationResult:
    """Execute an island that replaced a ``ttg.local_load`` (``emit_llvm.emit_local_load_island``)
    for every thread: the memdesc's buffer starts with the element its layout names at every
    offset (stored before the island, so ordered before it), the island must read it through the
    descriptor's base pointer and put the destination layout's element in every output field.

    For a subslice view (``plan.view``) the island runs once per start o of
    ``SubsliceView.checked_starts``, with o in the descriptor's offset fields (as
    ``ttg.memdesc_subslice`` leaves them), and must deliver view element c from buffer
    coordinate ``c xor o``: the island's own arithmetic on the offsets is what is checked, not
    the plan's.  A whole buffer's descriptor has zero offsets (Triton's reads ignore them)."""
    try:
        _check_local_load(island_text, plan, site, rank)
    except SimulationError as error:
        return VerificationResult(False, (str(error),))
    return VerificationResult(True)


def _check_local_load(island_text: str, plan, site: ConvertSite, rank: int) -> None:
    lines = island_text.splitlines()
    if len(lines) > MAX_LINES:
        raise SimulationError(f"the island has {len(lines)} lines; the simulator stops at {MAX_LINES}")
    element = ElementType.of(site.element_type)
    order = plan.buffer.out_dim_names
    dst_hw = HardwareLayout.of(plan.dst, order)
    dst_regs = struct_registers(dst_hw, site.unique_struct)
    B, W, L = 1 << len(dst_hw.block), 1 << len(dst_hw.warp), 1 << len(dst_hw.lane)
    if L != plan.target.warp_size:
        raise SimulationError(f"the layout has {L} lanes, a {plan.target.name} warp {plan.target.warp_size}")
    if B * W * L * len(dst_regs) > MAX_THREAD_REGISTERS:
        raise SimulationError("the load is too large to simulate")
    offsets = tuple(plan.buffer._pack(b) for b in plan.buffer.bases["offset"])
    buffer_ids = xor_table(offsets).astype(np.uint64)           # element at every offset
    expected = _element_ids(dst_hw, dst_regs)
    value_bits = element.logical_bits
    nbytes = element.storage_bits // 8
    passes = max(1, -(-max(1, dst_hw.element_bits) // value_bits))
    descriptor_type = memdesc_struct_type(rank)
    view = plan.view
    for start in ([None] if view is None else view.checked_starts()):
        fields = _descriptor_fields(order, start, rank)
        wanted = expected if start is None else expected ^ int(view.element(start))
        try:
            _run_local_load(lines, plan, site, machine_shape=(B, W, L), buffer_ids=buffer_ids, nbytes=nbytes,
                            value_bits=value_bits, passes=passes, fields=fields, descriptor_type=descriptor_type,
                            element=element, dst_count=len(dst_regs), expected=wanted)
        except SimulationError as error:
            if start is None:
                raise
            raise SimulationError(f"view start {list(start)}: {error}") from None


def _descriptor_fields(order, start, rank: int) -> list[int]:
    """The offset fields of a rank-``rank`` memdesc descriptor holding the view start ``start``
    (given in the buffer's out-dim order ``order``: field 1 + d is dim d's), as
    ``ttg.memdesc_subslice`` leaves them; zeros for a whole buffer (``start`` None)."""
    fields = [0] * rank
    if start is not None:
        if len(order) != rank:
            raise SimulationError(f"a view with dims {order} accessed through a rank-{rank} descriptor")
        for name, o in zip(order, start):
            fields[int(name[3:])] = o
    return fields


def _run_local_load(lines, plan, site, machine_shape, buffer_ids, nbytes, value_bits, passes, fields,
                    descriptor_type, element, dst_count, expected) -> None:
    """One run of a local load's island with the descriptor offsets ``fields``."""
    B, W, L = machine_shape
    got = np.zeros_like(expected, dtype=np.uint64)
    for p in range(passes):
        machine = _Machine(B, W, L, plan.target.vendor, site.threads)
        machine.alloc(len(buffer_ids) * nbytes)
        tags = _mix((buffer_ids >> np.uint64(p * value_bits)) & _mask(value_bits), value_bits)
        for byte in range(nbytes):   # little-endian, every CTA's copy of the buffer alike
            machine.smem[:, byte::nbytes] = ((tags >> np.uint64(8 * byte)) & np.uint64(0xFF))[None, :]
        machine.written[:] = True    # stored before the island (writer -1, epoch -1: ordered)
        descriptor = [machine.full(64, SCRATCH_BASE)] + [machine.full(32, o) for o in fields]
        island = _Island(lines, machine, descriptor, site)
        island.run()
        if p == 0:
            if island.input_type is None or island.input_type.strip() != descriptor_type:
                raise SimulationError(f"the memdesc is cast to {island.input_type}, Triton's descriptor struct "
                                      f"is {descriptor_type}")
            _check_struct("destination", island.output_type, element, dst_count)
            _check_guards(machine, site)
        _read_output(island, machine, got, value_bits, p)
    _compare_output(got, expected, machine)


# ----------------------------------------------------------------------------- local stores

def check_emitted_local_store(island_text: str, plan, site: ConvertSite, rank: int) -> VerificationResult:
    """Execute an island that replaced a ``ttg.local_store`` (``emit_llvm.emit_local_store_island``)
    for every thread on an empty buffer: afterwards every byte of the buffer must hold the
    element its layout names at that offset (stored, defined, no race).

    For a subslice view (``plan.view``) the island runs once per start o of
    ``SubsliceView.checked_starts``, with o in the descriptor's offset fields: afterwards every
    byte of the view's region (buffer elements at coordinates ``o <= e < o + shape``) must hold
    view element ``e xor o``, and no other byte may have been written.  The island's own
    arithmetic on the offsets is what is checked, not the plan's."""
    try:
        _check_local_store(island_text, plan, site, rank)
    except SimulationError as error:
        return VerificationResult(False, (str(error),))
    return VerificationResult(True)


def _check_local_store(island_text: str, plan, site: ConvertSite, rank: int) -> None:
    lines = island_text.splitlines()
    if len(lines) > MAX_LINES:
        raise SimulationError(f"the island has {len(lines)} lines; the simulator stops at {MAX_LINES}")
    element = ElementType.of(site.element_type)
    order = plan.buffer.out_dim_names
    src_hw = HardwareLayout.of(plan.src, order)
    src_regs = struct_registers(src_hw, site.unique_struct)
    B, W, L = 1 << len(src_hw.block), 1 << len(src_hw.warp), 1 << len(src_hw.lane)
    if L != plan.target.warp_size:
        raise SimulationError(f"the layout has {L} lanes, a {plan.target.name} warp {plan.target.warp_size}")
    if B * W * L * len(src_regs) > MAX_THREAD_REGISTERS:
        raise SimulationError("the store is too large to simulate")
    src_ids = _element_ids(src_hw, src_regs)
    wanted = xor_table(tuple(plan.buffer._pack(b) for b in plan.buffer.bases["offset"])).astype(np.uint64)
    view = plan.view
    for start in ([None] if view is None else view.checked_starts()):
        fields = _descriptor_fields(order, start, rank)
        inside = np.ones(len(wanted), dtype=bool)
        expected = wanted
        if start is not None:
            inside = np.asarray(view.contains(wanted.astype(np.int64), start), dtype=bool)
            expected = wanted ^ np.uint64(view.element(start))
        try:
            _run_local_store(lines, plan, site, rank, (B, W, L), src_ids, len(src_regs), element, fields,
                             inside, expected)
        except SimulationError as error:
            if start is None:
                raise
            raise SimulationError(f"view start {list(start)}: {error}") from None


def _run_local_store(lines, plan, site, rank, machine_shape, src_ids, src_count, element, fields,
                     inside, wanted) -> None:
    """One run of a local store's island with the descriptor offsets ``fields``: the elements
    ``inside`` must end up holding ``wanted``, the others never be written."""
    B, W, L = machine_shape
    src_hw = HardwareLayout.of(plan.src, plan.buffer.out_dim_names)
    value_bits = element.logical_bits
    nbytes = element.storage_bits // 8
    passes = max(1, -(-max(1, src_hw.element_bits) // value_bits))
    for p in range(passes):
        machine = _Machine(B, W, L, plan.target.vendor, site.threads)
        machine.alloc(len(wanted) * nbytes)
        slice_ = (src_ids.astype(np.uint64) >> np.uint64(p * value_bits)) & _mask(value_bits)
        tagged = _mix(slice_, value_bits)
        source = [Scalar(value_bits, tagged[:, i].copy(), np.ones(machine.T, dtype=bool)) for i in range(src_count)]
        island = _Island(lines, machine, source, site, has_result=False, buffer_rank=rank, buffer_fields=fields)
        island.run()
        if p == 0:
            _check_struct("source", island.input_type, element, src_count)
            if island.buffer_type is None:
                raise SimulationError(f"the island never casts the memdesc {site.buffer} to its descriptor")
            _check_guards(machine, site)
        inside_bytes = np.repeat(inside, nbytes)[None, :]
        missing = ~machine.written & inside_bytes
        if missing.any():
            b, byte = (int(x) for x in np.argwhere(missing)[0])
            raise SimulationError(f"byte {byte} of block {b}'s buffer (element offset {byte // nbytes}) is never stored")
        outside = machine.written & ~inside_bytes
        if outside.any():
            b, byte = (int(x) for x in np.argwhere(outside)[0])
            raise SimulationError(f"byte {byte} of block {b}'s buffer (element offset {byte // nbytes}) is outside "
                                  f"the view, and is stored")
        expected = _mix((wanted >> np.uint64(p * value_bits)) & _mask(value_bits), value_bits)
        stored = np.zeros((B, len(wanted)), dtype=np.uint64)
        for byte in range(nbytes):
            stored |= machine.smem[:, byte::nbytes].astype(np.uint64) << np.uint64(8 * byte)
        wrong = (stored != (expected & _mask(nbytes * 8))[None, :]) & inside[None, :]
        if wrong.any():
            b, offset = (int(x) for x in np.argwhere(wrong)[0])
            raise SimulationError(f"{int(wrong.sum())} buffer elements hold the wrong value; first: block {b} "
                                  f"offset {offset}")
