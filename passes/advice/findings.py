"""What the layout advice says of a kernel: a :class:`Finding` per op (or per buffer), its kinds,
and the small helpers both the advice (``layout_advice``: finding and pricing) and its
application (``advice_edits``) read.  No pass of its own; nothing here applies or prices."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional, Union

from ...lowering.target import Target
from ..assign.layout_costs import memory_work
from ..gluon.layout_expression import advice_layout_expression
from ..ir.layouts import tensor_layout_of
from ..options import OptionError

GLOBAL_ACCESS = "global access"
SHARED_ACCESS = "shared-memory access"
CONVERSION_IN_LOOP = "conversion in a loop"
REPLICATED = "replicated data"
EPILOGUE_STORE = "epilogue store"
MIN_GAIN = 1.1            # an access or buffer is looked at if it alone gains at least this
MIN_KERNEL_GAIN = 1.01    # a finding must gain the whole kernel at least this (cost as written / advised)
APPLIED = (GLOBAL_ACCESS, SHARED_ACCESS, REPLICATED, EPILOGUE_STORE)    # the kinds ll-apply-advice applies
LOOPS = ("scf.for", "scf.while")


@dataclass(frozen=True)
class Finding:
    location: str          # file:line of the op
    op: str                # tt.load, tt.store, ttg.convert_layout, ...
    kind: str              # GLOBAL_ACCESS, SHARED_ACCESS, CONVERSION_IN_LOOP, REPLICATED or EPILOGUE_STORE
    finding: str           # what the layout gives, in words and numbers
    suggestion: str        # what to write instead (a Gluon expression where there is one)
    gain: float            # the whole kernel's modelled cost now / with the suggestion (loop-weighted); 1.0: not priced
    alike: int = 0         # further ops with the same finding (listed once, at the first one's place)
    layout: str = ""       # the suggested layout as an attribute (what ``ll-apply-advice`` writes); "" if none
    op_key: tuple = ()     # (op name, k): the k-th op of that name in the module's walk (0, 1, ...)
    saving: float = 0.0    # a conversion in a loop: the loop-weighted cost the suggestion saves (not an edit of layouts)
    changes: tuple = ()    # the layouts (attributes) the suggestion would change
    edits: tuple = ()      # the findings, one per op, its edit applies (itself and those alike; ``layout_advice``)

    @property
    def key(self) -> str:
        """The finding's name in its kernel, stable from one compile of the kernel to the next: the
        op (its name and rank among the ops of that name in the module's walk) and the kind.
        ``tt.store#1:global-access``: the second ``tt.store``'s global access.  What
        ``enable(apply_advice=True, advice_findings=...)`` names; "" for a finding not placed."""
        if not self.op_key:
            return ""
        return f"{self.op_key[0]}#{self.op_key[1]}:{self.kind.replace(' ', '-')}"

    def text(self) -> str:
        gain = f" (modelled {self.gain:.2f}x)" if self.gain > 1.0 else ""
        alike = f" (and {self.alike} more like it)" if self.alike else ""
        return f"{self.location}: {self.kind}: {self.finding}; instead: {self.suggestion}{gain}{alike}"


def gluon_expression(encoding: str, shape: Optional[tuple] = None) -> str:
    """The Gluon expression of a layout, as an author writes it.  Example:
    ``#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1],
    order = [1, 0]}>`` -> ``gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])``; a slice of it
    ``gl.SliceLayout(1, gl.BlockedLayout(...))``; a layout with no shorter expression, on a
    tensor of ``shape``, ``gl.DistributedLinearLayout(...)``.  Without a shape (or for a layout
    that is not distributed) and no expression: the layout's kind, in words."""
    expression = advice_layout_expression(encoding, shape)
    if expression is not None:
        return expression
    kind = encoding.split("<", 1)[0].rsplit(".", 1)[-1] if encoding.startswith("#") else "layout"
    return f"a {kind} layout with no Gluon expression here"


def op_keys(module) -> dict[int, tuple[str, int]]:
    """id(op) -> (op name, k): the op is the k-th of its name in the module's walk."""
    seen: dict[str, int] = {}
    keys = {}
    for op in module.walk():
        keys[id(op)] = (op.name, seen.get(op.name, 0))
        seen[op.name] = keys[id(op)][1] + 1
    return keys


def access_cost(encoding: str, shape: tuple, bits: int, dim: int, vector: int, target: Target) -> float:
    return memory_work(encoding, shape, bits, dim, vector, target).total


def has_copies(encoding: str, shape: tuple) -> bool:
    layout = tensor_layout_of(encoding, shape)
    return any(not any(basis) for dim in ("register", "lane", "warp") for basis in layout.bases.get(dim, ()))


_KEY = re.compile(r"^[\w.]+#\d+:[a-z-]+$")


def parse_finding_keys(value: Union[None, str, Iterable[str]], option: str = "advice_findings") -> tuple[str, ...]:
    """Finding keys (:attr:`Finding.key`) given as ``"k1,k2"`` or a sequence of strings, checked
    for their form (not for being in any kernel: a kernel's findings are known when it compiles);
    () for None or ""."""
    if value is None:
        return ()
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = None
    if items is None or not all(isinstance(item, str) for item in items):
        raise OptionError(f"{option}={value!r}: expected finding keys such as 'tt.store#0:global-access', "
                          "as a comma-separated string or a sequence of strings")
    keys = tuple(item.strip() for item in items if item.strip())
    bad = [key for key in keys if not _KEY.match(key)]
    if bad:
        raise OptionError(f"{option}: {', '.join(repr(k) for k in bad)} is not a finding key (OP#K:KIND, such as "
                          "'tt.store#0:global-access': report --measure names the keys of a kernel's best findings)")
    return keys
