"""Which calls of a function's text are block-pointer and tensor-descriptor calls, read from its
syntax tree: what :mod:`.translation` renames and records, and :mod:`.block_pointers` and
:mod:`.tensor_descriptors` write out once Triton's compile gives their layouts.

    a_bp = tl.make_block_ptr(...)          # a block pointer: a_bp
    a = tl.load(a_bp, boundary_check=(0, 1))   # BlockAccess(kind="load")
    x_desc = tl.make_tensor_descriptor(...)    # DescriptorCall(kind="make")
    v = x_desc.load([m, 0])                    # DescriptorCall(kind="load")
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

RENAMED = {"make_block_ptr": "_make_block_ptr", "advance": "_advance"}


@dataclass
class BlockAccess:
    """A ``tl.load`` / ``tl.store`` of a block pointer, written as ``_load_block`` / ``_store_block``."""

    translation: object
    node: ast.Call
    kind: str                        # load, store
    layout: str = ""                 # the name of its tile's layout (LOAD_<line>)
    boundary_check: str = ""         # the text of its boundary_check argument ("" where none)


@dataclass
class DescriptorCall:
    """A ``tl.make_tensor_descriptor`` call, or a ``.load`` / ``.store`` of a descriptor."""

    translation: object
    node: object                   # ast.Call
    kind: str                      # make, load, store
    layout: str = ""               # the name of the tile's layout (LOAD_<line>), once planned
    tma: bool = False              # copied by the TMA (else read through pointers)
    boundary_check: str = ""       # through pointers: every dimension, as a block pointer's load checks them

    @property
    def descriptor(self):
        """The descriptor's expression (``a_desc`` of ``a_desc.load([m, k])``)."""
        return self.node.func.value

    @property
    def offsets(self):
        return self.node.args[0] if self.node.args else None


def block_pointer_names(tree: ast.FunctionDef, is_block_pointer_call) -> set:
    """The local names ``tree`` assigns a block pointer to: from a call ``is_block_pointer_call``
    accepts (``tl.make_block_ptr``, ``tl.advance``), or from another such name."""
    names = set()
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                continue
            value = node.value
            if (isinstance(value, ast.Call) and is_block_pointer_call(value.func)) or \
                    (isinstance(value, ast.Name) and value.id in names):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name) and target.id not in names:
                        names.add(target.id)
                        changed = True
    return names


def is_block_access(call: ast.Call, names: set) -> bool:
    """Whether a ``tl.load`` / ``tl.store`` call reads or writes through a block pointer."""
    if any(keyword.arg in ("boundary_check", "padding_option") for keyword in call.keywords):
        return True
    pointer = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "pointer"), None)
    return isinstance(pointer, ast.Name) and pointer.id in names
