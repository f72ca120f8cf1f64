"""Remarks in the user's words, with our internals kept for those who ask for them.

A remark (``enable(remarks=True)``, ``ll-opt --remarks``) says what was found and what was
done, in words a Triton user knows: instructions, wavefronts, barriers, measurements.  The
detail level (``enable(remarks="detail")``, ``ll-opt --remarks=detail``,
``ll-lower-conversions{remarks=detail}``) adds what only this project's own code names: the
cost model's counts by field name (``store_wavefronts=8``), the fitted model's families and
rules, the source file of the rule that decided.

A reason is written once, as one string, where it is decided; the parts only the detail level
shows are wrapped in :func:`detail`, and the remark renders the string for its level
(:func:`in_words`, :func:`with_detail`).  Example::

    reason = "stock needs 8 store wavefronts" + detail("store_wavefronts=8; lowering/choosing/stock_bounds.py")
    in_words(reason)      # 'stock needs 8 store wavefronts'
    with_detail(reason)   # 'stock needs 8 store wavefronts (store_wavefronts=8; lowering/choosing/stock_bounds.py)'
"""

from __future__ import annotations

import re

# Unit and record separators: characters no reason, layout or location holds.
_OPEN, _CLOSE = "\x1f", "\x1e"
_DETAIL = re.compile(f" ?{_OPEN}[^{_OPEN}{_CLOSE}]*{_CLOSE}")


def detail(text: str) -> str:
    """``text`` as a part only the detail level shows, in parentheses after what precedes it."""
    return f" {_OPEN}({text}){_CLOSE}"


def in_words(text: str) -> str:
    """``text`` as plain remarks show it: the detail parts left out."""
    return _DETAIL.sub("", text)


def with_detail(text: str) -> str:
    """``text`` with its detail parts (the detail level, and every reader that shows all of a
    reason: the report, the studies)."""
    return text.replace(_OPEN, "").replace(_CLOSE, "")


def counted(n: int, noun: str) -> str:
    """``1 barrier``, ``3 barriers``, ``2 accesses``."""
    return f"{n} {noun}" + ("" if n == 1 else "es" if noun.endswith("s") else "s")
