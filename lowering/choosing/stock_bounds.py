"""The least stock Triton's lowering of a conversion can issue, kind by kind, and whether our
plan provably gains on it: no more of any kind, fewer of some (the choice where no timing was
measured: ``lowering.choosing.fitted_model``).

Costly kinds, counted per thread's program (per warp) the way the final code is counted
(``benchmarks/studies/stock_dominance.py`` reads them off PTX / AMDGCN):

* ``shuffles``: ``shfl.sync`` / ``ds_bpermute``;
* ``store_wavefronts`` / ``load_wavefronts``: per shared-memory instruction, the wavefronts its
  lanes' bytes fill (``max(1, lanes * bits / 8 / wavefront_bytes)``; ``ldmatrix``/``stmatrix``
  ``.xN``: N), conflicts not counted;
* ``cta_barriers`` / ``warp_barriers``: ``bar.sync`` / ``s_barrier``, ``bar.warp.sync``;
* ``selects``: ``selp``, ``prmt`` / ``v_cndmask``, ``v_perm``.

``stock_floor`` gives, for each kind, a number stock's lowering never goes below (a *floor*, not
a prediction: where it errs it must err low, so that ``dominates`` never takes a plan needing
more than stock).  What stock does, by the scope of the conversion (``lowering.conversion``):

1. nothing, or a renaming of registers: all zero;
2. a lane-scope conversion stock moves with warp shuffles (``stock_lowering.stock_warp_shuffles``,
   exact but for rare misses, each low: docs/lowering-choice.md, 'What the rules rest on'): that
   many shuffles, the rest zero;
3. a conversion across warps where each warp already holds what it needs (a source broadcast
   over warps): zero (triton 3.9 moves it with shuffles inside each warp, 3.6 through shared
   memory; a floor for both);
4. otherwise shared memory.  Stock stores each distinct register of the source once and loads
   each distinct register of the destination once.  With T bits per lane to move, an access of
   b bits fills at least ``max(1, lanes * b / 8 / wavefront_bytes)`` wavefronts, so the side
   needs at least ``lanes * T / 8 / wavefront_bytes``.  (Narrower accesses than the data allows
   cost more; stock's vector width is not modelled, so the floor is low there: an i8 tensor
   stored one byte at a time.)  Stock waits for the stores before the loads: one barrier at
   least (``_barrier_floor``); more rounds when its scratch is smaller than the tensor, not
   modelled (low again).

Worked example (sm_90, i32, 4 warps): ``blocked<[4], [32], [4]> -> blocked<[1], [32], [4]>``
of 1024 elements: each thread holds 8 distinct registers on both sides (T = 256 bits), the data
crosses warps: store floor ``32 * 256 / 8 / 128`` = 8 wavefronts (eight 32-bit stores or two
128-bit ones fill as many), load floor 8, one CTA barrier.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Optional

from ...dialect import f2
from ...dialect.linear_layout import LinearLayout
from ..conversion import minimal_conversion, scope_of
from ..cost import plan_cost
from ..element_type import storage_bits_of
from ..hardware import HardwareLayout, aligned_pair
from ..instructions import BarrierScope
from ..plan import Method, Scope
from ..shuffle import selects_with_warp_choices
from .stock_lowering import stock_warp_shuffles
from ..remark_words import counted, detail
from ..target import Target, Vendor, target_named


# The rule's source, named at the detail level of a remark (``lowering.remark_words``).
_RULE_SOURCE = "lowering/choosing/stock_bounds.py"


@dataclass(frozen=True)
class Costly:
    """Costly instructions per warp, by kind (see the module docstring)."""

    shuffles: int = 0
    store_wavefronts: int = 0
    load_wavefronts: int = 0
    cta_barriers: int = 0
    warp_barriers: int = 0
    selects: int = 0

    @classmethod
    def kinds(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def items(self):
        return ((name, getattr(self, name)) for name in self.kinds())

    def text(self) -> str:
        """The counts by field name, as the detail level of a remark shows them:
        ``store_wavefronts=8 load_wavefronts=8 cta_barriers=1``."""
        return " ".join(f"{name}={n}" for name, n in self.items() if n) or "-"

    def words(self) -> str:
        """The counts in words, as a remark says them: ``8 store and 8 load wavefronts, 1 barrier``."""
        parts = [_counted(self.shuffles, "warp shuffle")]
        if self.store_wavefronts and self.load_wavefronts:
            parts.append(f"{self.store_wavefronts} store and {self.load_wavefronts} load wavefronts")
        else:
            parts += [_counted(self.store_wavefronts, "store wavefront"),
                      _counted(self.load_wavefronts, "load wavefront")]
        parts += [_counted(self.cta_barriers, "barrier"), _counted(self.warp_barriers, "warp barrier"),
                  _counted(self.selects, "register select")]
        return ", ".join(part for part in parts if part) or "no instruction that moves data"


# Each kind as a remark names it (``more_than``).
_KIND_WORDS = {"shuffles": "warp shuffles", "store_wavefronts": "store wavefronts",
               "load_wavefronts": "load wavefronts", "cta_barriers": "barriers", "selects": "register selects"}


def _counted(n: int, noun: str) -> str:
    """``1 barrier``, ``3 barriers``; "" for none."""
    return counted(n, noun) if n else ""


def more_than(ours: Costly, stock: Costly) -> list[str]:
    """The kinds ``ours`` needs more of than ``stock``.  A CTA barrier is at least a warp
    barrier: barriers compare as CTA barriers, then all barriers together."""
    more = [f"{name} ({n} > {getattr(stock, name)})" for name, n in ours.items()
            if name != "warp_barriers" and n > getattr(stock, name)]
    ours_barriers, stock_barriers = ours.cta_barriers + ours.warp_barriers, stock.cta_barriers + stock.warp_barriers
    if ours_barriers > stock_barriers:
        more.append(f"barriers ({ours_barriers} > {stock_barriers})")
    return more


def _more_in_words(more: tuple[str, ...]) -> str:
    """``more_than``'s kinds as a remark names them: ``store wavefronts, load wavefronts and barriers``."""
    kinds = list(dict.fromkeys(_KIND_WORDS.get(item.split(" ", 1)[0], "barriers") for item in more))
    return " and ".join(filter(None, (", ".join(kinds[:-1]), kinds[-1])))


def plan_costly(plan) -> Costly:
    """Our plan's costly instructions (``lowering.cost``: wavefronts with bank conflicts; a
    shuffle plan's selects with its warp-dependent choices, ``shuffle.selects_with_warp_choices``)."""
    cost = plan_cost(plan)
    selects = cost.selects
    if plan.shuffle is not None:
        warps = plan.src.in_dim_size_or_one("warp")
        selects = max(selects, selects_with_warp_choices(plan.shuffle, plan.target.warp_size, warps)
                      * plan.shuffle.words_per_element)
    return Costly(shuffles=cost.shuffles, store_wavefronts=cost.store_wavefronts,
                  load_wavefronts=cost.load_wavefronts,
                  cta_barriers=cost.counts.get(BarrierScope.CTA, 0) + cost.counts.get(BarrierScope.CLUSTER, 0),
                  warp_barriers=cost.counts.get(BarrierScope.WARP, 0), selects=selects + cost.packs)


def _side_floor(bits_per_lane: int, target: Target) -> int:
    """The least wavefronts in which a warp moves ``bits_per_lane`` per lane."""
    return -(-target.warp_size * bits_per_lane // (8 * target.wavefront_bytes))


def stock_floor(src: LinearLayout, dst: LinearLayout, bits, target) -> Optional[Costly]:
    """What stock Triton's lowering of ``src -> dst`` issues at least, per kind (module
    docstring); None where the conversion crosses CTAs (not modelled)."""
    target = target_named(target) if isinstance(target, str) else target
    dst = aligned_pair(src, dst, target.warp_size, target.name)
    scope = _scope(src, dst, target)
    if scope in (Scope.NONE, Scope.REGISTER):
        return Costly()
    if scope is Scope.BLOCK:
        return None
    within_warps = _floor_within_warps(src, dst, bits, target, scope)
    if within_warps is not None:
        return within_warps
    element_bits = storage_bits_of(bits)
    order = src.out_dim_names
    src_hw = HardwareLayout.of(src, order).unique_registers()
    dst_hw = HardwareLayout.of(dst, order).unique_registers()
    store = _side_floor(element_bits << len(src_hw.register), target)
    load = _side_floor(element_bits << len(dst_hw.register), target)
    return Costly(store_wavefronts=store, load_wavefronts=load, **_barrier_floor(scope, src, target))


def _floor_within_warps(src: LinearLayout, dst: LinearLayout, bits, target: Target, scope: Scope) -> Optional[Costly]:
    """The floor where stock moves the data without shared memory: warp shuffles it predicts
    for a lane-scope conversion, nothing where each warp already holds what it needs (triton
    3.9 moves such a conversion inside each warp, 3.6 through shared memory); None otherwise."""
    if scope is Scope.LANE:
        shuffles = stock_warp_shuffles(src, dst, bits, target)
        return None if shuffles is None else Costly(shuffles=shuffles)
    return Costly() if _each_warp_holds_what_it_needs(src, dst) else None


def _scope(src: LinearLayout, dst: LinearLayout, target: Target) -> Scope:
    """How far the data of ``src -> dst`` moves, as stock's lowering sees it."""
    return scope_of(minimal_conversion(src, aligned_pair(src, dst, target.warp_size, target.name)))


def floor_says_nothing(src: LinearLayout, dst: LinearLayout, bits, target) -> bool:
    """Whether ``stock_floor`` is zero in every kind although stock moves data (case 3 of the
    module docstring: each warp already holds what it needs, and stock moves it with shuffles
    or through shared memory, by release and layouts).  Such a floor is true but says nothing
    about what stock issues: a remark must not compare ours with it as with stock's cost."""
    target = target_named(target) if isinstance(target, str) else target
    moves_data = _scope(src, dst, target) not in (Scope.NONE, Scope.REGISTER)
    return moves_data and stock_floor(src, dst, bits, target) == Costly()


def _each_warp_holds_what_it_needs(src: LinearLayout, dst: LinearLayout) -> bool:
    """Whether every warp of ``dst`` needs only elements the same warp of ``src`` holds: dst's
    register and lane images, and each warp basis's difference to src's, lie in the span of
    src's register and lane images.  Example: a source broadcast over its warps (warp bases
    all zero) holds the whole tensor in every warp."""
    order = src.out_dim_names
    s, d = HardwareLayout.of(src, order), HardwareLayout.of(dst, order)
    inside = f2.EchelonBasis([c for c in s.register + s.lane if c])
    needed = list(d.register + d.lane) + [a ^ b for a, b in zip(s.warp, d.warp)]
    return all(inside.contains(v) for v in needed)


def _barrier_floor(scope: Scope, src: LinearLayout, target: Target) -> dict:
    """One barrier between the stores and the loads: a CTA barrier where data crosses warps; in a
    one-warp kernel NVIDIA's warp barrier, and none on AMD (its back end drops ``s_barrier`` when
    the workgroup is one wave); otherwise a barrier of either kind."""
    if scope is Scope.WARP:
        return {"cta_barriers": 1}
    one_warp = not src.has_in_dim("warp") or src.in_dim_size("warp") == 1
    if one_warp and target.vendor is Vendor.AMD:
        return {}
    return {"warp_barriers": 1}


def why_no_plan_gains(src: LinearLayout, dst: LinearLayout, bits, target, scope: Scope, methods) -> str:
    """Why no plan the planner can build for ``src -> dst`` gains on stock's floor (so that,
    where nothing was measured, the conversion is left to stock without planning it), or ""
    where some plan might gain and only planning tells.  ``scope`` and ``methods``: our
    conversion's scope and its candidates' methods (``planner.candidate_methods``).

    Every lane- or warp-scope plan moves data: a shuffle plan shuffles, a shared-memory plan
    stores, waits at a barrier and loads.  Against stock's floor (the module docstring):

    * a floor of nothing (each warp already holds what it needs, or stock moves nothing):
      any plan needs more of some kind;
    * a floor of S warp shuffles (stock shuffles this lane-scope conversion): a shared-memory
      plan needs store wavefronts, which stock's floor has none of;
    * a shared-memory floor: a shared-memory plan of ours stores every distinct register of each
      thread and loads every distinct register it needs (the accesses' wavefronts are at least
      their phases, ``lowering.cost``, so at least the bytes over ``wavefront_bytes``), and waits
      at a barrier as stock does: stock's floor at best, never below it.

    Only a shuffle candidate can beat a shared-memory floor, and only one with fewer shuffles
    can beat a shuffle floor: where the methods hold a shuffle, the plan decides.  Example
    (sm_80, triton 3.9): ``blocked<[1, 8], [4, 8], [4, 1]> -> blocked<[8, 1], [8, 4], [1, 4]>``
    of 64x64 bf16 over 4 warps moves data across warps, so shared memory only; each thread holds
    32 distinct elements (512 bits) on either side, so stock's floor is ``32 * 512 / 8 / 128`` =
    16 store and 16 load wavefronts and a CTA barrier, which our plan can only match: stock,
    unplanned.
    ``test_gate_first.py`` checks, on random conversions and the corpus, that the planned pick is
    left to stock wherever this answers."""
    floor = stock_floor(src, dst, bits, target) if scope in (Scope.LANE, Scope.WARP) and methods else None
    if floor is None or (Method.SHUFFLE in methods and floor != Costly()):
        return ""
    counts = f"stock at least: {floor.text()}; " if floor != Costly() else ""
    return f"stock Triton's lowering: {_floor_no_plan_beats(floor, scope)}" + detail(counts + _RULE_SOURCE)


def _floor_no_plan_beats(floor: Costly, scope: Scope) -> str:
    """Why no plan of shared-memory candidates (any plan, for a floor of nothing) beats ``floor``."""
    if floor == Costly():
        return (f"every {scope}-scope plan of ours moves data (a warp shuffle or a shared-memory access at least), "
                "and stock Triton moves it within each warp (each warp already holds the data it needs), so no "
                "floor of its instructions is known that ours could be shown to stay below")
    if floor.shuffles:
        return (f"it moves this {scope}-scope conversion with {floor.shuffles} warp shuffle(s) a thread and no "
                "shared-memory access, and every plan of ours goes through shared memory")
    return (f"every {scope}-scope plan of ours goes through shared memory and needs at least what stock "
            f"Triton's shared-memory round trip needs at least ({floor.words()}): no gain to show for the "
            "island's compile time")


@dataclass(frozen=True)
class Dominance:
    ours: Costly
    stock: Optional[Costly]      # stock's floor; None: not modelled
    more: tuple[str, ...]        # kinds ours needs more of
    floor_says_nothing: bool = False   # stock's floor is zero in every kind, yet stock moves data (``floor_says_nothing``)

    @property
    def holds(self) -> bool:
        return self.stock is not None and not self.more

    @property
    def gains(self) -> bool:
        """Ours provably needs less than stock's lowering: no more of any kind, and fewer of some
        (or nothing at all where stock moves data but its floor says nothing, case 3)."""
        return self.holds and (self.fewer() or self.floor_says_nothing)

    def fewer(self) -> bool:
        """Whether ours needs fewer of some kind than stock's floor (not merely as many)."""
        return self.stock is not None and (any(n < getattr(self.stock, kind) for kind, n in self.ours.items())
                                           or self.ours.cta_barriers + self.ours.warp_barriers
                                           < self.stock.cta_barriers + self.stock.warp_barriers)

    def reason(self) -> str:
        if self.stock is None:
            return "stock Triton's lowering of a cross-CTA conversion is not modelled"
        if self.floor_says_nothing:
            # A floor of zero in every kind is no measure of stock: it issues shuffles or shared
            # accesses and barriers here, so "ours needs more shuffles (2 > 0)" would be false.
            return (f"our plan ({self.ours.words()})" + detail(self.ours.text()) + " cannot be shown to need less "
                    "than stock Triton's lowering: each warp already holds the data it needs, which stock moves with "
                    "shuffles inside each warp or through shared memory (by release and layouts), so no floor of its "
                    "instructions is known to compare with" + detail(_RULE_SOURCE))
        if not self.more:
            return (f"our plan needs just what stock Triton's lowering needs at least ({self.ours.words()}) and no "
                    "fewer of anything: no gain to show for the island's compile time"
                    + detail(f"{self.ours.text()}; {_RULE_SOURCE}"))
        stock_words = self.stock.words() if self.stock != Costly() else "no data movement (a renaming of registers)"
        return (f"our plan needs {self.ours.words()}: more {_more_in_words(self.more)} than stock Triton's "
                f"lowering needs at least ({stock_words})"
                + detail(f"needs more {', '.join(self.more)}; ours: {self.ours.text()}; stock at least: "
                         f"{self.stock.text()}; {_RULE_SOURCE}"))


def dominance(plan) -> Dominance:
    """Whether ``plan`` needs no more of any costly kind than stock's lowering of its pair."""
    ours = Costly() if plan.method in (Method.NOOP, Method.RENAME) else plan_costly(plan)
    stock = stock_floor(plan.src, plan.dst, plan.element_bits, plan.target)
    more = tuple(more_than(ours, stock)) if stock is not None else ()
    return Dominance(ours, stock, more, floor_says_nothing(plan.src, plan.dst, plan.element_bits, plan.target))
