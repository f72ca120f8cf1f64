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
    """Round four's moves, [(translation, start, end, encoding, shape, (kind, why, ...))]:

    * ``assigned``: the value of a variable assigned once (``x = ...``, then only ``x += ...``)
      every read of which ``trial`` converts to one layout, converted there instead;
    * ``vector``: the index vectors of such a 2-D tile (one assigned once, or in each of its
      blocks), converted to the slices of that layout, so the tile builds in it;
    * ``hoisted`` (with the loop's line and indent): a converted read of a variable the loops
      around it do not change, or of an offset vector in an expression a loop converts, converted
      once above the outermost such loop."""
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
        handled = set()        # names converted where assigned, or through their index vectors
        for name, assignments in plain.items():
            if len(assignments) != 1 or name in other or name in parameters or not reads.get(name):
                continue
            found = [converted.get(read) for read in reads[name]]
            if None in found or len({(encoding, shape) for encoding, shape, _ in found}) != 1:
                continue
            encoding, shape, why = found[0]
            value = assignments[0].value
            expanded = _expanded_vectors(value, len(shape)) if len(shape) == 2 else []
            handled.add(name)
            if expanded:        # a tile built from index vectors: they are converted instead
                moves += _vector_moves(translation, assignments[0], expanded, encoding, shape, why)
                continue
            moves.append((translation, text.start(value), text.end(value), encoding, shape, ("assigned", why)))
        moves += _tiles_in_blocks(translation, converted, handled, plain)
        moves += _hoisted(translation, converted, handled)
        moves += _offsets_in_loops(translation, converted, plain)
    return moves


def _offsets_in_loops(translation, converted, plain) -> list:
    """A 1-D expression a loop converts (``A + o_A + j`` to a store's layout), built from offset
    vectors the loop does not change (names assigned from a ``tl.arange``): each such vector
    converted once above the loop instead, the expression then built in that layout."""
    text = translation.source
    offsets = {name for name, assignments in plain.items() if len(assignments) == 1 and any(
        isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "arange" for call in ast.walk(assignments[0].value))}
    loops = [node for node in ast.walk(text.tree) if isinstance(node, (ast.For, ast.While))]
    moves = []
    for node in ast.walk(text.tree):
        if not isinstance(node, (ast.BinOp, ast.Compare)) or not hasattr(node, "lineno"):
            continue
        where = (text.start(node), text.end(node))
        if where not in converted or len(converted[where][1]) != 1:
            continue
        around = [loop for loop in loops if text.start(loop) < where[0] and where[1] <= text.end(loop)]
        if not around:
            continue
        encoding, shape, why = converted[where]
        for name in (n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in offsets):
            if all(name.id not in _assigned_in(loop) for loop in around):
                loop = min(around, key=text.start)
                moves.append((translation, text.start(name), text.end(name), encoding, shape,
                              ("hoisted", why, text.start(loop)[0], text.start(loop)[1])))
    return moves


def _tiles_in_blocks(translation, converted, handled, plain) -> list:
    """The vector moves (:func:`_vector_moves`) of a 2-D variable assigned more than once, each
    assignment on its own: where, in one block of statements (a loop's body), ``x = <tile of index
    vectors>`` is followed by reads of ``x`` each converted to one layout, up to the block's end or
    the next assignment of ``x``."""
    text = translation.source
    moves = []
    blocks = [node.body for node in ast.walk(text.tree) if isinstance(node, (ast.For, ast.While, ast.If))]
    for body in blocks:
        for index, statement in enumerate(body):
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and
                    isinstance(statement.targets[0], ast.Name)):
                continue
            name = statement.targets[0].id
            if name in handled or len(plain.get(name, [])) < 2:
                continue
            later = []
            for following in body[index + 1:]:
                stores = [n for n in ast.walk(following) if isinstance(n, ast.Name) and n.id == name
                          and isinstance(n.ctx, ast.Store)]
                later += [n for n in ast.walk(following) if isinstance(n, ast.Name) and n.id == name
                          and isinstance(n.ctx, ast.Load)]
                if stores:
                    break
            found = [converted.get((text.start(n), text.end(n))) for n in later]
            if not found or None in found or len({(e, s) for e, s, _ in found}) != 1 or len(found[0][1]) != 2:
                continue
            expanded = _expanded_vectors(statement.value, 2)
            if expanded:
                encoding, shape, why = found[0]
                moves += _vector_moves(translation, statement, expanded, encoding, shape, why)
    return moves


def _expanded_vectors(value, rank: int) -> list:
    """The ``(name node, axis)`` of each 1-D variable ``value`` expands (``o_q[:, None]``: axis 1),
    where every variable it reads is read so; else []."""
    from .index_vectors import _expanded_axis
    found, inside = [], set()
    for node in ast.walk(value):
        axis = _expanded_axis(node, rank)
        if axis is not None and isinstance(node.value, ast.Name):
            found.append((node.value, axis))
            inside.add(id(node.value))
    names = [n for n in ast.walk(value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return found if found and all(id(n) in inside for n in names) else []


def _vector_moves(translation, assignment, expanded, encoding, shape, why) -> list:
    """A 2-D tile of ``encoding`` built from index vectors (``m_s = (o_q[:, None] >= o_k[None, :]) &
    ...``, read only in that layout): each vector converted to the slice of ``encoding`` it
    expands into, above the loops that do not change it, so that the tile builds in ``encoding``
    (as Triton's compile recomputes the index arithmetic in its consumer's layout)."""
    text = translation.source
    loops = [node for node in ast.walk(text.tree) if isinstance(node, (ast.For, ast.While))
             and text.start(node) < text.start(assignment) and text.end(assignment) <= text.end(node)]
    moves = []
    for node, axis in expanded:
        slice_encoding = f"#ttg.slice<{{dim = {axis}, parent = {encoding}}}>"
        vector = tuple(d for i, d in enumerate(shape) if i != axis)
        invariant = [loop for loop in loops if node.id not in _assigned_in(loop)]
        if loops and len(invariant) == len(loops):
            loop = min(invariant, key=text.start)
            kind = ("hoisted", why, text.start(loop)[0], text.start(loop)[1])
        else:
            kind = ("vector", why)
        moves.append((translation, text.start(node), text.end(node), slice_encoding, vector, kind))
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


def _elements(shape) -> int:
    count = 1
    for size in shape:
        count *= size
    return count


def in_loops(translations, placement, trial, span_of) -> int:
    """The elements ``trial``'s conversions in a loop's body move (each runs every iteration): a
    128x32 mask converted costs 4,096, the 32 offsets it is built from 32."""
    loops = []
    for translation in translations:
        text = translation.source
        loops += [(translation, text.start(node), text.end(node)) for node in ast.walk(text.tree)
                  if isinstance(node, (ast.For, ast.While))]
    count = 0
    for conversion in trial.conversions:
        span = span_of(placement, conversion.span)
        if span is not None and any(t is span[0] and start <= span[1] and span[2] <= end for t, start, end in loops):
            count += _elements(conversion.shape)
    return count


def moved(trial) -> int:
    """The elements all of ``trial``'s conversions move."""
    return sum(_elements(conversion.shape) for conversion in trial.conversions)


def write_move(t, namer, result, start, end, encoding, shape, move, hoisted, assigned_name) -> None:
    """Write one of round four's moves (``move``: its kind and why) into ``t``'s final edits, its
    layout named by ``namer``; the conversion noted in ``result``."""
    variable = t.source.lines[start[0] - t.source.first_line][start[1]:end[1]]
    if move[0] == "hoisted":
        name = namer.name(encoding, shape, f"{variable}_converted", t, f"{move[1]}; `{variable}` converted once, "
                          "above the loop that reads it")
        hoist_read(t, t.final_edits, start, end, move, name, hoisted)
        result.conversions.append((start[0], "a variable the loop does not change, converted above it"))
        return
    if move[0] == "vector":
        name = namer.name(encoding, shape, f"{variable}_converted", t, f"{move[1]}; the index vector "
                          f"`{variable}` converted so that the tile it builds is in that layout")
        t.final_edits.wrap(start, end, "gl.convert_layout(", f", {name})")
        result.conversions.append((start[0], "an index vector in the layout of the tile it builds"))
        return
    variable = assigned_name(t, start)
    hint = next((f"{a}_layout" for a in ("load", "store", "atomic") if move[1].startswith(f"the {a}'s")),
                f"{variable}_converted" if variable else "converted")
    name = namer.name(encoding, shape, hint, t, f"{move[1]}; `{variable}` converted where it is assigned, once, "
                      "not at each read")
    t.final_edits.wrap(start, end, "gl.convert_layout(", f", {name})")
    result.conversions.append((start[0], "a variable converted where it is assigned"))


def hoist_read(translation, edits, start, end, why, layout, hoisted, suffix="converted",
               note="once, above the loop that reads it") -> None:
    """The read of a variable at ``start`` replaced by its conversion to ``layout`` made once above
    the loop at ``why[2]`` (indent ``why[3]``), as ``<variable>_<suffix>`` (one for each variable,
    loop and layout: ``hoisted`` remembers them)."""
    variable = translation.source.lines[start[0] - translation.source.first_line][start[1]:end[1]]
    key = (id(edits), variable, why[2], layout)
    if key not in hoisted:
        taken = {n.id for n in ast.walk(translation.source.tree) if hasattr(n, "id")}
        name, n = f"{variable}_{suffix}", 2
        while name in taken or name in {v for k, v in hoisted.items() if k[0] == id(edits)}:
            name, n = f"{variable}_{suffix}_{n}", n + 1
        hoisted[key] = name
        edits.insert(why[2], 0, f"{' ' * why[3]}{name} = gl.convert_layout({variable}, {layout})  # {note}\n")
    edits.replace_span(start, end, hoisted[key])


def invariant_loop(translation, start, end):
    """(line, indent) of the outermost loop around the variable read at ``start``..``end`` that
    does not assign it (nor do the loops inside it), else None (not a variable, or no such loop)."""
    text = translation.source
    node = next((n for n in ast.walk(text.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                 and text.start(n) == start and text.end(n) == end), None)
    if node is None:
        return None
    around = [loop for loop in ast.walk(text.tree) if isinstance(loop, (ast.For, ast.While))
              and text.start(loop) < start and end <= text.end(loop)]
    if not around or any(node.id in _assigned_in(loop) for loop in around):
        return None
    return text.start(min(around, key=text.start))
