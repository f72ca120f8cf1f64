"""The objects of a module snapshot: :class:`Operation`, :class:`Region`, :class:`Block` and
:class:`Value`, as :class:`~.snapshot.Module` builds them from a Triton module handle, and the
walks over them.

A value knows its type as printed (``tensor<64x64xf16, #blocked>``) and, parsed, its
:class:`~.types.TensorType`; its defining op, or, for a block argument, its block.  An op knows
its name, operands, results, regions and location.  Nothing here talks to Triton.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from .types import TensorType, parse_tensor_type


@dataclass(eq=False)
class Value:
    """An SSA value: an op result or a block argument.  ``type`` is the type as printed by
    MLIR with every encoding alias expanded."""

    type: str
    owner: "Operation | Block"
    index: int
    _handle: object = field(repr=False, default=None)

    @property
    def is_block_argument(self) -> bool:
        return isinstance(self.owner, Block)

    @property
    def tensor_type(self) -> Optional[TensorType]:
        return parse_tensor_type(self.type)

    @property
    def defining_op(self) -> "Optional[Operation]":
        return None if self.is_block_argument else self.owner


@dataclass(eq=False)
class Block:
    arguments: list[Value] = field(default_factory=list)
    operations: list["Operation"] = field(default_factory=list)
    parent: "Optional[Region]" = None


@dataclass(eq=False)
class Region:
    blocks: list[Block] = field(default_factory=list)
    parent: "Optional[Operation]" = None


@dataclass(eq=False)
class Operation:
    name: str
    operands: list[Value] = field(default_factory=list)
    results: list[Value] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    symbol: Optional[str] = None          # sym_name of functions
    callee: Optional[str] = None          # the function a tt.call calls (None: not a call, or unreadable)
    parent: Optional[Block] = None
    _marker: Optional[int] = field(default=None, repr=False)
    _handle: object = field(default=None, repr=False)
    _location: Optional[str] = field(default=None, repr=False)
    _locate: Optional[Callable[["Operation"], str]] = field(default=None, repr=False)

    @property
    def location(self) -> str:
        """``file:line:col`` of the op in the user's file (or ``unknown``)."""
        if self._location is None:
            self._location = self._locate(self) if self._locate is not None else "unknown"
        return self._location

    @property
    def parent_op(self) -> "Optional[Operation]":
        if self.parent is None or self.parent.parent is None:
            return None
        return self.parent.parent.parent

    @property
    def block_arguments(self) -> list[Value]:
        """Arguments of every block of every region of this op (function arguments, loop
        iteration arguments, ...)."""
        return [a for r in self.regions for b in r.blocks for a in b.arguments]

    def __str__(self) -> str:
        return f"'{self.name}' at {self.location}"


def ops_under(op: Operation):
    """The op and every op in its regions, in text order (as ``Module.walk``); iterative, so
    a convert under thousands of nested ``scf.if`` is no deeper for Python than one."""
    work = [op]
    while work:
        current = work.pop()
        yield current
        work.extend(reversed([child for region in current.regions for block in region.blocks
                              for child in block.operations]))


def functions_with_bodies(module) -> list[Operation]:
    """The functions of a module (a :class:`.snapshot.Module`) that have a body (``tt.func`` /
    ``func.func``; declarations of external functions have none), in text order."""
    return [op for op in module.walk() if op.name in ("tt.func", "func.func") and op.regions]


def in_loop(op: Operation) -> bool:
    """Whether the op runs inside an ``scf.for`` or ``scf.while`` (at any depth)."""
    parent = op.parent_op
    while parent is not None:
        if parent.name in ("scf.for", "scf.while"):
            return True
        parent = parent.parent_op
    return False
