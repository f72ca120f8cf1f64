"""Element types of TTGIR tensors: how many bits a value has, and how Triton stores it.

One element type has two widths, and they differ for booleans only:

* ``logical_bits``: the bits that carry the value: ``i1`` -> 1, ``f16`` -> 16,
  ``f8E4M3FN`` -> 8, pointers -> 64.  A conversion plan moves this many bits per element
  (the planner's and the verifier's ``element_bits``).
* ``storage_bits``: the bits one element takes where Triton keeps it: a boolean is stored as a
  byte (``i8``) when Triton packs registers into words and in shared memory; every other type
  as its logical width.  The emitters pack, shuffle, store and load this many bits.

``llvm`` is the element's type in the LLVM struct that Triton's type converter gives a tensor
(``i1`` stays ``i1``, fp8 types become ``i8``, ``!tt.ptr<f32>`` becomes ``!llvm.ptr<1>``), or
None for the types whose lowering we do not model (``tf32``, ``index``, narrow floats): the
island emitter leaves those to Triton.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

_INTEGER = re.compile(r"i(\d+)")
_SMALL_FLOAT = re.compile(r"f(\d+)E\w+")            # f8E4M3FN, f8E5M2, f4E2M1FN, ...
_POINTER = re.compile(r"!tt\.ptr<(.*)>")
_FLOAT_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
_UNMODELED_BITS = {"tf32": 32, "index": 64}        # widths we know, LLVM types we do not model
_LLVM_INTEGER_BITS = (1, 8, 16, 32, 64)


def storage_bits_of(logical_bits: int) -> int:
    """Bits an element of ``logical_bits`` occupies where Triton stores it: a boolean takes a byte."""
    return 8 if logical_bits < 8 else logical_bits


class UnknownElementType(ValueError):
    """The text is not an element type we know."""


@dataclass(frozen=True)
class ElementType:
    ttgir: str                 # as TTGIR prints it: "i1", "f16", "f8E4M3FN", "!tt.ptr<f32>"
    llvm: Optional[str]        # the LLVM struct's element type, None if not modelled
    storage_bits: int          # bits per element where Triton stores it (i1: 8)

    @property
    def logical_bits(self) -> int:
        """Bits of the value itself (i1: 1)."""
        return 1 if self.ttgir == "i1" else self.storage_bits

    @property
    def bits(self) -> int:
        """The storage width, under the name the emitters use for the words they move."""
        return self.storage_bits

    @property
    def int_type(self) -> str:
        """The integer type of the storage width (``i8`` for booleans and fp8, ``i64`` for pointers)."""
        return f"i{self.storage_bits}"

    @classmethod
    def of(cls, ttgir: str) -> "ElementType":
        """The element type printed as ``ttgir``; raises :class:`UnknownElementType`."""
        t = ttgir.strip()
        if t == "i1":
            return cls(t, "i1", storage_bits_of(1))
        m = _INTEGER.fullmatch(t)
        if m:
            bits = int(m.group(1))
            return cls(t, t if bits in _LLVM_INTEGER_BITS else None, bits)
        if t in _FLOAT_BITS:
            return cls(t, t, _FLOAT_BITS[t])
        m = _SMALL_FLOAT.fullmatch(t)
        if m:
            bits = int(m.group(1))
            return cls(t, "i8" if bits == 8 else None, bits)
        m = _POINTER.fullmatch(t)
        if m:
            parts = [p.strip() for p in m.group(1).rsplit(",", 1)]
            space = parts[1] if len(parts) == 2 and parts[1].isdigit() else "1"
            return cls(t, f"!llvm.ptr<{space}>", 64)
        if t in _UNMODELED_BITS:
            return cls(t, None, _UNMODELED_BITS[t])
        raise UnknownElementType(f"unknown element type '{t}'")
