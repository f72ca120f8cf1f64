"""The one shape of a harness: shared options, its cases, the run, the summary.

A harness gives four functions and ``skeleton.main`` does the rest, in this order::

    def main(argv=None) -> int:
        return skeleton.main("fuzz_gpu", __doc__, argv, options=..., cases=..., run=..., summary=...,
                             jobs=True, seed=1)

* ``options(parser)``: the harness's own flags.  The shared ones are added here, with the same
  names everywhere: ``--out`` (default ``benchmarks/results``, or nowhere: print only; with
  ``dry_run_prints`` a dry run's default is nowhere, so that it never rewrites a committed
  result, and a GPU run's ``benchmarks/results``), ``--dry-run``
  (compile on the CPU, no GPU needed; ``--dry`` is its older spelling), and where asked
  ``--rounds N`` (timing harnesses; at least 1), ``--jobs N`` (compile
  processes) and ``--seed N``;
* ``cases(args, env) -> list``: what is measured, decided before anything runs (a choice the
  options cannot check, ``--only`` naming no kernel, raises :class:`UsageError`: the usage, the
  message, status 2, as for any bad option);
* ``run(args, env, cases) -> results``: compile every case and, unless ``--dry-run``, launch it;
* ``summary(args, env, cases, results) -> int``: write the reports into ``--out``, print what
  matters, return the exit status (0: everything passed).

``args.argv`` is the command line as given (for the reports' command line).  ``env`` is the :class:`Environment`: ``env.header`` (triton, Python, the GPU or the dry run's
target, torch, the capability) is what the reports record, ``env.arch`` the target compiled for,
``env.seconds()`` the time since the start.  Without a usable GPU (and no ``--dry-run``) the
harness exits with status 2 and one line saying why.  A run that needs no GPU although it is no
dry run (``plan_choice.py calibrate --from JSON`` fits recorded times again) says so with
``no_gpu(args) -> bool``: it gets the dry run's environment.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

from harness.common import BENCHMARKS, require_package

RESULTS = os.path.join(BENCHMARKS, "results")


class NoGpu(Exception):
    """No GPU this harness can run on (the message says why)."""


class UsageError(Exception):
    """Options that do not go together, or name nothing (the message says which)."""


@dataclass
class Environment:
    header: dict
    arch: int
    dry_run: bool
    started: float = field(default_factory=time.time)

    def seconds(self) -> float:
        return round(time.time() - self.started, 1)


def parser(doc: str, *, dry_run: str = "compile only (no GPU needed)", rounds: int | None = None,
           jobs: bool = False, seed: int | None = None, out_help: str | None = None,
           out_default: str | None = RESULTS, dry_run_prints: bool = False,
           prog: str | None = None) -> argparse.ArgumentParser:
    """An ArgumentParser with the shared options (the first line of ``doc`` as its description;
    ``prog``: a subcommand's spelling for its usage line, ``plan_choice.py calibrate``).
    ``out_default``: None or "" for a harness that prints its report and writes it only where
    ``--out`` says; ``dry_run_prints``: that for the dry run only (``--out`` is left None here and
    :func:`main` decides).  ``--dry`` is the hidden older spelling of ``--dry-run``."""
    p = argparse.ArgumentParser(prog=prog, description=(doc or "").strip().split("\n")[0])
    p.add_argument("--out", default=None if dry_run_prints else out_default, help=out_help or "folder for the reports (default: benchmarks/results)")
    if dry_run:
        p.add_argument("--dry-run", action="store_true", help=dry_run)
        p.add_argument("--dry", dest="dry_run", action="store_true", help=argparse.SUPPRESS)
    if rounds is not None:
        p.add_argument("--rounds", type=int, default=rounds, help="rounds, the modes' order rotated (default: %(default)s)")
    if jobs:
        p.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 2), help="compile processes")
    if seed is not None:
        p.add_argument("--seed", type=int, default=seed)
    return p


def any_arch(major: int, minor: int) -> int:
    return major * 10 + minor


def environment(dry_run: bool, arch: int | None = None, gpu_arch: Callable[[int, int], int] = any_arch) -> Environment:
    """What the run compiles for and records; ``gpu_arch(major, minor)`` picks the target on the
    GPU found (raising :class:`NoGpu` where the harness cannot use it), ``arch`` overrides it."""
    import triton
    header = {"triton": triton.__version__, "python": platform.python_version()}
    if dry_run:
        arch = arch or 90
        header["gpu"] = f"none (dry run, compiled for sm_{arch})"
        return Environment(header, arch, True)
    try:
        import torch
    except ImportError:
        raise NoGpu("torch is not installed; use --dry-run to only compile") from None
    if not torch.cuda.is_available():
        raise NoGpu("no CUDA GPU visible; use --dry-run to only compile")
    major, minor = torch.cuda.get_device_capability()
    arch = arch or gpu_arch(major, minor)
    header.update(gpu=torch.cuda.get_device_name(), torch=torch.__version__,
                  capability=f"{major}.{minor} (compiled for sm_{arch})")
    return Environment(header, arch, False)


def main(name: str, doc: str, argv, *, options: Callable, cases: Callable, run: Callable, summary: Callable,
         gpu_arch: Callable[[int, int], int] = any_arch, no_gpu: Callable = lambda args: False, **shared) -> int:
    """Parse the options, find the GPU (or the dry run's target), then cases -> run -> summary."""
    require_package()
    p = parser(doc, **shared)
    options(p)
    args = p.parse_args(argv)
    if getattr(args, "rounds", 1) < 1:
        p.error("--rounds must be at least 1")
    if shared.get("dry_run_prints") and args.out is None:
        args.out = "" if getattr(args, "dry_run", False) else shared.get("out_default", RESULTS)
    args.argv = list(sys.argv[1:] if argv is None else argv)     # the command line, for the reports
    try:
        env = environment(getattr(args, "dry_run", False) or no_gpu(args), getattr(args, "arch", None), gpu_arch)
    except NoGpu as why:
        print(f"{name}: {why}", file=sys.stderr)
        return 2
    try:
        chosen = cases(args, env)
    except UsageError as why:
        p.error(str(why))
    return summary(args, env, chosen, run(args, env, chosen))


def compile_and_launch(name: str, env: Environment, cases: list, jobs: int, compile_all: Callable,
                       run_on_gpu: Callable) -> list:
    """The bit-exact harnesses' run: compile every case in ``jobs`` processes, then (not on a dry
    run) launch them; ``env.header`` gets ``compile_seconds``."""
    print(f"{name}: {len(cases)} cases, compiling with {jobs} processes ...", flush=True)
    compiled = compile_all(cases, env.arch, jobs)
    env.header["compile_seconds"] = env.seconds()
    if not env.dry_run:
        print(f"{name}: launching ...", flush=True)
        run_on_gpu(cases, compiled, env.arch)
    return compiled
