"""``report --measure``: each kernel of the program timed stock and ours, with the program's own
arguments (docs/report.md, 'Options and what the pages hold').

While the program runs, ``LaunchRecorder`` wraps ``JITFunction.run`` (what ``kernel[grid](...)``
and the autotuner call): the first launch of each kernel with each argument signature is kept:
the function, its grid, its keyword arguments (constexprs, ``num_warps``, the autotuner's
config) and its positional arguments, tensors *cloned* at the launch (the program may change
them afterwards, or free them).  The program's own launch runs unchanged.

After the program ends, ``time_launches`` replays each kept launch with stock Triton and with
``linear_layouts.enable()`` (fresh clones of the inputs for each, so a kernel that writes its
inputs starts from the same values), timed by ``triton.testing.do_bench`` (median), and gives
the ratio stock / ours (above 1: ours is faster).  A Gluon kernel is also timed with its layout
advice applied (``linear_layouts.enable(apply_advice=True)``: every finding of the kernel at
once, as ``ll-apply-advice`` applies them), in the same rounds, and its modelled gain is read
from the two TTGIRs (ours as written, ours advised).  Each mode's final code is kept as a
fingerprint (``code_fingerprint``): where two modes compile a launch to the same code, the
report says "same binary" instead of reading run-to-run noise as a verdict.  Without a GPU
nothing is recorded or timed and the report says why (``gpu_problem``).

Only the process that runs the program records (launches in spawned workers are not timed).
"""

from __future__ import annotations

import hashlib
import re
import statistics
import threading
from dataclasses import dataclass, field
from typing import Callable, Optional


@dataclass
class Launch:
    """One kept launch of a kernel."""

    function: object                 # the JITFunction
    name: str
    grid: object
    args: tuple                      # tensors cloned at the launch
    kwargs: dict
    signature: str                   # what tells launches apart: argument kinds, dtypes and shapes


ROUNDS = 3      # stock and ours (and, for Gluon kernels, ours advised) alternate, each timed this many times


@dataclass
class Measurement:
    """One kept launch timed in rounds: stock, ours, [advised,] stock, ours, ... (``ROUNDS`` each)."""

    name: str
    signature: str
    stock_runs: list = field(default_factory=list)     # milliseconds, one per round
    ours_runs: list = field(default_factory=list)
    problem: str = ""
    advised_runs: list = field(default_factory=list)   # Gluon kernels: ours with the advice applied
    advised_problem: str = ""                          # why the advised kernel was not timed
    code: dict = field(default_factory=dict)           # mode -> code_fingerprint of its final code
    modelled_gain: Optional[float] = None              # the advice's: modelled cost as written / advised

    @property
    def advised_ms(self) -> Optional[float]:
        return statistics.median(self.advised_runs) if self.advised_runs else None

    @property
    def advice_ratio(self) -> Optional[float]:
        """ours / ours advised, medians over the rounds (above 1: the advice made it faster)."""
        if not self.ours_ms or not self.advised_ms:
            return None
        return self.ours_ms / self.advised_ms

    def same_binary(self, a: str, b: str) -> bool:
        """Whether modes ``a`` and ``b`` compiled this launch to the same final code (False when
        either was not fingerprinted)."""
        return bool(self.code.get(a)) and self.code.get(a) == self.code.get(b)

    @property
    def stock_ms(self) -> Optional[float]:
        return statistics.median(self.stock_runs) if self.stock_runs else None

    @property
    def ours_ms(self) -> Optional[float]:
        return statistics.median(self.ours_runs) if self.ours_runs else None

    @property
    def ratio(self) -> Optional[float]:
        """stock / ours, medians over the rounds (above 1: ours is faster)."""
        if not self.stock_ms or not self.ours_ms:
            return None
        return self.stock_ms / self.ours_ms

    @property
    def noise(self) -> Optional[float]:
        """How far this launch's stock timings spread, slowest over fastest minus 1 (0.01: 1%);
        None with fewer than two.  The same binary timed again: what no change explains."""
        if len(self.stock_runs) < 2 or not min(self.stock_runs):
            return None
        return max(self.stock_runs) / min(self.stock_runs) - 1


def run_noise(measurements: list) -> float:
    """The run's noise: the largest spread of one launch's stock timings (0 when nothing was
    timed twice)."""
    return max((m.noise for m in measurements if m.noise is not None), default=0.0)


# What of a final code is not code: comments, debug line directives and debug sections.  Our
# lowering keeps a conversion's location differently from Triton's, so two compiles of the same
# instructions differ there (and their cubins in the line tables).
_DEBUG_LINES = re.compile(r"^\s*\.(loc|file)\b[^\n]*$", re.M)
_NOT_CODE = {"ptx": (re.compile(r"//[^\n]*"), _DEBUG_LINES,
                     re.compile(r"^\s*\.section\s+\.debug\w*\s*\{.*?^\s*\}", re.M | re.S)),
             "amdgcn": (re.compile(r"(;|//)[^\n]*"), _DEBUG_LINES)}


def code_text(asm: dict) -> Optional[str]:
    """A compiled kernel's final code without comments and debug information: its PTX (CUDA)
    or AMDGCN (HIP); None when it has neither."""
    for key, patterns in _NOT_CODE.items():
        text = asm.get(key) if hasattr(asm, "get") else None
        if isinstance(text, bytes):
            text = text.decode(errors="replace")
        if text:
            for pattern in patterns:
                text = pattern.sub("", text)
            return "\n".join(line.rstrip() for line in text.splitlines() if line.strip())
    return None


def code_fingerprint(compiled) -> str:
    """What tells two compiles of a kernel apart: a hash of its final code without comments
    and debug information (``code_text``), or of its binary (cubin, hsaco) where there is no
    text; "" for anything else (a launch that returned no compiled kernel)."""
    asm = getattr(compiled, "asm", None)
    if asm is None:
        return ""
    text = code_text(asm)
    if text is not None:
        return hashlib.sha256(text.encode()).hexdigest()
    for key in ("cubin", "hsaco"):
        binary = asm.get(key) if hasattr(asm, "get") else None
        if binary:
            return hashlib.sha256(binary if isinstance(binary, bytes) else str(binary).encode()).hexdigest()
    return ""


def is_gluon(function) -> bool:
    """Whether a kept launch's function is a Gluon kernel (``GluonJITFunction.is_gluon()``)."""
    check = getattr(function, "is_gluon", None)
    try:
        return bool(check()) if callable(check) else False
    except Exception:     # a JITFunction of a release where is_gluon means something else
        return False


def _is_tensor(value) -> bool:
    return hasattr(value, "clone") and hasattr(value, "data_ptr")


def describe_argument(value) -> str:
    if _is_tensor(value):
        return f"{getattr(value, 'dtype', '?')}{list(getattr(value, 'shape', []))}"
    if isinstance(value, (bool, int, float, str)) or value is None:
        return type(value).__name__
    return type(value).__name__


def clone_arguments(args: tuple) -> tuple:
    """``args`` with every tensor replaced by a clone (others as they are)."""
    return tuple(a.clone() if _is_tensor(a) else a for a in args)


def clone_keywords(kwargs: dict) -> dict:
    return {k: (v.clone() if _is_tensor(v) else v) for k, v in kwargs.items()}


class LaunchRecorder:
    """Keeps the first launch of each (kernel, argument signature); ``install`` wraps
    ``cls.run`` (default: Triton's ``JITFunction``), ``uninstall`` puts it back."""

    def __init__(self):
        self.launches: list[Launch] = []
        self._seen: set = set()
        self._cls = None
        self._original = None
        self._local = threading.local()

    def install(self, cls=None) -> None:
        if cls is None:
            from triton.runtime.jit import JITFunction
            cls = JITFunction
        self._cls, self._original = cls, cls.run
        recorder = self

        def run(function, *args, grid, warmup, **kwargs):
            if not warmup and not getattr(recorder._local, "replaying", False):
                recorder.keep(function, args, grid, kwargs)
            return recorder._original(function, *args, grid=grid, warmup=warmup, **kwargs)

        cls.run = run

    def uninstall(self) -> None:
        if self._cls is not None:
            self._cls.run = self._original
            self._cls = None

    def keep(self, function, args: tuple, grid, kwargs: dict) -> None:
        name = getattr(function, "__name__", None) or getattr(getattr(function, "fn", None), "__name__", "kernel")
        signature = ", ".join([describe_argument(a) for a in args] +
                              [f"{k}={v!r}" if not _is_tensor(v) else f"{k}={describe_argument(v)}"
                               for k, v in sorted(kwargs.items())])
        key = (id(function), signature)
        if key in self._seen:
            return
        self._seen.add(key)
        self.launches.append(Launch(function, name, grid, clone_arguments(args), clone_keywords(kwargs), signature))

    def replay(self, launch: Launch) -> Callable[[], object]:
        """A function that launches ``launch`` once more on fresh clones of its inputs (made
        now, outside the timed calls); it returns what the launch returns (Triton's compiled
        kernel)."""
        args, kwargs = clone_arguments(launch.args), clone_keywords(launch.kwargs)
        original = self._original or type(launch.function).run

        def once():
            self._local.replaying = True
            try:
                return original(launch.function, *args, grid=launch.grid, warmup=False, **kwargs)
            finally:
                self._local.replaying = False
        return once


def gpu_problem() -> str:
    """"" when a GPU can time kernels, else why not (in words for the report)."""
    try:
        import torch
    except ImportError:
        return "torch is not installed, so no GPU can be used"
    if not torch.cuda.is_available():
        return "no GPU on this machine (torch.cuda.is_available() is False)"
    return ""


def _do_bench(function: Callable[[], None]) -> float:
    from triton.testing import do_bench
    return do_bench(function, warmup=25, rep=100, return_mode="median")


def _stock():
    from linear_layouts.passes import hook

    class _Stock:
        def __enter__(self):
            self.previous = hook.active_config()
            hook.disable()

        def __exit__(self, *exc):
            if self.previous is not None:
                hook.enable(self.previous.mode, pipeline=self.previous.pipeline, remarks=self.previous.remarks)
    return _Stock()


def _ours():
    from linear_layouts.passes import hook
    return hook.enabled("linear")


def _advised():
    from linear_layouts.passes import hook
    return hook.enabled("linear", apply_advice=True)


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return (lines[0] if lines else type(error).__name__)[:160]


def time_launches(recorder: LaunchRecorder, bench: Callable = _do_bench, stock=_stock, ours=_ours,
                  synchronize: Optional[Callable[[], None]] = None, rounds: int = ROUNDS,
                  advised=_advised, gain: Optional[Callable] = None) -> list[Measurement]:
    """Each kept launch timed stock and ours, alternating for ``rounds`` rounds (``bench``: a
    function -> milliseconds; ``stock`` / ``ours`` / ``advised``: context managers switching the
    lowering), and a Gluon kernel (``is_gluon``) also ``advised``, in the same rounds.
    Alternating spreads drift (clocks, other work on the GPU) over all.  Each mode's final code
    is fingerprinted at its first launch (``code_fingerprint``); ``gain(ours, advised)`` (the
    two compiled kernels; default ``advice_gain``) gives the advice's modelled gain.  A launch
    that fails stock or ours is a measurement with its problem, never an exception; one that
    fails advised keeps its stock and ours times and says why in ``advised_problem``."""
    gain = gain or advice_gain
    measurements = []
    for launch in recorder.launches:
        measurement = Measurement(launch.name, launch.signature)
        modes = [("stock", stock), ("ours", ours)] + ([("advised", advised)] if is_gluon(launch.function) else [])
        compiled: dict = {}
        which = "stock"
        try:
            for _ in range(rounds):
                for which, mode in list(modes):
                    try:
                        with mode():
                            once = recorder.replay(launch)
                            kernel = once()                  # compile (and warm) outside the timing
                            if which not in compiled:
                                compiled[which] = kernel
                                measurement.code[which] = code_fingerprint(kernel)
                            if synchronize is not None:
                                synchronize()
                            getattr(measurement, f"{which}_runs").append(bench(once))
                    except Exception as error:   # a user's kernel: whatever it raises is a note
                        if which != "advised":
                            raise
                        measurement.advised_problem = _first_line(error)
                        measurement.advised_runs = []
                        modes = [m for m in modes if m[0] != "advised"]
        except Exception as error:   # ... not the end of the report
            measurement.problem = f"{which}: {_first_line(error)}"
        if measurement.advised_runs and not measurement.same_binary("ours", "advised"):
            measurement.modelled_gain = gain(compiled.get("ours"), compiled.get("advised"))
        measurements.append(measurement)
    return measurements


def advice_gain(ours, advised) -> Optional[float]:
    """The advice's modelled gain for one kernel: the cost model's loop-weighted cost of its
    TTGIR as compiled by ours over that of its TTGIR with the advice applied
    (``passes.gluon.resolve_auto_layouts.modelled_cost``, what ``ll-apply-advice`` reports);
    None where either TTGIR or its target is missing or does not parse."""
    texts = [getattr(k, "asm", {}).get("ttgir") if k is not None else None for k in (ours, advised)]
    target = getattr(getattr(ours, "metadata", None), "target", None)
    if not all(texts) or target is None:
        return None
    return modelled_gain(texts[0], texts[1], f"{target.backend}:{target.arch}")


def modelled_gain(written: str, advised: str, target: str) -> Optional[float]:
    """Modelled cost of the TTGIR ``written`` over that of ``advised`` for ``target``
    (``cuda:90``, ``sm_90``, ...); None where a text does not parse or the target is unknown."""
    from linear_layouts.lowering import UnknownTarget, target_named
    from linear_layouts.passes.framework import PassFailure
    from linear_layouts.passes.gluon.resolve_auto_layouts import modelled_cost
    from linear_layouts.passes.ir.diagnostics import IRError
    from linear_layouts.passes.ir.snapshot import parse_module
    try:
        hw_target = target_named(target)
        before = modelled_cost(parse_module(written, "<written>"), hw_target)
        after = modelled_cost(parse_module(advised, "<advised>"), hw_target)
    except (UnknownTarget, PassFailure, IRError, ValueError):
        return None
    return before / after if after > 0 else None


@dataclass
class MeasureResult:
    """What the report shows: the measurements, or why there are none."""

    measurements: list = field(default_factory=list)
    note: str = ""
