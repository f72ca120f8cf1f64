"""A conversion plan in words and in pictures: the data behind ``ll-viz --plan`` and ``ll-demo``.

A plan (``lowering.plan``) is a small program every thread runs.  Showing it to a user means
evaluating its thread-dependent parts for every lane of warp 0 and laying the answers out:

* shuffles: for each round, which lane each lane reads from and which of its 32-bit words the
  sender sends (``ShuffleRound.source_lane`` / ``send_word`` evaluated per lane);
* shared memory: which 4-byte words of the scratch buffer each lane touches in one store and one
  load instruction, drawn as 128-byte lines of 32 banks, with the words of a bank conflict
  marked (two lanes of one phase touching *different* words of one bank);
* every plan: its cost (``lowering.cost.plan_cost``): instruction counts, bank conflicts,
  scratch bytes.  Every plan the planner returns has passed the exhaustive verifier.

Warp 0 is representative: other warps add a constant to every address (an XOR), which moves
words to other banks as a block and keeps every conflict count (see ``lowering.cost``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from linear_layouts.lowering.cost import access_bank_use, access_wavefronts, plan_cost
from linear_layouts.lowering.describe import instruction_counts
from linear_layouts.lowering.element_type import storage_bits_of
from linear_layouts.lowering.emit.emit_llvm import mnemonic
from linear_layouts.lowering.instructions import AccessKind, AccessShape
from linear_layouts.lowering.plan import Barrier, ConversionPlan, Method, SharedAccess, Unsupported
from linear_layouts.tools.viewers.layout_view import MARK_COLOUR, MAX_PICTURE_PIXELS, PICTURE_DPI, bank_colours
from linear_layouts.lowering.target import Target

# ----------------------------------------------------------------------------- naming


def lowering_name(plan: ConversionPlan) -> str:
    """none / registers / shuffle / shared, with the matrix instructions a shared plan uses:
    ``shared+stmatrix+ldmatrix``."""
    if plan.method is Method.NOOP:
        return "none"
    if plan.method is Method.RENAME:
        return "registers"
    if plan.method is Method.SHUFFLE:
        return "shuffle"
    matrix = []
    for kind in (AccessKind.STORE, AccessKind.LOAD):
        ops = [op for op in plan.shared.ops if isinstance(op, SharedAccess) and op.kind is kind and op.form.is_matrix]
        if ops:  # the instruction's name without its suffixes: "stmatrix", "ldmatrix"
            matrix.append(instruction_name(ops[0], plan.element_bits, plan.target).split(".")[0])
    return "+".join(["shared"] + matrix)


def instruction_name(access: SharedAccess, element_bits: int, target: Target) -> str:
    """The name the cost model counts an access under, in the target's words: ``st.shared.b64``,
    ``ldmatrix.x4``, ``ds_read.b32``."""
    bits = len(access.registers) * storage_bits_of(element_bits)
    return mnemonic(target, AccessShape(access.kind, access.form, access.space, bits))


def cost_line(plan: ConversionPlan) -> str:
    """``shfl.idx=2, select=4; bank conflicts 0; scratch 0 B``."""
    cost = plan_cost(plan)
    named = instruction_counts(cost, plan.target)
    counts = ", ".join(f"{name}={count}" for name, count in named.items()) or "no instructions"
    conflicts = f"{cost.bank_conflicts} (store {cost.store_conflicts}, load {cost.load_conflicts})" \
        if plan.shared is not None else "0"
    return f"{counts}; bank conflicts {conflicts}; scratch {cost.scratch_bytes} B"


# ----------------------------------------------------------------------------- text


def _lane_rows(rows: list[tuple[str, list[int]]], width: int = 32) -> list[str]:
    """Per-lane values as a table: a lane-number header, then one row per (label, values), in
    blocks of ``width`` lanes (a 64-lane wavefront takes two blocks)."""
    lines = []
    count = len(rows[0][1])
    for start in range(0, count, width):
        lanes = range(start, min(count, start + width))
        lines.append("    lane " + " ".join(f"{lane:>2}" for lane in lanes))
        for label, values in rows:
            lines.append(f"    {label:<4} " + " ".join(f"{values[lane]:>2}" for lane in lanes))
    return lines


def _shuffle_text(plan: ConversionPlan) -> list[str]:
    shuffle = plan.shuffle
    lanes = np.arange(plan.target.warp_size)
    per_word = shuffle.elements_per_word
    lines = [f"shuffle: {len(shuffle.src_words)} source words -> {len(shuffle.dst_words)} destination words "
             f"({per_word} element{'s' if per_word > 1 else ''} per 32-bit word), {len(shuffle.rounds)} rounds"]
    for number, rnd in enumerate(shuffle.rounds):
        senders = np.broadcast_to(np.asarray(rnd.source_lane.evaluate(lanes)), lanes.shape)
        words = np.broadcast_to(np.asarray(rnd.send_word.evaluate(senders)), lanes.shape)
        name = mnemonic(plan.target, rnd.mode)
        lines.append(f"  round {number} ({name}): lane l receives word 'word' of lane 'from'")
        lines += _lane_rows([("from", [int(s) for s in senders]), ("word", [int(w) for w in words])])
    picks = np.broadcast_to(np.asarray(shuffle.receive_round.evaluate(lanes)), lanes.shape)
    if picks.any():
        lines.append("  select: destination word d of lane l is the word received in round d ^ r(l)")
        rows = _lane_rows([("r", [int(p) for p in picks])])
        lines += rows if len(lanes) > 32 else rows[1:]  # one block of 32 lanes: the rounds' header serves
    else:
        lines.append("  select: destination word d is the word received in round d")
    return lines


@dataclass(frozen=True)
class AccessSummary:
    """All the instructions of one name in a shared-memory plan, per warp."""

    name: str
    count: int
    wavefronts: int
    conflicts: int
    is_barrier: bool = False


def access_summaries(plan: ConversionPlan) -> list[AccessSummary]:
    """Per instruction name, in program order: how many, wavefronts, conflicts (barriers have
    no wavefronts)."""
    order: list[str] = []
    barriers: set[str] = set()
    counts: Counter = Counter()
    wavefronts: Counter = Counter()
    conflicts: Counter = Counter()
    for op in plan.shared.ops:
        if isinstance(op, Barrier):
            name = mnemonic(plan.target, op.scope)
            barriers.add(name)
        else:
            name = instruction_name(op, plan.element_bits, plan.target)
        if name not in counts:
            order.append(name)
        counts[name] += 1
        if isinstance(op, SharedAccess):
            waves, phases = access_wavefronts(op, plan.element_bits, plan.target)
            wavefronts[name] += waves
            conflicts[name] += waves - phases
    return [AccessSummary(n, counts[n], wavefronts[n], conflicts[n], n in barriers) for n in order]


def _shared_text(plan: ConversionPlan) -> list[str]:
    shared = plan.shared
    bits = plan.element_bits
    lines = [f"shared memory: {shared.scratch_bytes} B scratch, {shared.num_rounds} round"
             f"{'s' if shared.num_rounds > 1 else ''}, vectors of {shared.store_vector} (store) and "
             f"{shared.load_vector} (load) x {bits} bit"]
    lines.append(f"  {'instruction':<22} {'count':>5} {'wavefronts':>10} {'conflicts':>9}")
    for s in access_summaries(plan):
        if s.is_barrier:
            lines.append(f"  {s.name:<22} {s.count:>5}")
        else:
            lines.append(f"  {s.name:<22} {s.count:>5} {s.wavefronts:>10} {s.conflicts:>9}")
    return lines


def plan_text(plan: ConversionPlan | Unsupported, what: str = "") -> str:
    """A plan (or the reason there is none) in a few lines; ``what`` names the conversion."""
    lines = [what] if what else []
    if not plan:
        scope = f" (scope {plan.scope})" if plan.scope else ""
        lines.append(f"no plan{scope}: {plan.reason}")
        lines.append("this conversion is left to Triton's own lowering")
        return "\n".join(lines)
    lines.append(f"scope: {plan.scope}   lowering: {lowering_name(plan)}   target: {plan.target.name}   "
                 f"element: {plan.element_bits} bit   verified: yes (exhaustive simulation)")
    lines.append(f"cost per warp: {cost_line(plan)}")
    if plan.shuffle is not None:
        lines += _shuffle_text(plan)
    if plan.shared is not None:
        lines += _shared_text(plan)
    if plan.method in (Method.NOOP, Method.RENAME):
        moves = "no data moves" if plan.method is Method.NOOP else "registers are renamed inside each thread"
        lines.append(f"{moves}: destination registers 0, 1, ... are source registers {list(plan.output.sources)}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- pictures

@dataclass(frozen=True)
class WordTouch:
    """One 4-byte word of scratch touched by one access of warp 0."""

    word: int                 # word address (byte address / 4)
    lanes: tuple[int, ...]    # the lanes touching it
    conflict: bool            # another word of its bank is touched in the same phase


def access_touches(access: SharedAccess, plan: ConversionPlan) -> list[WordTouch]:
    """The words one access of warp 0 touches, with bank conflicts marked by the cost model's
    bank model (``lowering.cost.bank_use``: matrix forms serve one 8-row matrix at a time; other
    accesses split the warp by ``Target.phase_lane_bits``)."""
    lanes, words_per_lane, use = access_bank_use(access, plan.element_bits, plan.target)
    lanes_of: dict[int, list[int]] = {}
    conflicted: set[int] = set()
    for lane, words, flags in zip(lanes, words_per_lane, use.conflicted):
        for word, flag in zip(words, flags):
            lanes_of.setdefault(int(word), []).append(int(lane))
            if flag:
                conflicted.add(int(word))
    return [WordTouch(w, tuple(sorted(set(ls))), w in conflicted) for w, ls in sorted(lanes_of.items())]


def _first(plan: ConversionPlan, stores: bool) -> SharedAccess | None:
    for op in plan.shared.ops:
        if isinstance(op, SharedAccess) and op.is_store == stores:
            return op
    return None


# A scratch line's cells (a square per bank) are labelled only down to this height: a label
# (``t31+1``, 4.5 points) needs about 0.2 inch of width.
SMALLEST_LABELLED_LINE_INCHES = 0.2


def _draw_access(ax, access: SharedAccess, plan: ConversionPlan, title: str, cmap, labels: bool = True) -> None:
    """Scratch lines (128 bytes = 32 banks) touched by ``access``: cells coloured by bank,
    labelled with the lane(s) (with ``labels``), the mark (a ``MARK_COLOUR`` border) where the
    bank conflicts."""
    from matplotlib.patches import PathPatch, Rectangle
    from matplotlib.path import Path

    banks = plan.target.num_banks
    touches = access_touches(access, plan)
    lines = sorted({t.word // banks for t in touches})[:64]
    row_of = {line: i for i, line in enumerate(lines)}
    # Colours are one image, cell borders one path and conflict marks one path: the SVG holds a
    # few elements and one label per touched word, not a rectangle per cell.
    image = np.full((max(len(lines), 1), banks, 4), (0.96, 0.96, 0.96, 1.0))
    conflicts = []
    for t in touches:
        line, bank = divmod(t.word, banks)
        if line not in row_of:
            continue
        row = row_of[line]
        image[row, bank] = cmap[bank % len(cmap)]
        if t.conflict:
            mark = Rectangle((bank + 0.06, row + 0.06), 0.88, 0.88)
            conflicts.append(mark.get_patch_transform().transform_path(mark.get_path()))
        if labels:
            label = f"t{t.lanes[0]}" + (f"+{len(t.lanes) - 1}" if len(t.lanes) > 1 else "")
            ax.text(bank + 0.5, row + 0.5, label, ha="center", va="center", fontsize=4.5)
    rows = max(len(lines), 1)
    ax.imshow(image, extent=(0, banks, rows, 0), interpolation="none")
    xs = [v for b in range(banks + 1) for v in (b, b, np.nan)] + [v for _ in range(rows + 1) for v in (0, banks, np.nan)]
    ys = [v for _ in range(banks + 1) for v in (0, rows, np.nan)] + [v for r in range(rows + 1) for v in (r, r, np.nan)]
    ax.plot(xs, ys, color="white", linewidth=0.5)
    if conflicts:
        ax.add_patch(PathPatch(Path.make_compound_path(*conflicts), fill=False, edgecolor=MARK_COLOUR, lw=1.4))
    ax.set_xlim(0, banks)
    ax.set_ylim(max(len(lines), 1), 0)
    ax.set_aspect("equal")
    ax.set_xticks([b + 0.5 for b in range(0, banks, 4)], [str(b) for b in range(0, banks, 4)], fontsize=6)
    ax.set_yticks([i + 0.5 for i in range(len(lines))], [f"{line * banks * 4} B" for line in lines], fontsize=5)
    ax.set_xlabel("bank (4-byte word within a 128-byte line)", fontsize=7)
    ax.set_ylabel("scratch line (byte offset)", fontsize=7)
    waves, phases = access_wavefronts(access, plan.element_bits, plan.target)
    what = "label: lane, +N: N more lanes on the word" if labels else "lines too thin to label"
    ax.set_title(f"{title}\n{waves} wavefronts in {phases} phases, {waves - phases} conflicts "
                 f"({what}; black border: conflict)", fontsize=7)


def _draw_round(ax, rnd, number: int, plan: ConversionPlan, cmap) -> None:
    """One shuffle round: senders on top, receivers below, a line from each receiver's source
    lane, coloured by the word the sender sends."""
    lanes = np.arange(plan.target.warp_size)
    senders = np.broadcast_to(np.asarray(rnd.source_lane.evaluate(lanes)), lanes.shape)
    sent = np.broadcast_to(np.asarray(rnd.send_word.evaluate(lanes)), lanes.shape)
    for lane, src in zip(lanes, senders):
        ax.plot([src, lane], [1, 0], color=cmap(int(sent[src]) % 10), lw=0.9, alpha=0.8)
    ax.scatter(lanes, np.ones_like(lanes), c=[cmap(int(w) % 10) for w in sent], s=14, zorder=3)
    ax.scatter(lanes, np.zeros_like(lanes), c="black", s=6, zorder=3)
    for lane in lanes:
        ax.text(lane, 1.08, f"w{int(sent[lane])}", ha="center", va="bottom", fontsize=4.5, rotation=90)
    ax.set_ylim(-0.25, 1.35)
    ax.set_yticks([0, 1], ["receives", "sends"], fontsize=7)
    step = 4 if len(lanes) <= 32 else 8
    ax.set_xticks(range(0, len(lanes), step), [str(i) for i in range(0, len(lanes), step)], fontsize=6)
    ax.set_xlabel("lane", fontsize=7)
    ax.set_title(f"round {number}: {mnemonic(plan.target, rnd.mode)} (colour and label: the word the sender sends)",
                 fontsize=8)


def draw_plan(plan: ConversionPlan, path: str, what: str = "") -> None:
    """Write a picture of a shuffle or shared-memory plan (.png, .svg or .pdf).  ``what`` (the
    conversion in words) heads the picture, with the plan's cost under it."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import textwrap

    longest = MAX_PICTURE_PIXELS / PICTURE_DPI   # inches
    header = "\n".join(textwrap.wrap(what, 110)) + "\n" if what else ""
    header += \
        f"{lowering_name(plan)} on {plan.target.name}, {plan.element_bits}-bit elements: {cost_line(plan)}"
    if plan.shuffle is not None:
        rounds = list(plan.shuffle.rounds)
        round_inches = min(1.9, (longest - 1.0) / len(rounds))
        fig, axes = plt.subplots(len(rounds), 1, squeeze=False,
                                 figsize=(min(longest, max(8.0, plan.target.warp_size * 0.3)),
                                          round_inches * len(rounds) + 1.0))
        cmap = plt.get_cmap("tab10")
        for number, (ax, rnd) in enumerate(zip(axes[:, 0], rounds)):
            _draw_round(ax, rnd, number, plan, cmap)
    elif plan.shared is not None:
        store, load = _first(plan, True), _first(plan, False)
        counts = Counter(instruction_name(op, plan.element_bits, plan.target) for op in plan.shared.ops
                         if isinstance(op, SharedAccess))
        # Store above load, each as tall as the scratch lines it touches; lines get thinner
        # where up to 128 of them would make the picture taller than MAX_PICTURE_PIXELS.
        heights = [max(1, min(64, len({t.word // plan.target.num_banks for t in access_touches(a, plan)})))
                   for a in (store, load)]
        line_inches = min(0.34, (longest - 3.0) / sum(heights))
        fig, axes = plt.subplots(2, 1, squeeze=False, figsize=(11.0, line_inches * sum(heights) + 3.0),
                                 gridspec_kw={"height_ratios": heights})
        cmap = bank_colours(plan.target.num_banks)   # one distinct colour per bank
        for ax, access, kind in ((axes[0, 0], store, "store"), (axes[1, 0], load, "load")):
            name = instruction_name(access, plan.element_bits, plan.target)
            _draw_access(ax, access, plan, f"first {kind}: {name} (1 of {counts[name]}), warp 0", cmap,
                         labels=line_inches >= SMALLEST_LABELLED_LINE_INCHES)
    else:
        raise ValueError(f"a {plan.method} plan moves no data between threads: nothing to draw")
    fig.suptitle(header, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=PICTURE_DPI)
    plt.close(fig)
