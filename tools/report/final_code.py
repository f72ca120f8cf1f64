"""Stock Triton's final code and ours, per ``ttg.convert_layout``.

Both are compiled from the kernel's recorded TTGIR (no GPU needed): ``triton.compile`` of a
``.ttgir`` file runs only the stages after TTGIR (to LLVM, PTX / AMDGCN), so the conversions
are the ones the program had.

**Stock's instructions of conversion i**: before compiling, each convert's location is
replaced by a marker line, ``loc("ll-conversion":MARK_LINE + i:0)``.  Triton's lowering of the
convert keeps the op's location, and the final code's ``.loc FILE LINE COL`` directives
(debug line info, on by default) carry the marker line: every data-movement instruction after
a ``.loc`` with line ``MARK_LINE + i`` (and before the next ``.loc``) is the conversion's.

**Ours**: the islands ``ll-lower-conversions`` splices in do not keep the convert's location,
so ours is measured by difference: the whole kernel compiled with our lowering, and again with
conversion i left to Triton (the pass's ``candidate_for=KEY:stock``; ``KEY`` names the
conversion by its layouts, so identical conversions of one kernel go together and share the
difference).  Ours of i = stock's of i + (ours, whole kernel) - (ours with i left to Triton).
A conversion ours leaves to Triton has ours = stock by construction (no extra compile).

``modelled_cost`` weighs a final-code mix with the cost model's constants for the target (each
shared access its issue plus its wavefronts at its vector width, conflict-free; shuffles;
selects and byte permutes; barriers), so stock's code and ours are priced the same way.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

MARK_LINE = 900000          # conversion i (1, 2, ...) is marked as line MARK_LINE + i
MARK_FILE = "ll-conversion"

_LOC_DIRECTIVE = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_CONVERT = re.compile(r"^(?P<head>\s*%[^\s=]+(?::\d+)? = ttg\.convert_layout .*?)(?: loc\((?:[^()]|\([^()]*\))*\))?\s*$")

# Finer than conversion_report.FINAL_CODE_PATTERNS: the vector width of each shared access and
# the barriers, for the modelled cost.  (name, regex, kind, bits-group or fixed bits)
_NVIDIA = [
    ("shfl", re.compile(r"^\s*shfl\.sync"), "shuffle"),
    ("st.shared", re.compile(r"^\s*st\.shared(?:::cta)?(?:\.v(\d))?\.[bfsu](\d+)"), "shared"),   # ::cta: 3.8 spells it out
    ("ld.shared", re.compile(r"^\s*ld\.shared(?:::cta)?(?:\.v(\d))?\.[bfsu](\d+)"), "shared"),
    ("stmatrix", re.compile(r"^\s*stmatrix\.sync\.aligned\.[\w.]*?x(\d)"), "matrix"),
    ("ldmatrix", re.compile(r"^\s*ldmatrix\.sync\.aligned\.[\w.]*?x(\d)"), "matrix"),
    ("bar.sync", re.compile(r"^\s*(?:bar\.sync|barrier\.sync)\b"), "cta_barrier"),
    ("bar.warp.sync", re.compile(r"^\s*bar\.warp\.sync\b"), "warp_barrier"),
    ("selp", re.compile(r"^\s*selp\."), "alu"),
    ("prmt", re.compile(r"^\s*prmt\."), "alu"),
]
_AMD = [
    ("ds_bpermute", re.compile(r"^\s*ds_bpermute_b32"), "shuffle"),
    ("ds_write", re.compile(r"^\s*ds_write(2?)\w*?_[bui](\d+)|^\s*ds_write()()"), "shared"),
    ("ds_read", re.compile(r"^\s*ds_read(2?)\w*?_[bui](\d+)|^\s*ds_read()()"), "shared"),
    ("s_barrier", re.compile(r"^\s*s_barrier\b"), "cta_barrier"),
    ("v_cndmask", re.compile(r"^\s*v_cndmask_b32"), "alu"),
    ("v_perm", re.compile(r"^\s*v_perm_b32"), "alu"),
]


@dataclass
class CodeMix:
    """Data-movement instructions of one piece of final code (per thread's program, i.e. per warp)."""

    counts: Counter = field(default_factory=Counter)        # name -> instructions
    shared_bits: Counter = field(default_factory=Counter)   # bits per lane of each shared access -> count
    matrices: Counter = field(default_factory=Counter)      # ldmatrix/stmatrix .xN: N -> count

    def add(self, other: "CodeMix", sign: int = 1) -> "CodeMix":
        out = CodeMix(Counter(self.counts), Counter(self.shared_bits), Counter(self.matrices))
        for mine, theirs in ((out.counts, other.counts), (out.shared_bits, other.shared_bits),
                             (out.matrices, other.matrices)):
            for key, n in theirs.items():
                mine[key] += sign * n
        return out

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def negative(self) -> bool:
        return any(n < 0 for n in self.counts.values())

    def text(self) -> str:
        """``st.shared=4 bar.sync=2 ldmatrix=1`` (``-`` when empty)."""
        return " ".join(f"{name}={n}" for name, n in self.counts.items() if n) or "-"


def mark_conversions(ttgir: str) -> tuple[str, int]:
    """``ttgir`` with convert i's location replaced by the marker line ``MARK_LINE + i``; and
    the number of converts marked."""
    lines, n = [], 0
    for line in ttgir.splitlines():
        match = _CONVERT.match(line)
        if match:
            n += 1
            line = f'{match.group("head")} loc("{MARK_FILE}":{MARK_LINE + n}:0)'
        lines.append(line)
    return "\n".join(lines) + "\n", n


def _patterns(vendor: str):
    return _NVIDIA if vendor == "nvidia" else _AMD


def _classify(line: str, vendor: str):
    for name, pattern, kind in _patterns(vendor):
        match = pattern.match(line)
        if match:
            bits = 0
            if kind == "shared":
                if vendor == "nvidia":
                    bits = int(match.group(1) or 1) * int(match.group(2))
                else:   # ds_write_b64: 64 bits, ds_write2_b32: two of 32, ds_read_u8: 8
                    groups = [g for g in match.groups() if g is not None]
                    bits = (2 if groups[0] else 1) * int(groups[1] or 32)
            elif kind == "matrix":
                bits = int(match.group(1))
            return name, kind, bits
    return None


def mix_by_line(code: str, vendor: str) -> dict[int, CodeMix]:
    """The data-movement instructions of PTX / AMDGCN by the source line of their ``.loc``
    (0: before any ``.loc``)."""
    by_line: dict[int, CodeMix] = {}
    line_number = 0
    for raw in code.splitlines():
        directive = _LOC_DIRECTIVE.match(raw)
        if directive:
            line_number = int(directive.group(2))
            continue
        found = _classify(raw, vendor)
        if found is None:
            continue
        name, kind, bits = found
        mix = by_line.setdefault(line_number, CodeMix())
        mix.counts[name] += 1
        if kind == "shared":
            mix.shared_bits[bits] += 1
        elif kind == "matrix":
            mix.matrices[bits] += 1
    return by_line


def whole_mix(code: str, vendor: str) -> CodeMix:
    total = CodeMix()
    for mix in mix_by_line(code, vendor).values():
        total = total.add(mix)
    return total


def conversion_mixes(code: str, vendor: str, conversions: int) -> list[CodeMix]:
    """Per marked conversion 1..``conversions``: the instructions at its marker line."""
    by_line = mix_by_line(code, vendor)
    return [by_line.get(MARK_LINE + i, CodeMix()) for i in range(1, conversions + 1)]


def modelled_cost(mix: CodeMix, target) -> float:
    """The cost model's price of a final-code mix per warp (``lowering.cost_weights``): a shared
    access costs its issue plus one wavefront per 128 bytes the warp moves (conflict-free); an
    ``ldmatrix``/``stmatrix`` .xN moves N 8x8 16-bit matrices (N wavefronts); shuffles and
    barriers their constants."""
    from linear_layouts.lowering.cost_weights import weights_for

    weights = weights_for(target.name)
    lanes = target.warp_size
    cost = 0.0
    for name, n in mix.counts.items():
        kind = next(k for nm, _, k in _patterns(target.vendor) if nm == name)
        if kind == "shuffle":
            cost += weights.shuffle * n
        elif kind == "cta_barrier":
            cost += weights.cta_barrier * n
        elif kind == "warp_barrier":
            cost += weights.warp_barrier * n
        elif kind == "alu":
            cost += weights.alu_op * n
    for bits, n in mix.shared_bits.items():
        wavefronts = max(1, -(-(bits * lanes) // (8 * target.wavefront_bytes)))
        cost += (weights.shared_access + weights.shared_wavefront * wavefronts) * n
    for tiles, n in mix.matrices.items():   # .xN: N 8x8 16-bit matrices of 128 bytes, a wavefront each
        cost += (weights.shared_access + weights.shared_wavefront * tiles) * n
    return round(cost, 1)


@dataclass
class ConversionCode:
    """Stock's final code and ours for one conversion."""

    stock: CodeMix
    ours: CodeMix
    stock_cost: float
    ours_cost: float
    shared_with: int = 1      # conversions of the kernel with the same layouts (measured together)

    def verdict(self, owned: bool, reason: str = "") -> str:
        if not owned:
            return f"left to Triton ({reason})" if reason else "left to Triton"
        if self.ours_cost < self.stock_cost:
            return "ours better"
        if self.ours_cost > self.stock_cost:
            return "ours worse"
        return "same"


def compile_ttgir(path: str, gpu_target, pipeline: Optional[str]):
    """``triton.compile`` of a TTGIR file, stock (``pipeline`` None) or with our pipeline."""
    import triton

    from linear_layouts.passes.drop_in import hook, recorder

    with recorder.paused():
        if pipeline is None:
            hook.disable()
            return triton.compile(path, target=gpu_target)
        with hook.enabled("linear", pipeline=pipeline):
            return triton.compile(path, target=gpu_target)


def lower_pipeline(candidate_for: str = "") -> str:
    """Our default pipeline, with ``candidate_for`` (``KEY:stock,...``) when given."""
    import dataclasses

    from linear_layouts.passes.drop_in.hook import default_passes
    from linear_layouts.passes.lower_conversions import LowerConversions
    from linear_layouts.passes.options import Mode
    from linear_layouts.passes.pipeline import pipeline_text

    passes = default_passes(Mode.LINEAR)
    if candidate_for:
        passes = tuple(dataclasses.replace(p, candidate_for=candidate_for) if isinstance(p, LowerConversions) else p
                       for p in passes)
    return pipeline_text(list(passes))


def compare_conversions(ttgir: str, gpu_target, target, keys: list, owned: list, workdir: str,
                        slug: str = "kernel") -> tuple[CodeMix, CodeMix, list[ConversionCode]]:
    """(stock whole kernel, ours whole kernel, per conversion ``ConversionCode``) for the TTGIR
    ``ttgir`` compiled for ``gpu_target``; ``keys[i]``: conversion i's ``conversion_key`` (None
    where its layouts could not be read), ``owned[i]``: whether ours lowers it.  Raises what
    ``triton.compile`` raises."""
    vendor = target.vendor
    stage = target.assembly_stage
    marked, count = mark_conversions(ttgir)
    path = os.path.join(workdir, f"{slug}.ttgir")
    with open(path, "w", encoding="utf-8") as f:
        f.write(marked)
    stock_code = compile_ttgir(path, gpu_target, None).asm[stage]
    ours_code = compile_ttgir(path, gpu_target, lower_pipeline()).asm[stage]
    stock_whole, ours_whole = whole_mix(stock_code, vendor), whole_mix(ours_code, vendor)
    stock_each = conversion_mixes(stock_code, vendor, count)
    # conversions of one key are left to Triton together: one compile per key
    by_key: dict = {}
    for i, key in enumerate(keys[:count]):
        if key is not None and owned[i]:
            by_key.setdefault(key, []).append(i)
    ours_each = list(stock_each)
    shared_with = [1] * count
    for key, members in by_key.items():
        without = compile_ttgir(path, gpu_target, lower_pipeline(f"{key}:stock")).asm[stage]
        difference = ours_whole.add(whole_mix(without, vendor), sign=-1)   # ours - stock, these conversions
        stock_members = CodeMix()
        for i in members:
            stock_members = stock_members.add(stock_each[i])
        together = stock_members.add(difference)
        for i in members:
            shared_with[i] = len(members)
            if len(members) == 1:
                ours_each[i] = together
            else:   # identical conversions: each its share
                ours_each[i] = CodeMix(*(Counter({k: v // len(members) for k, v in part.items()})
                                         for part in (together.counts, together.shared_bits, together.matrices)))
    codes = [ConversionCode(stock_each[i], ours_each[i], modelled_cost(stock_each[i], target),
                            modelled_cost(ours_each[i], target), shared_with[i]) for i in range(count)]
    return stock_whole, ours_whole, codes
