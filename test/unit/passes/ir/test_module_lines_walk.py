"""The walk of :class:`ModuleLines` (``passes/ir/module_lines.py``): every op of a printed module
gets its own lines, whatever the nesting; a terminator MLIR leaves out gets none; and where the
text does not line up, the message names the op and the line the user sees.

The property test prints random nested modules (``scf.for`` with and without iteration
arguments, ``scf.if`` with and without results and else regions, ``scf.while``, ``tt.reduce`` in
generic form) through Triton's parser and printer and walks MLIR's print of them."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from linear_layouts.passes.ir.module_lines import ModuleLines, TextMismatch
from linear_layouts.passes.ir.snapshot import parse_module
from support.module_lines_law import check_every_op_has_its_own_lines

BLOCKED = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>"
HEADER = (f"#blocked = {BLOCKED}\n"
          'module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 1 : i32, ttg.target = "cuda:90", '
          '"ttg.threads-per-warp" = 32 : i32} {\n')


# --------------------------------------------------------------------------- random modules

# A statement is a tuple: ("add",) and ("store",) are one-line ops (with and without a result),
# ("reduce",) a tt.reduce in generic form (a region of its own); the others hold blocks, each a
# list of statements:
#   ("for", carries, body)                  scf.for, with one iteration argument or none
#   ("if", results, has_else, then, else)   scf.if, with one result or none, else region or not
#   ("while", before, after)                scf.while carrying one i32
_LEAVES = st.sampled_from([("add",), ("store",), ("reduce",)])


def _nested(inner):
    block = st.lists(inner, max_size=3)
    return st.one_of(st.tuples(st.just("for"), st.booleans(), block),
                     st.tuples(st.just("if"), st.booleans(), st.booleans(), block, block),
                     st.tuples(st.just("while"), block, block))


STATEMENTS = st.recursive(_LEAVES, _nested, max_leaves=14)


class _Printer:
    """Module text for a list of statements; each block's last i32 value is what it yields."""

    def __init__(self):
        self.lines: list[str] = []
        self.count = 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"%{stem}{self.count}"

    def block(self, statements, value: str, depth: int) -> str:
        """Print ``statements``; the i32 value last defined (``value`` if none)."""
        pad = "  " * depth
        for statement in statements:
            kind = statement[0]
            if kind == "add":
                result = self.fresh("v")
                self.lines.append(f"{pad}{result} = arith.addi {value}, %c1 : i32")
                value = result
            elif kind == "store":
                self.lines.append(f"{pad}tt.store %p, {value} : !tt.ptr<i32>")
            elif kind == "reduce":
                result, a, b, s = self.fresh("r"), self.fresh("a"), self.fresh("b"), self.fresh("s")
                self.lines += [f'{pad}{result} = "tt.reduce"(%t) <{{axis = 0 : i32}}> ({{',
                               f"{pad}^bb0({a}: f32, {b}: f32):",
                               f"{pad}  {s} = arith.addf {a}, {b} : f32",
                               f"{pad}  tt.reduce.return {s} : f32",
                               f"{pad}}}) : (tensor<32xf32, #blocked>) -> f32"]
            elif kind == "for":
                _, carries, body = statement
                index = self.fresh("i")
                if carries:
                    result, carried = self.fresh("f"), self.fresh("acc")
                    self.lines.append(f"{pad}{result} = scf.for {index} = %c0 to %n step %c1 "
                                      f"iter_args({carried} = {value}) -> (i32) : i32 {{")
                    last = self.block(body, carried, depth + 1)
                    self.lines += [f"{pad}  scf.yield {last} : i32", f"{pad}}}"]
                    value = result
                else:
                    self.lines.append(f"{pad}scf.for {index} = %c0 to %n step %c1 : i32 {{")
                    self.block(body, value, depth + 1)
                    self.lines.append(f"{pad}}}")
            elif kind == "if":
                _, results, has_else, then, otherwise = statement
                if results:
                    result = self.fresh("y")
                    self.lines.append(f"{pad}{result} = scf.if %cond -> (i32) {{")
                    self.lines.append(f"{pad}  scf.yield {self.block(then, value, depth + 1)} : i32")
                    self.lines.append(f"{pad}}} else {{")
                    self.lines.append(f"{pad}  scf.yield {self.block(otherwise, value, depth + 1)} : i32")
                    self.lines.append(f"{pad}}}")
                    value = result
                else:
                    self.lines.append(f"{pad}scf.if %cond {{")
                    self.block(then, value, depth + 1)
                    if has_else:
                        self.lines.append(f"{pad}}} else {{")
                        self.block(otherwise, value, depth + 1)
                    self.lines.append(f"{pad}}}")
            elif kind == "while":
                _, before, after = statement
                result, w, u, c = self.fresh("w"), self.fresh("arg"), self.fresh("arg"), self.fresh("c")
                self.lines.append(f"{pad}{result} = scf.while ({w} = {value}) : (i32) -> i32 {{")
                last = self.block(before, w, depth + 1)
                self.lines += [f"{pad}  {c} = arith.cmpi slt, {last}, %n : i32",
                               f"{pad}  scf.condition({c}) {last} : i32",
                               f"{pad}}} do {{",
                               f"{pad}^bb0({u}: i32):"]
                self.lines += [f"{pad}  scf.yield {self.block(after, u, depth + 1)} : i32", f"{pad}}}"]
                value = result
        return value


def module_text(statements) -> str:
    printer = _Printer()
    printer.block(statements, "%n", 2)
    return (HEADER + "  tt.func public @f(%n: i32, %p: !tt.ptr<i32>, %cond: i1) {\n"
            "    %c0 = arith.constant 0 : i32\n    %c1 = arith.constant 1 : i32\n"
            "    %t = arith.constant dense<1.000000e+00> : tensor<32xf32, #blocked>\n"
            + "\n".join(printer.lines) + "\n    tt.return\n  }\n}\n")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STATEMENTS, min_size=1, max_size=4))
def test_every_op_of_a_random_nested_module_gets_its_own_lines(statements):
    module = parse_module(module_text(statements), "random.mlir")
    check_every_op_has_its_own_lines(module, module.print(debuginfo=True))
    check_every_op_has_its_own_lines(module, module.print())


# --------------------------------------------------------------------------- the cases that broke it

# scf.if without results, last in a loop that carries a value: the if's yield is left out and the
# next op line is the loop's own yield (Hopper's pipelined K loops)
IF_AT_THE_END_OF_A_CARRYING_LOOP = [("for", True, [("add",), ("if", False, False, [("store",)], [])])]


def test_an_if_without_results_ending_a_carrying_loop_leaves_the_loops_yield_to_the_loop():
    module = parse_module(module_text(IF_AT_THE_END_OF_A_CARRYING_LOOP), "loop.mlir")
    text = module.print()
    lines = ModuleLines(module, text)
    loop = next(op for op in module.walk() if op.name == "scf.for")
    branch = next(op for op in module.walk() if op.name == "scf.if")
    loop_yield = loop.regions[0].blocks[0].operations[-1]
    assert [lines.lines[lines.of[id(branch)].closer].strip(),
            lines.lines[lines.of[id(loop_yield)].header].strip(),
            lines.lines[lines.of[id(loop)].closer].strip()] == ["}", "scf.yield %1 : i32", "}"]
    assert id(branch.regions[0].blocks[0].operations[-1]) not in lines.of


def test_an_else_region_whose_only_op_is_left_out_ends_at_the_ifs_own_brace():
    module = parse_module(module_text([("if", False, True, [("store",)], [])]), "else.mlir")
    lines = ModuleLines(module, module.print())
    branch = next(op for op in module.walk() if op.name == "scf.if")
    placed = lines.of[id(branch)]
    assert [line.strip() for line in lines.lines[placed.header:placed.closer + 1]] == \
        ["scf.if %arg2 {", "tt.store %arg1, %arg0 : !tt.ptr<i32>", "} else {", "}"]


def test_a_text_that_does_not_line_up_names_the_op_and_the_line_the_user_sees():
    # the text has its alias definition (line 1): the line numbers count it
    text = module_text([("add",), ("add",)])
    module = parse_module(text, "m.mlir")
    edited = text.replace("%v2 = arith.addi %v1, %c1 : i32", "%v2 = arith.subi %v1, %c1 : i32")
    assert edited.split("\n")[7] == "    %v2 = arith.subi %v1, %c1 : i32"
    with pytest.raises(TextMismatch) as error:
        ModuleLines(module, edited)
    assert str(error.value) == ("cannot read arith.addi (m.mlir:8:11): line 8 (%v2 = arith.subi %v1, %c1 : i32) "
                                "prints another op")


def test_an_unclosed_region_names_the_op_and_its_line():
    text = module_text([("for", True, [("add",)])])
    module = parse_module(text, "m.mlir")
    edited = text.replace("      scf.yield %v4 : i32\n    }\n", "      scf.yield %v4 : i32\n")
    with pytest.raises(TextMismatch) as error:
        ModuleLines(module, edited)
    assert str(error.value) == ("cannot read scf.for (m.mlir:7:11): line 10 (tt.return) is not the end of the op "
                                "at line 7")


@pytest.mark.usefixtures("every_compile_counted")
@pytest.mark.parametrize("auto", [False, True], ids=["expert", "auto"])
def test_the_pipelined_tma_and_wgmma_loop_takes_the_advice_without_a_fallback(auto):
    pytest.importorskip("triton.experimental.gluon")
    import triton
    import linear_layouts
    from support import hopper_gluon_kernels as H
    with linear_layouts.enabled(apply_advice=True, resolve_auto_layouts=auto):
        triton.compile(H.source("pipelined_matmul", auto), target=H.target("pipelined_matmul"))
    assert linear_layouts.stats().fallbacks == []
