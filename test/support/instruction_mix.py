"""What a plan must become in the final code, and what the final code holds, in the keys of
``tools.fuzz.testcases.ptx_mix`` / ``amdgcn_mix``: the compile tests compare the two."""

from collections import Counter

from linear_layouts.lowering.emit import emit_amd, emit_nvidia
from linear_layouts.lowering.element_type import storage_bits_of
from linear_layouts.lowering.instructions import AccessForm, BarrierScope, FinalRole, ShuffleMode
from linear_layouts.lowering.plan import Barrier


def expected_mix(plan) -> Counter:
    """The instructions a plan must become, in ``ptx_mix`` / ``amdgcn_mix`` keys."""
    out: Counter = Counter()
    nvidia = plan.target.vendor == "nvidia"
    if plan.shuffle is not None:
        for rnd in plan.shuffle.rounds:
            if rnd.mode is ShuffleMode.LOCAL:
                continue
            key = ("shfl.sync.bfly" if rnd.mode is ShuffleMode.XOR else "shfl.sync.idx") if nvidia else "ds_bpermute"
            out[key] += plan.shuffle.words_per_element
    if plan.shared is not None:
        bits = storage_bits_of(plan.element_bits)
        for op in plan.shared.ops:
            if isinstance(op, Barrier):
                if nvidia:
                    out["bar.warp.sync" if op.scope is BarrierScope.WARP else "bar.sync"] += 1
                elif op.scope is not BarrierScope.WARP:
                    out["s_barrier"] += 1
                continue
            total = len(op.registers) * bits
            if op.form.is_matrix:
                kind = "stmatrix" if op.is_store else "ldmatrix"
                trans = ".trans" if op.form is AccessForm.MATRIX_TRANS else ""
                out[f"{kind}.x{total // 32}{trans}"] += 1
            elif nvidia:
                out[f"{'st' if op.is_store else 'ld'}.shared.b{total}"] += 1
            else:
                out[("ds_write" if op.is_store else "ds_read") + f".b{total}"] += 1
    return out


def measured_mix(mix: Counter, nvidia: bool, num_warps: int) -> Counter:
    # What a plan becomes: the emitters' data-movement and barrier instructions (not the
    # selects and byte permutes around shuffles, which the plan does not count).
    table = emit_nvidia.FINAL_CODE_INSTRUCTIONS if nvidia else emit_amd.FINAL_CODE_INSTRUCTIONS
    keep = tuple(row.name for row in table if row.role is not FinalRole.ARITHMETIC)
    out = Counter({k: v for k, v in mix.items() if k.startswith(keep)})
    if not nvidia:  # ds_write2_b32 = two b32 stores in one instruction
        for k in [k for k in out if k.startswith(("ds_write2", "ds_read2"))]:
            out[k.replace("2", "", 1)] += 2 * out.pop(k)
    return out
