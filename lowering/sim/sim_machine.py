"""The simulator's machine: every thread that runs an island, at once, and its values.

``lowering.sim.island_sim`` runs an island's text on a :class:`Machine`: one numpy array per SSA
value over all threads (:class:`Scalar`: its bits and whether each thread's copy is defined),
and the scratch buffer, with what every thread stored and read since the last barrier that
orders them (so a race is caught where it happens).  ``lowering.sim.sim_ptx`` runs the inline PTX
on the same machine.  Values are real bit patterns; :func:`mix` / :func:`unmix` tag elements so
that one that reaches the wrong register shows (see ``island_sim``'s docstring).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from ..thread_group import ThreadGroup

SCRATCH_BASE = 0x400        # a nonzero base address: offsets that forget the base show up
_ODD = {1: 1, 8: 0x9D, 16: 0x9E37, 32: 0x9E3779B1, 64: 0x9E3779B97F4A7C15}
_XOR = {1: 0, 8: 0x5A, 16: 0xA55A, 32: 0xA5A55A5A, 64: 0xA5A55A5AC3C33C3C}


_PATTERNS: dict[str, re.Pattern] = {}


def fullmatch(pattern: str, text: str):
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


def mask(bits: int) -> np.uint64:
    mask = _MASKS.get(bits)
    if mask is None:
        return np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    return mask


def mix(x: np.ndarray, bits: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        return ((x * np.uint64(_ODD[bits])) ^ np.uint64(_XOR[bits])) & mask(bits)


def unmix(y: np.ndarray, bits: int) -> np.ndarray:
    inverse = pow(_ODD[bits], -1, 1 << bits) if bits > 1 else 1
    with np.errstate(over="ignore"):
        return ((y ^ np.uint64(_XOR[bits])) * np.uint64(inverse)) & mask(bits)


# ------------------------------------------------------------------------------------ parsing

_INT_TYPE = re.compile(r"^i(\d+)$")


def type_bits(t: str) -> int:
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


def vector_type(t: str):
    m = fullmatch(r"vector<(\d+)xi(\d+)>", t.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def struct_fields(t: str) -> tuple[str, ...]:
    return _struct_fields_cached(t.strip())


@functools.lru_cache(maxsize=64)
def _struct_fields_cached(t: str) -> tuple[str, ...]:
    # An island's struct type (up to thousands of fields) appears on every extract and insert:
    # split it once.
    m = fullmatch(r"!llvm\.struct<\((.*)\)>", t)
    if not m:
        raise SimulationError(f"not a struct type: '{t}'")
    return tuple(f.strip() for f in m.group(1).split(",")) if m.group(1).strip() else ()


# ------------------------------------------------------------------------------------ the machine


class Machine:
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
        # Every thread, in order: what an access of every thread passes as ``threads`` (the
        # accesses recognize this very array and reuse what they derive from it, _access_rows).
        self.all_threads = t
        self.block = t // (warps * warp_size)
        self.warp = (t // warp_size) % warps
        self.lane = t % warp_size
        # %tid.x counts from the CTA's first thread, not the group's
        self.tid = ((self.group.first_warp + self.warp) * warp_size + self.lane).astype(np.uint64)
        self.vendor = vendor
        self.env: dict[str, object] = {}
        self.smem = None  # (B, nbytes) uint8 values, plus bookkeeping
        self._flat_views: dict = {}   # flat views of the bookkeeping arrays (_flat)
        self._rows: dict = {}         # what an access of every thread derives, by width (_access_rows)
        self._tiled: dict = {}        # every thread repeated, by copies (tiled_threads)
        self.cta_epoch = 0
        self.warp_epoch = np.zeros(warps, dtype=np.int64)
        self.shared_ops_seen = 0
        self.barrier_before_first_shared = False
        self.barrier_since_last_shared = False
        self.pending_fence = None   # AMD: "release" seen, waiting for s.barrier; "s_barrier": for acquire
        self.undefined_load = None  # where shared bytes that no thread stored were first loaded
        # Loads since the last CTA barrier whose reader bookkeeping is not done yet (_record_pending_reads)
        self._pending_reads: list = []
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
        self._flat_views = {}
        self._rows = {}
        self._pending_reads = []

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
            # Every load before a CTA barrier is ordered before every later access: its reader
            # bookkeeping could never flag anything, so it is never done (_record_pending_reads).
            self._pending_reads = []
            self.cta_epoch += 1
            if self.shared_ops_seen == 0:
                self.barrier_before_first_shared = True
            self.barrier_since_last_shared = True
        self.warp_epoch += 1

    def byte_addresses(self, address: Scalar, nbytes: int, align: int, what: str):
        if not address.defined.all():
            raise SimulationError(f"{what}: the address is undefined in some thread")
        a = address.value.astype(np.int64) - SCRATCH_BASE
        if (a % align).any():
            t = int(np.nonzero(a % align)[0][0])
            raise SimulationError(f"{what}: address offset {int(a[t])} of {self.who(t)} is not {align}-byte aligned")
        if self.smem is None:
            raise SimulationError(f"{what}: no scratch buffer was allocated")
        bad = (a < 0) | (a + nbytes > self.nbytes)
        if bad.any():
            t = int(np.nonzero(bad)[0][0])
            raise SimulationError(f"{what}: {self.who(t)} accesses bytes {int(a[t])}..{int(a[t]) + nbytes - 1} "
                                  f"outside the {self.nbytes}-byte scratch buffer")
        return a

    def who(self, t: int) -> str:
        """Thread ``t`` as a reader finds it: ``block 0 warp 1 lane 5``."""
        return f"block {int(self.block[t])} warp {int(self.warp[t])} lane {int(self.lane[t])}"

    def _note_shared(self):
        if self.pending_fence is not None:
            raise SimulationError("shared-memory access inside an unfinished AMD barrier sequence (fence release; "
                                  "s_barrier; fence acquire): the barrier does not order it")
        self.shared_ops_seen += 1
        self.barrier_since_last_shared = False

    def _flat(self, name: str) -> np.ndarray:
        """The (B, nbytes) bookkeeping array ``name`` as a flat view: index block * nbytes + byte
        (one index computed per access instead of one per array read).  The views are made once
        per buffer (the arrays are only ever changed in place)."""
        view = self._flat_views.get(name)
        if view is None or view.base is not getattr(self, name):
            view = self._flat_views[name] = getattr(self, name).reshape(-1)
        return view

    def tiled_threads(self, copies: int) -> np.ndarray:
        """Every thread, ``copies`` times over (row k: thread k % T): the threads of one access
        that reads several pieces per thread (an ``ldmatrix .x4``), remembered per machine so
        that ``_access_rows`` can reuse what it derives from them."""
        tiled = self._tiled.get(copies)
        if tiled is None:
            tiled = self._tiled[copies] = np.tile(self.all_threads, copies)
        return tiled

    def _access_rows(self, nbytes: int, threads: np.ndarray):
        """For an access of ``nbytes`` bytes by ``threads`` (row k: thread threads[k]): (the byte
        numbers 0..nbytes-1, their shifts in a little-endian value, each byte's thread, its
        block's first key ``block * buffer bytes`` and its warp), threads x bytes row-major.
        Derived once per width when ``threads`` is ``all_threads`` (every access of an island)."""
        cached = threads is self.all_threads or any(threads is tiled for tiled in self._tiled.values())
        key = (nbytes, len(threads))
        if cached and key in self._rows:
            return self._rows[key]
        byte_numbers = np.arange(nbytes)
        shifts = byte_numbers.astype(np.uint64) * np.uint64(8)
        each = np.repeat(threads, nbytes)
        rows = (byte_numbers, shifts, each, self.block[each] * self.nbytes, self.warp[each])
        if cached:
            self._rows[key] = rows
        return rows

    def _groups(self, key: np.ndarray, threads: np.ndarray, warps: np.ndarray):
        """Per accessed (block, byte) of one instruction (``key`` = block * nbytes + byte): its
        key, the reading or writing thread if only one, else -2, and its warp if only one, else
        -2.  (Most instructions touch every byte once: then these are the inputs themselves.)"""
        order = np.argsort(key, kind="stable")
        sorted_keys = key[order]
        differs = sorted_keys[1:] != sorted_keys[:-1]
        if len(key) and differs.all():   # every byte once: the common case, answered cheaply
            return key, threads, warps
        starts = np.flatnonzero(np.concatenate(([True], differs)))
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
            raise SimulationError(f"{what}: {self.who(int(threads[k]))} stores an undefined value")
        self._note_shared()
        self._record_pending_reads()
        # Every byte of every thread at once: row k of the (threads x bytes) grid is thread
        # threads[k]'s bytes offsets[k] .. offsets[k] + nbytes - 1, little-endian.
        byte_numbers, shifts, threads, block_key, my_warp = self._access_rows(nbytes, threads)
        addr = (offsets[:, None] + byte_numbers).ravel()
        byte = ((value[:, None] >> shifts) & np.uint64(0xFF)).ravel()
        key = block_key + addr
        smem, reader, read_warp = self._flat("smem"), self._flat("reader"), self._flat("read_warp")
        writer_of = self._flat("writer")
        # write-after-read: another thread read this byte, no barrier since
        # Each hazard needs an earlier access of the byte: where no byte was read (written) since
        # the buffer was allocated or last stored, no write-after-read (write-after-write) is
        # possible and its ordering is not computed (the common case: stores into fresh bytes).
        reader_now = reader[key]
        was_read = reader_now != -1
        if was_read.any():
            read_ordered = self._ordered_since(self._flat("read_cta")[key], read_warp[key],
                                               self._flat("read_warp_epoch")[key], my_warp)
            war = was_read & (reader_now != threads) & ~read_ordered
            if war.any():
                k = int(np.nonzero(war)[0][0])
                raise SimulationError(f"{what}: {self.who(int(threads[k]))} overwrites byte {int(addr[k])}, which "
                                      f"another thread read with no barrier in between (missing barrier)")
        # write-after-write of a different value by another thread, no barrier since
        writer = writer_of[key]
        was_written = writer >= 0
        if was_written.any():
            write_ordered = self._ordered_since(self._flat("write_cta")[key],
                                                np.where(was_written, self.warp[np.maximum(writer, 0)], -1),
                                                self._flat("write_warp_epoch")[key], my_warp)
            waw = was_written & (writer != threads) & ~write_ordered & (smem[key] != byte)
            if waw.any():
                k = int(np.nonzero(waw)[0][0])
                raise SimulationError(f"{what}: {self.who(int(threads[k]))} and another thread store different "
                                      f"values to byte {int(addr[k])} with no barrier in between (a race)")
        smem[key] = byte
        # Several lanes of this instruction may store one byte: they must agree.  Where every
        # byte is stored once, each reads back its own value and the check passes (no sort to
        # find the bytes stored more than once is needed).
        if (smem[key] != byte).any():
            raise SimulationError(f"{what}: lanes of one store write different values to one byte")
        self._flat("written")[key] = True
        writer_of[key] = threads
        self._flat("write_cta")[key] = self.cta_epoch
        self._flat("write_warp_epoch")[key] = self.warp_epoch[my_warp]
        if was_read.any():        # bytes never read since their last store have no reader to forget
            reader[key] = -1      # a byte stored by several lanes is set once per lane, to the same value
            read_warp[key] = -1

    def load_bytes(self, offsets: np.ndarray, nbytes: int, threads: np.ndarray, what: str):
        """The little-endian value of ``nbytes`` bytes at ``offsets[k]`` for thread ``threads[k]``,
        and whether it is defined there (bytes that no thread stored are undefined: loading them
        is allowed, using them is not)."""
        self._note_shared()
        count = len(offsets)
        byte_numbers, shifts, reading, block_key, my_warp = self._access_rows(nbytes, threads)
        addr = (offsets[:, None] + byte_numbers).ravel()    # as in store_bytes: threads x bytes
        key = block_key + addr
        written = self._flat("written")[key]
        if not written.all() and self.undefined_load is None:
            k = int(np.nonzero(~written)[0][0])
            self.undefined_load = (f"line {self.line}: {what} of {self.who(int(reading[k]))} loads byte "
                                   f"{int(addr[k])}, which no thread stored")
        defined = written.reshape(count, nbytes).all(axis=1)
        write_cta = self._flat("write_cta")[key]
        # a CTA barrier since every store of these bytes orders them all (the common case: loads
        # after the barrier that follows the stores); otherwise each byte is checked
        if not (write_cta < self.cta_epoch).all():
            writer = self._flat("writer")[key]
            ordered = self._ordered_since(write_cta, self.warp[np.maximum(writer, 0)],
                                          self._flat("write_warp_epoch")[key], my_warp)
            race = written & (writer != reading) & ~ordered
            if race.any():
                k = int(np.nonzero(race)[0][0])
                raise SimulationError(f"{what}: {self.who(int(reading[k]))} reads byte {int(addr[k])}, which "
                                      f"another thread stored with no barrier in between (missing barrier)")
        value = np.bitwise_or.reduce(self._flat("smem")[key].reshape(count, nbytes).astype(np.uint64) << shifts,
                                     axis=1)
        self._pending_reads.append((key, reading, my_warp, self.warp_epoch.copy()))
        return value, defined

    # Deferred reader bookkeeping.  Who read a byte since the last barrier that orders it matters
    # only to a later store (a write-after-read race), and no load before a CTA barrier can race
    # with an access after it.  So a load only notes what it read (_pending_reads); the
    # bookkeeping is done, in load order and with the warp barriers counted as they were at each
    # load, when a store comes before the next CTA barrier, and never otherwise.  Example: an
    # island "store, bar.sync, load x32" does it for none of its 32 loads; "store, bar.warp.sync,
    # load, bar.warp.sync, store" does it for the load, at the second store.
    def _record_pending_reads(self) -> None:
        pending, self._pending_reads = self._pending_reads, []
        for key, reading, my_warp, warp_epoch in pending:
            self._record_read(key, reading, my_warp, warp_epoch)

    def _record_read(self, key, reading, my_warp, warp_epoch) -> None:
        """Remember who read the bytes ``key`` (one thread, or -2 for several; one warp, or -2)
        since the last ordering barrier; ``warp_epoch``: each warp's barrier count at the load
        (the CTA's is the current one: a CTA barrier drops the loads before it)."""
        group_keys, thread, warp = self._groups(key, reading, my_warp)
        reader, read_warp = self._flat("reader"), self._flat("read_warp")
        read_cta, read_warp_epoch = self._flat("read_cta"), self._flat("read_warp_epoch")
        prev_thread, prev_warp = reader[group_keys], read_warp[group_keys]
        prev_cta_ordered = read_cta[group_keys] < self.cta_epoch
        same_warp_ordered = (prev_warp == warp) & (warp >= 0) & \
            (read_warp_epoch[group_keys] < warp_epoch[np.maximum(warp, 0)])
        fresh = (prev_thread == -1) | prev_cta_ordered | same_warp_ordered
        reader[group_keys] = np.where(fresh | (prev_thread == thread), thread, -2)
        read_warp[group_keys] = np.where(fresh | (prev_warp == warp), warp, -2)
        read_cta[group_keys] = self.cta_epoch
        read_warp_epoch[group_keys] = np.where(warp >= 0, warp_epoch[np.maximum(warp, 0)], -1)




# ---------------------------------------------------------------------------------- arithmetic

BINARY = {
    "and": lambda a, b, m: a & b, "or": lambda a, b, m: a | b, "xor": lambda a, b, m: a ^ b,
    "add": lambda a, b, m: (a + b) & m, "sub": lambda a, b, m: (a - b) & m, "mul": lambda a, b, m: (a * b) & m,
}


def shift(op: str, a: Scalar, b: Scalar) -> np.ndarray:
    amount = b.value.astype(np.int64)
    out = np.zeros_like(a.value)
    ok = amount < a.bits
    sh = np.where(ok, amount, 0).astype(np.uint64)
    if op == "shl":
        out = np.where(ok, (a.value << sh) & mask(a.bits), 0)
    else:
        out = np.where(ok, a.value >> sh, 0)
    return out.astype(np.uint64)


def prmt(a: np.ndarray, b: np.ndarray, selector: int) -> np.ndarray:
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

