"""Conditions on the executing thread, and values chosen by thread, for the island emitters.

An island often needs a value that differs by thread: a shuffle's send word, the round whose
word a lane keeps.  ``select_by_thread`` builds it as a chain of ``llvm.select`` over the
distinct choices, each under an i1 true exactly for the threads that take it:
``lane_mask_condition`` (a set of lanes), ``warp_mask_condition`` (a set of warps),
``thread_set_condition`` (a set of (warp, lane) pairs).  Sets that fix some bits of the id
become bit tests ``(id & m) ==/!= v``, Triton's own form; others a constant-mask lookup.
``emit_llvm`` (``select_by_affine``, ``_emit_shuffle``) uses them.
"""

from __future__ import annotations

import numpy as np

from .island_writer import IslandWriter, VendorInstructions


def _bit_test_form(members: np.ndarray) -> tuple[int, int] | None:
    """``(m, v)`` with the set equal to ``{i : i & m == v}`` (some id bits fixed, the others
    free), or None.  Example: lanes 1, 3, 5, ... (odd lanes) -> (1, 1); lanes 0-3 and 8-11 of 16
    -> (4, 0); lanes 1 and 2 -> None."""
    idx = np.nonzero(members)[0]
    if not len(idx):
        return None
    first, free = int(idx[0]), 0
    for i in idx:
        free |= int(i) ^ first
    if len(idx) != 1 << bin(free).count("1"):
        return None
    fixed = (len(members) - 1) & ~free
    return fixed, first & fixed


def _id_set_condition(w: IslandWriter, ids: str, members: np.ndarray, width: int) -> str:
    """An i1 true exactly for the ids (lanes or warps) set in ``members``.

    Where the set (or its complement) fixes some bits of the id, a bit test
    ``(id & m) ==/!= v``: the form of Triton's own lane selects (``(tid & 2) == 0``), so that
    LLVM sees our condition and Triton's as one value.  A round trip through both then folds:
    Triton's sender swaps ``select(p, a, b)``, ``select(p, b, a)`` cancel the receiver swaps
    of our island, as they cancel stock's own (37 shuffle twins of ``benchmarks/sass_twins.py``
    in the round trip: the lookup below kept 1071 SEL more than stock's code).  Other sets:
    ``(MASK >> id) & 1`` with a constant mask (one form for any set of 32 or 64 ids)."""
    for members_, predicate in ((members, "eq"), (~members, "ne")):
        form = _bit_test_form(members_)
        if form is None:
            continue
        m, v = form
        if m == 0:   # every id, or none
            return w.icmp(predicate, w.const(0), w.const(0))
        if m & (m - 1) == 0 and v:   # one bit that must be set: (id & m) != 0, as Triton writes it
            m, v, predicate = m, 0, "ne" if predicate == "eq" else "eq"
        return w.icmp(predicate, w.binary("and", ids, w.const(m)), w.const(v))
    size = len(members)
    mask = 0
    for i in np.nonzero(members)[0]:
        mask |= 1 << int(i)
    itype = "i64" if size > 32 else "i32"
    if itype == "i64":
        ids = w.cast("zext", ids, "i32", "i64")
    # MLIR prints integer constants signed: keep the mask in range of the signed type.
    signed = mask - (1 << width) if mask >= 1 << (width - 1) else mask
    bit = w.binary("and", w.binary("lshr", w.const(signed, itype), ids, itype), w.const(1, itype), itype)
    return w.icmp("ne", bit, w.const(0, itype), itype)


def lane_mask_condition(w: IslandWriter, vendor: VendorInstructions, lanes: np.ndarray) -> str:
    """An i1 that is true exactly in the lanes listed (a boolean array over the warp's lanes).

    Example: lanes 1, 3, 5, ... (odd lanes) give ``(lane & 1) != 0``; lanes 1 and 2 of 32 give
    ``(0x6 >> lane) & 1 != 0`` (see ``_id_set_condition``).
    """
    size = len(lanes)
    return _id_set_condition(w, vendor.lane_id(w), np.asarray(lanes, dtype=bool), 64 if size > 32 else 32)


def warp_mask_condition(w: IslandWriter, vendor: VendorInstructions, warps: np.ndarray) -> str:
    """An i1 that is true exactly in the warps listed (a boolean array over the CTA's warps)."""
    warps = np.asarray(warps, dtype=bool)
    if len(warps) < 2:   # one warp: the set is all of it or nothing
        return w.icmp("eq" if warps.all() else "ne", w.const(0), w.const(0))
    return _id_set_condition(w, vendor.warp_id(w), warps, 64 if len(warps) > 32 else 32)


def thread_set_condition(w: IslandWriter, vendor: VendorInstructions, threads: np.ndarray) -> str:
    """An i1 true exactly in the (warp, lane) pairs set in ``threads`` (shape (warps, lanes)).

    Most sets do not depend on the warp (every row equal): one lane mask.  When they do (a
    source broadcast over warps lets each warp pick its own word, see ``shuffle.py``), the
    warps are grouped by their row and the condition is the OR over groups of
    ``lane in row and warp in group``.  Example, 2 warps of 4 lanes, rows 1010 and 0101: lanes
    {1, 3} of warp 0 or lanes {0, 2} of warp 1.
    """
    rows: dict[bytes, list[int]] = {}
    for k, row in enumerate(threads):
        rows.setdefault(np.asarray(row, dtype=bool).tobytes(), []).append(k)
    if len(rows) == 1:
        return lane_mask_condition(w, vendor, np.asarray(threads[0], dtype=bool))
    out = None
    for key, warps in rows.items():
        row = np.frombuffer(key, dtype=bool)
        if not row.any():
            continue
        in_warps = np.zeros(len(threads), dtype=bool)
        in_warps[warps] = True
        term = warp_mask_condition(w, vendor, in_warps)
        if not row.all():
            term = w.binary("and", lane_mask_condition(w, vendor, row), term, "i1")
        out = term if out is None else w.binary("or", out, term, "i1")
    if out is None:  # an empty set: false everywhere
        return w.icmp("ne", w.const(0), w.const(0))
    return out


def select_by_thread(w: IslandWriter, vendor: VendorInstructions, choice: np.ndarray, value_of,
                     type_: str = "i32") -> str:
    """A value that differs by thread: thread (warp k, lane l) gets ``value_of(choice[k, l])``.

    A chain of selects over the distinct choices, in order of first appearance (k choices, k - 1
    selects): the plan's cost model counts the same chains (``shuffle.exact_select_count``).
    ``choice`` has shape (warps, lanes); a 1-D array is one row shared by every warp.  The
    values are of ``type_`` (i64: a 64-bit element selected whole, see ``_emit_shuffle``).
    """
    choice = np.atleast_2d(np.asarray(choice))
    keys = []
    for c in choice.ravel().tolist():
        if c not in keys:
            keys.append(c)
    out = value_of(keys[0])
    for key in keys[1:]:
        out = w.select(thread_set_condition(w, vendor, choice == key), value_of(key), out, type_)
    return out
