"""Global memory accesses read off PTX: how many bytes each ``ld.global`` / ``st.global``
instruction moves (``ld.global.v4.b32`` -> 16, ``st.global.b16`` -> 2)."""

import re

_ACCESS = re.compile(r"\b(ld|st)\.global((?:\.[A-Za-z0-9_:]+?)*?)(?:\.v(\d))?\.[bfsu](8|16|32|64)\b")


def access_bytes(ptx: str, kind: str) -> list[int]:
    """Bytes per instruction of every ``kind`` ("ld" or "st") global access in ``ptx``, in order.
    Example: ``@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];`` -> [16]."""
    return [int(m.group(3) or 1) * int(m.group(4)) // 8 for m in _ACCESS.finditer(ptx) if m.group(1) == kind]


def mean_access_bytes(ptx: str, kind: str) -> float:
    """Bytes per ``kind`` instruction on average (0.0 where there is none)."""
    sizes = access_bytes(ptx, kind)
    return sum(sizes) / len(sizes) if sizes else 0.0
