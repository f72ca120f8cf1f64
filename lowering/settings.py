"""The plugin's settings, typed: what every layer reads, filled from above.

A setting is one of ``enable()``'s options that holds for the whole process and is read where it
is used, rather than built into the pipeline (``passes.drop_in.enable_options`` declares each,
with its default and its doc).  They are defined here, in the lowest layer that reads one, so
that the planner and the lowering choice (``stock_gate``, ``round_scratch``) and the passes
(``strict_check``, the island cache, ``in_place``, ``stats_dir``) read the same object:
:func:`current`.  Nothing here reads the environment: ``passes.drop_in.environment``, the one
module that does, installs the source of :func:`current` when it is imported (``import
linear_layouts`` imports it), so that ``enable(stock_gate=False)``, ``LINEAR_LAYOUTS_OPTIONS`` and
the older per-setting variables reach every reader.  Without a source (``lowering/`` used on its
own) every setting has its default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

# The largest scratch buffer (bytes) a shared-memory candidate may take to do a conversion in
# fewer rounds than Triton's swizzle does (``lowering.planner.round_scratch_budget``).
DEFAULT_ROUND_SCRATCH = 16384


@dataclass(frozen=True)
class Settings:
    """The settings in force; the defaults are ``enable_options.ENABLE_OPTIONS``'s
    (``test_configuration.py`` checks they agree)."""

    # one-round shared-memory islands built in Triton's module (passes.drop_in.in_place);
    # None: the release's default (passes.drop_in.plugin_config.in_place_enabled)
    in_place: Optional[bool] = None
    # False: every pick is ours, none left to Triton (lowering.choosing.fitted_model.gate_turned_off)
    stock_gate: bool = True
    # the bytes a plan may take for fewer shared-memory rounds (lowering.planner.round_scratch_budget)
    round_scratch: int = DEFAULT_ROUND_SCRATCH
    # a rejected island is an error, not a hand-back to Triton (passes.islands.island_checks)
    strict_check: bool = False
    # verified islands remembered across compiles, and where (passes.islands.verified_islands;
    # None: under Triton's cache directory, "": in memory only)
    island_cache: bool = True
    island_cache_dir: Optional[str] = None
    # where every process writes its counts (passes.drop_in.shared_stats; None or "": nowhere)
    stats_dir: Optional[str] = None


_source: Callable[[], Settings] = Settings


def current() -> Settings:
    """The settings in force now."""
    return _source()


def read_from(source: Callable[[], Settings]) -> None:
    """Answer :func:`current` with ``source()`` from now on (``passes.drop_in.environment``)."""
    global _source
    _source = source
