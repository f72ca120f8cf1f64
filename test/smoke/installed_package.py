"""Smoke test of the package as users install it: a wheel, non-editable, in a fresh virtual
environment with the runtime dependencies only (``make smoke``; CI runs it under triton 3.6
and 3.9).  Run it with that environment's interpreter, from outside the source tree::

    .venv-smoke/bin/python test/smoke/installed_package.py            # matplotlib not installed
    .venv-smoke/bin/python test/smoke/installed_package.py --pictures # after `pip install matplotlib`:
                                                                      # the pictures only

Every entry point is run the way a user runs it, as a separate process, in a temporary
directory: ``ll-opt --list-passes``, ``ll-demo`` (pictures or one clear line), ``ll-port`` on a bundled kernel, ``ll-viz``,
``python -m linear_layouts run --help`` and ``report --format md``, ``enable()`` on a Triton
kernel and on Gluon kernels with and without layouts, and the start-up hook (``LINEAR_LAYOUTS=1``
reaches a process that imports triton, and costs a process that does not nothing of Triton).
No check needs a GPU.  Ends with ``N passed, N failed`` and exits 1 if any check failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_TREE = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.dirname(sys.executable)
TIME_LIMIT_S = 600

TRITON_KERNEL = textwrap.dedent("""
    import triton, triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    import linear_layouts

    @triton.jit
    def transpose(X, Y, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tile = tl.load(X + offs[:, None] * BLOCK + offs[None, :])
        tl.store(Y + offs[None, :] * BLOCK + offs[:, None], tile)

    linear_layouts.enable()
    source = ASTSource(transpose, {"X": "*fp32", "Y": "*fp32"}, constexprs={"BLOCK": 64})
    triton.compile(source, target=GPUTarget("cuda", 90, 32))
    stats = linear_layouts.stats()
    assert stats.kernels == 1 and not stats.fallbacks, stats.summary()
    print(stats.summary())
""")

GLUON_KERNELS = textwrap.dedent("""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon._runtime import GluonASTSource   # private: the only way to compile without a GPU
    import linear_layouts

    @gluon.jit
    def written(src, dst, N: gl.constexpr):
        L: gl.constexpr = gl.BlockedLayout([4], [32], [4], [0])
        i = gl.arange(0, N, layout=L)
        gl.store(dst + i, gl.load(src + i))

    @gluon.jit
    def automatic(src, dst, M: gl.constexpr, N: gl.constexpr):
        r = gl.arange(0, M)[:, None]
        c = gl.arange(0, N)[None, :]
        gl.store(dst + c * M + r, gl.load(src + r * N + c))

    linear_layouts.enable()
    target = GPUTarget("cuda", 90, 32)
    triton.compile(GluonASTSource(written, {"src": "*fp32", "dst": "*fp32"}, {"N": 1024}), target=target)
    triton.compile(GluonASTSource(automatic, {"src": "*fp32", "dst": "*fp32"}, {"M": 64, "N": 64}), target=target)
    stats = linear_layouts.stats()
    assert stats.kernels == 2 and stats.auto_layouts_resolved == 1 and not stats.fallbacks, stats.summary()
    print(stats.summary())
""")

STARTUP_HOOK_ON = textwrap.dedent("""
    import sys
    assert "linear_layouts" in sys.modules, "the start-up hook did not import linear_layouts"
    assert "triton" not in sys.modules, "the start-up hook imported triton before the program did"
    import triton
    from linear_layouts.passes.drop_in import hook
    assert hook.active_config() is not None, "the plugin is not on after import triton"
    print("on after import triton")
""")

STARTUP_HOOK_OFF = "import sys; assert 'linear_layouts' not in sys.modules; print('off')"

CHILD_OF_ENABLE = textwrap.dedent("""
    import subprocess, sys
    import triton, linear_layouts
    linear_layouts.enable(remarks=True)
    child = "import triton; from linear_layouts.passes.drop_in import hook; c = hook.active_config(); print(bool(c.remarks))"
    print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True).stdout.strip())
""")


class Checks:
    def __init__(self, workdir: str):
        self.workdir = workdir
        self.passed = 0
        self.failed: list[str] = []

    def run(self, name: str, command: list[str], expect: str = "", env: dict | None = None,
            forbid: str = "Traceback", returncode: int = 0) -> None:
        environment = {k: v for k, v in os.environ.items() if not k.startswith("LINEAR_LAYOUTS")}
        # a cache of this run's own: a kernel served from an earlier run's cache never reaches the plugin
        environment.update({"TRITON_CACHE_DIR": os.path.join(self.workdir, "triton-cache"),
                            "TRITON_DEFAULT_FP_FUSION": "1"}, **(env or {}))
        try:
            done = subprocess.run(command, cwd=self.workdir, capture_output=True, text=True, env=environment,
                                  timeout=TIME_LIMIT_S)
        except subprocess.TimeoutExpired:
            self._fail(name, f"no answer in {TIME_LIMIT_S} s")
            return
        output = done.stdout + done.stderr
        problems = []
        if done.returncode != returncode:
            problems.append(f"exit status {done.returncode}, expected {returncode}")
        if expect and expect not in output:
            problems.append(f"no {expect!r} in the output")
        if forbid and forbid in output:
            problems.append(f"{forbid!r} in the output")
        if problems:
            self._fail(name, "; ".join(problems) + "\n" + textwrap.indent(output[-3000:], "    "))
        else:
            self.passed += 1
            print(f"ok      {name}")

    def _fail(self, name: str, why: str) -> None:
        self.failed.append(name)
        print(f"FAILED  {name}: {why}")


def python_code(code: str, workdir: str, name: str = "program.py") -> list[str]:
    """A command running ``code`` as a file (``@triton.jit`` reads its kernels' source there)."""
    path = os.path.join(workdir, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(code)
    return [sys.executable, path]


def main(argv: list[str]) -> int:
    pictures = "--pictures" in argv
    with tempfile.TemporaryDirectory(prefix="ll-smoke-") as workdir:
        checks = Checks(workdir)
        import linear_layouts
        installed = os.path.dirname(os.path.abspath(linear_layouts.__file__))
        if os.path.realpath(installed) == os.path.realpath(SOURCE_TREE) or "site-packages" not in installed:
            print(f"FAILED  installed copy: linear_layouts comes from the source tree ({installed}), not a wheel")
            return 1
        examples = os.path.join(installed, "examples")
        tool = lambda name: os.path.join(BIN, name)  # noqa: E731

        checks.run("ll-opt --list-passes", [tool("ll-opt"), "--list-passes"], expect="ll-resolve-auto-layouts")
        checks.run("ll-opt --list-passes (advice)", [tool("ll-opt"), "--list-passes"], expect="ll-apply-advice")
        layout = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
        checks.run("ll-viz a layout as text", [tool("ll-viz"), layout, "--shape", "32,32"], expect="w0:t0:r0")
        if pictures:
            checks.run("ll-viz a layout as a picture", [tool("ll-viz"), layout, "--shape", "32,32", "-o", "layout.png"])
        else:
            checks.run("ll-viz a picture without matplotlib: one clear line", [tool("ll-viz"), layout, "--shape", "32,32",
                       "-o", "layout.png"], expect="pip install matplotlib", returncode=1)
        checks.run("ll-demo" + (" (pictures)" if pictures else " (no matplotlib)"), [tool("ll-demo")],
                   expect="Conversions on sm_90")
        if pictures:
            # The second pass (after `pip install matplotlib`) checks what matplotlib changes: the
            # pictures.  Every other check ran in the first pass on the same wheel; run twice, it
            # cost CI about 30 s of CPU a release and could not find anything new.
            print(f"{checks.passed} passed, {len(checks.failed)} failed")
            return 1 if checks.failed else 0
        checks.run("python -m linear_layouts run --help", [sys.executable, "-m", "linear_layouts", "run", "--help"],
                   expect="usage")
        checks.run("ll-port a bundled kernel to Gluon", [tool("ll-port"), os.path.join(examples, "kernels.py") + ":transpose",
                                                         "--target", "sm90", "--arg", "X=*fp32", "--arg", "Y=*fp32",
                                                         "--arg", "M=64", "--arg", "N=64", "--check"],
                   expect="def transpose(X, Y, M: gl.constexpr, N: gl.constexpr):")
        checks.run("report --format md", [sys.executable, "-m", "linear_layouts", "report", "--format", "md",
                                          "--no-compare", os.path.join(examples, "report_example.py")],
                   expect="linear-layouts report: wrote")
        checks.run("enable() on a Triton kernel", python_code(TRITON_KERNEL, workdir, "triton_kernel.py"), expect="linear-layouts: 1 kernel,")
        checks.run("enable() on Gluon kernels with and without layouts", python_code(GLUON_KERNELS, workdir, "gluon_kernels.py"),
                   expect="linear-layouts: 2 kernels")
        checks.run("start-up hook: LINEAR_LAYOUTS=1 reaches a process that imports triton",
                   python_code(STARTUP_HOOK_ON, workdir, "startup_hook_on.py"), expect="on after import triton", env={"LINEAR_LAYOUTS": "1"})
        checks.run("start-up hook: nothing without LINEAR_LAYOUTS", python_code(STARTUP_HOOK_OFF, workdir, "startup_hook_off.py"), expect="off")
        checks.run("enable() reaches a process started after it", python_code(CHILD_OF_ENABLE, workdir, "child_of_enable.py"), expect="True")
    print(f"{checks.passed} passed, {len(checks.failed)} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
