"""Edits of a source text at (line, column) positions, applied at once, with a map back.

The port writes the user's own kernel text with small edits (``tl`` -> ``gl``, a layout keyword,
``gl.convert_layout(`` ... ``, L)`` around an operand), so that comments and formatting stay.
Edits are kept in the original's coordinates and applied together; where several insert text at
one position, closings go before openings, an inner wrap closes before an outer one and an outer
wrap opens before an inner one (of two wraps of the same span, the one made first is the outer)::

    x + y          wrap (1, 4)-(1, 5) in "cv(" ... ", L)"     ->  x + cv(y, L)

:meth:`EditedText.original_position` maps a position of the edited text back to the original
(for the Gluon front end's locations, which point into the edited text).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EditedText:
    lines: list                      # the original lines, without line ends
    first_line: int = 1              # the file line of lines[0]
    _replacements: list = field(default_factory=list)   # (line, start, end, text)
    _inserts: list = field(default_factory=list)        # (line, col, order, text)

    def copy(self) -> "EditedText":
        return EditedText(list(self.lines), self.first_line, list(self._replacements), list(self._inserts))

    def replace(self, line: int, start: int, end: int, text: str) -> None:
        """Replace columns [start, end) of file line ``line`` (0-based columns)."""
        for other in self._replacements:
            if other[0] == line and other[1] < end and start < other[2]:
                if (other[1], other[2]) == (start, end):
                    self._replacements.remove(other)
                    break
                raise ValueError(f"overlapping edits on line {line}")
        self._replacements.append((line, start, end, text))

    def wrap(self, start: tuple, end: tuple, before: str, after: str) -> None:
        """Put ``before`` at ``start`` and ``after`` at ``end`` ((line, col) each)."""
        extent = (end[0] - start[0]) * 100000 + (end[1] - start[1])
        sequence = len(self._inserts)    # of two wraps of one span, the first made is the outer
        self._inserts.append((start[0], start[1], (1, -extent, sequence), before))
        self._inserts.append((end[0], end[1], (0, extent, -sequence), after))

    def insert(self, line: int, col: int, text: str) -> None:
        self._inserts.append((line, col, (0, 0, 0), text))

    def text(self) -> str:
        return "\n".join(self._edited_lines()[0]) + "\n"

    def span_text(self, start: tuple, end: tuple) -> str:
        """The edited text of the original span [start, end) ((line, col) each): the edits inside
        it, and the wraps that open and close within it (a wrap of the whole span included)."""
        def inside(line, col, order):
            if (start[0], start[1]) < (line, col) < (end[0], end[1]):
                return True
            opening, extent = order[0] == 1, abs(order[1])
            if (line, col) == start and opening:       # a wrap that opens here and closes by the end
                return extent == 0 or (start[0] == end[0] and col + extent <= end[1])
            if (line, col) == end and not opening and extent:   # a wrap that closes here, opened at or after start
                return start[0] == end[0] and col - extent >= start[1]
            return False
        trimmed = EditedText(self.lines, self.first_line,
                             [r for r in self._replacements if start <= (r[0], r[1]) and (r[0], r[2]) <= end],
                             [i for i in self._inserts if inside(i[0], i[1], i[2])])
        lines, maps = trimmed._edited_lines()
        pieces = []
        for number in range(start[0], end[0] + 1):
            index = number - self.first_line
            text, breakpoints = lines[index], maps[index]

            def edited_col(col, at_end):
                found = 0
                for new_col, old_col in breakpoints:
                    if old_col < col or (old_col == col and at_end):
                        found = new_col + (col - old_col)
                    elif old_col == col and found == 0:
                        found = new_col
                return found
            first = edited_col(start[1], False) if number == start[0] else 0
            last = edited_col(end[1], True) if number == end[0] else len(text)
            pieces.append(text[first:last])
        return "\n".join(pieces)

    def replace_span(self, start: tuple, end: tuple, text: str) -> None:
        """Replace the original span [start, end) (over one or more lines) by ``text``, dropping
        every edit inside it; lines the span covered after its first are left empty."""
        self._replacements = [r for r in self._replacements
                              if not ((start[0], start[1]) <= (r[0], r[2]) and (r[0], r[1]) <= (end[0], end[1]))]
        self._inserts = [i for i in self._inserts if not (start <= (i[0], i[1]) <= end)]
        if start[0] == end[0]:
            self._replacements.append((start[0], start[1], end[1], text))
            return
        self._replacements.append((start[0], start[1], len(self.lines[start[0] - self.first_line]), text))
        for line in range(start[0] + 1, end[0]):
            self._replacements.append((line, 0, len(self.lines[line - self.first_line]), ""))
        self._replacements.append((end[0], 0, end[1], ""))

    def _edited_lines(self):
        out, maps = [], []
        for index, original in enumerate(self.lines):
            number = self.first_line + index
            events = [(s, 0, (), e, t) for (ln, s, e, t) in self._replacements if ln == number]
            events += [(c, 1, order, None, t) for (ln, c, order, t) in self._inserts if ln == number]
            # at one column: inserts (by their order) before a replacement that starts there
            events.sort(key=lambda ev: (ev[0], 0 if ev[1] == 1 else 1, ev[2]))
            pieces, breakpoints, cursor, length = [], [(0, 0)], 0, 0
            for col, kind, _, end, text in events:
                if col < cursor:
                    continue
                pieces.append(original[cursor:col])
                length += col - cursor
                pieces.append(text)
                length += len(text)
                cursor = end if kind == 0 else col
                breakpoints.append((length, cursor))
            pieces.append(original[cursor:])
            out.append("".join(pieces))
            maps.append(breakpoints)
        return out, maps

    def original_position(self, line: int, col: int) -> tuple:
        """(file line, 0-based column) of the original for a position of :meth:`text`."""
        _, maps = self._edited_lines()
        index = line - self.first_line
        if not 0 <= index < len(maps):
            return line, col
        best = (0, 0)
        for new_col, old_col in maps[index]:
            if new_col <= col:
                best = (new_col, old_col)
        return line, best[1] + (col - best[0])
