"""The harness's temporary folders (kernel sources gluon.jit reads, Triton caches, compile inputs)
last as long as the process that made them, and no longer: a test run leaves nothing in /tmp."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import REPO

PROGRAM = """
import os, sys
sys.path.insert(0, sys.argv[1])
from harness.common import scratch_directory
folder = scratch_directory("ll_test_scratch_")
with open(os.path.join(folder, "kernel.py"), "w") as f:
    f.write("pass\\n")
child = os.fork()
if child == 0:
    sys.exit(0)                      # a forked child's exit runs atexit too: it must leave the folder
os.waitpid(child, 0)
print(folder, os.path.exists(os.path.join(folder, "kernel.py")))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="checks a forked child's exit (POSIX)")
def test_a_scratch_directory_lives_as_long_as_the_process_that_made_it():
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(REPO / "benchmarks")], capture_output=True, text=True,
                          timeout=120, check=True)
    folder, kept = done.stdout.split()
    assert kept == "True"                 # there while the process ran, a forked child's exit included
    assert not os.path.exists(folder)     # gone when it ended
