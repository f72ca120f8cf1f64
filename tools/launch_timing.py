"""``report --measure``: each kernel of the program timed stock and ours, with the program's own
arguments (issue 27).

While the program runs, ``LaunchRecorder`` wraps ``JITFunction.run`` (what ``kernel[grid](...)``
and the autotuner call): the first launch of each kernel with each argument signature is kept:
the function, its grid, its keyword arguments (constexprs, ``num_warps``, the autotuner's
config) and its positional arguments, tensors *cloned* at the launch (the program may change
them afterwards, or free them).  The program's own launch runs unchanged.

After the program ends, ``time_launches`` replays each kept launch with stock Triton and with
``linear_layouts.enable()`` (fresh clones of the inputs for each, so a kernel that writes its
inputs starts from the same values), timed by ``triton.testing.do_bench`` (median), and gives
the ratio stock / ours (above 1: ours is faster).  Without a GPU nothing is recorded or timed
and the report says why (``gpu_problem``).

Only the process that runs the program records (launches in spawned workers are not timed).
"""

from __future__ import annotations

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


ROUNDS = 3      # stock and ours alternate, each timed this many times


@dataclass
class Measurement:
    """One kept launch timed in rounds: stock, ours, stock, ours, ... (``ROUNDS`` each)."""

    name: str
    signature: str
    stock_runs: list = field(default_factory=list)     # milliseconds, one per round
    ours_runs: list = field(default_factory=list)
    problem: str = ""

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

    def replay(self, launch: Launch) -> Callable[[], None]:
        """A function that launches ``launch`` once more on fresh clones of its inputs (made
        now, outside the timed calls)."""
        args, kwargs = clone_arguments(launch.args), clone_keywords(launch.kwargs)
        original = self._original or type(launch.function).run

        def once():
            self._local.replaying = True
            try:
                original(launch.function, *args, grid=launch.grid, warmup=False, **kwargs)
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


def time_launches(recorder: LaunchRecorder, bench: Callable = _do_bench, stock=_stock, ours=_ours,
                  synchronize: Optional[Callable[[], None]] = None, rounds: int = ROUNDS) -> list[Measurement]:
    """Each kept launch timed stock and ours, alternating for ``rounds`` rounds (``bench``: a
    function -> milliseconds; ``stock`` / ``ours``: context managers switching the lowering).
    Alternating spreads drift (clocks, other work on the GPU) over both.  A launch that fails is a
    measurement with its problem, never an exception."""
    measurements = []
    for launch in recorder.launches:
        measurement = Measurement(launch.name, launch.signature)
        try:
            for _ in range(rounds):
                for which, mode in (("stock", stock), ("ours", ours)):
                    with mode():
                        once = recorder.replay(launch)
                        once()                  # compile (and warm) outside the timing
                        if synchronize is not None:
                            synchronize()
                        getattr(measurement, f"{which}_runs").append(bench(once))
        except Exception as error:   # a user's kernel: whatever it raises is a note, not the end
            lines = str(error).strip().splitlines()
            measurement.problem = f"{which}: {(lines[0] if lines else type(error).__name__)[:160]}"
        measurements.append(measurement)
    return measurements


@dataclass
class MeasureResult:
    """What the report shows: the measurements, or why there are none."""

    measurements: list = field(default_factory=list)
    note: str = ""
