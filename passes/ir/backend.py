"""Triton's own back end on a module of ours: ``ll-opt --emit llir|ptx|amdgcn``.

The module goes through Triton's later stages (``make_llir``, then ``make_ptx`` or
``make_amdgcn``) in a forked child (:mod:`.sandbox`): Triton's back end may abort the process
on bad input.  The IR layer imports nothing above it: the caller (``ll-opt --emit``) hands in
what surrounds Triton's compile (``passes.barriers.guard_barriers.guard_pruning``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from typing import Callable, ContextManager

from ...lowering.target import Target
from .diagnostics import IRError
from .sandbox import run_forked
from .snapshot import Module

EMIT_STAGES = ("llir", "ptx", "amdgcn")


def compile_module(module: Module, gpu: Target, stage: str,
                   around: Callable[[], ContextManager] = contextlib.nullcontext) -> str:
    """Hand the module to Triton's own later stages (make_llir, make_ptx / make_amdgcn) for
    ``gpu`` and return the text of ``stage`` (``llir`` or the target's assembly).  ``around``:
    a context manager that surrounds ``triton.compile`` in the child (ll-opt's:
    ``guard_barriers.guard_pruning``)."""
    if stage not in ("llir", gpu.assembly_stage):
        raise IRError(f"--emit {stage} is not available for target {gpu.triton_name}")
    text = module.print(debuginfo=True)
    # Triton reads the target from the module too: keep the two in agreement.
    if re.search(r'ttg\.target = "[^"]*"', text):
        text = re.sub(r'ttg\.target = "[^"]*"', f'ttg.target = "{gpu.triton_name}"', text, count=1)
    threads = module.threads_per_warp or gpu.warp_size

    def compile_in_child() -> str:
        import triton
        directory = tempfile.mkdtemp(prefix="ll_opt_emit_")
        try:
            path = os.path.join(directory, "module.ttgir")
            with open(path, "w") as f:
                f.write(text)
            # A private cache: concurrent ll-opt runs never race on Triton's shared cache, and
            # an output always comes from this compilation.  (ll-opt sets TRITON_DEFAULT_FP_FUSION,
            # Triton 3.9's default without its notice, before it forks this child.)
            triton.knobs.cache.dir = os.path.join(directory, "cache")
            # ll-opt's: as inside triton.compile with the plugin on, guard barriers that Triton's
            # own barriers make redundant are dropped from the LLVM IR (passes.barriers.guard_barriers).
            with around():
                kernel = triton.compile(path, target=gpu.gpu_target(threads))
            asm = kernel.asm[stage]
            return asm if isinstance(asm, str) else asm.decode()
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    return run_forked(compile_in_child)

