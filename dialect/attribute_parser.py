"""Reading layout attributes from the text Triton prints: ``parse_attribute`` and ``parse_aliases``.

A small tokenizer and recursive-descent reader for the subset of MLIR attribute syntax these
layouts use: integers, true/false, [lists], {key = value} dictionaries, nested
``#ttg.kind<...>`` attributes and ``#alias`` references.  Each kind's parameters are then
handed to its class in :mod:`.attributes`, which checks them.

    >>> attr = parse_attribute("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], "
    ...                        "warpsPerCTA = [4, 1], order = [1, 0]}>")
    >>> attr.size_per_thread
    (1, 4)

Bad input raises ``AttributeSyntaxError`` (a ``LayoutError``) quoting the text and saying what
is wrong; nothing here ever aborts the process.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional, Sequence

from .attributes import (AmdMfmaEncoding, AmdRotatingSharedEncoding, AmdWmmaEncoding, AttributeSyntaxError,
                         BlockedEncoding, CGALayout, DotOperandEncoding, GenericLinearEncoding, LayoutAttribute,
                         LinearEncoding, NvidiaMmaEncoding, NvmmaSharedEncoding, PaddedSharedEncoding,
                         SharedLinearEncoding, SliceEncoding, SwizzledSharedEncoding, checked_bases, reject)

_TOKEN = re.compile(r"\s*(?:(#[A-Za-z_][\w$.-]*)|(-?\d+)|([A-Za-z_][\w]*)|(\S))")


class _Reader:
    def __init__(self, text: str, aliases: Optional[Mapping[str, Any]]):
        self.text = text
        self.aliases = aliases or {}
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while True:
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos and not m.group(0).strip():
                break
            kind = ("hash", "int", "ident", "punct")[m.lastindex - 1]
            self.tokens.append((kind, m.group(m.lastindex), m.start(m.lastindex)))
            pos = m.end()
            if pos >= len(text):
                break
        self.i = 0

    def error(self, message: str) -> AttributeSyntaxError:
        if self.i < len(self.tokens):
            where = f" at column {self.tokens[self.i][2] + 1} ({self.tokens[self.i][1]!r})"
        else:
            where = " at the end of the text"
        return AttributeSyntaxError(f"cannot read layout attribute {self.text!r}: {message}{where}")

    def peek(self) -> Optional[tuple[str, str, int]]:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            raise self.error("unexpected end")
        self.i += 1
        return tok

    def expect(self, punct: str) -> None:
        tok = self.peek()
        if tok is None or tok[1] != punct:
            raise self.error(f"expected {punct!r}")
        self.i += 1

    def at(self, punct: str) -> bool:
        tok = self.peek()
        return tok is not None and tok[0] == "punct" and tok[1] == punct

    # value := int | true | false | [value, ...] | {key = value, ...} | attribute
    def value(self) -> Any:
        tok = self.peek()
        if tok is None:
            raise self.error("expected a value")
        if tok[0] == "int":
            self.i += 1
            return int(tok[1])
        if tok[0] == "ident" and tok[1] in ("true", "false"):
            self.i += 1
            return tok[1] == "true"
        if tok[0] == "hash":
            return self.attribute()
        if self.at("["):
            return self.list()
        if self.at("{"):
            return self.dict()
        raise self.error("expected an integer, true/false, a list, a dictionary or an attribute")

    def list(self) -> list:
        self.expect("[")
        items = []
        if not self.at("]"):
            items.append(self.value())
            while self.at(","):
                self.i += 1
                items.append(self.value())
        self.expect("]")
        return items

    def dict(self) -> dict:
        self.expect("{")
        items: dict = {}
        if not self.at("}"):
            self.entry(items)
            while self.at(","):
                self.i += 1
                self.entry(items)
        self.expect("}")
        return items

    def entry(self, items: dict) -> None:
        tok = self.take()
        if tok[0] != "ident":
            self.i -= 1
            raise self.error("expected a parameter name")
        self.expect("=")
        if tok[1] in items:
            self.i -= 2
            raise self.error(f"parameter {tok[1]} is given twice")
        items[tok[1]] = self.value()

    def padding_list(self) -> list[tuple[int, int]]:
        # [interval:+pad, ...] of padded_shared
        self.expect("[")
        pairs = []
        while True:
            a = self.take()
            if a[0] != "int":
                self.i -= 1
                raise self.error("expected an interval")
            self.expect(":")
            self.expect("+")
            b = self.take()
            if b[0] != "int":
                self.i -= 1
                raise self.error("expected a padding")
            pairs.append((int(a[1]), int(b[1])))
            if not self.at(","):
                break
            self.i += 1
        self.expect("]")
        return pairs

    def attribute(self) -> LayoutAttribute:
        tok = self.take()
        if tok[0] != "hash":
            self.i -= 1
            raise self.error("expected an attribute starting with '#'")
        name = tok[1][1:]
        if not name.startswith("ttg."):
            # An alias such as #blocked1.
            if name not in self.aliases:
                self.i -= 1
                known = ", ".join("#" + a for a in self.aliases) or "none"
                raise self.error(f"unknown alias #{name} (known aliases: {known})")
            target = self.aliases[name]
            if isinstance(target, str):
                target = parse_attribute(target, self.aliases)
            return _Aliased(target, name)
        kind = name[4:]
        if kind not in _BUILDERS:
            self.i -= 1
            raise self.error(f"unknown layout attribute kind #ttg.{kind} (known: "
                             f"{', '.join(sorted(_BUILDERS))})")
        self.expect("<")
        positional: list = []
        named: dict = {}
        while True:
            if self.at("{"):
                positional.append(("dict", self.dict()))
            elif self.at("["):
                positional.append(("pads", self.padding_list()))
            else:
                self.entry(named)
            if self.at(","):
                self.i += 1
                continue
            if self.at(">"):
                break
            if self.at("{") or self.at("["):
                continue
            raise self.error("expected ',' or '>'")
        start = self.i
        self.expect(">")
        try:
            return _BUILDERS[kind](positional, named)
        except AttributeSyntaxError as e:
            self.i = start
            raise AttributeSyntaxError(f"invalid layout attribute {self.text!r}: {e}") from None
        except (TypeError, ValueError) as e:
            self.i = start
            raise AttributeSyntaxError(f"invalid layout attribute {self.text!r}: #ttg.{kind}: {e}") from None


class _Aliased:
    """A parsed alias reference: the attribute it names, and the alias (for printing)."""

    def __init__(self, attr: LayoutAttribute, alias: str):
        self.attr, self.alias = attr, alias


def _unalias(value: Any) -> tuple[Any, Optional[str]]:
    if isinstance(value, _Aliased):
        return value.attr, value.alias
    return value, None


def _take_params(kind: str, positional: list, named: dict, *, required: Sequence[str],
                 optional: Sequence[str] = (), body: str = "dict") -> dict:
    """Collect the parameters of ``#ttg.kind<{...}>``: exactly the ``required`` names, some of
    the ``optional`` ones, nothing else."""
    if body == "dict":
        if len(positional) != 1 or positional[0][0] != "dict" or named:
            reject(kind, "expected exactly one {key = value, ...} dictionary between < and >")
        params = dict(positional[0][1])
    else:
        params = dict(named)
    missing = [n for n in required if n not in params]
    if missing:
        reject(kind, f"missing parameter{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    extra = [n for n in params if n not in required and n not in optional]
    if extra:
        reject(kind, f"unknown parameter{'s' if len(extra) > 1 else ''} {', '.join(extra)} "
                    f"(expected {', '.join(list(required) + list(optional))})")
    return params


def _cga_from(kind: str, params: dict) -> Optional[CGALayout]:
    split = [params.pop(n, None) for n in ("CTAsPerCGA", "CTASplitNum", "CTAOrder")]
    bases = params.pop("CGALayout", None)
    if bases is not None and any(s is not None for s in split):
        reject(kind, "give either CGALayout or CTAsPerCGA/CTASplitNum/CTAOrder, not both")
    if any(s is not None for s in split):
        if any(s is None for s in split):
            reject(kind, "CTAsPerCGA, CTASplitNum and CTAOrder must be given together")
        return CGALayout(ctas_per_cga=split[0], cta_split_num=split[1], cta_order=split[2])
    if bases is not None:
        return CGALayout(bases=checked_bases("CGALayout", "CGALayout", bases))
    return None


_CGA_KEYS = ("CGALayout", "CTAsPerCGA", "CTASplitNum", "CTAOrder")


def _build_blocked(pos, named):
    p = _take_params("blocked", pos, named, required=("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"),
                     optional=_CGA_KEYS)
    cga = _cga_from("blocked", p)
    return BlockedEncoding(p["sizePerThread"], p["threadsPerWarp"], p["warpsPerCTA"], p["order"], cga)


def _build_slice(pos, named):
    p = _take_params("slice", pos, named, required=("dim", "parent"))
    parent, alias = _unalias(p["parent"])
    return SliceEncoding(p["dim"], parent, alias)


def _build_nvidia_mma(pos, named):
    p = _take_params("nvidia_mma", pos, named, required=("versionMajor", "versionMinor", "warpsPerCTA", "instrShape"),
                     optional=_CGA_KEYS)
    cga = _cga_from("nvidia_mma", p)
    return NvidiaMmaEncoding(p["versionMajor"], p["versionMinor"], p["warpsPerCTA"], p["instrShape"], cga)


def _build_dot_op(pos, named):
    p = _take_params("dot_op", pos, named, required=("opIdx", "parent"), optional=("kWidth",))
    parent, alias = _unalias(p["parent"])
    return DotOperandEncoding(p["opIdx"], parent, p.get("kWidth", 0), alias)


def _build_amd_mfma(pos, named):
    p = _take_params("amd_mfma", pos, named, required=("version", "warpsPerCTA", "instrShape", "isTransposed"),
                     optional=_CGA_KEYS + ("tilesPerWarp", "elementBitWidth"))
    cga = _cga_from("amd_mfma", p)
    return AmdMfmaEncoding(p["version"], p["warpsPerCTA"], p["instrShape"], p["isTransposed"], cga,
                           p.get("tilesPerWarp"), p.get("elementBitWidth"))


def _build_amd_wmma(pos, named):
    p = _take_params("amd_wmma", pos, named, required=("version", "isTranspose"),
                     optional=_CGA_KEYS + ("warpsPerCTA", "tilesPerWarp", "ctaLayout", "instrShape", "rank"))
    cga = _cga_from("amd_wmma", p)
    cta = p.get("ctaLayout")
    regs = warps = None
    if cta is not None:
        if not isinstance(cta, dict):
            reject("amd_wmma", f"ctaLayout must be a dictionary {{register = ..., warp = ...}}, got {cta!r}")
        extra = [k for k in cta if k not in ("register", "warp")]
        if extra:
            reject("amd_wmma", f"ctaLayout has unknown in dims {', '.join(extra)} (expected register, warp)")
        regs, warps = cta.get("register", []), cta.get("warp", [])
        if "warpsPerCTA" in p:
            reject("amd_wmma", "give either warpsPerCTA or ctaLayout, not both")
    elif "warpsPerCTA" not in p:
        reject("amd_wmma", "missing parameter warpsPerCTA (Triton <= 3.6) or ctaLayout (3.7+)")
    return AmdWmmaEncoding(p["version"], p["isTranspose"], p.get("warpsPerCTA"), p.get("tilesPerWarp"), regs, warps,
                           cga, p.get("instrShape"), p.get("rank"))


def _build_linear(cls):
    def build(pos, named):
        p = _take_params(cls.kind, pos, named, required=("register", "lane", "warp", "block"))
        return cls(p["register"], p["lane"], p["warp"], p["block"])
    return build


def _build_swizzled(cls):
    def build(pos, named):
        p = _take_params(cls.kind, pos, named, required=("vec", "perPhase", "maxPhase", "order"), optional=_CGA_KEYS)
        cga = _cga_from(cls.kind, p)
        return cls(p["vec"], p["perPhase"], p["maxPhase"], p["order"], cga)
    return build


def _build_nvmma_shared(pos, named):
    p = _take_params("nvmma_shared", pos, named, required=("swizzlingByteWidth", "transposed", "elementBitWidth"),
                     optional=_CGA_KEYS + ("fp4Padded", "rank"))
    cga = _cga_from("nvmma_shared", p)
    return NvmmaSharedEncoding(p["swizzlingByteWidth"], p["transposed"], p["elementBitWidth"],
                               p.get("fp4Padded", False), cga, p.get("rank"))


def _build_padded_shared(pos, named):
    kind = "padded_shared"
    if len(pos) != 2 or pos[0][0] != "pads" or pos[1][0] != "dict" or named:
        reject(kind, "expected [interval:+padding, ...] followed by a {...} dictionary")
    pairs, params = pos[0][1], pos[1][1]
    if "offset" in params or "block" in params:
        extra = [k for k in params if k not in ("offset", "block")]
        if extra or "offset" not in params:
            reject(kind, "the long form has exactly the parameters offset and block")
        return PaddedSharedEncoding([a for a, _ in pairs], [b for _, b in pairs], offset=params["offset"],
                                    block=params.get("block", []))
    p = _take_params(kind, [("dict", params)], {}, required=("order", "shape"))
    return PaddedSharedEncoding([a for a, _ in pairs], [b for _, b in pairs], order=p["order"], shape=p["shape"])


def _build_shared_linear(pos, named):
    kind = "shared_linear"
    if len(pos) != 1 or pos[0][0] != "dict":
        reject(kind, "expected {offset = ..., block = ...} followed by , alignment = N")
    bases = pos[0][1]
    extra = [k for k in bases if k not in ("offset", "block")]
    if extra or "offset" not in bases:
        reject(kind, "the dictionary has the parameters offset and (optionally) block")
    p = _take_params(kind, [], named, required=("alignment",), body="named")
    return SharedLinearEncoding(bases["offset"], bases.get("block", []), p["alignment"])


_BUILDERS = {
    "blocked": _build_blocked,
    "slice": _build_slice,
    "nvidia_mma": _build_nvidia_mma,
    "dot_op": _build_dot_op,
    "amd_mfma": _build_amd_mfma,
    "amd_wmma": _build_amd_wmma,
    "linear": _build_linear(LinearEncoding),
    "generic_linear": _build_linear(GenericLinearEncoding),
    "swizzled_shared": _build_swizzled(SwizzledSharedEncoding),
    "amd_rotating_shared": _build_swizzled(AmdRotatingSharedEncoding),
    "nvmma_shared": _build_nvmma_shared,
    "padded_shared": _build_padded_shared,
    "shared_linear": _build_shared_linear,
}

def parse_attribute(text: str, aliases: Optional[Mapping[str, Any]] = None) -> LayoutAttribute:
    """Read one layout attribute as Triton prints it, e.g. ``#ttg.slice<{dim = 1, parent = #blocked}>``.

    ``aliases`` maps alias names (with or without the leading ``#``) to attributes or to their
    text, as returned by ``parse_aliases``.  A bare alias (``#blocked1``) is resolved too.
    """
    if not isinstance(text, str):
        raise AttributeSyntaxError(f"a layout attribute must be text, got {text!r}")
    table = {}
    for name, target in (aliases or {}).items():
        table[name[1:] if name.startswith("#") else name] = target
    reader = _Reader(text, table)
    if not reader.tokens:
        raise AttributeSyntaxError(f"cannot read layout attribute {text!r}: the text is empty")
    try:
        result = reader.attribute()
    except RecursionError:
        # an alias that refers to itself (#a = #a, or through others), or parents nested
        # hundreds deep: both would recurse without end
        raise AttributeSyntaxError(f"cannot read layout attribute {text[:80]!r}: an alias refers to itself, or "
                                   f"the attribute is nested too deeply") from None
    if reader.peek() is not None:
        raise reader.error("unexpected text after the attribute")
    if isinstance(result, _Aliased):
        return result.attr
    return result


_ALIAS_LINE = re.compile(r"^\s*#([A-Za-z_][\w$.-]*)\s*=\s*(#ttg\.([A-Za-z_]\w*).*?)\s*$")


def parse_aliases(module_text: str) -> dict[str, LayoutAttribute]:
    """Read the ``#name = #ttg.kind<...>`` lines at the top of a module.

    Returns alias name (without ``#``) -> attribute, in order.  Aliases of kinds that are not
    layouts (``#smem = #ttg.shared_memory``, ``#loc = loc(...)``) are skipped.  An alias may use
    the aliases defined above it (``#dot0 = #ttg.dot_op<{opIdx = 0, parent = #mma, ...}>``).
    """
    aliases: dict[str, LayoutAttribute] = {}
    for line in module_text.splitlines():
        m = _ALIAS_LINE.match(line)
        if not m or m.group(3) not in _BUILDERS:
            continue
        aliases[m.group(1)] = parse_attribute(m.group(2), aliases)
    return aliases
