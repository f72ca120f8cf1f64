"""What the drop-in did, and the kernels it handed back to stock Triton (fallbacks).

``stats()`` counts this process's compiles (``linear_layouts.stats()``); ``combined_stats``
adds up those of every process of a program (``passes.drop_in.shared_stats``).  A fallback is a kernel
compiled without our islands because something after our passes failed on them:
:func:`compile_without_islands` compiles it stock, records it and warns once per specialization;
a stage stopped by a signal from outside is no failure of ours (:func:`interrupting_signal`).
"""

from __future__ import annotations

import hashlib
import re
import signal
import sys
import warnings
from dataclasses import asdict, dataclass
from typing import Optional

from . import shared_stats

# The stages of ours a fallback can name besides Triton's (``llir``, ``ptx``, ...): the Gluon
# stages (``passes.drop_in.layout_stages``) and our passes.
RESOLVE_STAGE = "ll-resolve-auto-layouts"
ADVICE_STAGE = "ll-apply-advice"


@dataclass(frozen=True)
class Fallback:
    """One kernel that Triton compiled *without* our islands because something after our
    passes failed on them (``stage``: ``our passes``, ``llir``, ``ptx``, ``cubin``, ``amdgcn``,
    ``hsaco``); ``reason`` is the first line of the error.  After a ``cubin``/``hsaco`` failure
    the binary is stock's, but the kernel's ``asm["ptx"]``/``asm["amdgcn"]`` still show the text
    with our islands that the assembler rejected (Triton records every stage as it runs)."""

    kernel: str
    stage: str
    reason: str


@dataclass
class PluginStats:
    """What the drop-in did since the process started (or since ``reset_stats()``)."""

    kernels: int = 0                 # kernels that went through our pipeline
    kernels_with_islands: int = 0    # ... and came back with at least one island
    conversions: int = 0             # ttg.convert_layout ops in those kernels' TTGIR
    islands: int = 0                 # ... of them replaced by our islands (fallbacks not counted)
    local_loads: int = 0             # ttg.local_load ops in the kernels that went through it
    local_loads_lowered: int = 0     # ... of which replaced by our islands (only=...,local_load)
    # ttg.local_store and ttg.local_alloc-with-a-source ops replaced by our islands
    # (only=...,local_store,local_alloc)
    local_writes_lowered: int = 0
    # Guard barriers our islands put around their shared-memory accesses for Triton's sake, and
    # how many of them the LLVM IR showed redundant with Triton's own (passes.barriers.guard_barriers)
    guard_barriers: int = 0
    guard_barriers_dropped: int = 0
    # Kernels whose layouts ll-assign-layouts re-chose (enable(assign_layouts=True) or a pipeline
    # with it), and the ttg.convert_layout ops left in them after it: Triton's asm["ttgir"] is
    # the TTGIR before our passes, so this is where an assignment's effect can be counted.
    kernels_assigned: int = 0
    conversions_after_assignment: int = 0
    # Gluon kernels whose automatic layouts ll-resolve-auto-layouts resolved
    # (enable(resolve_auto_layouts=True)); a kernel where it failed is a fallback instead
    auto_layouts_resolved: int = 0
    # Gluon kernels compiled with the layout advice applied (enable(apply_advice=True)) and
    # changed by it; a kernel where it failed is a fallback instead
    advice_applied: int = 0
    fallbacks: list = None           # Fallback records: compiled without our islands

    def __post_init__(self):
        if self.fallbacks is None:
            self.fallbacks = []

    def summary(self) -> str:
        """Everything the plugin did, in one line, then one line per fallback with its reason:
        conversions and islands; for Gluon kernels, automatic layouts resolved and advice
        applied; layouts re-chosen; local-memory ops lowered; guard barriers dropped."""
        lines = [f"linear-layouts: {counted(self.kernels, 'kernel')}, {self.kernels_with_islands} with islands, "
                 f"{self.islands} of {self.conversions} conversions lowered by us, "
                 f"{counted(len(self.fallbacks), 'kernel')} compiled without them after a failure"
                 f"; Gluon: automatic layouts resolved in {counted(self.auto_layouts_resolved, 'kernel')}, "
                 f"layout advice applied in {self.advice_applied}"
                 + (f"; layouts re-chosen by cost in {counted(self.kernels_assigned, 'kernel')} "
                    f"({counted(self.conversions_after_assignment, 'conversion')} left after it)"
                    if self.kernels_assigned else "")
                 + (f"; {self.local_loads_lowered} of {self.local_loads} local loads lowered" if self.local_loads else "")
                 + (f"; {self.local_writes_lowered} local stores and allocations with a source lowered"
                    if self.local_writes_lowered else "")
                 + (f"; {self.guard_barriers_dropped} of {self.guard_barriers} guard barriers dropped as redundant"
                    if self.guard_barriers else "")]
        lines += [f"  {f.kernel}: {f.stage}: {f.reason}" for f in self.fallbacks]
        return "\n".join(lines)


def counted(number: int, noun: str) -> str:
    """``1 kernel``, ``2 kernels``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


_stats = PluginStats()
# (kernel name, digest of its TTGIR) of every compiled specialization warned about: one warning
# each, however often it is compiled, and one for each specialization of a kernel name.
_warned_specializations: set = set()


def stats() -> PluginStats:
    """Counts of the drop-in's work, fallbacks included (``linear_layouts.stats()``)."""
    return _stats


def combined_stats(directory: str) -> PluginStats:
    """The counts every process of a program wrote into ``directory`` (``LINEAR_LAYOUTS_STATS_DIR``,
    see ``passes.drop_in.shared_stats``), added up."""
    total = PluginStats()
    for snapshot in shared_stats.read_snapshots(directory):
        for name, value in snapshot.items():
            if name == "fallbacks":
                total.fallbacks += [Fallback(**f) for f in value]
            elif isinstance(getattr(total, name, None), int):
                setattr(total, name, getattr(total, name) + value)
    return total


def share_stats() -> None:
    shared_stats.write_snapshot(asdict(_stats))


def reset_stats() -> None:
    global _stats
    _stats = PluginStats()
    _warned_specializations.clear()


shared_stats.reset_in_forked_children(reset_stats)


# Signals that stop a compile from outside (Ctrl-C, a harness's time limit, a closed terminal).
# A tool killed by one of them did not fail on our code: the compile stops, as without us.
# SIGKILL is left out: the kernel's own memory use (the out-of-memory killer) sends it too.
_INTERRUPTING_SIGNALS = frozenset(int(getattr(signal, name)) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
                                  if hasattr(signal, name))
_ERROR_CODE = re.compile(r"error code (-?\d+)")


def interrupting_signal(error: BaseException) -> Optional[int]:
    """The signal that stopped a tool (ptxas) during the failed stage, or None where the stage
    failed on its own.  Triton raises its own error (``PTXASError: `ptxas` failed with error
    code -2``) from inside the ``except`` of the tool's ``CalledProcessError``; its return code
    is -N for a tool killed by signal N, 128+N for one whose shell wrapper was.  Example: Ctrl-C
    during ptxas gives -2 (SIGINT): an interruption, never a fallback."""
    seen = error
    while seen is not None:
        code = getattr(seen, "returncode", None)
        if code is None and (match := _ERROR_CODE.search(str(seen))):
            code = int(match.group(1))
        if isinstance(code, int):
            number = -code if code < 0 else code - 128
            if number in _INTERRUPTING_SIGNALS:
                return number
        seen = seen.__cause__ or seen.__context__
    return None


def compile_without_islands(kernel: str, ttgir: str, stage: str, error: BaseException, remarks: bool,
                             stock_compile, instead: str = "compiled it with stock Triton's lowering instead"):
    """``stock_compile()``: Triton's own compile of the kernel (from its TTGIR, without our
    islands) up to the stage that failed with them.  Where it succeeds, the kernel is a
    fallback: recorded, and warned about once per specialization.  Where it fails too, the
    failure is not ours: Triton's own error goes to the caller, as it would without the plugin
    (not chained to ours), and nothing is recorded.  ``ttgir`` (Triton's TTGIR of the kernel)
    tells specializations of one kernel name apart.  A stage stopped by a signal from outside
    (:func:`interrupting_signal`) is no failure of ours: its error goes to the caller at once,
    with no stock compile and nothing recorded."""
    if interrupting_signal(error) is not None:
        raise error
    try:
        value = stock_compile()
    except Exception as stock_error:
        raise stock_error from None
    record_fallback(kernel, ttgir, stage, error, remarks, instead)
    return value


def first_line(error: BaseException) -> str:
    return (str(error).strip() or type(error).__name__).splitlines()[0][:300]


def record_fallback(kernel: str, ttgir: str, stage: str, error: BaseException, remarks: bool,
                     instead: str = "compiled it with stock Triton's lowering instead") -> None:
    reason = first_line(error)
    _stats.fallbacks.append(Fallback(kernel, stage, reason))
    what = "failed" if stage in (RESOLVE_STAGE, ADVICE_STAGE) else "failed with our islands"
    message = f"linear-layouts: kernel {kernel}: {stage} {what} ({reason}); {instead}"
    specialization = (kernel, hashlib.sha256(ttgir.encode()).hexdigest())
    if specialization not in _warned_specializations:
        _warned_specializations.add(specialization)
        warnings.warn(message, RuntimeWarning, stacklevel=2)
    if remarks:
        print(f"remark: [linear-layouts] {message}", file=sys.stderr)
