"""MLIR types as printed: tensor and shared-memory descriptor types, and splitting type text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ...lowering.element_type import ElementType, UnknownElementType
from .diagnostics import IRError


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside any <>, (), [], {} or string; e.g. the parts of a tensor type."""
    parts, depth, start, in_string = [], 0, 0, False
    for i, ch in enumerate(text):
        if in_string:
            if ch == '"' and text[i - 1] != "\\":
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            if not (ch == ">" and i > 0 and text[i - 1] == "-"):  # '->' is not a bracket
                depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


@dataclass(frozen=True)
class TensorType:
    """A ranked tensor (``tensor<64x64xf32, #enc>``) or shared-memory descriptor
    (``!ttg.memdesc<64x64xf16, #shared, #smem, mutable>``) with its encoding as text.

    A memdesc that is a view into a larger buffer (``ttg.memdesc_subslice``) prints the shape
    of that buffer last: ``!ttg.memdesc<32x8xf64, #shared, #smem, mutable, 32x16>`` is a 32x8
    window of a 32x16 allocation (Triton 3.6 and 3.9 print it alike).  ``alloc_shape`` is that
    trailing shape, or ``shape`` itself when none is printed."""

    kind: str                  # "tensor" or "memdesc"
    shape: tuple[int, ...]
    element_type: str
    encoding: Optional[str]    # the attribute text (aliases expanded), None if absent
    text: str                  # the whole type as printed
    alloc_shape: tuple[int, ...] = ()   # memdesc: the allocation's shape (see above); tensor: ()
    mutable: bool = False               # memdesc: written as ``mutable``

    @property
    def element(self) -> ElementType:
        """The element type with its logical and storage widths (an :class:`IRError` for a type
        we do not know)."""
        try:
            return ElementType.of(self.element_type)
        except UnknownElementType as error:
            raise IRError(f"{error} in {self.text}") from None

    @property
    def is_shared(self) -> bool:
        return self.kind == "memdesc"

    def encoding_attribute(self):
        """The encoding as a :mod:`linear_layouts.dialect` attribute object (None if absent);
        raises the dialect's ``LayoutError`` for text it cannot read."""
        if self.encoding is None:
            return None
        from ...dialect.attribute_parser import parse_attribute
        return parse_attribute(self.encoding)


@lru_cache(maxsize=8192)
def parse_tensor_type(text: str) -> Optional[TensorType]:
    """A :class:`TensorType` for tensor and memdesc types, None for any other type."""
    text = text.strip()
    for prefix, kind in (("tensor<", "tensor"), ("!ttg.memdesc<", "memdesc")):
        if text.startswith(prefix) and text.endswith(">"):
            parts = split_top_level(text[len(prefix):-1])
            dims = parts[0].split("x")
            # shape is the leading integers; the element type is the rest (may contain 'x',
            # as in !tt.ptr<f32>, so rejoin it)
            shape = []
            while dims and dims[0].isdigit():
                shape.append(int(dims.pop(0)))
            element = "x".join(dims)
            encoding = parts[1] if len(parts) > 1 and parts[1].startswith("#") else None
            if kind == "tensor":
                return TensorType(kind, tuple(shape), element, encoding, text)
            # After the encoding: the memory space, then optionally `mutable` and the
            # allocation shape (e.g. `#smem, mutable, 32x16`).
            extras = parts[2:] if encoding is not None else parts[1:]
            alloc_shape = tuple(shape)
            if extras and re.fullmatch(r"\d+(x\d+)*", extras[-1]):
                alloc_shape = tuple(int(d) for d in extras[-1].split("x"))
            return TensorType(kind, tuple(shape), element, encoding, text, alloc_shape, "mutable" in extras)
    return None


def alias_pattern(alias: str) -> "re.Pattern":
    """Matches uses of an attribute alias (``#blocked1`` but not ``#blocked12``)."""
    return re.compile(re.escape(alias) + r"(?![\w$.-])")

