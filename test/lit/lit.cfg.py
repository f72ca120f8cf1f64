# lit configuration for linear-layouts.
#
# Tests are .mlir / .ttgir / .test files whose RUN lines call our tools (`ll-opt`, `ll-viz`,
# `ll-demo`, all console scripts of this package) and pipe the output into FileCheck.
import os
import shutil
import sys

import lit.formats

config.name = "linear-layouts"
# lit 23 from PyPI needs its internal shell (no external bash dependency).
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".ttgir", ".test"]
config.excludes = ["Inputs", "corpus"]
config.test_source_root = os.path.dirname(__file__)

# The interpreter running lit lives in the venv that has our console scripts: put its bin
# directory first on PATH so RUN lines find `ll-opt` & co. without activating the venv.
bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
# Every island any lit test lowers is run by the emitted-code simulator; here a failure is an
# error (ll-opt exits 1), not a silent hand-back to Triton.
config.environment["LINEAR_LAYOUTS_STRICT_CHECK"] = "1"
config.environment["LINEAR_LAYOUTS_CACHE"] = "off"   # every island simulated, none remembered
for var in ("HOME", "TMPDIR", "TRITON_HOME", "TRITON_CACHE_DIR", "PYTHONPATH"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# FileCheck: LLVM's own binary, shipped inside the triton wheel, when present; otherwise the
# Python port from PyPI (`filecheck`).
def _find_filecheck():
    try:
        import triton
        candidate = os.path.join(os.path.dirname(triton.__file__), "FileCheck")
        if os.access(candidate, os.X_OK):
            return candidate
    except Exception:
        pass
    return shutil.which("filecheck", path=config.environment["PATH"]) or "filecheck"

config.substitutions.append(("FileCheck", _find_filecheck()))
config.substitutions.append(("%python", sys.executable))

# The installed Triton's release as a feature (`REQUIRES: triton-3.6`, `UNSUPPORTED: triton-3.6`):
# a few tests show what one release accepts and another rejects.  The release is read the one
# way the package reads it (`dialect.conventions.release_of`: "3.6.0", "3.9.0rc1", "3.7.0+git..."
# all name their major.minor); the package is installed in this interpreter's venv, as the RUN
# lines' console scripts are.  No feature where Triton is missing or its version names no release.
try:
    import triton
    from linear_layouts.dialect.conventions import release_of
    _release = release_of(triton.__version__)
    if _release is not None:
        config.available_features.add("triton-%d.%d" % _release)
except ImportError:
    pass

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
import tool_server  # noqa: E402
del sys.path[0]

# `ll-opt` and `ll-viz` through a fork server (test/support/tool_server.py): one Python that has
# imported Triton and our passes once forks each RUN line's process, instead of each RUN line
# starting a Python that imports them (about 0.6 s of CPU each, some 200 a release).  The RUN
# line's process is the same `main()` with the same argv, environment, working directory and
# streams.  LL_LIT_TOOL_SERVER=0 runs the console scripts themselves (as `make smoke` does from
# the wheel).
if os.environ.get("LL_LIT_TOOL_SERVER", "1") != "0" and tool_server.tool_server_works():
    _server = tool_server.ToolServer(
        tools={"ll-opt": "linear_layouts.tools.ll_opt:main", "ll-viz": "linear_layouts.tools.viewers.viz:main"},
        env=dict(config.environment),
        preload=["linear_layouts.tools.ll_opt", "linear_layouts.tools.viewers.viz", "linear_layouts.passes.registry",
                 "linear_layouts.passes.ir.snapshot"])
    import atexit
    atexit.register(_server.stop)
    config.environment["PATH"] = _server.shims + os.pathsep + config.environment["PATH"]
