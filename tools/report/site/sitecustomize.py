"""Put first on ``PYTHONPATH`` by ``python -m linear_layouts report`` for the processes the
program starts (multiprocessing's spawned workers, subprocesses), for a package not installed
from its wheel (which brings a start-up hook that does the same in every process): with
``LINEAR_LAYOUTS=report`` (set by the command) it imports ``linear_layouts``, which records the
process's kernels into the same run once it imports ``triton``; the command writes the report,
once.  A process that never imports triton pays the import of a small package.  The ``sitecustomize`` this
one hides, if any, still runs."""

import os
import sys

try:
    from linear_layouts.tools.report.site import run_shadowed_sitecustomize
    run_shadowed_sitecustomize(os.path.dirname(os.path.abspath(__file__)))
except ImportError:   # linear_layouts not importable here: nothing of ours to do
    pass
else:
    try:   # a cheap import (the settings' module imports nothing of Triton): recording starts right
        # after the process imports triton (passes/drop_in/after_triton.py)
        from linear_layouts.passes.drop_in import environment
        if environment.requested_mode() == "report":
            import linear_layouts  # noqa: F401
    except Exception as error:   # recording must never break the program
        print(f"linear-layouts report: this process is not recorded: {error}", file=sys.stderr)
