"""Compile a Gluon kernel for sm_90 on the CPU, quietly, and say in one line how it went.

The Gluon harnesses' dry runs (``gluon_forms_gpu.py --dry-run``, ``gluon_forms_gpu.py kernels
--dry``, ``peer_gluon_gpu.py --dry``) compile every form of every kernel for an H100 without one,
and some forms fail on purpose (an automatic layout Triton's resolution rejects).  A failure
must read as one table cell, not as pages of warnings and MLIR diagnostics, so the compile:

* silences Python's warnings (Triton's deprecations, repeated for every kernel);
* captures fd 2, where MLIR's C++ prints its diagnostics (``CapturedStderr``), and keeps the
  text with the result, since the exception alone often says only "PassManager::run failed";
* returns the failure rather than raising it: the callers record it and go on.

:func:`first_line` turns a failure and its captured text into the cell.  Example: a pass that
rejects an op prints ``loc(...): error: 'tt.make_range' op Failed to infer return type`` on fd 2
and raises "PassManager::run failed"; the cell reads ``'tt.make_range' op Failed to infer
return type``.  :func:`launch_quietly` does the same for a GPU launch (the harnesses' GPU runs
compile at the first launch).  :func:`access_text` says what the compiled PTX does with memory.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Optional


@dataclass
class QuietCompile:
    compiled: object = None                   # Triton's compiled kernel; None where the compile raised
    error: Optional[BaseException] = None     # what it raised
    stderr: str = ""                          # what it printed on fd 2 (MLIR's diagnostics)


def compile_for_sm90(source, options: Optional[dict] = None) -> QuietCompile:
    """``triton.compile(source)`` for sm_90 with ``options`` (Triton's defaults where None),
    warnings silenced and fd 2 captured; a failure comes back in ``error``, never raised."""
    import triton
    from triton.backends.compiler import GPUTarget

    from linear_layouts.passes.ir.diagnostics import CapturedStderr
    stderr = None
    try:
        with warnings.catch_warnings(), CapturedStderr() as stderr:
            warnings.simplefilter("ignore")
            compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options=options)
    except Exception as error:
        return QuietCompile(error=error, stderr=stderr.text if stderr else "")
    return QuietCompile(compiled=compiled, stderr=stderr.text)


def launch_quietly(launch, torch) -> QuietCompile:
    """``launch()`` (whose first call compiles) and a wait for the GPU, as quiet as
    :func:`compile_for_sm90`: a failure comes back in ``error``, never raised."""
    from linear_layouts.passes.ir.diagnostics import CapturedStderr
    stderr = None
    try:
        with warnings.catch_warnings(), CapturedStderr() as stderr:
            warnings.simplefilter("ignore")
            launch()
        torch.cuda.synchronize()
    except Exception as error:
        return QuietCompile(error=error, stderr=stderr.text if stderr else "")
    return QuietCompile(stderr=stderr.text)


_GENERIC = ("Failures have been detected while processing an MLIR pass pipeline", "PassManager::run failed")


def first_line(error: BaseException, stderr: str = "") -> str:
    """Triton's first specific diagnostic (MLIR prints them on fd 2; a crash names its pass),
    else the last line of a frontend error (``at 8:4:``, the source, then the message), else the
    exception's first line; at most 160 characters, no ``|`` (it goes into a Markdown table)."""
    text = stderr + "\n" + str(error)
    errors = [line.split("error: ", 1)[1].strip() for line in text.splitlines() if "error: " in line]
    specific = [e for e in errors if not e.startswith(_GENERIC)]
    crashed_in = re.search(r"Pipeline failed while executing \[`(\w+)`", text)
    assertion = re.search(r"Assertion `(.*)' failed", text)
    where = f" in {crashed_in.group(1)}" if crashed_in else ""
    if assertion:
        line = f"assertion `{assertion.group(1)}` failed{where}"
    elif crashed_in and (not specific or specific[0].startswith("A signal was caught")):
        line = f"crash{where}"
    elif specific:
        line = specific[0]
    else:
        message = [line.strip() for line in str(error).splitlines() if line.strip()]
        if message and re.fullmatch(r"at \d+:\d+:", message[0]):      # a frontend error: the cause says why
            line = first_line(error.__cause__) if error.__cause__ is not None else message[-1]
        else:
            line = (message or errors or [type(error).__name__])[0]
    return line[:160].replace("|", "/")


_SHARED_ACCESS = re.compile(r"^\s*(?:@!?%p\d+\s+)?((?:ld|st)\.shared(?:\.v\d)?|ldmatrix|stmatrix)\b", re.M)
_CP_ASYNC = re.compile(r"^\s*(?:@!?%p\d+\s+)?cp\.async\.c[ag]\.shared\.global\s[^,]*,[^,]*,\s*(0x[0-9a-f]+|\d+)", re.M)


def access_text(ptx: str) -> str:
    """What decides a copy's speed in its PTX: 16-byte global loads and stores; where there are
    any, shared-memory accesses by kind and width (``st.shared.v4 8``: 8 16-byte stores of 32-bit
    words) and ``cp.async`` copies by bytes.  Example: ``16-byte global loads 8, stores 8;
    shared st.shared.v4 8, ld.shared.v4 8``."""
    text = f"16-byte global loads {ptx.count('ld.global.v4')}, stores {ptx.count('st.global.v4')}"
    shared: dict = {}
    for match in _SHARED_ACCESS.finditer(ptx):
        shared[match.group(1)] = shared.get(match.group(1), 0) + 1
    if shared:
        text += "; shared " + ", ".join(f"{kind} {n}" for kind, n in shared.items())
    copies: dict = {}
    for match in _CP_ASYNC.finditer(ptx):
        size = int(match.group(1), 0)
        copies[size] = copies.get(size, 0) + 1
    if copies:
        text += "; cp.async " + ", ".join(f"{size}-byte {n}" for size, n in sorted(copies.items(), reverse=True))
    return text
