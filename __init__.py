"""linear-layouts: the Linear Layouts system (tensor layouts as linear maps over F2) for Triton.

Subpackages, with dependencies pointing one way (tools -> passes -> lowering -> dialect):

* ``linear_layouts.dialect``  - the F2 algebra (``LinearLayout``) and TritonGPU layout attributes
* ``linear_layouts.passes``   - Python passes over TritonGPU IR (the only users of Triton's bindings)
* ``linear_layouts.lowering`` - conversion plans, swizzling, cost model, verifier, code emission
* ``linear_layouts.tools``    - command-line tools (``ll-opt``, ``ll-viz``, the demo)

The drop-in for Triton: ``linear_layouts.enable()`` makes every kernel compiled afterwards
(``triton.compile`` and ``@triton.jit``) use our layout engine; ``disable()`` and the context
manager ``enabled()`` undo it.  Setting ``LINEAR_LAYOUTS=1`` (or ``=legacy``) in the environment
turns it on in every Python process of a program, right after the process imports triton: the
package installs a start-up hook (``linear-layouts-startup.pth``) that imports this package only
where the variable is set, so the worker processes torch.compile compiles kernels in are reached
too (``passes.drop_in.environment``, ``passes.drop_in.after_triton``).  ``LINEAR_LAYOUTS=report`` records every
kernel compiled and writes a report of their layout conversions when the process ends
(``python -m linear_layouts report prog.py`` does the same for one program).
"""

# Absolute imports, here only: pytest imports this file as a test package's ``__init__`` under
# the name of the folder it sits in, which is no Python name when the clone's folder is named
# like the repository (``linear-layouts``); a relative import then has no parent to start from
# and every test errors at setup (``test_first_use.py`` imports the file as pytest does).
from linear_layouts.passes.version import __version__

__all__ = ["LayoutError", "LinearLayout", "__version__", "enable", "disable", "enabled", "stats", "port"]


def __getattr__(name):
    # The algebra is imported on first use: ``import linear_layouts`` runs in every process of a
    # program where LINEAR_LAYOUTS is set (the start-up hook), and must cost next to nothing there.
    if name in ("LayoutError", "LinearLayout"):
        from linear_layouts import dialect
        return getattr(dialect, name)
    raise AttributeError(f"module 'linear_layouts' has no attribute {name!r}")


def port(kernel, target: str = "sm90", **launch):
    """A ``@triton.jit`` kernel as Gluon source with every layout written out (``passes.port``):
    ``port(kernel, target="sm90", num_warps=4, x_ptr="*fp16", n="i32", BLOCK=1024)``."""
    from linear_layouts.passes.port.port import port as port_kernel
    return port_kernel(kernel, target, **launch)


def enable(mode: str = "linear", **options):
    from linear_layouts.passes.drop_in import hook
    return hook.enable(mode, **options)


def disable() -> None:
    """Back to stock Triton for kernels compiled from now on."""
    from linear_layouts.passes.drop_in import hook
    hook.disable()


def stats():
    """What the drop-in did: kernels seen, kernels with islands, and every kernel compiled
    without our islands after a failure (``stats().fallbacks``, ``stats().summary()``)."""
    from linear_layouts.passes.drop_in import hook
    return hook.stats()


def enabled(mode: str = "linear", **options):
    from linear_layouts.passes.drop_in import hook
    return hook.enabled(mode, **options)


def _with_the_options(function, first_line: str) -> None:
    """``function``'s signature and docstring from the one definition of the options
    (``passes.drop_in.enable_options``): ``help(linear_layouts.enable)`` lists every option."""
    from linear_layouts.passes.drop_in import enable_options

    function.__signature__ = enable_options.signature()
    function.__doc__ = enable_options.docstring(first_line)


_with_the_options(enable, "Run our passes in every Triton kernel compiled from now on (disable() undoes it).")
_with_the_options(enabled, "Context manager: the plugin is on, with these options, inside the with block only.")


def _turn_on_from_environment(mode: str) -> None:
    """``LINEAR_LAYOUTS``, once triton is imported: record for a report, or ``enable()``."""
    import warnings

    if mode == "report":   # LINEAR_LAYOUTS_REPORT_* options (tools.report.run)
        from linear_layouts.tools.report import run as report

        try:
            report.start_from_environment()
        except (report.ReportSetupError, OSError) as error:
            warnings.warn(f"linear-layouts report stays off: {error}", RuntimeWarning, stacklevel=2)
        return
    from linear_layouts.passes.drop_in import hook

    try:
        hook.enable_from_environment()
    except hook.PluginError as error:
        warnings.warn(f"linear-layouts stays off: {error}", RuntimeWarning, stacklevel=2)


def _read_environment() -> None:
    """``LINEAR_LAYOUTS`` set: the plugin turns on as soon as triton is imported (now, if it is).
    A value we cannot read is a warning, never an error: importing us must not break a program."""
    from linear_layouts.passes.drop_in import environment

    try:
        mode = environment.requested_mode()
        environment.requested_options()
        problem = environment.mode_problem(mode)
        if problem:
            raise environment.SettingError(problem)
    except environment.SettingError as error:
        import warnings

        warnings.warn(f"linear-layouts stays off: {error}", RuntimeWarning, stacklevel=3)
        return
    if mode is not None:
        from linear_layouts.passes.drop_in.after_triton import call_after_triton_import

        call_after_triton_import(lambda: _turn_on_from_environment(mode))


_read_environment()
