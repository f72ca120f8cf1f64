"""``tl.dot`` as the target's matrix instruction, with the layouts Triton chose for it.

Triton lowers ``tl.dot(a, b, acc)`` by target; the port writes the same in Gluon, as a small
``@gluon.jit`` helper beside the kernel (inlined by Gluon) called where ``tl.dot`` stood:

* sm_90 (``ttng.warp_group_dot`` in Triton's TTGIR): both operands stored to shared memory in
  Triton's NVMMA shared layouts, ``fence_async_shared``, ``warpgroup_mma`` and its wait, the
  accumulator in Triton's ``NVMMADistributedLayout`` (version 3); where Triton keeps ``a`` in
  registers (an attention's softmax), ``a`` in Triton's dot-operand layout and ``b`` through
  shared memory (``_dot_wgmma_registers``);
* sm_80, sm_120 and sm_90 shapes wgmma cannot take (``tt.dot`` on ``#ttg.nvidia_mma`` version 2):
  ``mma_v2`` on the operands converted to Triton's dot-operand layouts;
* gfx942 / gfx950 (``tt.dot`` on ``#ttg.amd_mfma``): ``mfma`` likewise;
* sm_100 (``ttng.tc_gen5_mma``): the operands in shared memory, the accumulator in tensor memory,
  ``tcgen05_mma``, a commit to an mbarrier and its wait, the result loaded back in the register
  layout Triton reads tensor memory with.

The layouts are named once at the top of the module (``DOT_<line>_...``).  The loads of a
pipelined loop (``num_stages``) are written by :mod:`.pipelining`, which may hand the helper its
operands already in shared memory (``_dot_wgmma_shared``, ``_dot_tcgen05_shared``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .layouts import NamedLayout, gluon_layout_expression, module_constants
from .original import expand_aliases
from .translation import PortError

_DOT_OPS = ("ttng.warp_group_dot", "tt.dot", "ttng.tc_gen5_mma")


@dataclass
class DotCall:
    """One ``tl.dot`` call as the port writes it: the helper kind and its layouts' names, in the
    helper's order (the operands' first)."""

    translation: object
    node: ast.Call
    kind: str                 # wgmma, wgmma_registers, mma_v2, mfma, tcgen05
    layouts: list
    encodings: list = field(default_factory=list)     # the layouts' MLIR text, in the same order


@dataclass
class DotPlan:
    imports: list = field(default_factory=list)
    helpers: str = ""
    layouts: list = field(default_factory=list)        # NamedLayout, defined at the module's top
    calls: list = field(default_factory=list)          # DotCall


# Each shared-memory MMA as one helper that reads its operands from shared memory (what a
# pipelined loop hands it from its rings, :mod:`.pipelining`), and one that stores its register
# operands there first and calls it.  Under 3.6 a shared descriptor's shape holds plain ints:
# each made a constexpr.
_WGMMA = '''
@gluon.jit
def _dot_wgmma_shared(a_smem, b_smem, acc, A_SHARED: gl.constexpr, B_SHARED: gl.constexpr, ACC: gl.constexpr):
    """acc + a @ b with Hopper's warpgroup MMA, both operands in shared memory."""
    if acc is None:
        acc = gl.zeros([gl.constexpr(a_smem.shape[0]), gl.constexpr(b_smem.shape[1])], gl.float32, ACC)
    fence_async_shared()
    acc = warpgroup_mma(a_smem, b_smem, gl.convert_layout(acc, ACC), is_async=True)
    done = warpgroup_mma_wait(num_outstanding=0, deps=[acc, a_smem, b_smem])
    return done[0]


@gluon.jit
def _dot_wgmma_shared_overlapped(a_smem, b_smem, acc, A_SHARED: gl.constexpr, B_SHARED: gl.constexpr,
                                 ACC: gl.constexpr):
    """acc + a @ b with Hopper's warpgroup MMA, left running: returns once the MMA before it has
    finished (its operands' buffers free again), as Triton's pipelined loop keeps one MMA in
    flight.  The result may be handed only to the next such call or to a wait for none."""
    fence_async_shared()
    acc = warpgroup_mma(a_smem, b_smem, gl.convert_layout(acc, ACC), is_async=True)
    done = warpgroup_mma_wait(num_outstanding=1, deps=[acc, a_smem, b_smem])
    return done[0]


@gluon.jit
def _dot_wgmma(a, b, acc, A_SHARED: gl.constexpr, B_SHARED: gl.constexpr, ACC: gl.constexpr):
    """acc + a @ b with Hopper's warpgroup MMA: both operands stored to shared memory first."""
    a_smem = gl.allocate_shared_memory(a.dtype, a.shape, A_SHARED, a)
    b_smem = gl.allocate_shared_memory(b.dtype, b.shape, B_SHARED, b)
    return _dot_wgmma_shared(a_smem, b_smem, acc, A_SHARED, B_SHARED, ACC)
'''

_WGMMA_REGISTERS = '''
@gluon.jit
def _dot_wgmma_registers_shared(a, b_smem, acc, A_OPERAND: gl.constexpr, B_SHARED: gl.constexpr, ACC: gl.constexpr):
    """acc + a @ b with Hopper's warpgroup MMA: a in registers, in Triton's dot-operand layout; b
    in shared memory."""
    if acc is None:
        acc = gl.zeros([gl.constexpr(a.shape[0]), gl.constexpr(b_smem.shape[1])], gl.float32, ACC)
    fence_async_shared()
    acc = warpgroup_mma(gl.convert_layout(a, A_OPERAND), b_smem, gl.convert_layout(acc, ACC), is_async=True)
    done = warpgroup_mma_wait(num_outstanding=0, deps=[acc, b_smem])
    return done[0]


@gluon.jit
def _dot_wgmma_registers(a, b, acc, A_OPERAND: gl.constexpr, B_SHARED: gl.constexpr, ACC: gl.constexpr):
    """acc + a @ b with Hopper's warpgroup MMA: a in registers, b stored to shared memory first."""
    b_smem = gl.allocate_shared_memory(b.dtype, b.shape, B_SHARED, b)
    return _dot_wgmma_registers_shared(a, b_smem, acc, A_OPERAND, B_SHARED, ACC)
'''

_REGISTER_OPERANDS = '''
@gluon.jit
def _dot_{name}(a, b, acc, A_OPERAND: gl.constexpr, B_OPERAND: gl.constexpr, ACC: gl.constexpr):
    """acc + a @ b with {what}: the operands in Triton's dot-operand layouts."""
    if acc is None:
        acc = gl.zeros([a.shape[0], b.shape[1]], gl.float32, ACC)
    return {name}(gl.convert_layout(a, A_OPERAND), gl.convert_layout(b, B_OPERAND), gl.convert_layout(acc, ACC))
'''
_MMA_V2 = _REGISTER_OPERANDS.format(name="mma_v2", what="mma.sync")
_MFMA = _REGISTER_OPERANDS.format(name="mfma", what="AMD's MFMA")

_TCGEN05 = '''
@gluon.jit
def _dot_tcgen05_shared(a_smem, b_smem, acc, A_SHARED: gl.constexpr, B_SHARED: gl.constexpr,
                        ACC_TMEM: gl.constexpr, ACC: gl.constexpr):
    """acc + a @ b with Blackwell's tcgen05: operands in shared memory, the accumulator in tensor memory."""
    if acc is None:
        acc = gl.zeros([gl.constexpr(a_smem.shape[0]), gl.constexpr(b_smem.shape[1])], gl.float32, ACC)
    acc_tmem = allocate_tensor_memory(gl.float32, [gl.constexpr(a_smem.shape[0]), gl.constexpr(b_smem.shape[1])],
                                      ACC_TMEM, gl.convert_layout(acc, ACC))
    done = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(done, count=1)
    fence_async_shared()
    tcgen05_mma(a_smem, b_smem, acc_tmem)
    tcgen05_commit(done)
    mbarrier.wait(done, 0)
    mbarrier.invalidate(done)
    return acc_tmem.load(ACC)


@gluon.jit
def _dot_tcgen05(a, b, acc, A_SHARED: gl.constexpr, B_SHARED: gl.constexpr, ACC_TMEM: gl.constexpr,
                 ACC: gl.constexpr):
    """acc + a @ b with Blackwell's tcgen05: both operands stored to shared memory first."""
    a_smem = gl.allocate_shared_memory(a.dtype, a.shape, A_SHARED, a)
    b_smem = gl.allocate_shared_memory(b.dtype, b.shape, B_SHARED, b)
    return _dot_tcgen05_shared(a_smem, b_smem, acc, A_SHARED, B_SHARED, ACC_TMEM, ACC)
'''


def _dot_ops(original, translation, call) -> list:
    """Triton's dot ops made by ``call`` (a tl.dot node): those whose position lies in its span."""
    text = translation.source
    (line, col), (end_line, end_col) = text.start(call), text.end(call)
    found = []
    for position, op in original.ops:
        if position is None:
            continue
        file, op_line, op_col = position
        if file != text.file or op.name not in _DOT_OPS:
            continue
        # columns as Triton counts them: from 1 past the def's column (3.8 on) or from 0 (3.6, 3.7)
        for base in (text.indent + 1, 0):
            c = op_col - base + text.indent
            if (line, col) <= (op_line, c) <= (end_line, end_col):
                found.append(op)
                break
    return found


def plan_dots(translations, original, launch) -> DotPlan:
    """Rewrite every ``tl.dot`` call of ``translations`` (their edits) into a helper call."""
    plan = DotPlan()
    aliases = original.aliases
    kinds = set()
    for translation in translations:
        for call in translation.dots:
            ops = _dot_ops(original, translation, call)
            line = translation.source.start(call)[0]
            if not ops:
                raise PortError(f"{translation.source.file}:{line}: no matrix op in Triton's compile for this tl.dot")
            op = ops[0]
            loads = [o for _, o in original.ops if o.name == "ttng.tmem_load" and len(o.shape) == 2]
            layouts = _dot_layouts(op, aliases, line, (expand_aliases(loads[0].encoding, aliases), loads[0].shape) if loads else None)
            kind = {"ttng.warp_group_dot": "wgmma", "ttng.tc_gen5_mma": "tcgen05"}.get(op.name)
            if kind == "wgmma" and "A_OPERAND" in layouts:
                kind = "wgmma_registers"
            if kind is None:
                kind = "mfma" if "amd_mfma" in op.encoding else "mma_v2"
            kinds.add(kind)
            names, encodings = [], []
            for role, (encoding, shape, why) in layouts.items():
                name = f"DOT_{line}_{role}"
                expression = gluon_layout_expression(encoding, shape)
                plan.layouts.append(NamedLayout(name, expression, why, encoding, tuple(shape or ())))
                names.append(name)
                encodings.append(encoding)
            _rewrite_call(translation, call, f"_dot_{kind}", names)
            plan.calls.append(DotCall(translation, call, kind, names, encodings))
    if not kinds:
        return plan
    plan.imports.append("")
    for kind in sorted(kinds | ({"wgmma"} if "wgmma_registers" in kinds else set())):
        plan.imports += {
            "wgmma_registers": [],
            "wgmma": ["from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, warpgroup_mma,",
                      "                                                          warpgroup_mma_wait)"],
            "mma_v2": ["from triton.experimental.gluon.language.nvidia.ampere import mma_v2"],
            "mfma": ["from triton.experimental.gluon.language.amd.cdna3 import mfma"],
            "tcgen05": ["from triton.experimental.gluon.language.nvidia.blackwell import (TensorMemoryLayout, "
                        "allocate_tensor_memory,", "    fence_async_shared, mbarrier, tcgen05_commit, tcgen05_mma)"],
        }[kind]
    helpers = "".join({"wgmma": _WGMMA, "wgmma_registers": _WGMMA_REGISTERS, "mma_v2": _MMA_V2, "mfma": _MFMA,
                       "tcgen05": _TCGEN05}[k] for k in sorted(kinds))
    plan.helpers = module_constants(plan.layouts) + "\n" + helpers.lstrip("\n")
    return plan


def _dot_layouts(op, aliases, line, tmem_register_layout=None) -> dict:
    """role -> (encoding, shape, why) of one dot op of Triton's."""
    text = expand_aliases(op.text, aliases)
    acc = (op.encoding, op.shape, f"Triton's accumulator layout for the tl.dot at line {line}")
    if op.name in ("ttng.warp_group_dot", "ttng.tc_gen5_mma"):
        shared = re.findall(r"!ttg\.memdesc<([0-9x]+)x\w+, (#ttg\.nvmma_shared<\{[^}]*\}>)", text)
        in_registers = re.match(r".*?: tensor<([0-9x]+)x\w+, (#ttg\.dot_op<\{opIdx = 0, .*?kWidth = \d+\}>)> \* ", text)
        if op.name == "ttng.warp_group_dot" and len(shared) == 1 and in_registers:
            shape = tuple(int(d) for d in in_registers.group(1).split("x"))
            return {"A_OPERAND": (in_registers.group(2), shape, f"Triton's layout of the tl.dot's a, in registers (line {line})"),
                    "B_SHARED": (shared[0][1], None, f"Triton's shared layout of the tl.dot's b (line {line})"),
                    "ACC": acc}
        if len(shared) < 2:
            raise PortError(f"line {line}: Triton's {'wgmma' if op.name == 'ttng.warp_group_dot' else 'tcgen05'} "
                            "keeps an operand in registers or tensor memory, which the port does not write yet")
        result = {"A_SHARED": (shared[0][1], None, f"Triton's shared layout of the tl.dot's a (line {line})"),
                  "B_SHARED": (shared[1][1], None, f"Triton's shared layout of the tl.dot's b (line {line})")}
        if op.name == "ttng.tc_gen5_mma":
            tmem = re.search(r"(#ttng\.tensor_memory_encoding<[^>]*>)", text)
            if not tmem:
                raise PortError(f"line {line}: no tensor-memory layout in Triton's tcgen05 op")
            result["ACC_TMEM"] = (tmem.group(1), None, f"Triton's tensor-memory layout of the accumulator (line {line})")
            if tmem_register_layout is None:
                raise PortError(f"line {line}: Triton's compile reads no accumulator back from tensor memory")
            acc = (*tmem_register_layout, f"the registers Triton reads the accumulator into (line {line})")
        result["ACC"] = acc
        return result
    operands = re.findall(r"tensor<([0-9x]+)x\w+, (#ttg\.dot_op<\{opIdx = (\d).*?kWidth = \d+\}>)>", text)
    by_index = {index: (encoding, tuple(int(d) for d in shape.split("x"))) for shape, encoding, index in operands}
    if "0" not in by_index or "1" not in by_index:
        raise PortError(f"line {line}: Triton's tl.dot here is not a matrix instruction the port writes (FMA)")
    return {"A_OPERAND": (*by_index["0"], f"Triton's layout of the tl.dot's a (line {line})"),
            "B_OPERAND": (*by_index["1"], f"Triton's layout of the tl.dot's b (line {line})"),
            "ACC": acc}


def _rewrite_call(translation, call: ast.Call, helper: str, layout_names: list) -> None:
    """``tl.dot(a, b[, acc])`` -> ``helper(a, b, acc_or_None, LAYOUTS...)``."""
    text = translation.source
    edits = translation.edits
    start, end = text.start(call.func), text.end(call.func)
    edits.replace(start[0], start[1], end[1], helper)
    arguments = list(call.args)
    keywords = {kw.arg: kw for kw in call.keywords}
    unknown = set(keywords) - {"acc", "input_precision", "allow_tf32", "out_dtype", "max_num_imprecise_acc"}
    if unknown:
        raise PortError(f"{text.file}:{start[0]}: tl.dot's {sorted(unknown)[0]}= is not ported")
    if "out_dtype" in keywords and "float32" not in ast.unparse(keywords["out_dtype"].value):
        raise PortError(f"{text.file}:{start[0]}: tl.dot with out_dtype other than float32 is not ported")
    if len(arguments) > 3:
        raise PortError(f"{text.file}:{start[0]}: tl.dot with positional precision arguments is not ported")
    # drop keywords the helper does not take; an acc= keyword stays as the third argument
    for name, keyword in keywords.items():
        kw_start = (text.first_line + keyword.lineno - 1, keyword.col_offset + text.indent)
        kw_end = text.end(keyword.value)
        if kw_start[0] != kw_end[0]:
            raise PortError(f"{text.file}:{start[0]}: tl.dot keyword over several lines")
        if name == "acc" and len(arguments) == 2:
            edits.replace(kw_start[0], kw_start[1], kw_start[1] + len("acc="), "")
            arguments.append(keyword.value)
        else:
            line_text = text.lines[kw_start[0] - text.first_line]
            before = line_text.rfind(",", 0, kw_start[1])
            edits.replace(kw_start[0], before, kw_end[1], "")
    closing = text.end(call)
    extra = (", None" if len(arguments) == 2 else "") + "".join(f", {name}" for name in layout_names)
    edits.insert(closing[0], closing[1] - 1, extra)


# The operands each helper takes in registers, converted to Triton's dot-operand layout inside it.
_REGISTER_ROLES = {"wgmma_registers": (0,), "mma_v2": (0, 1), "mfma": (0, 1)}


def hoist_invariant_operands(calls) -> list:
    """A register operand of a ``tl.dot`` in a loop that the loop does not change (an attention's
    ``q``) converted to its dot-operand layout once, above the outermost such loop, as Triton's
    compile converts it before the loop, where the helper would convert it every iteration::

        b_q_operand = gl.convert_layout(b_q, DOT_124_A_OPERAND)  # the loop does not change it: converted once
        for i_s in range(...):
            b_s = _dot_wgmma_registers(b_q_operand, b_k, None, DOT_124_A_OPERAND, ...)

    Edits each call's translation's final edits; returns the lines hoisted (for the report)."""
    from . import loop_text
    from .converted_names import hoist_read
    done, hoisted = {}, []
    for call in calls:
        text, edits = call.translation.source, call.translation.final_edits
        loops = [node for node in ast.walk(text.tree) if isinstance(node, ast.For)
                 and any(sub is call.node for sub in ast.walk(node))]
        for position in _REGISTER_ROLES.get(call.kind, ()):
            argument = call.node.args[position] if position < len(call.node.args) else None
            if not isinstance(argument, ast.Name):
                continue
            # the outermost loop that does not assign it (the loops inside it do not either)
            loop = min((loop for loop in loops if argument.id not in loop_text.assigned([loop])), key=text.start,
                       default=None)
            if loop is None:
                continue
            before = len(done)
            line, col = text.start(loop)
            hoist_read(call.translation, edits, text.start(argument), text.end(argument), ("hoisted", "", line, col),
                       call.layouts[position], done, suffix="operand",
                       note="the loop does not change it: converted once")
            if len(done) > before:
                hoisted.append((line, done[(id(edits), argument.id, line, call.layouts[position])]))
    return hoisted
