"""The law of the ``ModuleLines`` walk (``passes/ir/module_lines.py``), checked from the printed
text and the snapshot alone, without the walk's own reasoning:

* every op has its own first line, whose op (after its results, plain or quoted) is the op's name;
* every op with a region has its own last line: a ``}`` at the indentation of its first line;
* no line is given to two ops;
* an op without a line is one MLIR leaves out: the ``scf.yield`` of an ``scf.if`` without results
  or of an ``scf.for`` without iteration arguments; or the partitions op of a
  ``ttg.warp_specialize``, printed as its region labels;
* every line no op has prints no op: blank, a location alias, a block label, ``} else {`` /
  ``} do {``, a ``ttg.warp_specialize``'s region label (``default {``,
  ``partition0(...) num_warps(4) {``) or the ``}`` that ends one of its regions before the next.

Used by the property test over random modules and by the Gluon corpus test."""

from __future__ import annotations

import re

from linear_layouts.passes.ir.module_lines import WARP_PARTITIONS, ModuleLines

_REGION_LABEL = re.compile(r"^(default \{|partition\d+\(.*\) num_warps\(\d+\) \{)$")


def names(line: str, op_name: str) -> bool:
    """Whether the line prints ``op_name`` as its op: after its results, plain or quoted."""
    printed = "module" if op_name == "builtin.module" else op_name
    return re.match(r'\s*(%[^=]*? = )?"?' + re.escape(printed) + r'(?![\w.$])', line) is not None


def left_out_by_mlir(op) -> bool:
    """MLIR's rule: ``scf.if`` without results and ``scf.for`` without iteration arguments print
    their blocks without the ``scf.yield`` at their end."""
    parent = op.parent_op
    return (op.name == "scf.yield" and parent is not None and not parent.results
            and parent.name in ("scf.if", "scf.for"))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def check_every_op_has_its_own_lines(module, text: str) -> ModuleLines:
    """Walk ``text`` (a print of ``module``) and assert the law above; the walk."""
    lines = ModuleLines(module, text)
    claimed: list[int] = []
    for op in module.walk():
        if left_out_by_mlir(op) or op.name == WARP_PARTITIONS:
            assert id(op) not in lines.of, f"{op.name} has no line of its own but was given one"
            continue
        placed = lines.of[id(op)]
        header = lines.lines[placed.header]
        assert names(header, op.name), (op.name, header)
        claimed.append(placed.header)
        if any(region.blocks for region in op.regions):
            closer = lines.lines[placed.closer]
            assert closer.strip().startswith("}") and not closer.strip().endswith("{"), (op.name, closer)
            assert _indent(closer) == _indent(header), (op.name, header, closer)
            claimed.append(placed.closer)
    assert len(claimed) == len(set(claimed)), "two ops were given one line"
    claimed_set = set(claimed)
    for index, line in enumerate(lines.lines):
        if index in claimed_set:
            continue
        stripped = line.strip()
        following = next((other.strip() for other in lines.lines[index + 1:] if other.strip()), "")
        assert (not stripped or stripped.startswith(("#loc", "^bb")) or stripped in ("} else {", "} do {")
                or _REGION_LABEL.match(stripped) or (stripped == "}" and _REGION_LABEL.match(following))), \
            f"line {lines.line_number(index)} ({stripped[:80]}) was given to no op"
    return lines
