"""The layouts of ``tt.reshape``, ``tt.join`` and ``tt.split`` results, by the algebra.

None of these ops moves data between threads: each result element is an operand element with
new coordinates, held in the same register of the same thread.  So the result's layout is the
operand's linear layout with its *output* coordinates renamed, and Triton's verifier accepts a
result encoding exactly when its linear layout is that one (checked against Triton 3.6 and 3.9
in ``test_assign_layouts.py``).  Each function below gives that renamed layout; the encoding
helpers at the end print it as Triton would accept it.

**Reshape** (row-major, the last dimension fastest, as ``tl.reshape`` without reordering):
element ``(i, j)`` of a 32x16 tensor is element ``16 i + j`` of its 512-element reshape.  With
``sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]``
the bases map as::

    register [[0, 1], [0, 2]]                          -> [[1], [2]]
    lane     [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]]  -> [[4], [8], [16], [32], [64]]
    warp     [[8, 0], [16, 0]]                         -> [[128], [256]]

(Triton prints that one as ``blocked<{sizePerThread = [4], threadsPerWarp = [32],
warpsPerCTA = [4], order = [0]}>``; ``#ttg.linear`` with the bases above is the same layout.)

**Join** stacks two tensors along a new last dimension of size 2, the two halves of each pair
in consecutive registers of one thread: the new dimension is the *first* register basis and
every other basis gets a 0 coordinate for it.  **Split** undoes a join: it exists only where
the last dimension has size 2 and is register basis 0, with no other basis touching it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional, Sequence

from ...dialect import LayoutError, LinearLayout, linear_attribute
from ...dialect.encodings_common import dim_names
from ..ir.layouts import tensor_layout_of

REGISTER, BLOCK = "register", "block"


def reshape_layout(layout: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """``layout`` of a tensor reshaped row-major to ``shape`` (same number of elements)."""
    old = layout.out_dim_names
    new = dim_names(len(shape))
    # reshape_outs counts the first out dim as least significant: reverse, regroup, reverse back
    flipped = layout.transpose_outs(list(reversed(old)))
    regrouped = flipped.reshape_outs([(new[i], shape[i]) for i in reversed(range(len(shape)))])
    return regrouped.transpose_outs(new)


def join_layout(layout: LinearLayout) -> LinearLayout:
    """The layout of ``tt.join`` of two tensors in ``layout``: a new last dimension of size 2,
    register basis 0."""
    rank = len(layout.out_dim_names)
    unit = tuple([0] * rank + [1])
    bases = []
    for name, vectors in layout.bases.items():
        widened = [tuple(v) + (0,) for v in vectors]
        bases.append((name, [unit] + widened if name == REGISTER else widened))
    if REGISTER not in layout.bases:
        bases.insert(0, (REGISTER, [unit]))
    outs = list(zip(dim_names(rank + 1), list(layout.out_dims.values()) + [2]))
    return LinearLayout(bases, outs)


def split_layout(layout: LinearLayout) -> Optional[LinearLayout]:
    """The layout of both results of ``tt.split`` of a tensor in ``layout``, or None where the
    last dimension is not size 2 held in register basis 0 (only there, as a join leaves it)."""
    sizes = list(layout.out_dims.values())
    if not sizes or sizes[-1] != 2:
        return None
    registers = layout.bases.get(REGISTER, ())
    unit = tuple([0] * (len(sizes) - 1) + [1])
    if not registers or tuple(registers[0]) != unit:
        return None
    bases = []
    for name, vectors in layout.bases.items():
        kept = vectors[1:] if name == REGISTER else vectors
        if any(v[-1] for v in kept):
            return None
        bases.append((name, [tuple(v[:-1]) for v in kept]))
    return LinearLayout(bases, list(zip(dim_names(len(sizes) - 1), sizes[:-1])))


# --------------------------------------------------------------------------- encodings

def _layout(encoding: str, shape: tuple) -> Optional[LinearLayout]:
    try:
        layout = tensor_layout_of(encoding, shape)
    except (LayoutError, ValueError, KeyError, IndexError):
        return None
    # one CTA only: Triton's inference of CTA-split layouts is not reproduced here
    return layout if layout.in_dims.get(BLOCK, 1) == 1 else None


def _printed(layout: Optional[LinearLayout], shape: tuple, known: tuple) -> Optional[str]:
    """A text for ``layout``: the first of ``known`` encodings that is the same layout (so the
    assignment Triton printed is reproduced word for word), else a ``#ttg.linear``."""
    if layout is None:
        return None
    for text in known:
        if text and _layout(text, shape) == layout:
            return text
    try:
        text = linear_attribute(layout)
    except LayoutError:
        return None
    return text if text.startswith("#ttg.linear<") else None


def _reshape_to(shape):
    return lambda layout: reshape_layout(layout, shape)


def _apply(kind: str, inverse: bool, encoding: str, shape_in: tuple, shape_out: tuple, known: tuple) -> Optional[str]:
    """``kind``'s layout map (or its inverse) applied to ``encoding`` of a tensor of
    ``shape_in``, printed for ``shape_out`` (None where the map does not apply)."""
    layout = _layout(encoding, shape_in)
    if layout is None:
        return None
    forward = {"reshape": _reshape_to(shape_out), "join": join_layout, "split": split_layout}
    backward = {"reshape": _reshape_to(shape_out), "join": split_layout, "split": join_layout}
    if kind not in forward:
        raise ValueError(f"not a shape op: {kind}")
    return _printed((backward if inverse else forward)[kind](layout), shape_out, known)


@lru_cache(maxsize=4096)
def shape_op_result(kind: str, operand: str, operand_shape: tuple, result_shape: tuple,
                    known: tuple = ()) -> Optional[str]:
    """The result encoding of ``kind`` (``reshape``, ``join``, ``split``) on an operand in
    ``operand`` (None: the op cannot take that operand layout)."""
    return _apply(kind, False, operand, operand_shape, result_shape, known)


@lru_cache(maxsize=4096)
def shape_op_operand(kind: str, result: str, operand_shape: tuple, result_shape: tuple,
                     known: tuple = ()) -> Optional[str]:
    """The operand encoding under which ``kind`` gives ``result`` (the inverse of
    :func:`shape_op_result`), or None where there is none."""
    return _apply(kind, True, result, result_shape, operand_shape, known)


def same_layout(a: str, b: str, shape: tuple) -> bool:
    """Whether two encoding texts lay out a tensor of ``shape`` the same way."""
    first = _layout(a, shape)
    return first is not None and first == _layout(b, shape)
