"""torch.compile with the plugin, on a GPU: does every kernel Inductor compiles go through it,
in every worker process, and what does the compiled program cost?

    python benchmarks/studies/torch_compile_gpu.py --out benchmarks/results/torch_compile_gpu.md

Needs torch with CUDA and the package installed as users install it (a wheel: its start-up
hook is what reaches Inductor's workers).  Each run is a fresh process with cold caches of its
own (Inductor's and Triton's), in one of four modes, alternated over ``--rounds``:

* ``stock``:  the program as it is;
* ``env``:    ``LINEAR_LAYOUTS=1`` in the environment;
* ``enable``: ``linear_layouts.enable()`` called in the program *after* Inductor's worker pool
  is up (a small function was compiled first), the case where the main process alone used to
  get the plugin;
* ``report``: ``python -m linear_layouts report --no-compare`` around the program.

The program compiles three modules (an attention block, an RMS norm, a cross entropy) and a
small pointwise function, checks each against eager PyTorch, then times them.

What is counted, in every process of the run (the main one, Inductor's sidecar and its workers):
a compilation listener installed by this script's ``sitecustomize`` (``PYTHONPATH``) writes one
line per kernel Triton compiles; the plugin writes its own counts (``LINEAR_LAYOUTS_STATS_DIR``);
the report writes its records.  "Through the plugin" is the plugin's count of kernels (or the
report's records) against Triton's count of compiles, in each process.

What is timed: GPU time of a step (CUDA events, median of 7 repetitions of 20 steps) and host
time per call (calls of a tiny pointwise function and of the RMS norm on a small input, no CUDA
graph: the launch overhead users pay; 3,000 calls, synchronized once at the end, median of 5).
A profile of the host loop lists any frame of the plugin's own code on the launch path.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ("stock", "env", "enable", "report")

COUNTING_SITECUSTOMIZE = textwrap.dedent('''
    """Counts every kernel Triton compiles in this process (benchmarks/studies/torch_compile_gpu.py)."""
    import os

    from linear_layouts.tools.report.site import run_shadowed_sitecustomize


    def _install_listener():
        import triton

        below = triton.knobs.compilation.listener
        directory = os.environ["LL_COUNT_DIR"]

        def listener(*, src, metadata, metadata_group, times, cache_hit):
            if below is not None:
                below(src=src, metadata=metadata, metadata_group=metadata_group, times=times, cache_hit=cache_hit)
            # the process id when called: forked workers inherit this listener from their parent
            with open(os.path.join(directory, f"{os.getpid()}.txt"), "a") as f:
                f.write(f"{int(bool(cache_hit))} {(metadata or {}).get('name', '?')}\\n")

        triton.knobs.compilation.listener = listener


    run_shadowed_sitecustomize(os.path.dirname(os.path.abspath(__file__)))
    if os.environ.get("LL_COUNT_DIR"):
        from linear_layouts.passes.drop_in.after_triton import call_after_triton_import
        call_after_triton_import(_install_listener)
''')

PROGRAM = textwrap.dedent('''
    import cProfile, json, os, pstats, statistics, sys, time
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    MODE = sys.argv[1]
    RESULT = sys.argv[2]
    torch.manual_seed(0)
    device = "cuda"


    class AttentionBlock(nn.Module):
        def __init__(self, width=1024, heads=16):
            super().__init__()
            self.heads = heads
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, c)
            x = x + self.proj(a)
            return x + self.down(F.gelu(self.up(self.norm2(x))))


    def rms_norm(x, w):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w


    def cross_entropy(logits, target):
        return F.cross_entropy(logits.float(), target)


    def pointwise(x):
        return torch.sin(x) * 2.0 + 1.0


    def gpu_ms(fn, args, steps=20, reps=7):
        for _ in range(3):
            fn(*args)
        times = []
        for _ in range(reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(steps):
                fn(*args)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / steps)
        return statistics.median(times)


    def host_us(fn, args, calls=3000, reps=5):
        for _ in range(50):
            fn(*args)
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            begin = time.perf_counter()
            for _ in range(calls):
                fn(*args)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - begin) / calls * 1e6)
        return statistics.median(times)


    def plugin_frames(fn, args, calls=500):
        """Functions of the installed plugin's code called while launching, and the costliest ones."""
        import importlib.util
        spec = importlib.util.find_spec("linear_layouts")
        package = os.path.dirname(spec.origin) + os.sep if spec and spec.origin else None
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(calls):
            fn(*args)
        profile.disable()
        torch.cuda.synchronize()
        stats = pstats.Stats(profile).stats
        ours = sorted({f"{path}:{name}" for (path, line, name) in stats if package and path.startswith(package)})
        top = sorted(stats.items(), key=lambda item: -item[1][2])[:12]     # by own time
        costly = [f"{os.path.basename(path)}:{name} {own * 1e6 / calls:.2f}us" for (path, line, name), (_, _, own, _, _) in top]
        return ours, costly


    def gc_during(fn, args, calls=3000):
        """Collections of each generation while calling fn, and the objects the collector tracks."""
        import gc
        before = [s["collections"] for s in gc.get_stats()]
        for _ in range(calls):
            fn(*args)
        torch.cuda.synchronize()
        return [s["collections"] - b for s, b in zip(gc.get_stats(), before)], len(gc.get_objects())


    # Inductor's pool up before anything else (a program that has compiled something before)
    warm = torch.compile(lambda x: x * 3 + 1)
    warm(torch.randn(64, device=device))
    from torch._inductor.async_compile import AsyncCompile
    AsyncCompile.wait_pool_ready()
    torch.compile(lambda x: x.cos() - 1)(torch.randn(128, device=device))
    def compiles_so_far():
        """Kernels Triton compiled so far in every process of the run (the counting listener's lines)."""
        directory = os.environ["LL_COUNT_DIR"]
        return sum(line.startswith("0 ") for name in os.listdir(directory) for line in open(os.path.join(directory, name)))


    import linear_layouts
    compiles_before_enable = compiles_so_far()
    if MODE == "enable":
        linear_layouts.enable()

    block = AttentionBlock().to(device, torch.bfloat16)
    x = torch.randn(8, 1024, 1024, device=device, dtype=torch.bfloat16)
    w = torch.randn(4096, device=device, dtype=torch.bfloat16)
    h = torch.randn(8192, 4096, device=device, dtype=torch.bfloat16)
    h_small = torch.randn(4, 4096, device=device, dtype=torch.bfloat16)
    logits = torch.randn(4096, 32000, device=device, dtype=torch.bfloat16)
    target = torch.randint(0, 32000, (4096,), device=device)
    tiny = torch.randn(1024, device=device)

    compiled = {"attention block": torch.compile(block), "rms norm": torch.compile(rms_norm),
                "cross entropy": torch.compile(cross_entropy), "pointwise": torch.compile(pointwise)}
    eager = {"attention block": block, "rms norm": rms_norm, "cross entropy": cross_entropy, "pointwise": pointwise}
    inputs = {"attention block": (x,), "rms norm": (h, w), "cross entropy": (logits, target), "pointwise": (tiny,)}
    tolerance = {"attention block": 5e-2, "rms norm": 2e-2, "cross entropy": 1e-3, "pointwise": 1e-5}
    result = {"mode": MODE, "pid": os.getpid(), "matches": {}, "gpu_ms": {}, "host_us": {},
              "compiles_before_enable": compiles_before_enable if MODE == "enable" else 0}
    begin = time.perf_counter()
    with torch.no_grad():
        for name, fn in compiled.items():
            got, want = fn(*inputs[name]), eager[name](*inputs[name])
            result["matches"][name] = bool(torch.allclose(got.float(), want.float(), atol=tolerance[name],
                                                          rtol=tolerance[name]))
        torch.cuda.synchronize()
        result["compile_s"] = time.perf_counter() - begin
        for name in ("attention block", "rms norm", "cross entropy"):
            result["gpu_ms"][name] = gpu_ms(compiled[name], inputs[name])
        compiled["rms norm"](h_small, w)   # the small shape compiles before it is timed
        # Host time with nothing else running: the compile workers stopped, the process on one core.
        from torch._inductor.async_compile import shutdown_compile_workers
        shutdown_compile_workers()
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {3})
        # The same compiled function with the plugin switched on and off in this one process: what
        # enable() itself costs a launch, free of the spread between processes.
        if MODE == "stock":
            alternated = {"off": [], "on": []}
            for _ in range(5):
                alternated["off"].append(host_us(compiled["pointwise"], (tiny,), calls=2000, reps=1))
                linear_layouts.enable()
                alternated["on"].append(host_us(compiled["pointwise"], (tiny,), calls=2000, reps=1))
                linear_layouts.disable()
            result["host_us"]["pointwise, enable() off in this process"] = statistics.median(alternated["off"])
            result["host_us"]["pointwise, enable() on in this process"] = statistics.median(alternated["on"])
        result["host_us"]["pointwise"] = host_us(compiled["pointwise"], (tiny,))
        result["host_us"]["rms norm (4x4096)"] = host_us(compiled["rms norm"], (h_small, w))
        result["plugin_frames_on_launch_path"], result["costliest_on_launch_path"] = \
            plugin_frames(compiled["pointwise"], (tiny,))
        result["gc_collections"], result["gc_tracked_objects"] = gc_during(compiled["pointwise"], (tiny,))
        import gc
        gc.disable()
        result["host_us"]["pointwise, gc off"] = host_us(compiled["pointwise"], (tiny,))
        gc.enable()
    with open(RESULT, "w") as f:
        json.dump(result, f)
''')


def count_lines(directory: str) -> dict:
    """{pid: [compiles, cache hits]} from the counting listener's files."""
    counts = {}
    for name in os.listdir(directory) if os.path.isdir(directory) else []:
        with open(os.path.join(directory, name)) as f:
            lines = [line.split()[0] for line in f if line.strip()]
        counts[name.split(".")[0]] = [lines.count("0"), lines.count("1")]
    return counts


def plugin_counts(directory: str) -> dict:
    """{pid: kernels} from the plugin's own counts (LINEAR_LAYOUTS_STATS_DIR)."""
    from linear_layouts.passes.drop_in import shared_stats

    return {s["pid"]: s.get("kernels", 0) for s in shared_stats.read_snapshots(directory)}


def plugin_summary(directory: str) -> str:
    from linear_layouts.passes.drop_in import hook

    return hook.combined_stats(directory).summary().splitlines()[0]


def report_counts(directory: str) -> dict:
    """{pid: kernels recorded, cache hits left out} from the report's records."""
    folder = os.path.join(directory, "records")
    counts = {}
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        with open(os.path.join(folder, name)) as f:
            records = [json.loads(line) for line in f if line.strip()]
        counts[name[len("kernels-"):-len(".jsonl")]] = sum(1 for r in records if not r.get("cache_hit"))
    return counts


def run_once(mode: str, workdir: str, timeout: int) -> dict:
    run_dir = tempfile.mkdtemp(prefix=f"{mode}-", dir=workdir)
    site = os.path.join(run_dir, "site")
    os.makedirs(site)
    with open(os.path.join(site, "sitecustomize.py"), "w") as f:
        f.write(COUNTING_SITECUSTOMIZE)
    program = os.path.join(run_dir, "program.py")
    with open(program, "w") as f:
        f.write(PROGRAM)
    counts, stats, result = (os.path.join(run_dir, name) for name in ("counts", "stats", "result.json"))
    os.makedirs(counts)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINEAR_LAYOUTS")}
    env.update({"PYTHONPATH": os.pathsep.join(filter(None, [site, env.get("PYTHONPATH")])),
                "LL_COUNT_DIR": counts, "LINEAR_LAYOUTS_STATS_DIR": stats,
                "TORCHINDUCTOR_CACHE_DIR": os.path.join(run_dir, "inductor"),
                "TRITON_CACHE_DIR": os.path.join(run_dir, "triton")})
    command = [sys.executable, program, mode, result]
    if mode == "env":
        env["LINEAR_LAYOUTS"] = "1"
    if mode == "report":
        command = [sys.executable, "-m", "linear_layouts", "report", "--no-compare", "--pictures", "0", "-o",
                   os.path.join(run_dir, "report"), program, mode, result]
    begin = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    out = {"mode": mode, "wall_s": time.perf_counter() - begin, "returncode": done.returncode,
           "stderr_tail": done.stderr[-1500:]}
    if os.path.exists(result):
        with open(result) as f:
            out.update(json.load(f))
    out["triton_compiles"] = count_lines(counts)
    out["plugin_kernels"] = plugin_counts(stats) if mode in ("env", "enable") else {}
    out["plugin_summary"] = plugin_summary(stats) if mode in ("env", "enable") else ""
    out["report_kernels"] = report_counts(os.path.join(run_dir, "report")) if mode == "report" else {}
    return out


def coverage(run: dict) -> tuple[int, int, int]:
    """(Triton compiles, of them through the plugin or recorded, processes that compiled), each
    process's count bounded by the compiles Triton made in it."""
    compiles = {pid: c[0] for pid, c in run["triton_compiles"].items() if c[0]}
    seen = run["plugin_kernels"] if run["mode"] in ("env", "enable") else run["report_kernels"]
    through = sum(min(seen.get(pid, 0), n) for pid, n in compiles.items())
    # enable(): the kernels compiled before the call (the warm-up's) are not the plugin's to see
    return sum(compiles.values()) - run.get("compiles_before_enable", 0), through, len(compiles)


def markdown(runs: list[dict], gpu: str, versions: str, command: str = "python benchmarks/studies/torch_compile_gpu.py") -> str:
    lines = [f"# torch.compile with the plugin ({gpu}; {versions})", "",
             f"Command: `{command}` (each run a fresh process, cold caches, "
             "Inductor's pool up before the plugin is asked for in `enable` mode; modes alternated).", "",
             "## Every kernel through the plugin, in every process", "",
             "`enable`: the compiles counted are those after `enable()` (the warm-up's two came before it).", "",
             "| round | mode | Triton compiles | through the plugin (report: recorded) | processes that compiled | "
             "outputs match eager | exit |", "|---|---|---|---|---|---|---|"]
    for i, run in enumerate(runs):
        compiles, through, processes = coverage(run)
        shown = "-" if run["mode"] == "stock" else f"{through} of {compiles}"
        matches = run.get("matches", {})
        lines.append(f"| {i // len(MODES) + 1} | {run['mode']} | {compiles} | {shown} | {processes} | "
                     f"{sum(matches.values())} of {len(matches)} | {run['returncode']} |")
    lines += ["", "## Time (medians over the rounds; ratio to stock)", "",
              "| measure | stock | env | enable | report | env / stock | enable / stock |", "|---|---|---|---|---|---|---|"]
    measures = [("gpu_ms", name, "ms") for name in ("attention block", "rms norm", "cross entropy")] + \
               [("host_us", name, "us") for name in ("pointwise", "pointwise, gc off", "rms norm (4x4096)",
                                                     "pointwise, enable() off in this process",
                                                     "pointwise, enable() on in this process")] + \
               [("compile_s", None, "s")]
    for kind, name, unit in measures:
        medians = {}
        for mode in MODES:
            values = [r[kind][name] if name else r[kind] for r in runs
                      if r["mode"] == mode and kind in r and (name is None or name in r[kind])]
            medians[mode] = statistics.median(values) if values else float("nan")
        label = f"{'GPU' if kind == 'gpu_ms' else 'host per call' if kind == 'host_us' else 'first compile'}" \
                f"{': ' + name if name else ' (whole program)'} ({unit})"
        lines.append(f"| {label} | " + " | ".join(f"{medians[m]:.4g}" for m in MODES) +
                     f" | {medians['env'] / medians['stock']:.3f} | {medians['enable'] / medians['stock']:.3f} |")
    lines += ["", "## The host loop (pointwise function, per run)", "",
              "| round | mode | gc collections in 3,000 calls (gen 0, 1, 2) | objects the collector tracks | "
              "plugin's counts |", "|---|---|---|---|---|"]
    for i, run in enumerate(runs):
        lines.append(f"| {i // len(MODES) + 1} | {run['mode']} | {run.get('gc_collections')} | "
                     f"{run.get('gc_tracked_objects')} | {run.get('plugin_summary') or '-'} |")
    frames = sorted({f for r in runs for f in r.get("plugin_frames_on_launch_path", [])})
    lines += ["", f"Frames of the plugin's code in a profile of 500 launches of the pointwise function: "
                  f"{len(frames)}" + (f" ({', '.join(frames[:8])})" if frames else "") + "."]
    failed = [r for r in runs if r["returncode"]]
    for r in failed:
        lines += ["", f"Run `{r['mode']}` exited {r['returncode']}:", "", "```", r["stderr_tail"], "```"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of " + ", ".join(MODES))
    parser.add_argument("--timeout", type=int, default=300, help="seconds a run may take")
    parser.add_argument("--out", default="", help="write the Markdown report here too")
    parser.add_argument("--json", default="", help="write every run's raw result here")
    args = parser.parse_args(argv)
    import torch
    import triton

    if not torch.cuda.is_available():
        print("torch_compile_gpu: needs a CUDA GPU", file=sys.stderr)
        return 1
    modes = [m for m in args.modes.split(",") if m]
    gpu = torch.cuda.get_device_name()
    versions = f"torch {torch.__version__}, triton {triton.__version__}, Python {platform.python_version()}"
    command = " ".join(["python benchmarks/studies/torch_compile_gpu.py"] + list(sys.argv[1:] if argv is None else argv))
    workdir = tempfile.mkdtemp(prefix="ll-torch-compile-")
    runs = []
    try:
        for _ in range(args.rounds):
            for mode in modes:
                run = run_once(mode, workdir, args.timeout)
                compiles, through, processes = coverage(run)
                print(f"{mode:7s} exit {run['returncode']} {run['wall_s']:.1f}s compiles {compiles} through {through} "
                      f"in {processes} processes; matches {run.get('matches')}", file=sys.stderr, flush=True)
                runs.append(run)
                write_results(runs, markdown(runs, gpu, versions, command), args)   # what is done survives a time limit
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(markdown(runs, gpu, versions, command))
    return 0


def write_results(runs: list[dict], text: str, args) -> None:
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    sys.exit(main())
