"""The exhaustive verifier: simulate a plan on a whole CTA grid and check every register.

Every source element is tagged with its logical coordinate (the flattened tensor index).  We
run the plan on every (block, warp, lane, register) at once with numpy arrays of tags and check:

* every destination register ends up holding exactly the element its layout names (broadcast
  copies included: two destination registers, lanes or warps naming one element must both hold
  it);
* ``LOCAL`` / ``XOR`` shuffle rounds really read the lanes they claim (lane itself, lane ^ c);
  source lanes and round indices stay in range;
* shared memory: no access leaves the scratch buffer, vector accesses are aligned; every load
  reads a word written *before the last barrier* (read-after-write needs a barrier in between),
  by the same warp if the barrier is only a warp barrier; no store overwrites, without a barrier
  in between, a word that a load already read in the current phase (write-after-read), or a
  word another thread wrote with a different value in the same phase (a race);
* cross-CTA reads (distributed shared memory) come after a cluster-wide barrier and are followed by
  one before the plan ends.

Arrays: ``regs[b, w, l, r]`` is the tag in register r of lane l of warp w of block b; the scratch
buffer is ``smem[b, offset]`` (one per CTA), with ``written_epoch`` (barrier count at the time of
the last write, -1 = never), ``writer_warp`` and ``read_epoch``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .element_type import storage_bits_of
from .hardware import HardwareLayout, xor_table
from .instructions import AccessForm, BarrierScope, MemorySpace, ShuffleMode
from .plan import Barrier, ConversionPlan, SharedAccess


@dataclass(frozen=True)
class VerificationResult:
    ok: bool
    errors: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.ok


class _Failure(Exception):
    pass


def _simulate_shuffle(plan: ConversionPlan, src: np.ndarray, staging_size: int) -> np.ndarray:
    s = plan.shuffle
    B, W, L, _ = src.shape
    lanes = np.arange(L, dtype=np.int64)
    words = src[..., np.array(s.src_words, dtype=np.int64)]  # (B, W, L, nwords, epw)
    nwords = words.shape[3]
    received = []
    warps = np.arange(W, dtype=np.int64)[:, None]
    wl = (W, L)
    bi, wi = np.arange(B)[:, None, None], np.arange(W)[None, :, None]
    for i, rnd in enumerate(s.rounds):
        # per (warp, lane): the word it sends and the lane it reads (warp terms: see shuffle.py)
        send = np.broadcast_to(np.asarray(rnd.send_word.evaluate(lanes[None, :], warps), dtype=np.int64), wl)
        if send.min() < 0 or send.max() >= nwords:
            raise _Failure(f"round {i}: a lane sends word {int(send.max())}, but there are {nwords} words")
        source = np.broadcast_to(np.asarray(rnd.source_lane.evaluate(lanes[None, :], warps), dtype=np.int64), wl)
        if source.min() < 0 or source.max() >= L:
            raise _Failure(f"round {i}: source lane {int(source.max())} is outside the warp")
        if rnd.mode is ShuffleMode.LOCAL and not (source == lanes[None, :]).all():
            raise _Failure(f"round {i}: marked local but lanes read other lanes")
        if rnd.mode is ShuffleMode.XOR and not (source == (lanes ^ rnd.source_lane.const)[None, :]).all():
            raise _Failure(f"round {i}: marked xor but the source lane is not lane ^ {rnd.source_lane.const}")
        sent = words[bi, wi, lanes[None, None, :], send[None, :, :]]  # (B, W, L, epw)
        received.append(sent[bi, wi, source[None, :, :]])
    received = np.stack(received, axis=2)  # (B, W, rounds, L, epw)
    staging = np.full(src.shape[:3] + (staging_size,), -1, dtype=np.int64)
    pick = np.asarray(s.receive_round.evaluate(lanes)) * np.ones(L, dtype=np.int64)
    for d, regs in enumerate(s.dst_words):
        rnd = d ^ pick
        if rnd.max() >= len(s.rounds):
            raise _Failure(f"destination word {d} selects round {int(rnd.max())} of {len(s.rounds)}")
        word = received[:, :, rnd, lanes]  # (B, W, L, epw)
        for i, r in enumerate(regs):
            staging[..., r] = word[..., i]
    return staging


def access_name(op: SharedAccess) -> str:
    """An access in words, for messages: ``vector store``, ``matrix.trans load``, ``vector load
    (distributed shared)``."""
    where = f" ({op.space.value.replace('_', ' ')})" if op.space is not MemorySpace.SHARED else ""
    return f"{op.form.value} {op.kind.value}{where}"


def access_positions(op: SharedAccess, element_bits: int, lanes, warps, blocks, address_xor: int = 0) -> np.ndarray:
    """Element offset of every (block, warp, lane, register of the access): shape (B, W, L, n).

    Raises ``_Failure`` for misaligned addresses.  Matrix forms: lane 8j + i supplies the
    address of row i of matrix j (see ``SharedAccess``); lane t's word j is word t % 4 of row
    t // 4 (.trans: elements of rows 2(t % 4), 2(t % 4) + 1 at column t // 4).
    ``address_xor``: XORed into every address (a subslice view's start, ``L^-1(o)``).
    """
    B, W, L = len(blocks), len(warps), len(lanes)
    address = op.address.with_const(op.address.const ^ address_xor) if address_xor else op.address
    base = address.evaluate(lanes[None, None, :], warps[None, :, None], blocks[:, None, None])
    base = np.broadcast_to(np.asarray(base, dtype=np.int64), (B, W, L))
    n = len(op.registers)
    name = access_name(op)
    if not op.form.is_matrix:
        if (base % n).any():
            raise _Failure(f"{name}: a {n}-element vector address is not aligned")
        return base[..., None] + np.arange(n, dtype=np.int64)
    row_elements = 128 // storage_bits_of(element_bits)
    if L != 32:
        raise _Failure(f"{name} needs 32 lanes")
    if (base % row_elements).any():
        raise _Failure(f"{name}: a row address is not 16-byte aligned")
    out = np.empty((B, W, L, n), dtype=np.int64)
    t = lanes
    if op.form is AccessForm.MATRIX_TRANS:
        if element_bits != 16 or n % 2:
            raise _Failure(f"{name} needs 16-bit elements in pairs")
        for q in range(n):
            j, h = divmod(q, 2)
            out[..., q] = base[:, :, 8 * j + 2 * (t & 3) + h] + (t >> 2)
        return out
    e = 32 // storage_bits_of(element_bits)
    if n % e or n // e > 4:
        raise _Failure(f"{name}: {n} registers do not make 1, 2 or 4 matrices")
    for q in range(n):
        j, i = divmod(q, e)
        out[..., q] = base[:, :, 8 * j + (t >> 2)] + (t & 3) * e + i
    return out


def _simulate_shared(plan, src: np.ndarray, staging_size: int, preloaded: np.ndarray | None = None,
                     final_buffer: list | None = None, address_xor: int = 0) -> np.ndarray:
    """Run ``plan.shared``'s accesses; ``preloaded``: the element at every offset of a buffer
    written before the plan starts (a local_load), ordered before the plan's first access;
    ``final_buffer``: a list that gets the buffer's final contents, (blocks, offsets), -1 where
    nothing was stored (a local_store); ``address_xor``: XORed into every address (a view's
    start)."""
    sh = plan.shared
    B, W, L, _ = src.shape
    size = sh.scratch_elements
    scratch = _Scratch(B, size)
    staging = np.full((B, W, L, staging_size), -1, dtype=np.int64)
    epoch = 0
    if preloaded is not None:
        if len(preloaded) != size:
            raise _Failure(f"the buffer holds {len(preloaded)} elements, the plan addresses {size}")
        scratch.smem[:] = preloaded[None, :]
        scratch.written_epoch[:] = 0
        epoch = 1
    warp_only = False
    cluster_wide = False
    remote_since_cluster_barrier = False
    bidx = np.arange(B)[:, None, None, None]
    widx = np.broadcast_to(np.arange(W)[None, :, None, None], (B, W, L, 1))
    lanes = np.arange(L, dtype=np.int64)
    warps = np.arange(W, dtype=np.int64)
    blocks = np.arange(B, dtype=np.int64)
    for n, op in enumerate(plan.shared.ops):
        if isinstance(op, Barrier):
            epoch += 1
            warp_only = op.scope is BarrierScope.WARP
            cluster_wide = op.scope is BarrierScope.CLUSTER
            remote_since_cluster_barrier = remote_since_cluster_barrier and not cluster_wide
            continue
        positions = access_positions(op, sh.element_bits, lanes, warps, blocks, address_xor)
        if positions.min() < 0 or positions.max() >= size:
            raise _Failure(f"op {n} ({access_name(op)}): address {int(positions.max())} outside the "
                           f"{size}-element scratch buffer")
        addr = positions  # (B, W, L, n): every register of the access at once
        regs = np.asarray(op.registers, dtype=np.int64)
        cta = bidx if op.cta is None else _reading_cta(op, n, lanes, warps, blocks)
        if op.cta is not None and (cta != bidx).any():
            if not cluster_wide:
                raise _Failure(f"op {n}: reads another CTA's buffer after a barrier that is not cluster-wide")
            remote_since_cluster_barrier = True
        if op.is_store:
            scratch.store(n, bidx, addr, src[..., regs], epoch, widx)
        else:
            staging[..., regs] = scratch.load(n, cta, addr, epoch, warp_only, widx)
    if remote_since_cluster_barrier:
        raise _Failure("reads of other CTAs' buffers are not followed by a cluster barrier (a CTA could exit "
                       "or reuse its buffer while others still read it)")
    if final_buffer is not None:
        final_buffer.append(scratch.smem)
    return staging


def _reading_cta(op, n: int, lanes: np.ndarray, warps: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """The CTA whose buffer each thread's access reads (a cross-CTA load), shaped (B, W, L, 1)."""
    B, W, L = len(blocks), len(warps), len(lanes)
    if op.is_store:
        raise _Failure(f"op {n}: stores go to the thread's own CTA")
    cta = np.broadcast_to(np.asarray(op.cta.evaluate(lanes[None, None, :], warps[None, :, None],
                                                     blocks[:, None, None]), dtype=np.int64), (B, W, L))
    if cta.min() < 0 or cta.max() >= B:
        raise _Failure(f"op {n}: reads CTA {int(cta.max())} of a {B}-CTA cluster")
    return cta[..., None]


class _Scratch:
    """Every CTA's scratch buffer while a plan runs: the element at every offset (-1: never
    stored), and when (barrier epoch) and by which warp each was last written, and last read."""

    def __init__(self, blocks: int, size: int):
        self.smem = np.full((blocks, size), -1, dtype=np.int64)
        self.written_epoch = np.full((blocks, size), -1, dtype=np.int64)
        self.writer_warp = np.full((blocks, size), -1, dtype=np.int64)
        self.read_epoch = np.full((blocks, size), -1, dtype=np.int64)

    def store(self, n: int, cta, addr, values, epoch: int, widx) -> None:
        if (self.read_epoch[cta, addr] == epoch).any():
            raise _Failure(f"op {n}: store over a word already read since the last barrier "
                           "(write-after-read without a barrier)")
        same_phase = self.written_epoch[cta, addr] == epoch
        if (same_phase & (self.smem[cta, addr] != values)).any():
            raise _Failure(f"op {n}: two threads store different elements to one word in one phase")
        self.smem[cta, addr] = values
        self.written_epoch[cta, addr] = epoch
        self.writer_warp[cta, addr] = widx
        if (self.smem[cta, addr] != values).any():
            raise _Failure(f"op {n}: lanes of one store write different elements to one word")

    def load(self, n: int, cta, addr, epoch: int, warp_only: bool, widx) -> np.ndarray:
        we = self.written_epoch[cta, addr]
        if (we < 0).any():
            raise _Failure(f"op {n}: load of a word never stored")
        if (we >= epoch).any():
            raise _Failure(f"op {n}: load of a word stored after the last barrier (missing barrier)")
        if warp_only:
            recent = we == epoch - 1
            if (recent & (self.writer_warp[cta, addr] != widx)).any():
                raise _Failure(f"op {n}: a warp barrier does not order another warp's store")
        self.read_epoch[cta, addr] = epoch
        return self.smem[cta, addr]


def verify_plan(plan: ConversionPlan) -> VerificationResult:
    """Simulate ``plan`` on every block, warp, lane and register; see the module docstring."""
    order = plan.src.out_dim_names
    src_hw = HardwareLayout.of(plan.src, order)
    dst_hw = HardwareLayout.of(plan.dst, order)
    src = src_hw.element_table()
    expected = dst_hw.element_table()
    if src.shape[:3] != expected.shape[:3]:
        return VerificationResult(False, (f"source grid {src.shape[:3]} and destination grid "
                                          f"{expected.shape[:3]} (blocks, warps, lanes) differ",))
    try:
        if plan.output.file == "src":
            staging = src
        elif plan.shuffle is not None:
            staging = _simulate_shuffle(plan, src, 1 << len(dst_hw.nonzero_register_positions))
        elif plan.shared is not None:
            staging = _simulate_shared(plan, src, 1 << len(dst_hw.nonzero_register_positions))
        else:
            raise _Failure(f"output reads file '{plan.output.file}' that no step writes")
        got = _output(plan, staging, expected)
    except _Failure as e:
        return VerificationResult(False, (str(e),))
    return _compare(got, expected)


def _output(plan, staging: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Every destination register, read from the staging file by ``plan.output``."""
    sources = np.asarray(plan.output.sources, dtype=np.int64)
    if len(sources) != expected.shape[3]:
        raise _Failure(f"output names {len(sources)} registers, the destination has {expected.shape[3]}")
    if len(sources) and (sources.min() < 0 or sources.max() >= staging.shape[3]):
        raise _Failure("output reads a register outside its file")
    return staging[..., sources]


def verify_local_load(plan) -> VerificationResult:
    """Simulate a ``local_memory.LocalLoadPlan``: the buffer starts with the element its layout
    names at every offset; every destination register of every thread must end up with the
    element the destination layout names (and every load be in bounds, aligned, of a word that
    holds an element).

    A subslice view (``plan.view``) is verified for each start o of
    ``SubsliceView.checked_starts`` (every start when there are few): the addresses XOR
    ``L^-1(o)``, and register r must hold view element ``dst(r)`` at buffer coordinate
    ``dst(r) xor o``.  Example: the 32x8 view of a 32x16 row-major buffer at o = (0, 8): the
    register naming view element (1, 2) must hold buffer element (1, 10), read at offset 26."""
    order = plan.buffer.out_dim_names
    dst_hw = HardwareLayout.of(plan.dst, order)
    view_elements = dst_hw.element_table()
    B, W, L, _ = view_elements.shape
    initial = xor_table(tuple(plan.buffer.pack(b) for b in plan.buffer.bases["offset"]))
    for start in ([None] if plan.view is None else plan.view.checked_starts()):
        address_xor = 0 if start is None else plan.view.start_offset(start)
        expected = view_elements if start is None else view_elements ^ plan.view.element(start)
        try:
            staging = _simulate_shared(plan, np.zeros((B, W, L, 0), dtype=np.int64),
                                       1 << len(dst_hw.nonzero_register_positions), preloaded=initial,
                                       address_xor=address_xor)
            got = _output(plan, staging, expected)
        except _Failure as e:
            return VerificationResult(False, (_at_start(str(e), start),))
        check = _compare(got, expected)
        if not check:
            return VerificationResult(False, (_at_start(check.errors[0], start),))
    return VerificationResult(True)


def _at_start(message: str, start) -> str:
    return message if start is None else f"view start {list(start)}: {message}"


def verify_local_store(plan) -> VerificationResult:
    """Simulate a ``local_memory.LocalStorePlan`` on an empty buffer: afterwards every offset
    must hold the element the buffer's layout names there (and every store be in bounds,
    aligned, and agree with any other thread storing the same bytes).

    A subslice view (``plan.view``) is verified for each start o of
    ``SubsliceView.checked_starts``: the addresses XOR ``L^-1(o)``; afterwards every offset
    whose buffer element lies in the view at o (coordinates ``o <= e < o + shape``) must hold
    view element ``e xor o``, and every other offset nothing.  Example: the 32x8 view of a 32x16
    row-major buffer at o = (0, 8): offset 26, buffer element (1, 10), must hold view element
    (1, 2); offset 18, buffer element (1, 2), must stay unwritten."""
    order = plan.buffer.out_dim_names
    src = HardwareLayout.of(plan.src, order).element_table()
    wanted = xor_table(tuple(plan.buffer.pack(b) for b in plan.buffer.bases["offset"]))
    view = plan.view
    for start in ([None] if view is None else view.checked_starts()):
        address_xor = 0 if start is None else view.start_offset(start)
        if start is None:
            expected = wanted
        else:
            shift = view.element(start)
            expected = np.where(view.contains(wanted, start), wanted ^ shift, -1)
        buffers: list = []
        try:
            _simulate_shared(plan, src, 0, final_buffer=buffers, address_xor=address_xor)
        except _Failure as e:
            return VerificationResult(False, (_at_start(str(e), start),))
        smem = buffers[0]
        bad = np.argwhere(smem != expected[None, :])
        if len(bad):
            b, offset = (int(x) for x in bad[0])
            held, named = int(smem[b, offset]), int(expected[offset])
            return VerificationResult(False, (_at_start(
                f"{len(bad)} buffer elements wrong; first: block {b} offset {offset} holds "
                + ("nothing" if held < 0 else f"element {held}")
                + (", outside the view: nothing may be stored there" if named < 0 and start is not None
                   else f", the buffer's layout names {named}"), start),))
    return VerificationResult(True)


def _compare(got: np.ndarray, expected: np.ndarray) -> VerificationResult:
    bad = np.argwhere(got != expected)
    if len(bad):
        b, w, l, r = (int(x) for x in bad[0])
        return VerificationResult(False, (f"{len(bad)} destination registers hold the wrong element; first: "
                                          f"block {b} warp {w} lane {l} register {r} holds element "
                                          f"{int(got[b, w, l, r])}, the layout names {int(expected[b, w, l, r])}",))
    return VerificationResult(True)
