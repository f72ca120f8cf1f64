"""The inline PTX of NVIDIA islands, run on the simulator's machine (``lowering.sim.sim_machine``).

An island speaks PTX through ``llvm.inline_asm``.  :func:`run_inline_asm` reads the op as LLVM
does (``$k`` is output k below the number of ``=r`` constraints, else operand k - outputs; every
operand and result an i32 register) and runs its one instruction with the handler that
:data:`PTX_HANDLERS` names for it: one row per instruction the emitters write.  Text that no row
matches is a failure (the simulator fails closed).  Memory accesses and barriers must be
``has_side_effects``: LLVM would otherwise move loads across barriers, or drop stores.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .sim_machine import SCRATCH_BASE, Machine, Scalar, SimulationError, fullmatch, mask, prmt, struct_fields
from ..target import Vendor

_INLINE_ASM = re.compile(r'llvm\.inline_asm (has_side_effects )?asm_dialect = att "(.*?)", "(.*?)" ?(.*?) : '
                         r'\((.*?)\) -> (.+)')


@dataclass
class AsmCall:
    """One ``llvm.inline_asm`` op being run: its instruction text, its operands and outputs."""

    machine: Machine
    asm: str
    side_effects: bool
    operands: list
    n_out: int
    results: list

    def reg(self, token: str) -> int:
        """The operand number of ``$k``."""
        if not fullmatch(r"\$\d+", token.strip()):
            raise SimulationError(f"'{token}' is not an operand reference")
        k = int(token.strip()[1:])
        if k >= self.n_out + len(self.operands):
            raise SimulationError(f"'{token}': there are only {self.n_out + len(self.operands)} operands")
        return k

    def inp(self, token: str) -> Scalar:
        k = self.reg(token)
        if k < self.n_out:
            raise SimulationError(f"'{token}' is an output, read as an input")
        return self.operands[k - self.n_out]

    def out(self, token: str, value: Scalar) -> None:
        k = self.reg(token)
        if k >= self.n_out:
            raise SimulationError(f"'{token}' is an input, written as an output")
        if self.results[k] is not None:
            raise SimulationError(f"'{token}' is written twice")
        self.results[k] = value

    def needs_side_effects(self, what: str) -> None:
        if not self.side_effects:
            raise SimulationError(f"{what} without has_side_effects: LLVM may move or drop it")

    def unsupported(self) -> SimulationError:
        return SimulationError(f"unsupported inline assembly '{self.asm}'")


def _reg_list(text: str) -> list[str]:
    """``{$0, $1}`` or ``$0`` -> the operand tokens."""
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    return [t.strip() for t in text.split(",")]


def run_inline_asm(machine: Machine, body: str):
    """Run one ``llvm.inline_asm`` op (``body``: its text after ``%x = ``); return its result
    (None, a Scalar, or a list of Scalars for a struct)."""
    m = _INLINE_ASM.fullmatch(body)
    if not m:
        raise SimulationError("cannot read llvm.inline_asm")
    side_effects, asm, constraints, args, arg_types, result_type = m.groups()
    if machine.vendor != Vendor.NVIDIA:
        raise SimulationError(f"PTX inline assembly in an island for a {machine.vendor} target")
    operands = [machine.get(a.strip()) for a in args.split(",") if a.strip()]
    n_out, n_in, handler, match = _read_asm(asm.strip(), constraints, arg_types, result_type.strip())
    if n_in != len(operands):
        raise SimulationError(f"inline asm constraints '{constraints}' name {n_in} inputs; there are "
                              f"{len(operands)} operands")
    if any(not isinstance(v, Scalar) or v.bits != 32 for v in operands):
        raise SimulationError("inline asm operands must be i32 values")
    call = AsmCall(machine, asm.strip(), bool(side_effects), operands, n_out, [None] * n_out)
    if handler is None:
        raise call.unsupported()
    handler(call, match)
    if any(r is None for r in call.results):
        raise SimulationError(f"'{call.asm}' does not write every output of its constraints")
    if n_out == 0:
        return None
    return call.results[0] if result_type.strip() == "i32" else call.results


@functools.lru_cache(maxsize=4096)
def _read_asm(asm: str, constraints: str, arg_types: str, result_type: str):
    """What an inline-asm op's text says, read once per distinct text (an island repeats a few
    instructions with different operands): (outputs, inputs, the PTX_HANDLERS handler or None,
    its match).  Raises what :func:`_check_signature` raises."""
    types = [t.strip() for t in arg_types.split(",") if t.strip()]
    n_out = _check_signature(constraints, types, result_type)
    for pattern, handler in PTX_HANDLERS:
        match = pattern.fullmatch(asm)
        if match:
            return n_out, len(types), handler, match
    return n_out, len(types), None, None


def _check_signature(constraints: str, types: list[str], rt: str) -> int:
    """The number of outputs, after checking that constraints, operand types and result type
    agree: outputs (``=r``) first, then inputs (``r``), all i32."""
    cons = [c.strip() for c in constraints.split(",")] if constraints.strip() else []
    n_out = sum(c.startswith("=") for c in cons)
    if any(c != "=r" for c in cons[:n_out]) or any(c != "r" for c in cons[n_out:]):
        raise SimulationError(f"inline asm constraints '{constraints}': outputs (=r) first, then inputs (r)")
    if len(cons) - n_out != len(types):
        raise SimulationError(f"inline asm constraints '{constraints}' name {len(cons) - n_out} inputs; "
                              f"there are {len(types)} operand types")
    if any(t != "i32" for t in types):
        raise SimulationError("inline asm operands must be i32 values")
    if rt == "()":
        n_results = 0
    elif rt == "i32":
        n_results = 1
    elif rt.startswith("!llvm.struct") and set(struct_fields(rt)) == {"i32"}:
        n_results = len(struct_fields(rt))
    else:
        raise SimulationError(f"inline asm result type {rt} is not i32 or a struct of i32")
    if n_results != n_out:
        raise SimulationError(f"inline asm has {n_out} output constraints and {n_results} results")
    return n_out


# -- the instructions ----------------------------------------------------------------------

def _mov_tid(call: AsmCall, match: re.Match) -> None:
    m = call.machine
    call.out(match.group(1), Scalar(32, m.tid.copy(), np.ones(m.T, dtype=bool)))


def _prmt(call: AsmCall, match: re.Match) -> None:
    pm = fullmatch(r"prmt\.b32 (\$\d+), (\$\d+), (\$\d+), (0x[0-9a-fA-F]+|\d+);", call.asm)
    if not pm:
        raise SimulationError(f"cannot read '{call.asm}'")
    a, b = call.inp(pm.group(2)), call.inp(pm.group(3))
    call.out(pm.group(1), Scalar(32, prmt(a.value, b.value, int(pm.group(4), 0)), a.defined & b.defined))


def _bar_sync(call: AsmCall, match: re.Match) -> None:
    call.needs_side_effects("bar.sync")
    call.machine.named_barrier(int(match.group(1)), int(match.group(2)) if match.group(2) else None)


def _guard_marker(call: AsmCall, match: re.Match) -> None:
    # The comment before a guard or a plan's barrier (lowering.emit.emit_nvidia.GUARD_MARKER): no
    # instruction; it must stay next to its barrier, so it is a side effect like one.
    call.needs_side_effects("the guard marker")


def _fence_proxy_async(call: AsmCall, match: re.Match) -> None:
    # Orders this thread's generic-proxy accesses before later async-proxy ones (wgmma,
    # TMA), which islands do not contain: nothing to simulate, but it must stay put.
    call.needs_side_effects("fence.proxy.async")


def _bar_warp_sync(call: AsmCall, match: re.Match) -> None:
    call.needs_side_effects("bar.warp.sync")
    m = call.machine
    # a one-warp group's barrier (Triton's, in a partition of one warp) orders the group
    m.barrier(cta=m.W == 1 and m.group.barrier_id is not None)


def _st_shared_instruction(call: AsmCall, match: re.Match) -> None:
    st = fullmatch(r"st\.shared(?:\.v(\d))?\.b(\d+) \[(\$\d+)\], (\{[^}]*\}|\$\d+);", call.asm)
    if not st:
        raise call.unsupported()
    call.needs_side_effects("st.shared")
    values = [call.inp(t) for t in _reg_list(st.group(4))]
    st_shared(call.machine, int(st.group(1) or 0), int(st.group(2)), call.inp(st.group(3)), values)


def _ld_shared_instruction(call: AsmCall, match: re.Match) -> None:
    ld = fullmatch(r"ld\.shared(?:\.v(\d))?\.b(\d+) (\{[^}]*\}|\$\d+), \[(\$\d+)\];", call.asm)
    if not ld:
        raise call.unsupported()
    call.needs_side_effects("ld.shared")
    dests = _reg_list(ld.group(3))
    words = ld_shared(call.machine, int(ld.group(1) or 0), int(ld.group(2)), call.inp(ld.group(4)), len(dests))
    for token, word in zip(dests, words):
        call.out(token, word)


def _matrix_instruction(call: AsmCall, match: re.Match) -> None:
    mx = fullmatch(r"(ldmatrix|stmatrix)\.sync\.aligned\.m8n8\.x(\d)(\.trans)?\.shared\.b16 (.*);", call.asm)
    if not mx or mx.group(2) not in ("1", "2", "4"):
        raise call.unsupported()
    kind, count, trans = mx.group(1), int(mx.group(2)), bool(mx.group(3))
    call.needs_side_effects(kind)
    if kind == "ldmatrix":
        ops = fullmatch(r"(\{[^}]*\}), \[(\$\d+)\]", mx.group(4))
        if not ops:
            raise SimulationError(f"cannot read the operands of '{call.asm}'")
        dests = _reg_list(ops.group(1))
        if len(dests) != count:
            raise SimulationError(f"ldmatrix .x{count} with {len(dests)} destination registers")
        for token, word in zip(dests, matrix_access(call.machine, kind, count, trans, call.inp(ops.group(2)), None)):
            call.out(token, word)
    else:
        ops = fullmatch(r"\[(\$\d+)\], (\{[^}]*\})", mx.group(4))
        if not ops:
            raise SimulationError(f"cannot read the operands of '{call.asm}'")
        words = [call.inp(t) for t in _reg_list(ops.group(2))]
        if len(words) != count:
            raise SimulationError(f"stmatrix .x{count} with {len(words)} source registers")
        matrix_access(call.machine, kind, count, trans, call.inp(ops.group(1)), words)


# Every instruction an island may hold: (the text it matches, in full; its handler), tried in
# order.  A row whose pattern is a prefix (``st.shared...``) reads the operands itself and calls
# any form it does not know unsupported.
PTX_HANDLERS: tuple[tuple[re.Pattern, Callable[[AsmCall, re.Match], None]], ...] = (
    (re.compile(r"mov\.u32 (\$\d+), %tid\.x;"), _mov_tid),
    (re.compile(r"prmt\.b32 .*"), _prmt),
    (re.compile(r"bar\.sync (\d+)(?:, (\d+))?;"), _bar_sync),
    (re.compile(r"// (?:guard(?: alone| of a warp group)?|island barrier)"), _guard_marker),
    (re.compile(r"fence\.proxy\.async\.shared::cta;"), _fence_proxy_async),
    (re.compile(r"bar\.warp\.sync (?:0xffffffff;|-1;)"), _bar_warp_sync),
    (re.compile(r"st\.shared.*", re.S), _st_shared_instruction),
    (re.compile(r"ld\.shared.*", re.S), _ld_shared_instruction),
    (re.compile(r"(?:ldmatrix|stmatrix).*", re.S), _matrix_instruction),
)


# -- shared-memory accesses ----------------------------------------------------------------

def _access_bytes(vec: int, bits: int, what: str) -> int:
    """Bytes of ``{ld,st}.shared[.v<vec>].b<bits>`` (vec 0: scalar), if the emitter makes it."""
    if vec == 0 and bits in (8, 16, 32) or vec in (2, 4) and bits == 32:
        return max(vec, 1) * bits // 8
    raise SimulationError(f"{what}{f'.v{vec}' if vec else ''}.b{bits} is not an access the emitter makes")


def st_shared(m: Machine, vec: int, bits: int, address: Scalar, values: list[Scalar]) -> None:
    nbytes = _access_bytes(vec, bits, "st.shared")
    if len(values) != max(vec, 1):
        raise SimulationError("st.shared operand count differs from the vector width")
    offsets = m.byte_addresses(address, nbytes, nbytes, "st.shared")
    if vec == 0:                     # a wider register stores its low bits
        m.store_bytes(offsets, values[0].value & mask(bits), values[0].defined, bits // 8, m.all_threads, "st.shared")
        return
    # A vector's words, every thread's, as one store: a thread's words are distinct bytes, so the
    # race rules are those of separate stores (two threads' words on one byte: an error either way).
    m.store_bytes(np.concatenate([offsets + i * bits // 8 for i in range(vec)]),
                  np.concatenate([v.value & mask(bits) for v in values]),
                  np.concatenate([v.defined for v in values]), bits // 8, m.tiled_threads(vec), "st.shared")


def ld_shared(m: Machine, vec: int, bits: int, address: Scalar, n_dests: int) -> list[Scalar]:
    nbytes = _access_bytes(vec, bits, "ld.shared")
    if n_dests != max(vec, 1):
        raise SimulationError("ld.shared destination count differs from the vector width")
    offsets = m.byte_addresses(address, nbytes, nbytes, "ld.shared")
    if vec == 0:      # a narrower access zero-extends into the 32-bit register (.b types)
        return [Scalar(32, *m.load_bytes(offsets, bits // 8, m.all_threads, "ld.shared"))]
    # A vector's words, every thread's, as one load (the same bytes, the same race rules).
    words = np.concatenate([offsets + i * bits // 8 for i in range(vec)])
    value, defined = m.load_bytes(words, bits // 8, m.tiled_threads(vec), "ld.shared")
    value, defined = value.reshape(vec, m.T), defined.reshape(vec, m.T)
    return [Scalar(32, value[i], defined[i]) for i in range(vec)]


def matrix_access(m: Machine, kind: str, count: int, trans: bool, address: Scalar,
                  words: Optional[list[Scalar]]) -> list[Scalar]:
    """ldmatrix / stmatrix m8n8 .b16: lane 8j+i gives the address of row i of matrix j;
    thread t's word j is word t%4 of row t//4 (.trans: the 16-bit elements of rows 2(t%4)
    and 2(t%4)+1 at column t//4)."""
    if m.L != 32:
        raise SimulationError(f"{kind} needs 32-lane warps")
    if not address.defined.all():
        raise SimulationError(f"{kind}: undefined row address")
    rel = address.value.astype(np.int64) - SCRATCH_BASE
    warp_base = np.arange(m.T) - m.lane          # thread index of lane 0 of my warp
    t = m.lane
    matrix = np.arange(count)[:, None]           # row j: matrix j, for every thread at once
    _check_rows(m, kind, rel[warp_base + 8 * matrix + np.arange(m.T) % 8])
    # Each matrix's pieces for every thread: (offsets (count, T), bytes, shift in the word).
    if trans:
        pieces = [(rel[warp_base + 8 * matrix + 2 * (t & 3) + h] + 2 * (t >> 2), 2, 16 * h) for h in (0, 1)]
    else:
        pieces = [(rel[warp_base + 8 * matrix + (t >> 2)] + 4 * (t & 3), 4, 0)]
    if kind == "ldmatrix":
        # One load of every piece of every matrix (the instruction's reads, as one access: the
        # same bytes, the same race rules), then each word put together from its pieces.
        nbytes = pieces[0][1]
        offsets = np.concatenate([offsets.ravel() for offsets, _, _ in pieces])
        value, defined = m.load_bytes(offsets, nbytes, m.tiled_threads(count * len(pieces)), kind)
        value, defined = value.reshape(len(pieces), count, m.T), defined.reshape(len(pieces), count, m.T)
        words = value[0].copy()
        words_defined = defined[0].copy()
        for k in range(1, len(pieces)):
            words |= value[k] << np.uint64(pieces[k][2])
            words_defined &= defined[k]
        return [Scalar(32, words[j], words_defined[j]) for j in range(count)]
    for j in range(count):                       # stmatrix: matrix by matrix, as separate stores
        word = words[j]
        for offsets, nbytes, shift in pieces:
            m.store_bytes(offsets[j], (word.value >> np.uint64(shift)) & mask(8 * nbytes), word.defined,
                          nbytes, m.all_threads, kind)
    return []


def _check_rows(m: Machine, kind: str, row_starts: np.ndarray) -> None:
    """Every row of an ldmatrix / stmatrix 16-byte aligned and inside the scratch buffer."""
    if (row_starts % 16).any():
        raise SimulationError(f"{kind}: a row address is not 16-byte aligned")
    if m.smem is None:
        raise SimulationError(f"{kind}: no scratch buffer was allocated")
    if (row_starts < 0).any() or (row_starts + 16 > m.nbytes).any():
        raise SimulationError(f"{kind}: a row lies outside the scratch buffer")
