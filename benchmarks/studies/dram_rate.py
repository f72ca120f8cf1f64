"""How many bytes of DRAM an SM moves per nanosecond, measured: the rate behind the DRAM floor.

    python benchmarks/studies/dram_rate.py --out benchmarks/results                 # on a GPU (sm_90)
    python benchmarks/studies/dram_rate.py --out benchmarks/results --write-weights lowering/calibrated_weights.json

``ll-assign-layouts`` keeps Triton's layouts where a kernel's memory traffic hides the modelled
gain (``passes/assign/dram_floor.py``).  Its floor needs the DRAM bytes an SM moves per unit of the
cost model.  Without a measurement it is the product's published peak; this script measures
what Triton kernels reach, decided before measuring:

* ``copy``: a Triton kernel copying 1 GiB of f32 (read 1 GiB, write 1 GiB), 4096 elements
  per program, 4 warps;
* ``read``: a Triton kernel summing 1 GiB of f32, one partial sum stored per program (reads
  only, as in a row reduction);

* ``l2_read``: the ``read`` kernel, but program p reads block ``p % 2048`` of an 32 MiB
  buffer, so every program after the first pass over it reads what L2 holds (an H100's L2 is
  50 MB): the rate of data the whole grid shares, which the floor counts apart
  (``passes/assign/dram_floor.py``: a load whose address does not depend on the program id);

each timed with ``triton.testing.do_bench`` (median) in 5 repetitions, the median of those.
The DRAM rate is the faster of ``copy`` and ``read`` (the floor must not exceed what the
hardware does), divided by the SM count, in bytes per ns per SM; in the cost model's units
(``unit_ns`` from ``calibration.json``: nanoseconds of an SM per unit) one byte costs
``1 / (rate x unit_ns)``; the L2 rate likewise from ``l2_read``.  Writes ``dram_rate.json`` and
``dram_rate.md``; ``--write-weights`` stores those costs as ``dram_byte`` and ``l2_byte``
beside the target's other measured constants.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "results")   # benchmarks/results
GIB = 1 << 30
BLOCK = 4096
REPEATS = 5
L2_BLOCKS = 2048          # l2_read's buffer: 2048 blocks of 4096 f32, 32 MiB


def measure() -> dict:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def copy(X, Y, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(Y + offsets, tl.load(X + offsets))

    @triton.jit
    def read(X, Partial, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(Partial + tl.program_id(0), tl.sum(tl.load(X + offsets), axis=0))

    @triton.jit
    def l2_read(X, Partial, BLOCKS: tl.constexpr, BLOCK: tl.constexpr):
        offsets = (tl.program_id(0) % BLOCKS) * BLOCK + tl.arange(0, BLOCK)
        tl.store(Partial + tl.program_id(0), tl.sum(tl.load(X + offsets), axis=0))

    elements = GIB // 4
    x = torch.randn(elements, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    partial = torch.empty(elements // BLOCK, device="cuda", dtype=torch.float32)
    grid = (elements // BLOCK,)
    launches = {
        "copy": (lambda: copy[grid](x, y, BLOCK=BLOCK, num_warps=4), 2 * GIB),
        "read": (lambda: read[grid](x, partial, BLOCK=BLOCK, num_warps=4), GIB),
        "l2_read": (lambda: l2_read[grid](x, partial, BLOCKS=L2_BLOCKS, BLOCK=BLOCK, num_warps=4), GIB),
    }
    copy[grid](x, y, BLOCK=BLOCK, num_warps=4)
    assert torch.equal(y, x), "the copy kernel did not copy"
    properties = torch.cuda.get_device_properties(0)
    result = {"gpu": properties.name, "sms": properties.multi_processor_count, "triton": triton.__version__,
              "torch": torch.__version__, "patterns": {}}
    for name, (launch, moved) in launches.items():
        times = [triton.testing.do_bench(launch, warmup=25, rep=200) for _ in range(REPEATS)]
        ms = statistics.median(times)
        result["patterns"][name] = {"bytes": moved, "ms": ms, "repeats_ms": times,
                                    "tb_per_s": moved / (ms * 1e-3) / 1e12}
    return result


def summarise(result: dict, unit_ns: float) -> dict:
    dram = [p for name, p in result["patterns"].items() if name in ("copy", "read")]
    best = max(dram, key=lambda p: p["tb_per_s"])
    bytes_per_ns_per_sm = best["tb_per_s"] * 1e3 / result["sms"]
    summary = {"bytes_per_ns_per_sm": bytes_per_ns_per_sm, "unit_ns": unit_ns,
               "dram_byte": 1.0 / (bytes_per_ns_per_sm * unit_ns)}
    if "l2_read" in result["patterns"]:
        l2 = result["patterns"]["l2_read"]["tb_per_s"] * 1e3 / result["sms"]
        summary.update(l2_bytes_per_ns_per_sm=l2, l2_byte=1.0 / (l2 * unit_ns))
    return summary


def render(result: dict, summary: dict) -> str:
    lines = ["# DRAM and L2 bytes per SM, measured: the rates behind `ll-assign-layouts`' DRAM floor", "",
             f"{result['gpu']} ({result['sms']} SMs), triton {result['triton']}, torch {result['torch']}. "
             f"Produced by `python benchmarks/studies/dram_rate.py --out benchmarks/results`.", "",
             "| pattern | bytes | ms (median of 5 do_bench medians) | TB/s |", "|---|---:|---:|---:|"]
    for name, p in result["patterns"].items():
        lines.append(f"| {name} | {p['bytes']} | {p['ms']:.4f} | {p['tb_per_s']:.3f} |")
    lines += ["", f"Rate: the faster pattern, {summary['bytes_per_ns_per_sm']:.2f} bytes per ns per SM; "
              f"one cost-model unit is {summary['unit_ns']:.4f} ns of an SM (`calibration.json`), so a DRAM byte "
              f"costs **{summary['dram_byte']:.4f}** units per SM."]
    if "l2_byte" in summary:
        lines += ["", f"L2 (`l2_read`: the grid shares a 32 MiB buffer): {summary['l2_bytes_per_ns_per_sm']:.2f} bytes "
                  f"per ns per SM, a byte **{summary['l2_byte']:.4f}** units."]
    return "\n".join(lines) + "\n"


def write_weight(path: str, target: str, summary: dict, source: str) -> None:
    with open(path) as f:
        data = json.load(f)
    entry = data.setdefault(target, {"source": source, "weights": {}})
    entry["weights"]["dram_byte"] = round(summary["dram_byte"], 4)
    if "l2_byte" in summary:
        entry["weights"]["l2_byte"] = round(summary["l2_byte"], 4)
    entry["dram_source"] = source
    with open(path, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--calibration", default=os.path.join(RESULTS, "calibration.json"))
    parser.add_argument("--write-weights", default="", metavar="JSON")
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("--from-json", default="", help="no GPU: summarise an earlier run's dram_rate.json")
    args = parser.parse_args(argv)
    with open(args.calibration) as f:
        unit_ns = json.load(f)["fit"]["unit_ns"]
    if args.from_json:
        with open(args.from_json) as f:
            result = json.load(f)["measured"]
    else:
        result = measure()
    summary = summarise(result, unit_ns)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "dram_rate.json"), "w") as f:
        json.dump({"measured": result, "summary": summary}, f, indent=1)
    with open(os.path.join(args.out, "dram_rate.md"), "w") as f:
        f.write(render(result, summary))
    print(render(result, summary))
    if args.write_weights:
        source = f"benchmarks/studies/dram_rate.py on an {result['gpu']}, triton {result['triton']}"
        write_weight(args.write_weights, args.target, summary, source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
