"""Which Triton release's conventions to reproduce, where releases differ.

The dialect imports no Triton: whoever knows the installed release (``passes.ir.bindings``
reads it once) builds a :class:`TritonConventions` and passes it down explicitly.  Code with
no Triton at hand (``ll-viz``, the planner's own tests) uses :data:`NEWEST`.

What differs, each fact checked against every release's own translation and LLVM structs:

* a ``#ttg.blocked`` tile larger than the tensor keeps its duplicate registers as zero bases
  up to 3.8 and drops them from 3.9 (:attr:`~TritonConventions.blocked_keeps_duplicate_registers`);
* from 3.9 an LLVM struct holds each distinct register once, also for other layouts
  (:attr:`~TritonConventions.struct_holds_unique_registers`);
* ``#ttg.generic_linear`` exists from 3.8; older releases take the same bases under
  ``#ttg.linear`` (:meth:`~TritonConventions.attribute_text`);
* up to 3.7 an NVMMA shared layout without swizzle ignores ``transposed``
  (:attr:`~TritonConventions.unswizzled_nvmma_ignores_transposed`; read off the PTX);
* from 3.7 Triton asks the stages hook for a cache key
  (:attr:`~TritonConventions.stages_hook_gives_cache_key`).

A release is ``(major, minor)``, read from a version string by :func:`release_of`, the one
reader of Triton's version strings (the installed ``triton.__version__``, the release recorded
in a measurement table): ``"3.7.1+git0a1b2c3"`` -> (3, 7), ``"3.9.0rc1"`` -> (3, 9), and
``"3.10.0"`` -> (3, 10), which compares above (3, 9) as the strings would not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

_RELEASE = re.compile(r"\s*(\d+)\.(\d+)")


def release_of(version) -> Optional[tuple[int, int]]:
    """``(major, minor)`` of a Triton version string, whatever follows them (patch, ``rc1``,
    ``+git...``, ``.post1``); None where the string names no release (``""``, ``"3"``, ``"main"``,
    not a string): each caller says what an unreadable release means to it."""
    match = _RELEASE.match(version) if isinstance(version, str) else None
    return (int(match.group(1)), int(match.group(2))) if match else None


@dataclass(frozen=True)
class TritonConventions:
    release: tuple[int, int]   # (major, minor), e.g. (3, 6)

    @property
    def blocked_keeps_duplicate_registers(self) -> bool:
        return self.release < (3, 9)

    @property
    def struct_holds_unique_registers(self) -> bool:
        return self.release >= (3, 9)

    @property
    def has_generic_linear_attribute(self) -> bool:
        return self.release >= (3, 8)

    @property
    def unswizzled_nvmma_ignores_transposed(self) -> bool:
        """Triton 3.6 and 3.7 lay out an NVMMA shared layout without swizzle
        (``swizzlingByteWidth = 0``) the same whether ``transposed`` or not: the last dim
        fastest.  So a transposed view of such a buffer (``memdesc_trans``, whose type is the
        transposed encoding) is read along its last dim.  Read off their PTX: a 64x64 f16 local
        load from that view issues 16-byte loads for ``sizePerThread = [1, 8]`` and 2-byte ones
        for ``[8, 1]``; 3.8 and 3.9 the other way round, as their ``toLinearLayout`` says
        (``test_hopper_epilogues.py`` reads the PTX under every release)."""
        return self.release < (3, 8)

    @property
    def stages_hook_gives_cache_key(self) -> bool:
        return self.release >= (3, 7)

    def attribute_text(self, text: str) -> str:
        """Layout attribute text as this release parses it: ``#ttg.generic_linear<...>`` is
        written ``#ttg.linear<...>`` before 3.8."""
        if text.startswith("#ttg.generic_linear<") and not self.has_generic_linear_attribute:
            return "#ttg.linear<" + text[len("#ttg.generic_linear<"):]
        return text


NEWEST = TritonConventions((3, 9))
