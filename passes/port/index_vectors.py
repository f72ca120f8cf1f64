"""Index vectors converted in place of what they build.

Triton's compile computes index arithmetic afresh in each layout it is needed in; a Gluon
expression has one layout, so where two layouts meet the port converts.  Converting the 1-D
vector of offsets an expression is built from costs less than converting what it builds (a tile
of 64-bit pointers, a mask), and one conversion of the offsets serves the pointers and the mask
alike::

    gl.convert_layout(c_ptr + stride_cm * offs_cm[:, None], L)      # 128x1 pointers, and again for the mask
    c_ptr + stride_cm * gl.convert_layout(offs_cm, SLICE_OF_L)[:, None]   # 128 i32, once

:func:`index_conversions` finds those of pointer tiles a load or store converts (the port's second
round), :func:`index_vector_conversions` those of 1-D accesses and of operands two layouts meet
on (its third); the port keeps each round where it builds and converts less.
"""

from __future__ import annotations

import ast

from .gluon_build import OPERANDS_MEET


_ACCESS_REASONS = ("the load's", "the store's", "the atomic's")


def pointer_tiles(trial) -> int:
    """Conversions of pointer tensors of rank 2 or more (each moves a whole tile of 64-bit pointers)."""
    return sum(1 for c in trial.conversions if c.why.startswith(_ACCESS_REASONS) and len(c.shape) >= 2)


def index_conversions(translations, placement, trial, span_of) -> list:
    """For each pointer tile a load or store converts: the index vectors its expression expands
    (``offs[:, None]``, ``offs[None, :]``), each with the slice of the access's layout it must
    have for the expression to build in that layout: [(translation, start, end, encoding, shape)]."""
    moves = []
    tiles = [c for c in trial.conversions if c.why.startswith(_ACCESS_REASONS) and len(c.shape) >= 2]
    for conversion, translation, start, end in _in_source(tiles, placement, span_of):
        text = translation.source
        expression = next((node for node in ast.walk(text.tree) if isinstance(node, ast.expr)
                           and text.start(node) == start and text.end(node) == end), None)
        if expression is None:
            continue
        found = []
        for node in ast.walk(expression):
            axis = _expanded_axis(node, len(conversion.shape))
            if axis is None:
                continue
            shape = tuple(d for i, d in enumerate(conversion.shape) if i != axis)
            found.append((translation, text.start(node.value), text.end(node.value),
                          f"#ttg.slice<{{dim = {axis}, parent = {conversion.encoding}}}>", shape))
        moves += found
    unique = {}
    for move in moves:
        unique.setdefault((id(move[0]), move[1], move[2]), move)
    return list(unique.values())


def index_vector_conversions(translations, placement, trial, span_of) -> list:
    """The offset vectors (names the function assigns from a ``tl.arange``) to convert in place of
    what they build: [(translation, start, end, encoding, shape, access or None)].

    * A 1-D pointer or mask converted to a load's or store's layout: each offset vector in its
      expression, in the access's layout.  ``FINAL_DW + cols`` and ``cols < N`` then build in
      the store's layout from one conversion of ``cols``, where each was converted before.
    * A 2-D operand converted because the operands of one op meet in two layouts
      (``c_ptr + stride_cm * offs_cm[:, None]`` beside ``offs_cn[None, :]``): each offset vector
      it expands (``offs_cm[:, None]``), in the slice of the layout the operand goes to; the
      pointers and the mask ``offs_cm[:, None] < M`` then build from one conversion of 128 i32
      where each converted a 128x1 tile (of i64 pointers, of i1)."""
    moves = {}
    accesses = {c.encoding: c.why.split("'")[0].split()[-1] for c in trial.conversions     # encoding -> load / store
                if c.why.startswith(_ACCESS_REASONS) and len(c.shape) == 1}
    for conversion, translation, start, end in _in_source(trial.conversions, placement, span_of):
        one_d = conversion.encoding in accesses and len(conversion.shape) == 1     # the mask's too
        meeting = conversion.why == OPERANDS_MEET and len(conversion.shape) == 2
        if not (one_d or meeting):
            continue
        text = translation.source
        offsets = {node.targets[0].id for node in ast.walk(text.tree)
                   if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                   and any(isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and
                           call.func.attr == "arange" for call in ast.walk(node.value))}
        for node in ast.walk(text.tree):
            if not hasattr(node, "lineno") or not (start <= text.start(node) and text.end(node) <= end):
                continue
            if one_d and isinstance(node, ast.Name) and node.id in offsets and isinstance(node.ctx, ast.Load):
                moves.setdefault((id(translation), text.start(node)),
                                 (translation, text.start(node), text.end(node), conversion.encoding, conversion.shape,
                                  accesses[conversion.encoding]))
            axis = _expanded_axis(node, 2) if meeting else None
            if axis is not None and isinstance(node.value, ast.Name) and node.value.id in offsets:
                shape = tuple(d for i, d in enumerate(conversion.shape) if i != axis)
                moves.setdefault((id(translation), text.start(node.value)),
                                 (translation, text.start(node.value), text.end(node.value),
                                  f"#ttg.slice<{{dim = {axis}, parent = {conversion.encoding}}}>", shape, None))
    return list(moves.values())


def _in_source(conversions, placement, span_of):
    """Each of ``conversions`` that has a place in the source: (conversion, translation, start, end)."""
    for conversion in conversions:
        span = span_of(placement, conversion.span)
        if span is not None:
            yield (conversion, *span)


def _expanded_axis(node, rank: int):
    """The axis an index of ``rank`` entries, one ``None`` and the rest ``:``, adds (``x[:, None]``:
    1, ``x[None, :]``: 0), else None."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple) or len(node.slice.elts) != rank:
        return None
    nones = [i for i, e in enumerate(node.slice.elts) if isinstance(e, ast.Constant) and e.value is None]
    full = [e for e in node.slice.elts if isinstance(e, ast.Slice) and e.lower is None and e.upper is None
            and e.step is None]
    return nones[0] if len(nones) == 1 and len(full) == rank - 1 else None
