"""Names converted where they are assigned, not at each read.

Where every read of a variable converts it to one layout, converting the value once where the
variable is assigned serves them all; in a loop that advances the variable (``p_k += H * K``),
the conversion then happens once before the loop instead of in every iteration, as Triton's
compile carries the pointers through the loop in the load's layout::

    p_k = k + (i_t * BT + i_j * BC) * H * K + o_k
    for j in range(...):
        b_k = gl.load(gl.convert_layout(p_k, LOAD_LAYOUT), ...)     # each iteration: through shared memory
        p_k += H * K
            ->
    p_k = gl.convert_layout(k + (i_t * BT + i_j * BC) * H * K + o_k, LOAD_LAYOUT)   # once
    for j in range(...):
        b_k = gl.load(p_k, ...)
        p_k += H * K

And a variable the loop reads but does not assign, converted in the loop (its other reads need
other layouts), is converted once before the loop (``m_A_in_store = gl.convert_layout(m_A, L)``
above the ``for``, the read inside it replaced).

:func:`assigned_conversions` finds both (the port's fourth round, kept where fewer conversions
run in loops).
"""

from __future__ import annotations

import ast


def assigned_conversions(translations, placement, trial, span_of) -> list:
    """[(translation, start, end, encoding, shape, ("assigned", why))]: the value of each variable
    assigned once (``x = ...``, then only ``x += ...``) every read of which ``trial`` converts
    to one layout, to convert there instead."""
    moves = []
    for translation in translations:
        text = translation.source
        converted = {}        # position of a converted read -> (encoding, shape, why)
        for conversion in trial.conversions:
            span = span_of(placement, conversion.span)
            if span is not None and span[0] is translation:
                converted[(span[1], span[2])] = (conversion.encoding, conversion.shape, conversion.why)
        reads, plain, other = {}, {}, set()
        for node in ast.walk(text.tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                reads.setdefault(node.id, []).append((text.start(node), text.end(node)))
            elif isinstance(node, ast.Assign):
                targets = node.targets
                if len(targets) == 1 and isinstance(targets[0], ast.Name):
                    plain.setdefault(targets[0].id, []).append(node)
                else:
                    other.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.AnnAssign, ast.For, ast.NamedExpr)):     # assigned some other way
                other.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
        parameters = {a.arg for a in text.tree.args.args}
        for name, assignments in plain.items():
            if len(assignments) != 1 or name in other or name in parameters or not reads.get(name):
                continue
            found = [converted.get(read) for read in reads[name]]
            if None in found or len({(encoding, shape) for encoding, shape, _ in found}) != 1:
                continue
            encoding, shape, why = found[0]
            value = assignments[0].value
            moves.append((translation, text.start(value), text.end(value), encoding, shape, ("assigned", why)))
        assigned_here = {name for name, assignments in plain.items()
                         if any(m[0] is translation and m[1] == text.start(assignments[0].value) for m in moves)}
        moves += _hoisted(translation, converted, assigned_here)
    return moves


def _hoisted(translation, converted, assigned_here) -> list:
    """The converted reads of variables a loop does not assign, hoisted above the innermost such
    loop: [(translation, start, end, encoding, shape, ("hoisted", why, line of the loop, indent))]."""
    text = translation.source
    moves = []
    loops = [node for node in ast.walk(text.tree) if isinstance(node, (ast.For, ast.While))]
    for node in ast.walk(text.tree):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
            continue
        where = (text.start(node), text.end(node))
        if where not in converted or node.id in assigned_here:
            continue
        around = [loop for loop in loops if text.start(loop) < where[0] and where[1] <= text.end(loop)]
        invariant = [loop for loop in around if node.id not in _assigned_in(loop)]
        if not invariant or len(invariant) != len(around):
            continue        # assigned in an enclosing loop: its value changes there
        loop = max(invariant, key=text.start)        # the innermost
        encoding, shape, why = converted[where]
        moves.append((translation, where[0], where[1], encoding, shape,
                      ("hoisted", why, text.start(loop)[0], text.start(loop)[1])))
    return moves


def _assigned_in(loop) -> set:
    names = set()
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def in_loops(translations, placement, trial, span_of) -> int:
    """How many of ``trial``'s conversions stand in a loop's body (each runs every iteration)."""
    loops = []
    for translation in translations:
        text = translation.source
        loops += [(translation, text.start(node), text.end(node)) for node in ast.walk(text.tree)
                  if isinstance(node, (ast.For, ast.While))]
    count = 0
    for conversion in trial.conversions:
        span = span_of(placement, conversion.span)
        if span is not None and any(t is span[0] and start <= span[1] and span[2] <= end for t, start, end in loops):
            count += 1
    return count
