"""TritonGPU layout attributes (``#ttg.blocked<...>``, ``#ttg.nvmma_shared<...>``, ...) as Python values.

Every attribute kind Triton prints in TTGIR is a frozen dataclass here, with the attribute's
parameters as fields, checked when it is made.  ``parse_attribute`` (in ``attribute_parser.py``)
reads the text Triton prints and ``str(attr)`` prints it back exactly, so a layout can travel
from IR text to a ``LinearLayout`` (``encodings.py``) and back into IR text without Triton.

    >>> attr = BlockedEncoding((1, 4), (8, 4), (4, 1), (1, 0))
    >>> str(attr) == "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
    True

Three things make the syntax less regular than it looks:

* Parents (``#ttg.slice<{dim = 1, parent = #blocked}>``) may be written inline or through an
  *alias* defined at the top of a module (``#blocked = #ttg.blocked<{...}>``).  The parent is
  resolved through ``attribute_parser.parse_aliases(module_text)``; the alias name is remembered (it does not
  take part in equality) so that printing gives back the text that was read.
* The multi-CTA part (the *CGA layout*, which CTA of a cluster holds which tile) has two
  spellings: ``CGALayout = [[0, 1], [1, 0]]`` (block bases; Triton 3.6 and later) and the older
  ``CTAsPerCGA = [..], CTASplitNum = [..], CTAOrder = [..]``.  Both are read, and printed back
  in the spelling that was read.  A one-CTA layout prints no CGA part at all.
* Parameters that hold their default value are not printed (``kWidth = 0``, ``tilesPerWarp =
  [1, 1]``, ``elementBitWidth = 32``, ``instrShape = [16, 16, 16]`` of WMMA, ``fp4Padded =
  false``, ...).  The dataclasses normalise defaults to ``None`` so that equal layouts compare
  equal however they were written.

Bad input raises ``AttributeSyntaxError`` (a ``LayoutError``) quoting the text and saying what
is wrong; nothing here ever aborts the process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from .linear_layout import LayoutError, LinearLayout, is_power_of_two

Ints = tuple  # tuple[int, ...]
Bases = tuple  # tuple[tuple[int, ...], ...]


class AttributeSyntaxError(LayoutError):
    """A layout attribute's text could not be read, or its parameters are invalid."""


# ---------------------------------------------------------------------------------------------
# Validation helpers.  Every check raises with the attribute kind and the offending parameter.

def reject(kind: str, message: str) -> None:
    raise AttributeSyntaxError(f"#ttg.{kind}: {message}")


def _ints(kind: str, name: str, value: Any, *, pow2: bool = False, length: Optional[int] = None) -> Ints:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        reject(kind, f"{name} must be a list of integers, got {value!r}")
    value = tuple(value)
    if pow2:
        for v in value:
            if not is_power_of_two(v):
                reject(kind, f"{name} = {list(value)} has {v}, which is not a power of two")
    if length is not None and len(value) != length:
        reject(kind, f"{name} = {list(value)} has {len(value)} entries, expected {length} (the rank)")
    return value


def _int(kind: str, name: str, value: Any, *, choices: Optional[Sequence[int]] = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        reject(kind, f"{name} must be an integer, got {value!r}")
    if choices is not None and value not in choices:
        reject(kind, f"{name} = {value} is not one of {list(choices)}")
    return value


def _bool(kind: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        reject(kind, f"{name} must be true or false, got {value!r}")
    return value


def _order(kind: str, name: str, value: Any, rank: int) -> Ints:
    value = _ints(kind, name, value, length=rank)
    if sorted(value) != list(range(rank)):
        reject(kind, f"{name} = {list(value)} is not a permutation of 0..{rank - 1}")
    return value


def checked_bases(kind: str, name: str, value: Any, rank: Optional[int] = None) -> Bases:
    if not isinstance(value, (list, tuple)):
        reject(kind, f"{name} must be a list of bases (lists of integers), got {value!r}")
    out = []
    for basis in value:
        basis = _ints(kind, name, basis)
        if rank is not None and len(basis) != rank:
            reject(kind, f"{name} has basis {list(basis)} with {len(basis)} components, expected {rank} (the rank)")
        if any(c < 0 for c in basis):
            reject(kind, f"{name} has basis {list(basis)} with a negative component")
        out.append(basis)
    return tuple(out)


def _set(obj: Any, name: str, value: Any) -> None:
    """Assign to a frozen dataclass field during ``__post_init__`` normalisation."""
    object.__setattr__(obj, name, value)


def _fmt_ints(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _fmt_bases(bases: Sequence[Sequence[int]]) -> str:
    return "[" + ", ".join(_fmt_ints(b) for b in bases) + "]"


def _fmt_bool(value: bool) -> str:
    return "true" if value else "false"


# ---------------------------------------------------------------------------------------------
# The CGA layout: which CTA (``block``) of a cluster holds which tile of the tensor.

@dataclass(frozen=True)
class CGALayout:
    """The multi-CTA part of an attribute, as block bases in units of one CTA's tile.

    ``bases[i]`` is the tile offset (one component per tensor dim) of block ``2**i``; a zero
    basis means that block holds a copy.  Example: ``CGALayout = [[0, 1], [1, 0]]`` splits a
    2-D tensor over 4 CTAs, block 1 taking the next tile along dim1 and block 2 along dim0.

    The older spelling gives ``ctas_per_cga``, ``cta_split_num`` and ``cta_order`` instead;
    the bases are then derived (Triton's ``CGAEncodingAttr::fromSplitParams``): going through
    the dims in ``cta_order``, the first ``log2(split)`` bases step along the dim and the
    remaining ``log2(ctas / split)`` are zero (CTAs that hold copies).
    """

    bases: Bases = ()
    ctas_per_cga: Optional[Ints] = None
    cta_split_num: Optional[Ints] = None
    cta_order: Optional[Ints] = None

    def __post_init__(self):
        kind = "CGALayout"
        split = (self.ctas_per_cga, self.cta_split_num, self.cta_order)
        if all(p is None for p in split):
            _set(self, "bases", checked_bases(kind, "CGALayout", self.bases))
            return
        if any(p is None for p in split):
            reject(kind, "CTAsPerCGA, CTASplitNum and CTAOrder must be given together")
        rank = len(self.cta_order)
        ctas = _ints(kind, "CTAsPerCGA", self.ctas_per_cga, pow2=True, length=rank)
        splits = _ints(kind, "CTASplitNum", self.cta_split_num, pow2=True, length=rank)
        order = _order(kind, "CTAOrder", self.cta_order, rank)
        for d in range(rank):
            if ctas[d] % splits[d]:
                reject(kind, f"CTASplitNum[{d}] = {splits[d]} does not divide CTAsPerCGA[{d}] = {ctas[d]}")
        bases = []
        for d in order:
            for i in range(splits[d].bit_length() - 1):
                bases.append(tuple((1 << i) if e == d else 0 for e in range(rank)))
            bases += [(0,) * rank] * ((ctas[d] // splits[d]).bit_length() - 1)
        _set(self, "ctas_per_cga", ctas)
        _set(self, "cta_split_num", splits)
        _set(self, "cta_order", order)
        _set(self, "bases", tuple(bases))

    @property
    def uses_split_spelling(self) -> bool:
        return self.cta_order is not None

    @property
    def is_single_cta(self) -> bool:
        return not self.bases and not self.uses_split_spelling

    def rank(self) -> Optional[int]:
        if self.uses_split_spelling:
            return len(self.cta_order)
        return len(self.bases[0]) if self.bases else None

    def split_num(self, rank: int) -> Ints:
        """Per tensor dim, how many distinct tiles the CTAs hold (2 ** non-zero bases along it)."""
        counts = [1] * rank
        for b in self.bases:
            for d, c in enumerate(b):
                if c:
                    counts[d] *= 2
        return tuple(counts)

    def text_fields(self) -> list[str]:
        """The ``key = value`` items this CGA layout adds to its attribute (none for one CTA)."""
        if self.uses_split_spelling:
            return [f"CTAsPerCGA = {_fmt_ints(self.ctas_per_cga)}", f"CTASplitNum = {_fmt_ints(self.cta_split_num)}",
                    f"CTAOrder = {_fmt_ints(self.cta_order)}"]
        return [f"CGALayout = {_fmt_bases(self.bases)}"] if self.bases else []


def _is_single_dim_step(basis: Sequence[int]) -> bool:
    """Zero, or a power of two along a single dim: how CTAs of a CGA and WMMA tiles of a warp
    are spread (``[0, 2]`` yes; ``[1, 1]`` and ``[0, 3]`` no)."""
    return sum(1 for c in basis if c) <= 1 and all(c == 0 or is_power_of_two(c) for c in basis)


def _check_cga(kind: str, cga: Optional[CGALayout], rank: int) -> Optional[CGALayout]:
    """Validate the CGA part against the attribute's rank; a one-CTA layout becomes ``None``."""
    if cga is None:
        return None
    if not isinstance(cga, CGALayout):
        reject(kind, f"the CGA layout must be a CGALayout, got {cga!r}")
    if cga.is_single_cta:
        return None
    if cga.rank() != rank:
        reject(kind, f"the CGA layout has rank {cga.rank()} but the layout has rank {rank}")
    for b in cga.bases:
        if len(b) != rank:
            reject(kind, f"CGALayout basis {list(b)} must have {rank} components")
        if not _is_single_dim_step(b):
            reject(kind, f"CGALayout basis {list(b)} must be zero or a power of two along a single dim")
    return cga


def _cga_fields(cga: Optional[CGALayout]) -> list[str]:
    return cga.text_fields() if cga is not None else []


# ---------------------------------------------------------------------------------------------
# The attribute kinds.  Each prints itself exactly as Triton does (``__str__``).

class LayoutAttribute:
    """Base class of every layout attribute dataclass."""

    kind: str = ""  # the name after "#ttg."

    @property
    def rank(self) -> int:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def _body(self) -> str:  # pragma: no cover
        raise NotImplementedError

    def __str__(self) -> str:
        return f"#ttg.{self.kind}<{self._body()}>"


class DistributedAttribute(LayoutAttribute):
    """Layouts of tensors in registers: in dims register, lane, warp, block."""


class SharedAttribute(LayoutAttribute):
    """Layouts of shared-memory buffers: in dims offset, block."""


def _parent_text(parent: LayoutAttribute, alias: Optional[str]) -> str:
    return f"#{alias}" if alias else str(parent)


@dataclass(frozen=True)
class BlockedEncoding(DistributedAttribute):
    """``#ttg.blocked``: each thread holds a ``sizePerThread`` block, lanes and warps tile the
    tensor in ``order`` (fastest dim first), the pattern repeats to cover the tensor."""

    size_per_thread: Ints
    threads_per_warp: Ints
    warps_per_cta: Ints
    order: Ints
    cga: Optional[CGALayout] = None
    kind = "blocked"

    def __post_init__(self):
        k = self.kind
        rank = len(self.order) if isinstance(self.order, (list, tuple)) else 0
        if rank < 1:
            reject(k, f"order must be a non-empty list, got {self.order!r}")
        _set(self, "size_per_thread", _ints(k, "sizePerThread", self.size_per_thread, pow2=True, length=rank))
        _set(self, "threads_per_warp", _ints(k, "threadsPerWarp", self.threads_per_warp, pow2=True, length=rank))
        _set(self, "warps_per_cta", _ints(k, "warpsPerCTA", self.warps_per_cta, pow2=True, length=rank))
        _set(self, "order", _order(k, "order", self.order, rank))
        _set(self, "cga", _check_cga(k, self.cga, rank))

    @property
    def rank(self) -> int:
        return len(self.order)

    def _body(self) -> str:
        items = [f"sizePerThread = {_fmt_ints(self.size_per_thread)}", f"threadsPerWarp = {_fmt_ints(self.threads_per_warp)}",
                 f"warpsPerCTA = {_fmt_ints(self.warps_per_cta)}", f"order = {_fmt_ints(self.order)}"]
        return "{" + ", ".join(items + _cga_fields(self.cga)) + "}"


@dataclass(frozen=True)
class SliceEncoding(DistributedAttribute):
    """``#ttg.slice``: the parent layout with tensor dim ``dim`` removed (a reduction result)."""

    dim: int
    parent: DistributedAttribute
    parent_alias: Optional[str] = field(default=None, compare=False)
    kind = "slice"

    def __post_init__(self):
        if not isinstance(self.parent, DistributedAttribute):
            reject(self.kind, f"parent must be a distributed layout, got {self.parent}")
        _int(self.kind, "dim", self.dim)
        if self.parent.rank < 2:
            reject(self.kind, f"cannot slice the rank-{self.parent.rank} parent {self.parent}: the result would have rank 0")
        if not 0 <= self.dim < self.parent.rank:
            reject(self.kind, f"dim = {self.dim} is out of range for the rank-{self.parent.rank} parent {self.parent}")

    @property
    def rank(self) -> int:
        return self.parent.rank - 1

    def _body(self) -> str:
        return f"{{dim = {self.dim}, parent = {_parent_text(self.parent, self.parent_alias)}}}"


# The accumulator layouts of matrix instructions: what each is called in messages and its
# largest rank (None: any rank of 2 or more; batched matmuls add leading dims).
_MMA_FAMILIES = {"nvidia_mma": ("an MMA", None), "amd_mfma": ("an MFMA", 3), "amd_wmma": ("a WMMA", 3)}


def _check_mma_rank(kind: str, rank: int, where: str) -> None:
    """An MMA layout has rank 2 (M x N) or more, up to its family's largest rank."""
    family, max_rank = _MMA_FAMILIES[kind]
    if rank < 2 or (max_rank is not None and rank > max_rank):
        allowed = "2 or more" if max_rank is None else " or ".join(str(r) for r in range(2, max_rank + 1))
        reject(kind, f"{where}: {family} layout has rank {allowed}")


def _mma_warps_per_cta(kind: str, warps: Any) -> Ints:
    """``warpsPerCTA`` of an MMA layout: a power of two per dim, as many dims as the family allows."""
    warps = _ints(kind, "warpsPerCTA", warps, pow2=True)
    _check_mma_rank(kind, len(warps), f"warpsPerCTA = {list(warps)}")
    return warps


def _amd_mma_tiles_per_warp(kind: str, tiles: Optional[Ints], rank: int) -> Optional[Ints]:
    """``tilesPerWarp`` of an AMD MMA layout (MFMA, WMMA's warpsPerCTA spelling): a power of two
    per dim; all ones is the default, which Triton does not print (None)."""
    if tiles is None:
        return None
    tiles = _ints(kind, "tilesPerWarp", tiles, pow2=True, length=rank)
    return None if all(t == 1 for t in tiles) else tiles


@dataclass(frozen=True)
class NvidiaMmaEncoding(DistributedAttribute):
    """``#ttg.nvidia_mma``: accumulator of mma.sync (version 2, Ampere) or wgmma (3, Hopper)."""

    version_major: int
    version_minor: int
    warps_per_cta: Ints
    instr_shape: Ints
    cga: Optional[CGALayout] = None
    kind = "nvidia_mma"

    def __post_init__(self):
        k = self.kind
        _int(k, "versionMajor", self.version_major, choices=(2, 3))
        _int(k, "versionMinor", self.version_minor)
        warps = _mma_warps_per_cta(k, self.warps_per_cta)
        rank = len(warps)
        if self.version_major == 3 and rank != 2:
            reject(k, f"warpsPerCTA = {list(warps)}: a version 3 (Hopper) MMA layout has rank 2")
        n_instr = rank if self.version_major == 2 else 3
        instr = _ints(k, "instrShape", self.instr_shape, length=n_instr)
        if any(v < 1 for v in instr):
            reject(k, f"instrShape = {list(instr)} must be positive")
        if self.version_major == 2 and (instr[-2], instr[-1]) not in ((16, 8), (8, 8)):
            reject(k, f"instrShape = {list(instr)}: version 2 supports M x N = 16 x 8 (or 8 x 8 for fp64)")
        if self.version_major == 3 and (instr[0] != 16 or instr[1] % 8 or not 8 <= instr[1] <= 256):
            reject(k, f"instrShape = {list(instr)}: version 3 needs M = 16 and N a multiple of 8 up to 256")
        if self.version_major == 3 and not is_power_of_two(instr[1]):
            reject(k, f"instrShape = {list(instr)}: N = {instr[1]} is not a power of two")
        _set(self, "warps_per_cta", warps)
        _set(self, "instr_shape", instr)
        _set(self, "cga", _check_cga(k, self.cga, rank))

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    @property
    def is_hopper(self) -> bool:
        return self.version_major == 3

    def _body(self) -> str:
        items = [f"versionMajor = {self.version_major}", f"versionMinor = {self.version_minor}",
                 f"warpsPerCTA = {_fmt_ints(self.warps_per_cta)}"]
        items += _cga_fields(self.cga)
        items.append(f"instrShape = {_fmt_ints(self.instr_shape)}")
        return "{" + ", ".join(items) + "}"


@dataclass(frozen=True)
class AmdMfmaEncoding(DistributedAttribute):
    """``#ttg.amd_mfma``: accumulator of AMD CDNA matrix cores (version 1 = gfx908 ... 4 = gfx950)."""

    version: int
    warps_per_cta: Ints
    instr_shape: Ints
    is_transposed: bool
    cga: Optional[CGALayout] = None
    tiles_per_warp: Optional[Ints] = None      # None = all 1 (not printed)
    element_bit_width: Optional[int] = None    # None = 32 (not printed)
    kind = "amd_mfma"

    def __post_init__(self):
        k = self.kind
        _int(k, "version", self.version, choices=(0, 1, 2, 3, 4))  # 0 = unset, then gfx908..gfx950
        warps = _mma_warps_per_cta(k, self.warps_per_cta)
        rank = len(warps)
        instr = _ints(k, "instrShape", self.instr_shape, length=3)
        if (instr[0], instr[1]) not in ((32, 32), (16, 16), (64, 4), (4, 64)):
            reject(k, f"instrShape = {list(instr)}: M x N must be 32x32, 16x16, 64x4 or 4x64")
        _bool(k, "isTransposed", self.is_transposed)
        tiles = _amd_mma_tiles_per_warp(k, self.tiles_per_warp, rank)
        width = self.element_bit_width
        if width is not None:
            _int(k, "elementBitWidth", width, choices=(32, 64))
            if width == 32:
                width = None
        _set(self, "warps_per_cta", warps)
        _set(self, "instr_shape", instr)
        _set(self, "tiles_per_warp", tiles)
        _set(self, "element_bit_width", width)
        _set(self, "cga", _check_cga(k, self.cga, rank))

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    @property
    def tiles(self) -> Ints:
        return self.tiles_per_warp or (1,) * self.rank

    @property
    def bit_width(self) -> int:
        return self.element_bit_width or 32

    def _body(self) -> str:
        items = [f"version = {self.version}", f"warpsPerCTA = {_fmt_ints(self.warps_per_cta)}",
                 f"instrShape = {_fmt_ints(self.instr_shape)}", f"isTransposed = {_fmt_bool(self.is_transposed)}"]
        items += _cga_fields(self.cga)
        if self.tiles_per_warp is not None:
            items.append(f"tilesPerWarp = {_fmt_ints(self.tiles_per_warp)}")
        if self.element_bit_width is not None:
            items.append(f"elementBitWidth = {self.element_bit_width}")
        return "{" + ", ".join(items) + "}"


WMMA_DEFAULT_INSTR_SHAPE = (16, 16, 16)
_WMMA_INSTR_SHAPES = {
    1: {(16, 16, 16)},
    2: {(16, 16, 16), (16, 16, 32)},
    3: {(16, 16, 4), (16, 16, 32), (16, 16, 64), (16, 16, 128), (32, 16, 64), (32, 16, 128)},
}


@dataclass(frozen=True)
class AmdWmmaEncoding(DistributedAttribute):
    """``#ttg.amd_wmma``: accumulator of AMD RDNA / gfx1250 WMMA (versions 1 to 3).

    Two spellings of the warp arrangement exist:

    * up to Triton 3.6: ``warpsPerCTA = [..]`` and optionally ``tilesPerWarp = [..]``;
    * from 3.7: ``ctaLayout = {register = [..], warp = [..]}``, bases in units of one WMMA
      tile (``register`` omitted when empty; ``rank = N`` may be given when the bases do not
      tell the rank).

    Exactly one of ``warps_per_cta`` and ``warp_bases`` is set (``register_bases`` only with the
    latter); each prints back in its own spelling.
    """

    version: int
    is_transposed: bool
    warps_per_cta: Optional[Ints] = None
    tiles_per_warp: Optional[Ints] = None
    register_bases: Optional[Bases] = None
    warp_bases: Optional[Bases] = None
    cga: Optional[CGALayout] = None
    instr_shape: Optional[Ints] = None   # None = [16, 16, 16] (not printed)
    rank_hint: Optional[int] = None      # the text's explicit ``rank = N`` (new spelling only)
    kind = "amd_wmma"

    def __post_init__(self):
        k = self.kind
        _int(k, "version", self.version, choices=(1, 2, 3))
        _bool(k, "isTranspose", self.is_transposed)
        if (self.warps_per_cta is None) == (self.warp_bases is None and self.register_bases is None):
            reject(k, "give either warpsPerCTA (Triton <= 3.6) or ctaLayout = {register = ..., warp = ...} (3.7+)")
        if self.warps_per_cta is not None:
            warps = _mma_warps_per_cta(k, self.warps_per_cta)
            rank = len(warps)
            _set(self, "warps_per_cta", warps)
            _set(self, "tiles_per_warp", _amd_mma_tiles_per_warp(k, self.tiles_per_warp, rank))
            if self.rank_hint is not None:
                reject(k, "rank is only part of the ctaLayout spelling")
        else:
            if self.tiles_per_warp is not None:
                reject(k, "tilesPerWarp is only part of the warpsPerCTA spelling")
            regs = checked_bases(k, "ctaLayout register", self.register_bases or ())
            warps = checked_bases(k, "ctaLayout warp", self.warp_bases or ())
            ranks = {len(b) for b in regs + warps}
            if self.rank_hint is not None:
                ranks.add(_int(k, "rank", self.rank_hint))
            if self.cga is not None and self.cga.rank() is not None:
                ranks.add(self.cga.rank())
            if len(ranks) > 1:
                reject(k, f"ctaLayout bases, CGALayout and rank disagree on the rank ({sorted(ranks)})")
            rank = ranks.pop() if ranks else 2
            _check_mma_rank(k, rank, f"ctaLayout rank {rank}")
            _set(self, "register_bases", regs)
            _set(self, "warp_bases", warps)
            for name, bs in (("register", regs), ("warp", warps)):
                for b in bs:
                    if not _is_single_dim_step(b):
                        reject(k, f"ctaLayout {name} basis {list(b)} must be zero or a power of two along one dim")
        instr = self.instr_shape
        if instr is not None:
            instr = _ints(k, "instrShape", instr, length=3)
            if instr not in _WMMA_INSTR_SHAPES[self.version]:
                reject(k, f"instrShape = {list(instr)} is not a version {self.version} WMMA instruction "
                         f"(valid: {sorted(list(s) for s in _WMMA_INSTR_SHAPES[self.version])})")
            if instr == WMMA_DEFAULT_INSTR_SHAPE:
                instr = None
        elif WMMA_DEFAULT_INSTR_SHAPE not in _WMMA_INSTR_SHAPES[self.version]:
            reject(k, f"version {self.version} needs an explicit instrShape")
        _set(self, "instr_shape", instr)
        _set(self, "cga", _check_cga(k, self.cga, rank))
        object.__setattr__(self, "_rank", rank)

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def uses_warps_per_cta_spelling(self) -> bool:
        return self.warps_per_cta is not None

    @property
    def instr(self) -> Ints:
        return self.instr_shape or WMMA_DEFAULT_INSTR_SHAPE

    def _body(self) -> str:
        items = [f"version = {self.version}", f"isTranspose = {_fmt_bool(self.is_transposed)}"]
        if self.warps_per_cta is not None:
            items.append(f"warpsPerCTA = {_fmt_ints(self.warps_per_cta)}")
            items += _cga_fields(self.cga)
            if self.tiles_per_warp is not None:
                items.append(f"tilesPerWarp = {_fmt_ints(self.tiles_per_warp)}")
        else:
            inner = []
            if self.register_bases:
                inner.append(f"register = {_fmt_bases(self.register_bases)}")
            if self.warp_bases:
                inner.append(f"warp = {_fmt_bases(self.warp_bases)}")
            items.append("ctaLayout = {" + ", ".join(inner) + "}")
            if self.rank_hint is not None:
                items.append(f"rank = {self.rank_hint}")
            items += _cga_fields(self.cga)
        if self.instr_shape is not None:
            items.append(f"instrShape = {_fmt_ints(self.instr_shape)}")
        return "{" + ", ".join(items) + "}"


@dataclass(frozen=True)
class DotOperandEncoding(DistributedAttribute):
    """``#ttg.dot_op``: operand A (``opIdx = 0``) or B (1) of a dot whose result has layout
    ``parent``; ``kWidth`` = consecutive K elements per thread (0 = unset, only for a blocked
    parent, and not printed)."""

    op_idx: int
    parent: DistributedAttribute
    k_width: int = 0
    parent_alias: Optional[str] = field(default=None, compare=False)
    kind = "dot_op"

    def __post_init__(self):
        k = self.kind
        _int(k, "opIdx", self.op_idx, choices=(0, 1))
        _int(k, "kWidth", self.k_width)
        parent = self.parent
        if not isinstance(parent, (NvidiaMmaEncoding, AmdMfmaEncoding, AmdWmmaEncoding, BlockedEncoding)):
            reject(k, f"parent must be nvidia_mma, amd_mfma, amd_wmma or blocked, got {parent}")
        if isinstance(parent, BlockedEncoding):
            if self.k_width != 0:
                reject(k, f"kWidth = {self.k_width}: a dot operand of a blocked parent has no kWidth")
        elif not is_power_of_two(self.k_width):
            reject(k, f"kWidth = {self.k_width}: a dot operand of an MMA parent needs a power-of-two kWidth")
        if isinstance(parent, NvidiaMmaEncoding) and parent.is_hopper and self.op_idx != 0:
            reject(k, "opIdx = 1 with a Hopper (version 3) MMA parent: wgmma takes only operand A from registers")

    @property
    def rank(self) -> int:
        return self.parent.rank

    def _body(self) -> str:
        items = [f"opIdx = {self.op_idx}", f"parent = {_parent_text(self.parent, self.parent_alias)}"]
        if self.k_width:
            items.append(f"kWidth = {self.k_width}")
        return "{" + ", ".join(items) + "}"


def _linear_dict(named: Sequence[tuple[str, Bases]]) -> str:
    return "{" + ", ".join(f"{name} = {_fmt_bases(bs)}" for name, bs in named) + "}"


def _linear_rank(kind: str, named: Sequence[tuple[str, Bases]]) -> int:
    """The rank of a layout written as bases; also checks that the bases cover the tensor they
    imply (every element reached, as Triton's parser requires): e.g. ``offset = [[2]]`` alone
    never reaches element 1."""
    ranks = {len(b) for _, bs in named for b in bs}
    if not ranks:
        reject(kind, "every basis list is empty, so the rank is unknown")
    if len(ranks) > 1:
        reject(kind, f"bases have different lengths {sorted(ranks)}; each needs one component per tensor dim")
    rank = ranks.pop()
    try:
        LinearLayout.from_bases([(n, [list(b) for b in bs]) for n, bs in named], [f"dim{d}" for d in range(rank)])
    except LayoutError:
        sizes = [1] * rank
        for _, bs in named:
            for b in bs:
                for d, c in enumerate(b):
                    sizes[d] = max(sizes[d], 1 << c.bit_length())
        reject(kind, f"the bases do not reach every element of the {'x'.join(map(str, sizes))} tensor they span "
                    "(the layout must be surjective)")
    return rank


@dataclass(frozen=True)
class LinearEncoding(DistributedAttribute):
    """``#ttg.linear``: a distributed layout given directly by its bases.  Every basis moves
    along at most one tensor dim (else Triton calls it ``generic_linear``)."""

    register: Bases
    lane: Bases
    warp: Bases
    block: Bases
    kind = "linear"

    def __post_init__(self):
        for name in ("register", "lane", "warp", "block"):
            _set(self, name, checked_bases(self.kind, name, getattr(self, name)))
        self._check_moves()
        object.__setattr__(self, "_rank", _linear_rank(self.kind, self.named_bases()))

    def _check_moves(self):
        for name, bs in self.named_bases():
            for b in bs:
                if sum(1 for c in b if c) > 1:
                    reject(self.kind, f"{name} basis {list(b)} moves in more than one dim "
                                     "(a layout like that is a #ttg.generic_linear)")

    def named_bases(self) -> list[tuple[str, Bases]]:
        return [("register", self.register), ("lane", self.lane), ("warp", self.warp), ("block", self.block)]

    @property
    def rank(self) -> int:
        return self._rank

    def _body(self) -> str:
        return _linear_dict(self.named_bases())


@dataclass(frozen=True)
class GenericLinearEncoding(LinearEncoding):
    """``#ttg.generic_linear`` (Triton 3.8+): like ``linear`` but warp bases may be swizzled
    (move along several dims); register, lane and block bases still move along one dim."""

    kind = "generic_linear"

    def _check_moves(self):
        for name, bs in self.named_bases():
            if name == "warp":
                continue
            for b in bs:
                if sum(1 for c in b if c) > 1:
                    reject(self.kind, f"{name} basis {list(b)} moves in more than one dim; only warp bases may")


@dataclass(frozen=True)
class SwizzledSharedEncoding(SharedAttribute):
    """``#ttg.swizzled_shared``: rows of the two fastest dims (``order[0]`` = columns) are
    XOR-swizzled in groups of ``vec`` elements, the phase changing every ``perPhase`` rows and
    repeating after ``maxPhase`` phases."""

    vec: int
    per_phase: int
    max_phase: int
    order: Ints
    cga: Optional[CGALayout] = None
    kind = "swizzled_shared"

    def __post_init__(self):
        k = self.kind
        for name, attr in (("vec", "vec"), ("perPhase", "per_phase"), ("maxPhase", "max_phase")):
            v = _int(k, name, getattr(self, attr))
            if not is_power_of_two(v):
                reject(k, f"{name} = {v} is not a power of two")
        rank = len(self.order) if isinstance(self.order, (list, tuple)) else 0
        if rank < 1:
            reject(k, f"order must be a non-empty list, got {self.order!r}")
        _set(self, "order", _order(k, "order", self.order, rank))
        _set(self, "cga", _check_cga(k, self.cga, rank))

    @property
    def rank(self) -> int:
        return len(self.order)

    def _body(self) -> str:
        items = [f"vec = {self.vec}", f"perPhase = {self.per_phase}", f"maxPhase = {self.max_phase}",
                 f"order = {_fmt_ints(self.order)}"]
        return "{" + ", ".join(items + _cga_fields(self.cga)) + "}"


@dataclass(frozen=True)
class AmdRotatingSharedEncoding(SwizzledSharedEncoding):
    """``#ttg.amd_rotating_shared``: swizzled, with the phase also rotated every ``maxPhase``
    phases (AMD LDS bank-conflict avoidance)."""

    kind = "amd_rotating_shared"


@dataclass(frozen=True)
class NvmmaSharedEncoding(SharedAttribute):
    """``#ttg.nvmma_shared``: the TMA / wgmma shared layout with a 0, 32, 64 or 128-byte swizzle."""

    swizzling_byte_width: int
    transposed: bool
    element_bit_width: int
    fp4_padded: bool = False
    cga: Optional[CGALayout] = None
    rank_hint: Optional[int] = None   # the text's ``rank = N``; None = 2 (or the CGA's rank)
    kind = "nvmma_shared"

    def __post_init__(self):
        k = self.kind
        _int(k, "swizzlingByteWidth", self.swizzling_byte_width, choices=(0, 32, 64, 128))
        _bool(k, "transposed", self.transposed)
        _int(k, "elementBitWidth", self.element_bit_width, choices=(4, 8, 16, 32, 64))
        _bool(k, "fp4Padded", self.fp4_padded)
        if self.fp4_padded and self.element_bit_width != 8:
            reject(k, f"fp4Padded = true needs elementBitWidth = 8, got {self.element_bit_width}")
        rank = self.rank_hint
        if rank is not None:
            _int(k, "rank", rank)
            if rank < 1:
                reject(k, f"rank = {rank} must be at least 1")
        if self.cga is not None and not self.cga.is_single_cta:
            if rank is not None and rank != self.cga.rank():
                reject(k, f"rank = {rank} but the CGA layout has rank {self.cga.rank()}")
            rank = self.cga.rank()
            _set(self, "rank_hint", None)
        elif rank == 2:
            _set(self, "rank_hint", None)
        _set(self, "cga", _check_cga(k, self.cga, rank or 2))

    @property
    def rank(self) -> int:
        if self.cga is not None:
            return self.cga.rank()
        return self.rank_hint or 2

    def _body(self) -> str:
        items = [f"swizzlingByteWidth = {self.swizzling_byte_width}", f"transposed = {_fmt_bool(self.transposed)}",
                 f"elementBitWidth = {self.element_bit_width}"]
        if self.fp4_padded:
            items.append("fp4Padded = true")
        if self.cga is not None:
            items += _cga_fields(self.cga)
        elif self.rank_hint is not None:
            items.append(f"rank = {self.rank_hint}")
        return "{" + ", ".join(items) + "}"


@dataclass(frozen=True)
class PaddedSharedEncoding(SharedAttribute):
    """``#ttg.padded_shared<[interval:+pad, ...] {...}>``: a linear layout (the *linear
    component*, ``offset`` and ``block`` bases) whose physical addresses get ``pad`` extra
    elements after every ``interval`` elements:

        physical(offset) = offset + sum_k (offset >> log2(interval_k)) << log2(pad_k)

    Example: ``[32:+4]`` leaves a 4-element gap after every 32 elements, so logical offset 70
    lands at 70 + (70 >> 5) * 4 = 78.

    The component is written either as bases (``{offset = [...], block = [...]}``) or, when
    it is the plain row-major-like identity, as ``{order = [...], shape = [...]}``.  Exactly
    one of the two spellings is set.
    """

    intervals: Ints
    paddings: Ints
    offset: Optional[Bases] = None
    block: Optional[Bases] = None
    order: Optional[Ints] = None
    shape: Optional[Ints] = None
    kind = "padded_shared"

    def __post_init__(self):
        k = self.kind
        intervals = _ints(k, "intervals", self.intervals, pow2=True)
        paddings = _ints(k, "paddings", self.paddings, pow2=True)
        if not intervals or len(intervals) != len(paddings):
            reject(k, f"needs one or more interval:+padding pairs, got intervals {list(intervals)} and "
                     f"paddings {list(paddings)}")
        if len(set(intervals)) != len(intervals):
            reject(k, f"intervals {list(intervals)} must be distinct")
        _set(self, "intervals", intervals)
        _set(self, "paddings", paddings)
        if (self.offset is None) == (self.order is None and self.shape is None):
            reject(k, "give either {offset = ..., block = ...} or {order = ..., shape = ...}")
        if self.offset is not None:
            _set(self, "offset", checked_bases(k, "offset", self.offset))
            _set(self, "block", checked_bases(k, "block", self.block or ()))
            rank = _linear_rank(k, [("offset", self.offset), ("block", self.block)])
        else:
            if self.order is None or self.shape is None:
                reject(k, "the short form needs both order and shape")
            shape = _ints(k, "shape", self.shape, pow2=True)
            rank = len(shape)
            _set(self, "shape", shape)
            _set(self, "order", _order(k, "order", self.order, rank))
        object.__setattr__(self, "_rank", rank)

    @property
    def rank(self) -> int:
        return self._rank

    def padded_offset(self, offset: int) -> int:
        """The physical offset (in elements) of logical ``offset``, padding included."""
        return offset + sum((offset >> (i.bit_length() - 1)) << (p.bit_length() - 1)
                            for i, p in zip(self.intervals, self.paddings))

    def _body(self) -> str:
        pads = "[" + ", ".join(f"{i}:+{p}" for i, p in zip(self.intervals, self.paddings)) + "]"
        if self.offset is not None:
            return f"{pads} {_linear_dict([('offset', self.offset), ('block', self.block)])}"
        return f"{pads} {{order = {_fmt_ints(self.order)}, shape = {_fmt_ints(self.shape)}}}"


@dataclass(frozen=True)
class SharedLinearEncoding(SharedAttribute):
    """``#ttg.shared_linear``: a shared layout given directly by its ``offset`` and ``block``
    bases; ``alignment`` is the buffer's byte alignment."""

    offset: Bases
    block: Bases = ()
    alignment: int = 16
    kind = "shared_linear"

    def __post_init__(self):
        k = self.kind
        _set(self, "offset", checked_bases(k, "offset", self.offset))
        _set(self, "block", checked_bases(k, "block", self.block))
        a = _int(k, "alignment", self.alignment)
        if not is_power_of_two(a):
            reject(k, f"alignment = {a} is not a power of two")
        object.__setattr__(self, "_rank", _linear_rank(k, [("offset", self.offset), ("block", self.block)]))

    @property
    def rank(self) -> int:
        return self._rank

    def _body(self) -> str:
        named = [("offset", self.offset)] + ([("block", self.block)] if self.block else [])
        return f"{_linear_dict(named)}, alignment = {self.alignment}"
