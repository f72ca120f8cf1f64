"""An interrupted compile stops, as it does without the plugin; it never becomes a fallback.

The drop-in recompiles a kernel with stock Triton when a stage fails on our islands.  A stage
stopped from outside (Ctrl-C during ptxas, a harness's SIGTERM on its time limit) is no such
failure: once, a third-party suite ended on its time limit and the plugin recorded "`ptxas`
failed with error code -2" as a failure of its islands and compiled the kernel again.

Each case runs a compile of the drop-in tests' transpose (its conversion is ours) in a child
process whose ptxas is a wrapper script: the first call is killed by a signal, later calls run
the real ptxas (so that a fallback, if the hook wrongly took one, would succeed and be seen).
"""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

triton = pytest.importorskip("triton")

# Kill the first real compile (not `--version`) by SIGNAL; run the real ptxas afterwards.
# TARGET "self": ptxas dies of the signal; "parent": the signal goes to the compiling process
# too, as Ctrl-C in a terminal reaches the whole foreground process group.
WRAPPER = """#!/bin/sh
if [ "$1" != "--version" ] && [ ! -e "{marker}" ]; then
  touch "{marker}"
  if [ "{target}" = parent ]; then kill -{signal} $PPID; sleep 1; fi
  kill -{signal} $$
fi
exec "{real}" "$@"
"""

CHILD = textwrap.dedent("""
    import json, sys, warnings
    import triton, linear_layouts
    from support.hook_kernel import SOURCE, TARGET
    linear_layouts.enable()
    outcome = "compiled"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            triton.compile(SOURCE, target=TARGET)
    except KeyboardInterrupt:
        outcome = "KeyboardInterrupt"
    except Exception as error:
        outcome = type(error).__name__ + ": " + str(error).splitlines()[0]
    stats = linear_layouts.stats()
    print(json.dumps({"outcome": outcome, "fallbacks": [f.reason for f in stats.fallbacks]}))
""")


def _compile_with_ptxas_wrapper(tmp_path, script: str) -> dict:
    """Compile the transpose with the drop-in in a child whose ptxas is ``script`` (``{marker}``
    and ``{real}`` filled in); the child's outcome and recorded fallbacks."""
    from triton.backends.nvidia.compiler import get_ptxas
    wrapper = tmp_path / "ptxas"
    wrapper.write_text(script.format(marker=tmp_path / "killed", real=get_ptxas(90).path))
    wrapper.chmod(0o755)
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_ALWAYS_COMPILE="1",
               TRITON_PTXAS_PATH=str(wrapper), TRITON_PTXAS_BLACKWELL_PATH=str(wrapper),
               PYTHONPATH=os.pathsep.join([os.path.join(os.path.dirname(__file__), "..", ".."),
                                           os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert (tmp_path / "killed").exists(), "the wrapper never ran: this test would prove nothing"
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"the child printed no result (exit {done.returncode}): {done.stderr[-2000:]}"
    return json.loads(lines[-1])


def _compile_with_interrupted_ptxas(tmp_path, sig: signal.Signals, target: str) -> dict:
    script = WRAPPER.replace("{target}", target).replace("{signal}", sig.name[3:])
    return _compile_with_ptxas_wrapper(tmp_path, script)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ptxas_killed_by_a_signal_is_triton_s_error_and_no_fallback(tmp_path, sig):
    result = _compile_with_interrupted_ptxas(tmp_path, sig, "self")
    assert result["fallbacks"] == []
    assert result["outcome"].startswith("PTXASError") and f"error code -{int(sig)}" in result["outcome"]


def test_ctrl_c_reaches_the_compile_as_keyboard_interrupt(tmp_path):
    result = _compile_with_interrupted_ptxas(tmp_path, signal.SIGINT, "parent")
    assert result == {"outcome": "KeyboardInterrupt", "fallbacks": []}


def test_a_failure_of_ptxas_itself_still_falls_back(tmp_path):
    """The control: a ptxas that fails on its own (exit 1, once) is a fallback to stock."""
    failing_once = """#!/bin/sh
if [ "$1" != "--version" ] && [ ! -e "{marker}" ]; then touch "{marker}"; exit 1; fi
exec "{real}" "$@"
"""
    result = _compile_with_ptxas_wrapper(tmp_path, failing_once)
    assert result["outcome"] == "compiled"
    assert len(result["fallbacks"]) == 1 and "error code 1" in result["fallbacks"][0]


@pytest.mark.parametrize("code, expected", [(-2, signal.SIGINT), (-15, signal.SIGTERM), (130, signal.SIGINT),
                                            (1, None), (-11, None), (-9, None), (255, None)])
def test_interrupting_signal_reads_triton_s_error(code, expected):
    from linear_layouts.passes.drop_in.hook import interrupting_signal
    try:
        try:
            raise subprocess.CalledProcessError(code, ["ptxas"])
        except subprocess.CalledProcessError:
            raise RuntimeError(f"`ptxas` failed with error code {code}")
    except RuntimeError as error:
        assert interrupting_signal(error) == expected
    assert interrupting_signal(RuntimeError(f"`ptxas` failed with error code {code}")) == expected
