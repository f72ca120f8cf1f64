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
the ratio stock / ours (above 1: ours is faster).  A Gluon kernel is also timed, in the same
rounds, with its candidates: each of its best findings alone (at most ``ALONE``, by modelled
whole-kernel gain: ``best_findings``; ``enable(apply_advice=True, advice_findings=KEY)``) and
every finding at once (``enable(apply_advice=True)``, as ``ll-apply-advice`` applies them).
Each mode's final code is kept as a fingerprint (``code_fingerprint``): a candidate that
compiles to the code of ours or of a candidate before it is timed once (``same_code_as``), and
where stock and ours compile a launch to the same code the report says "same binary" instead of
reading run-to-run noise as a verdict.  ``Measurement.winner`` then chooses, as autotuners do:
the fastest candidate where the kernel as written over it is beyond the run's noise
(``noise_threshold``), else the kernel as written.  A candidate that fails to compile says why
and the others are still timed.  Without a GPU nothing is recorded or timed and the report says
why (``gpu_problem``).

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


ROUNDS = 3      # stock, ours and (Gluon kernels) the candidates alternate, each timed this many times
ALONE = 3       # a Gluon kernel's best findings timed alone, besides all of them at once
ADVISED = "advised"     # the mode of the candidate with every finding applied (enable(apply_advice=True))
NOISE_FLOOR = 0.01      # below 1% a difference is never called a win or a loss


@dataclass
class Candidate:
    """A change of a Gluon kernel timed against the kernel as written (ours): its advice applied
    (mode ``advised``, every finding, as ``enable(apply_advice=True)``) or one finding alone
    (mode: the finding's key, as ``enable(apply_advice=True, advice_findings=KEY)``)."""

    mode: str
    change: str                                    # what the author writes for it, in words and Gluon
    modelled_gain: Optional[float] = None          # the cost model's: the kernel as written / changed
    runs: list = field(default_factory=list)       # milliseconds, one per round
    problem: str = ""                              # why it was not timed (its compile failed)
    same_code_as: str = ""                         # a mode compiled to the same code before it: timed once

    @property
    def ms(self) -> Optional[float]:
        return statistics.median(self.runs) if self.runs else None


@dataclass
class Measurement:
    """One kept launch timed in rounds: stock, ours, [candidates,] stock, ours, ... (``ROUNDS`` each)."""

    name: str
    signature: str
    stock_runs: list = field(default_factory=list)     # milliseconds, one per round
    ours_runs: list = field(default_factory=list)
    problem: str = ""
    code: dict = field(default_factory=dict)           # mode -> code_fingerprint of its final code
    candidates: list = field(default_factory=list)     # Gluon kernels: Candidate, findings alone first, then advised

    def candidate(self, mode: str) -> Optional[Candidate]:
        return next((c for c in self.candidates if c.mode == mode), None)

    @property
    def advised_runs(self) -> list:
        advised = self.candidate(ADVISED)
        return advised.runs if advised else []

    @property
    def advised_problem(self) -> str:
        advised = self.candidate(ADVISED)
        return advised.problem if advised else ""

    @property
    def modelled_gain(self) -> Optional[float]:
        """The advice's (every finding at once): modelled cost as written / advised."""
        advised = self.candidate(ADVISED)
        return advised.modelled_gain if advised else None

    @property
    def advised_ms(self) -> Optional[float]:
        """The advised kernel's median time (that of the mode it compiled the same code as)."""
        advised = self.candidate(ADVISED)
        return self.ms_of(advised) if advised else None

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

    def ms_of(self, candidate: Candidate) -> Optional[float]:
        """A candidate's median time: its own, or that of the mode it compiled the same code as."""
        if candidate.same_code_as == "ours":
            return self.ours_ms
        if candidate.same_code_as:
            return self.ms_of(self.candidate(candidate.same_code_as))
        return candidate.ms

    def winner(self, threshold: float) -> Optional[Candidate]:
        """The candidate to write: the fastest one timed, where the kernel as written over it is
        beyond ``threshold`` (the run's noise: ``noise_threshold``); None for the kernel as written
        (ties go to it: a change that is not measurably faster is never recommended)."""
        timed = [c for c in self.candidates if c.ms and not c.same_code_as]
        if not timed or not self.ours_ms:
            return None
        best = min(timed, key=lambda c: c.ms)
        return best if self.ours_ms / best.ms > 1 + threshold else None

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


def noise_threshold(measurements: list) -> float:
    """What a difference must exceed to be called faster or slower: the run's noise, at least
    ``NOISE_FLOOR``."""
    return max(NOISE_FLOOR, run_noise(measurements))


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
    from linear_layouts.passes.drop_in import hook

    class _Stock:
        def __enter__(self):
            self.previous = hook.active_config()
            hook.disable()

        def __exit__(self, *exc):
            if self.previous is not None:
                hook.enable(self.previous.mode, pipeline=self.previous.pipeline, remarks=self.previous.remarks)
    return _Stock()


def _ours():
    from linear_layouts.passes.drop_in import hook
    return hook.enabled("linear")


def _advised():
    from linear_layouts.passes.drop_in import hook
    return hook.enabled("linear", apply_advice=True)


def _alone(key: str):
    """The context in which a launch compiles with the finding ``key`` alone applied."""
    from linear_layouts.passes.drop_in import hook
    return hook.enabled("linear", apply_advice=True, advice_findings=(key,))


def best_findings(compiled, count: int = ALONE) -> list:
    """The ``count`` findings of largest modelled whole-kernel gain that ``ll-apply-advice`` can
    apply to a Gluon kernel compiled by ours (``apply_advice.ranked_findings`` on its TTGIR, for
    its target, none that changes a layout our resolution chose: the kernel's metadata says
    which); [] where its TTGIR or target is missing or the advice cannot read it."""
    from linear_layouts.dialect.linear_layout import LayoutError
    from linear_layouts.lowering import UnknownTarget, target_named
    from linear_layouts.passes.advice.apply_advice import ranked_findings
    from linear_layouts.passes.framework import PassFailure
    from linear_layouts.passes.gluon.resolution_record import METADATA_KEY, Resolution
    from linear_layouts.passes.ir.diagnostics import IRError
    from linear_layouts.passes.ir.module_lines import TextMismatch
    from linear_layouts.passes.ir.snapshot import parse_module

    metadata = getattr(compiled, "metadata", None)
    ttgir = getattr(compiled, "asm", {}).get("ttgir") if compiled is not None else None
    target = getattr(metadata, "target", None)
    if not ttgir or target is None:
        return []
    record = getattr(metadata, METADATA_KEY, None)
    resolution = Resolution.from_record(record) if isinstance(record, dict) else None
    try:
        module = parse_module(ttgir, f"<{getattr(metadata, 'name', 'kernel')}>")
        return ranked_findings(module, target_named(f"{target.backend}:{target.arch}"), resolution)[:count]
    except (UnknownTarget, PassFailure, IRError, LayoutError, TextMismatch, ValueError):
        return []


def finding_change(finding) -> str:
    """What an author writes for a finding: its Gluon expression at its place, and its key."""
    where = finding.location.rsplit("/", 1)[-1]
    return f"{finding.suggestion} at {where} ({finding.key})"


ADVISED_CHANGE = "every finding at once (enable(apply_advice=True))"


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return (lines[0] if lines else type(error).__name__)[:160]


def time_launches(recorder: LaunchRecorder, bench: Callable = _do_bench, stock=_stock, ours=_ours,
                  synchronize: Optional[Callable[[], None]] = None, rounds: int = ROUNDS,
                  advised=_advised, gain: Optional[Callable] = None, alone: Callable = _alone,
                  findings: Callable = best_findings) -> list[Measurement]:
    """Each kept launch timed stock and ours, alternating for ``rounds`` rounds (``bench``: a
    function -> milliseconds; ``stock`` / ``ours`` / ``advised``: context managers switching the
    lowering; ``alone(key)``: one with finding ``key`` alone applied), and a Gluon kernel
    (``is_gluon``) also its candidates, in the same rounds: each of ``findings(ours)`` (the
    compiled kernel; default ``best_findings``) alone, then ``advised``.  Alternating spreads
    drift (clocks, other work on the GPU) over all.  Each mode's final code is fingerprinted at
    its first compile (``code_fingerprint``); a candidate whose code is that of ours or of a
    candidate before it is not timed (``same_code_as``: one binary timed once).  ``gain(ours,
    advised)`` (the two compiled kernels; default ``advice_gain``) gives the advice's modelled
    gain, a finding's is its own.  A launch that fails stock or ours is a measurement with its
    problem, never an exception; a candidate that fails to compile says why in its ``problem``
    and the others are still timed."""
    gain = gain or advice_gain
    measurements = []
    for launch in recorder.launches:
        measurement = Measurement(launch.name, launch.signature)
        modes = [("stock", stock), ("ours", ours)]
        dropped: set = set()
        compiled: dict = {}
        which = "stock"
        try:
            for _ in range(rounds):
                for which, mode in modes:          # (the candidates join the list after ours' first compile)
                    if which in dropped:
                        continue
                    candidate = measurement.candidate(which)
                    try:
                        with mode():
                            once = recorder.replay(launch)
                            kernel = once()                  # compile (and warm) outside the timing
                            if which not in compiled:
                                compiled[which] = kernel
                                measurement.code[which] = code_fingerprint(kernel)
                                if candidate is not None:
                                    candidate.same_code_as = _compiled_before(measurement, which)
                            if candidate is not None and candidate.same_code_as:
                                dropped.add(which)
                                continue
                            if synchronize is not None:
                                synchronize()
                            runs = candidate.runs if candidate is not None else getattr(measurement, f"{which}_runs")
                            runs.append(bench(once))
                    except Exception as error:   # a user's kernel: whatever it raises is a note
                        if candidate is None:
                            raise
                        candidate.problem, candidate.runs = _first_line(error), []
                        dropped.add(which)
                    if which == "ours" and len(compiled) == 2 and not measurement.candidates \
                            and is_gluon(launch.function):
                        modes += _candidate_modes(measurement, findings(compiled["ours"]), alone, advised)
        except Exception as error:   # ... not the end of the report
            measurement.problem = f"{which}: {_first_line(error)}"
        advised_one = measurement.candidate(ADVISED)
        if advised_one is not None and ADVISED in compiled and not measurement.same_binary("ours", ADVISED):
            advised_one.modelled_gain = gain(compiled.get("ours"), compiled.get(ADVISED))
        measurements.append(measurement)
    return measurements


def _candidate_modes(measurement: Measurement, findings: list, alone: Callable, advised) -> list:
    """The candidates of a Gluon launch, added to ``measurement``, and their (mode, context) pairs:
    each finding alone (best first), then every finding at once."""
    modes = []
    for finding in findings:
        measurement.candidates.append(Candidate(finding.key, finding_change(finding), finding.gain))
        modes.append((finding.key, lambda key=finding.key: alone(key)))
    measurement.candidates.append(Candidate(ADVISED, ADVISED_CHANGE))
    return modes + [(ADVISED, advised)]


def _compiled_before(measurement: Measurement, mode: str) -> str:
    """The mode compiled before candidate ``mode`` to the same final code: ours, or a candidate
    before it; "" where none was."""
    earlier = ["ours"] + [c.mode for c in measurement.candidates]
    for other in earlier[:earlier.index(mode)]:
        if measurement.same_binary(other, mode):
            return other
    return ""


def advice_gain(ours, advised) -> Optional[float]:
    """The advice's modelled gain for one kernel: the cost model's loop-weighted cost of its
    TTGIR as compiled by ours over that of its TTGIR with the advice applied
    (``passes.gluon.kernel_price.modelled_cost``, what ``ll-apply-advice`` reports);
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
    from linear_layouts.passes.gluon.kernel_price import modelled_cost
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
