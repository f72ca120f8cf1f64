"""The drop-in's counts across the processes of one program (``LINEAR_LAYOUTS_STATS_DIR``).

``linear_layouts.stats()`` counts what one process compiled.  A torch.compile program compiles
most of its kernels in worker processes, which end without running ``atexit`` handlers (a
forked worker leaves with ``os._exit``).  So where ``LINEAR_LAYOUTS_STATS_DIR`` names a
directory (``python -m linear_layouts run`` sets one), every process writes its counts there
after each kernel it compiles, as ``<pid>.json`` (replaced whole, never half written), and
whoever wants the program's total adds the files up (:func:`read_snapshots`).

A process forked from one that has counted kernels starts from zero (``os.register_at_fork``):
it would otherwise report its parent's kernels a second time.
"""

from __future__ import annotations

import json
import os
from typing import Callable, Optional

from ...lowering import settings

STATS_DIR_VARIABLE = "LINEAR_LAYOUTS_STATS_DIR"   # the older spelling of the setting stats_dir


def directory() -> Optional[str]:
    """Where this process writes its counts, or None (the setting ``stats_dir`` unset or empty)."""
    return settings.current().stats_dir or None


def write_snapshot(counts: dict) -> None:
    """This process's counts (a JSON-able dict) as ``<pid>.json`` in the directory, if one is set.
    A directory that cannot be written is skipped: counting must never fail a compile."""
    where = directory()
    if where is None:
        return
    path = os.path.join(where, f"{os.getpid()}.json")
    temporary = f"{path}.tmp"
    try:
        os.makedirs(where, exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(counts, f)
        os.replace(temporary, path)
    except OSError:
        pass


def read_snapshots(where: str) -> list[dict]:
    """The counts every process wrote into ``where`` (a file being replaced is read whole or not at all)."""
    snapshots = []
    try:
        names = sorted(os.listdir(where))
    except OSError:
        return []
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(where, name), encoding="utf-8") as f:
                snapshot = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(snapshot, dict):
            snapshots.append({**snapshot, "pid": name[:-len(".json")]})
    return snapshots


def reset_in_forked_children(reset: Callable[[], None]) -> None:
    """``reset()`` in every child forked from now on, while a stats directory is set."""
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=lambda: directory() is not None and reset())
