"""linear-layouts: the Linear Layouts system (tensor layouts as linear maps over F2) for Triton.

Subpackages, with dependencies pointing one way (tools -> passes -> lowering -> dialect):

* ``linear_layouts.dialect``  - the F2 algebra (``LinearLayout``) and TritonGPU layout attributes
* ``linear_layouts.passes``   - Python passes over TritonGPU IR (the only users of Triton's bindings)
* ``linear_layouts.lowering`` - conversion plans, swizzling, cost model, verifier, code emission
* ``linear_layouts.tools``    - command-line tools (``ll-opt``, ``ll-viz``, the demo)

The drop-in for Triton: ``linear_layouts.enable()`` makes every kernel compiled afterwards
(``triton.compile`` and ``@triton.jit``) use our layout engine; ``disable()`` and the context
manager ``enabled()`` undo it.  Setting ``LINEAR_LAYOUTS=1`` (or ``=legacy``) in the environment
turns it on when this package is imported; ``python -m linear_layouts run prog.py`` does so for
a program that does not import it.  ``LINEAR_LAYOUTS=report`` records every kernel compiled and
writes a report of their layout conversions when the process ends (``python -m linear_layouts
report prog.py`` does the same for one program).
"""

import os as _os

from .dialect import LayoutError, LinearLayout
from .passes.version import __version__
__all__ = ["LayoutError", "LinearLayout", "__version__", "enable", "disable", "enabled", "stats"]


def enable(mode: str = "linear", **options):
    """Run our passes in every Triton kernel compiled from now on (see ``passes.hook.enable``)."""
    from .passes import hook
    return hook.enable(mode, **options)


def disable() -> None:
    """Back to stock Triton for kernels compiled from now on."""
    from .passes import hook
    hook.disable()


def stats():
    """What the drop-in did: kernels seen, kernels with islands, and every kernel compiled
    without our islands after a failure (``stats().fallbacks``, ``stats().summary()``)."""
    from .passes import hook
    return hook.stats()


def enabled(mode: str = "linear", **options):
    """Context manager: the plugin is on inside the ``with`` block."""
    from .passes import hook
    return hook.enabled(mode, **options)


if _os.environ.get("LINEAR_LAYOUTS", "").strip().lower() == "report":
    # Record every kernel and write a report at exit (tools.report; LINEAR_LAYOUTS_REPORT_* options).
    from .tools import report as _report

    try:
        _report.start_from_environment()
    except (_report.ReportSetupError, OSError) as _error:  # must not break `import linear_layouts`
        import warnings as _warnings

        _warnings.warn(f"linear-layouts report stays off: {_error}", RuntimeWarning, stacklevel=2)
elif _os.environ.get("LINEAR_LAYOUTS", "").strip() not in ("", "0"):
    from .passes import hook as _hook

    try:
        _hook.enable_from_environment()
    except _hook.PluginError as _error:  # a bad value must not break `import linear_layouts`
        import warnings as _warnings

        _warnings.warn(f"linear-layouts stays off: {_error}", RuntimeWarning, stacklevel=2)
