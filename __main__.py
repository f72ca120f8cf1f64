"""``python -m linear_layouts run PROGRAM.py [ARGS...]``: run a Triton program with the plugin on.

The mode comes from ``LINEAR_LAYOUTS`` (``1``/``linear``, the default here, or ``legacy``), so an
unmodified program gets our layout engine in every kernel it compiles::

    python -m linear_layouts run train.py --steps 10
    LINEAR_LAYOUTS=legacy python -m linear_layouts run bench.py
"""

import os
import runpy
import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) < 2 or argv[0] != "run":
        what = f"unknown command '{argv[0]}'" if argv and argv[0] != "run" else "no program given"
        print(f"linear_layouts: error: {what}\n"
              "usage: python -m linear_layouts run PROGRAM.py [ARGS...]\n"
              "       (LINEAR_LAYOUTS=legacy selects the legacy baseline)", file=sys.stderr)
        return 1
    program = argv[1]
    if not os.path.isfile(program):
        print(f"linear_layouts: error: no such program: {program}", file=sys.stderr)
        return 1
    from .passes import hook

    os.environ.setdefault("LINEAR_LAYOUTS", "linear")
    try:
        if hook.active_config() is None:
            hook.enable_from_environment()
    except hook.PluginError as e:
        print(f"linear_layouts: error: {e}", file=sys.stderr)
        return 1
    sys.argv = [program] + argv[2:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    runpy.run_path(program, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
