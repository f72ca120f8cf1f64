"""Calibration microbenchmarks: what each instruction class the cost model counts costs on the
GPU, and the cost model's constants fitted to it (run as ``plan_choice.py calibrate``).

    python benchmarks/plan_choice.py calibrate --out benchmarks/results   # on a GPU (sm_90)
    python benchmarks/plan_choice.py calibrate --dry-run                   # CPU: compile and check SASS

The cost model (``lowering/cost.py``, constants in ``lowering/cost_weights.py``) ranks candidate
plans by a weighted count of instructions per warp: shuffles, ALU selects and byte permutes,
shared-memory accesses and the wavefronts they occupy the banks for, ldmatrix/stmatrix, warp
and CTA barriers.  Each probe here is one of those instruction classes in isolation:

    for i in range(iterations):          # an scf.for in a generated TTGIR kernel
        inline PTX: UNROLL copies of the instruction, over CHAINS independent registers

Throughput: 4 CTAs of 8 warps on every SM, so the instruction's pipe is saturated; the figure
is nanoseconds per warp-instruction per SM (the kernel's time over the warp-instructions one SM
runs).  Latency: one warp per SM, one dependent chain (a shuffle of the previous result, a
select of it, a shared load whose address is the previous load's value); nanoseconds per
instruction.  Shared-memory probes address Triton's dynamic shared memory (``global_smem``,
reserved by a ``ttg.local_alloc`` of the kernel) at a stride that makes the 32 lanes hit 1, 2,
4, ... 32 distinct words of one bank (that many wavefronts), or at 8 and 16 bytes for the
64- and 128-bit forms.  Loads and stores are ``.volatile`` and ldmatrix/stmatrix addresses move
with the loop index, so ptxas can neither merge nor hoist them; ``--dry-run`` disassembles every
probe's cubin (nvdisasm) and checks the loop holds the instructions the probe asked for.

The fit: a shared access costs ``SHARED_ACCESS + SHARED_WAVEFRONT * wavefronts`` (least squares
over the 32-bit probes at 1 to 32 wavefronts and the 64/128-bit ones).  On an H100 the line goes
through the origin: with the banks saturated an access costs its wavefronts alone, its issue
hidden behind them; a conversion's accesses are not that saturated, so ``SHARED_ACCESS`` is at
least one issue slot (the full-rate ``fma.rn.f32`` probe), and so is a shuffle's on top of its
measured throughput (shuffles go through the same MIO pipe).  Every other constant is its
probe's throughput.  All are in units where one conflict-free 32-bit shared access (one
issue, one wavefront) costs 1.5, the scale of the hand-set constants.  Writes calibration.json
(every probe's times, the fitted constants, GPU, Triton and torch versions) and calibration.md.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from harness import skeleton  # noqa: E402

UNROLL = 32                # instructions per asm block (per loop iteration)
CHAINS = 8                 # independent registers per thread (throughput probes)
ITERATIONS = 256
WARPS = 8                  # per CTA (throughput probes)
CTAS_PER_SM = 4
SHARED_WORDS = 8192        # 32 KiB of dynamic shared memory: two 16 KiB halves the probes alternate


@dataclass(frozen=True)
class Probe:
    """One instruction class.  ``body(j)``: the PTX of the j-th unrolled instruction (registers
    ``t0..t7`` hold the chains, ``a`` the lane's shared address, ``p`` a predicate);
    ``sass``: the SASS opcode that must appear ``UNROLL`` times, or more, beyond the control's;
    ``wavefronts``: per instruction, for the shared-access fit; ``feature``: which constant of
    ``lowering/cost_weights.py`` it measures."""

    name: str
    feature: str
    body: object
    sass: str
    lane_stride: int = 0          # bytes between consecutive lanes' addresses
    wavefronts: int = 0
    warps: int = WARPS
    latency: bool = False         # one warp per SM, one dependent chain
    may_vanish: bool = False      # ptxas may emit nothing for it: timed all the same
    notes: str = ""


def _chain(j: int) -> str:
    return f"t{j % CHAINS}"


def _use(j: int, count: int) -> str:
    """Fold the loaded registers u0..u{count-1} into chains (one xor each: ALU work, off the
    shared-memory pipe)."""
    return "\n".join(f"xor.b32 {_chain(j + k)}, {_chain(j + k)}, u{k};" for k in range(count))


def _probes() -> list[Probe]:
    probes = [
        # the source lane is a register (lane + 1): from a constant lane, the first shuffle
        # makes the value uniform and ptxas drops the rest
        Probe("shfl.sync.idx.b32", "SHUFFLE", lambda j: f"shfl.sync.idx.b32 {_chain(j)}, {_chain(j)}, l, 31, -1;", "SHFL.IDX"),
        Probe("shfl.sync.bfly.b32", "SHUFFLE", lambda j: f"shfl.sync.bfly.b32 {_chain(j)}, {_chain(j)}, {1 << (j % 5)}, 31, -1;", "SHFL.BFLY"),
        Probe("selp.b32", "ALU_OP", lambda j: f"selp.b32 {_chain(j)}, {_chain(j)}, {_chain(j + 1)}, p;", "SEL"),
        Probe("prmt.b32", "ALU_OP", lambda j: f"prmt.b32 {_chain(j)}, {_chain(j)}, {_chain(j + 3)}, 0x5410;", "PRMT"),
        # a full-rate instruction: what one issue slot costs.  A float fma, which ptxas may not
        # reassociate (integer adds and xors it folds into three-input IADD3/LOP3).
        Probe("fma.rn.f32 (issue slot)", "ISSUE",
              lambda j: f"fma.rn.f32 {_chain(j)}, {_chain(j)}, {_chain(j + 1)}, {_chain(j + 2)};", "FFMA"),
    ]
    for ways in (1, 2, 4, 8, 16, 32):
        probes.append(Probe(f"st.shared.b32 {ways}-way", "SHARED", lambda j: f"st.volatile.shared.b32 [a], {_chain(j)};",
                            "STS", lane_stride=4 * ways, wavefronts=ways))
        probes.append(Probe(f"ld.shared.b32 {ways}-way", "SHARED", lambda j: f"ld.volatile.shared.b32 u0, [a];\n{_use(j, 1)}",
                            "LDS", lane_stride=4 * ways, wavefronts=ways))
    probes += [
        Probe("st.shared.v2.b32", "SHARED", lambda j: f"st.volatile.shared.v2.b32 [a], {{{_chain(j)}, {_chain(j + 1)}}};",
              "STS.64", lane_stride=8, wavefronts=2),
        Probe("st.shared.v4.b32", "SHARED",
              lambda j: f"st.volatile.shared.v4.b32 [a], {{{_chain(j)}, {_chain(j + 1)}, {_chain(j + 2)}, {_chain(j + 3)}}};",
              "STS.128", lane_stride=16, wavefronts=4),
        Probe("ld.shared.v2.b32", "SHARED", lambda j: f"ld.volatile.shared.v2.b32 {{u0, u1}}, [a];\n{_use(j, 2)}",
              "LDS.64", lane_stride=8, wavefronts=2),
        Probe("ld.shared.v4.b32", "SHARED",
              lambda j: f"ld.volatile.shared.v4.b32 {{u0, u1, u2, u3}}, [a];\n{_use(j, 4)}", "LDS.128",
              lane_stride=16, wavefronts=4),
    ]
    # ldmatrix / stmatrix: every lane gives one 16-byte row address; rows at 16-byte steps are
    # conflict-free.  Each unrolled copy uses its own 512-byte block (no two alike to merge);
    # every loaded register is folded into a chain (an unused load is dropped by ptxas).
    for count, regs in ((1, "{u0}"), (2, "{u0, u1}"), (4, "{u0, u1, u2, u3}")):
        for trans in ("", ".trans"):
            probes.append(Probe(f"ldmatrix.x{count}{trans}", "LDMATRIX",
                                lambda j, c=count, r=regs, t=trans: f"ldmatrix.sync.aligned.m8n8.x{c}{t}.shared.b16 {r}, [a+{512 * j}];\n{_use(j, c)}",
                                "LDSM", lane_stride=16, wavefronts=count))
            probes.append(Probe(f"stmatrix.x{count}{trans}", "STMATRIX",
                                lambda j, c=count, r=regs.replace("u", "t"), t=trans: f"stmatrix.sync.aligned.m8n8.x{c}{t}.shared.b16 [a+{512 * j}], {r};",
                                "STSM", lane_stride=16, wavefronts=count))
    probes += [
        Probe("bar.warp.sync", "WARP_BARRIER", lambda j: "bar.warp.sync -1;", "WARPSYNC", may_vanish=True,
              notes="in converged code ptxas emits no instruction for it (the SASS count says)"),
        Probe("bar.sync (8 warps)", "CTA_BARRIER", lambda j: "bar.sync 0;", "BAR.SYNC"),
        Probe("bar.sync (4 warps)", "CTA_BARRIER", lambda j: "bar.sync 0;", "BAR.SYNC", warps=4),
        Probe("barrier.cluster arrive+wait", "CLUSTER_BARRIER",
              lambda j: "barrier.cluster.arrive.aligned;\n barrier.cluster.wait.aligned;", "UCGABAR_WAIT",
              notes="a cluster of one CTA (the kernel is launched without a cluster)"),
        # latency: one dependent chain, one warp per SM
        Probe("shfl.sync.idx.b32 latency", "SHUFFLE", lambda j: "shfl.sync.idx.b32 t0, t0, l, 31, -1;", "SHFL.IDX",
              warps=1, latency=True),
        Probe("selp.b32 latency", "ALU_OP", lambda j: "selp.b32 t0, t0, t1, p;\n add.u32 t1, t1, t0;", "SEL",
              warps=1, latency=True, notes="a select and the add that feeds the next one"),
        Probe("ld.shared.b32 latency", "SHARED", lambda j: "ld.volatile.shared.b32 t0, [a];\n add.u32 a, a, t0;", "LDS",
              lane_stride=4, wavefronts=1, warps=1, latency=True,
              notes="pointer chase: the buffer holds zeros, each address adds the previous load"),
        Probe("bar.sync latency (8 warps)", "CTA_BARRIER", lambda j: "bar.sync 0;", "BAR.SYNC", latency=True),
    ]
    return probes


PROBES = _probes()


def control_of(probe: Probe) -> Probe:
    """The same kernel with an empty loop body (the chains' set-up and the loop remain): its SASS
    counts are subtracted before the check, its time before the per-instruction figures."""
    return Probe(f"control, {probe.warps} warps{', one CTA per SM' if probe.latency else ''}", "CONTROL",
                 lambda j: "", "", lane_stride=4, warps=probe.warps, latency=probe.latency)


def asm_block(probe: Probe) -> str:
    """The inline PTX: ``$0`` (result) from ``$1`` (a loaded value) and ``$2`` (the loop index)."""
    lines = ["{", ".reg .b32 t<8>, u<4>;", ".reg .u32 a, off, l;", ".reg .pred p;",
             "setp.ne.u32 p, $1, 12345;", "mov.u32 l, %laneid;", "add.u32 l, l, 1;", "and.b32 l, l, 31;"]
    lines += [f"add.u32 t{k}, $1, {k};" for k in range(CHAINS)]
    if probe.lane_stride:
        lines += ["mov.u32 a, global_smem;", "mov.u32 off, %laneid;",
                  f"mul.lo.u32 off, off, {probe.lane_stride};", "add.u32 a, a, off;",
                  "and.b32 off, $2, 1;", "shl.b32 off, off, 14;", "add.u32 a, a, off;"]
    lines += [probe.body(j) for j in range(UNROLL)]
    lines += ["xor.b32 $0, t0, t1;"] + [f"xor.b32 $0, $0, t{k};" for k in range(2, CHAINS)] + ["}"]
    return "\n".join(lines)


def kernel_ttgir(probe: Probe) -> str:
    warps = probe.warps
    n = 32 * warps
    asm = asm_block(probe).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\0A")
    return f"""#blocked = #ttg.blocked<{{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [{warps}], order = [0]}}>
#words = #ttg.blocked<{{sizePerThread = [{SHARED_WORDS // n}], threadsPerWarp = [32], warpsPerCTA = [{warps}], order = [0]}}>
#shared = #ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}}>
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {warps} : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @calibrate(%X: !tt.ptr<i32> {{tt.divisibility = 16 : i32}}, %n: i32) {{
    %zeros = arith.constant dense<0> : tensor<{SHARED_WORDS}xi32, #words>
    %buf = ttg.local_alloc %zeros : (tensor<{SHARED_WORDS}xi32, #words>) -> !ttg.memdesc<{SHARED_WORDS}xi32, #shared, #smem>
    %range = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32, #blocked>
    %pid = tt.get_program_id x : i32
    %cn = arith.constant {n} : i32
    %base = arith.muli %pid, %cn : i32
    %xb = tt.addptr %X, %base : !tt.ptr<i32>, i32
    %xs = tt.splat %xb : !tt.ptr<i32> -> tensor<{n}x!tt.ptr<i32>, #blocked>
    %xp = tt.addptr %xs, %range : tensor<{n}x!tt.ptr<i32>, #blocked>, tensor<{n}xi32, #blocked>
    %x = tt.load %xp : tensor<{n}x!tt.ptr<i32>, #blocked>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%v = %x) -> (tensor<{n}xi32, #blocked>)  : i32 {{
      %is = tt.splat %i : i32 -> tensor<{n}xi32, #blocked>
      %w = tt.elementwise_inline_asm "{asm}" {{constraints = "=r,r,r", packed_element = 1 : i32, pure = false}} %v, %is : tensor<{n}xi32, #blocked>, tensor<{n}xi32, #blocked> -> tensor<{n}xi32, #blocked>
      scf.yield %w : tensor<{n}xi32, #blocked>
    }}
    %kept = ttg.local_load %buf : !ttg.memdesc<{SHARED_WORDS}xi32, #shared, #smem> -> tensor<{SHARED_WORDS}xi32, #words>
    %sum = "tt.reduce"(%kept) <{{axis = 0 : i32}}> ({{
    ^bb0(%p: i32, %q: i32):
      %s = arith.addi %p, %q : i32
      tt.reduce.return %s : i32
    }}) : (tensor<{SHARED_WORDS}xi32, #words>) -> i32
    %ss = tt.splat %sum : i32 -> tensor<{n}xi32, #blocked>
    %out = arith.addi %r, %ss : tensor<{n}xi32, #blocked>
    tt.store %xp, %out : tensor<{n}x!tt.ptr<i32>, #blocked>
    tt.return
  }}
}}
"""


def compile_probe(probe: Probe, directory: str):
    import triton
    from triton.backends.compiler import GPUTarget

    path = os.path.join(directory, re.sub(r"\W+", "_", probe.name) + ".ttgir")
    with open(path, "w") as f:
        f.write(kernel_ttgir(probe))
    return triton.compile(path, target=GPUTarget("cuda", 90, 32))


def sass_count(kernel, opcode: str) -> int:
    """How many instructions of the kernel's SASS start with ``opcode`` (nvdisasm of the cubin)."""
    import triton

    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "nvdisasm")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(kernel.asm["cubin"])
        f.flush()
        text = subprocess.run([tool, "-c", f.name], capture_output=True, text=True, check=True).stdout
    return len(re.findall(r"\b" + re.escape(opcode) + r"\b", text))


def check_sass(probe: Probe, kernel, control) -> tuple[int, str]:
    """(the probe's instructions in the SASS beyond the control's, '' or what is missing)."""
    found = sass_count(kernel, probe.sass) - sass_count(control, probe.sass)
    wanted = UNROLL
    if found >= wanted or probe.may_vanish:
        return found, ""
    return found, f"SASS has {found} {probe.sass} beyond the control's, expected at least {wanted}"


def time_kernel(probe: Probe, kernel, sms: int) -> float:
    """Median milliseconds of one launch (4 CTAs per SM, or one for latency probes)."""
    import torch
    from triton.testing import do_bench

    ctas = sms if probe.latency else sms * CTAS_PER_SM
    x = torch.zeros(ctas * 32 * probe.warps, dtype=torch.int32, device="cuda")
    kernel[(ctas, 1, 1)](x, ITERATIONS)
    torch.cuda.synchronize()
    return do_bench(lambda: kernel[(ctas, 1, 1)](x, ITERATIONS), warmup=25, rep=100, return_mode="median")


def per_instruction(probe: Probe, ms: float, control_ms: float, sms: int) -> dict:
    ctas = sms if probe.latency else sms * CTAS_PER_SM
    instructions_per_warp = ITERATIONS * UNROLL
    warps_per_sm = (ctas // sms) * probe.warps
    ns = max(ms - control_ms, 0.0) * 1e6
    return {"ms": ms, "control_ms": control_ms, "ctas": ctas,
            # throughput: the SM's time per warp-instruction; latency: one warp's time per instruction
            "ns_per_warp_instruction": ns / (instructions_per_warp * warps_per_sm),
            "ns_per_instruction_one_warp": ns / instructions_per_warp}


def fit_weights(results: dict) -> dict:
    """The cost model's constants from the throughput probes (see the module docstring)."""
    import numpy as np

    def t(name):
        return results[name]["ns_per_warp_instruction"]

    shared = [(p.wavefronts, t(p.name)) for p in PROBES
              if p.feature == "SHARED" and not p.latency and p.name in results]
    A = np.array([[1.0, w] for w, _ in shared])
    y = np.array([ns for _, ns in shared])
    (issue, per_wavefront), *_ = np.linalg.lstsq(A, y, rcond=None)
    if issue < 0:  # costs are not negative: the line through the origin (all in the wavefronts)
        issue, per_wavefront = 0.0, float(A[:, 1] @ y / (A[:, 1] @ A[:, 1]))
    fitted_issue = issue
    # When the banks are the bottleneck (as in these probes) an access's issue hides behind its
    # wavefronts, and the fit finds ~0; in a conversion's mix it still takes an issue slot
    # (and its address arithmetic): at least one full-rate instruction's.
    issue_slot = t("fma.rn.f32 (issue slot)") if "fma.rn.f32 (issue slot)" in results else 0.0
    issue = max(issue, issue_slot)
    per_wavefront_fit = per_wavefront
    unit = (issue + per_wavefront_fit) / 1.5      # one conflict-free 32-bit access = 1.5
    mean = lambda names: sum(t(n) for n in names if n in results) / max(1, sum(n in results for n in names))
    weights = {
        # a shuffle shares the MIO pipe with the shared accesses: the same issue slot on top
        "SHUFFLE": (mean(["shfl.sync.idx.b32", "shfl.sync.bfly.b32"]) + issue_slot) / unit,
        "ALU_OP": mean(["selp.b32", "prmt.b32"]) / unit,
        "SHARED_ACCESS": issue / unit,
        "SHARED_WAVEFRONT": per_wavefront / unit,
        "WARP_BARRIER": mean(["bar.warp.sync"]) / unit,
        "CTA_BARRIER": mean(["bar.sync (8 warps)", "bar.sync (4 warps)"]) / unit,
    }
    residual = float(np.sqrt(np.mean((A @ np.array([fitted_issue, per_wavefront_fit]) - y) ** 2)))
    return {"weights": {k: round(float(v), 3) for k, v in weights.items()},
            "unit_ns": float(unit), "shared_fit_rms_ns": residual, "fitted_issue_ns": float(fitted_issue)}


def write_report(results: dict, fit: dict, environment: dict, out: str) -> None:
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "calibration.json"), "w") as f:
        json.dump({"environment": environment, "unroll": UNROLL, "iterations": ITERATIONS,
                   "probes": results, "fit": fit}, f, indent=1)
    lines = ["# Calibration: what each instruction class costs", "",
             f"GPU: {environment['gpu']}; triton {environment['triton']}; torch {environment['torch']}; "
             f"{environment['sms']} SMs.", "",
             "Produced by `python benchmarks/plan_choice.py calibrate --out benchmarks/results`.", "",
             f"Throughput probes: {CTAS_PER_SM} CTAs per SM, {UNROLL} instructions per loop iteration over "
             f"{CHAINS} independent registers, {ITERATIONS} iterations; ns per warp-instruction per SM. "
             "Latency probes: one warp per SM, one dependent chain; ns per instruction.", "",
             "| probe | measures | warps/CTA | wavefronts | ns per warp-instruction (SM) | ns per instruction (one warp) | model units | notes |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    unit = fit["unit_ns"]
    for p in PROBES:
        r = results.get(p.name)
        if r is None:
            continue
        if "error" in r:
            lines.append(f"| {p.name} | {p.feature} | {p.warps} | {p.wavefronts or ''} | failed | | | {r['error'][:120]} |")
            continue
        units = "" if p.latency else f"{r['ns_per_warp_instruction'] / unit:.2f}"
        lines.append(f"| {p.name}{' (latency)' if p.latency and 'latency' not in p.name else ''} | {p.feature} | "
                     f"{p.warps} | {p.wavefronts or ''} | "
                     f"{'' if p.latency else format(r['ns_per_warp_instruction'], '.3f')} | "
                     f"{r['ns_per_instruction_one_warp']:.3f} | {units} | {p.notes} |")
    w = fit["weights"]
    lines += ["", "Fitted constants (units: one conflict-free 32-bit shared access = 1.5; "
              f"1 unit = {unit:.3f} ns per warp-instruction per SM; the shared-access line "
              f"`issue + wavefront * n` fits the {sum(1 for p in PROBES if p.feature == 'SHARED' and not p.latency)} "
              f"shared probes with {fit['shared_fit_rms_ns']:.3f} ns rms):", "",
              "| constant | fitted | hand-set (uncalibrated targets) |", "|---|---:|---:|"]
    for name, value in w.items():
        lines.append(f"| {name} | {value:.3f} | {environment['hand_set'].get(name, '')} |")
    with open(os.path.join(out, "calibration.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def write_weights(fit: dict, environment: dict, path: str, target: str = "sm_90") -> None:
    """Record the fit as ``target``'s constants (``lowering.cost_weights`` loads the file)."""
    data = json.load(open(path)) if os.path.exists(path) else {}
    data[target] = {"weights": {name.lower(): round(value, 2) for name, value in fit["weights"].items()},
                    "source": f"benchmarks/plan_choice.py calibrate on an {environment['gpu']}, triton {environment['triton']}"}
    with open(path, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {target}'s constants to {path}")


def hand_set_weights() -> dict:
    """The estimates every uncalibrated target uses (``lowering/cost_weights.py``'s HAND_SET)."""
    from linear_layouts.lowering import cost_weights as w
    return {name: getattr(w.HAND_SET, name.lower()) for name in ("SHUFFLE", "ALU_OP", "SHARED_ACCESS",
                                                                 "SHARED_WAVEFRONT", "WARP_BARRIER", "CTA_BARRIER")}


def options(parser) -> None:
    parser.add_argument("--match", default="", help="only the probes whose name contains this text")
    parser.add_argument("--from", dest="results", default="", metavar="JSON",
                        help="a calibration.json: fit and write the report again from its times (no GPU)")
    parser.add_argument("--write-weights", default="", metavar="JSON",
                        help="record the fitted constants as sm_90's in this file "
                             "(lowering/calibrated_weights.json is the planner's)")


def cases(args, env) -> list:
    """The probes to run (none with ``--from``: its times are recorded)."""
    return [] if args.results else [p for p in PROBES if args.match in p.name]


def _compile_and_check(probes: list) -> tuple[dict, dict, dict, list, dict]:
    """Compile every probe and its control and check the SASS: (controls, kernels, results,
    problems, SASS counts); a probe that fails either has its error in ``results``."""
    directory = tempfile.mkdtemp(prefix="ll_calibrate_")
    controls = {}
    for probe in probes:
        control = control_of(probe)
        if control.name not in controls:
            controls[control.name] = (control, compile_probe(control, directory))
    kernels, results, problems, sass = {}, {}, [], {}
    for probe in probes:
        try:
            kernel = compile_probe(probe, directory)
        except Exception as e:  # the Triton boundary: reported per probe
            results[probe.name] = {"error": f"compile: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
            problems.append(probe.name)
            continue
        sass[probe.name], problem = check_sass(probe, kernel, controls[control_of(probe).name][1])
        print(f"{probe.name}: compiled; {problem or f'{sass[probe.name]} {probe.sass} in the SASS'}", flush=True)
        if problem:
            results[probe.name] = {"error": problem}
            problems.append(probe.name)
            continue
        kernels[probe.name] = kernel
    return controls, kernels, results, problems, sass


def run(args, env, probes) -> dict:
    """``--from``: the recorded times; else compile and check every probe and, unless
    ``--dry-run``, time it: ``{"results", "environment"}`` (``problems`` on a dry run)."""
    if args.results:
        data = json.load(open(args.results))
        return {"results": data["probes"], "environment": {**data["environment"], "hand_set": hand_set_weights()}}
    controls, kernels, results, problems, sass = _compile_and_check(probes)
    if args.dry_run:
        return {"problems": problems}
    import torch
    import triton

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    control_ms = {name: time_kernel(control, kernel, sms) for name, (control, kernel) in controls.items()}
    print(f"controls: {control_ms}", flush=True)
    for probe in probes:
        if probe.name not in kernels:
            continue
        try:
            ms = time_kernel(probe, kernels[probe.name], sms)
            results[probe.name] = {**per_instruction(probe, ms, control_ms[control_of(probe).name], sms),
                                   "sass_instructions": sass[probe.name]}
        except Exception as e:  # the GPU boundary: reported per probe
            results[probe.name] = {"error": f"run: {type(e).__name__}: {e}"[:300]}
        print(f"{probe.name}: {results[probe.name]}", flush=True)
    environment = {"gpu": torch.cuda.get_device_name(), "triton": triton.__version__, "torch": torch.__version__,
                   "sms": sms, "hand_set": hand_set_weights(), "controls_ms": control_ms}
    return {"results": results, "environment": environment}


def summary(args, env, probes, ran) -> int:
    """The dry run: which probes compiled with their instructions; else the fit and its reports."""
    if args.dry_run and not args.results:
        problems = ran["problems"]
        print(f"{len(probes) - len(problems)} of {len(probes)} probes compiled with their instructions"
              + (f"; problems: {', '.join(problems)}" if problems else ""))
        return 1 if problems else 0
    results, environment = ran["results"], ran["environment"]
    fit = fit_weights({k: v for k, v in results.items() if "error" not in v})
    write_report(results, fit, environment, args.out)
    if args.write_weights:
        write_weights(fit, environment, args.write_weights)
    return 0


def main(argv=None) -> int:
    return skeleton.main("calibrate", __doc__, argv, options=options, cases=cases, run=run, summary=summary,
                         dry_run="compile every probe and check its SASS (no GPU)", prog="plan_choice.py calibrate",
                         no_gpu=lambda args: bool(args.results))


if __name__ == "__main__":
    sys.exit(main())
