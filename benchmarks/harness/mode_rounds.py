"""Time a script's modes in fresh processes, alternated over rounds.

Each (mode, round) runs ``python SCRIPT --child MODE JSON`` (``python -m harness.NAME ...`` for a
module of ``harness/``: ``common.module_command``) in a process of its own with an
empty Triton cache (nothing compiled or cached in one mode reaches another), and the order of
the modes rotates from round to round (with three modes: a b c, b c a, c a b), so that a drift
of the GPU over the run does not favour one mode.  The child writes its results as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess

from harness.common import module_command, scratch_directory


def run_mode_rounds(script: str, modes: tuple[str, ...], rounds: int, prefix: str) -> dict[str, list]:
    """{mode: [the child's JSON of each round]}."""
    work = scratch_directory(prefix)
    runs: dict = {m: [] for m in modes}
    for round_ in range(rounds):
        shift = round_ % len(modes)
        for mode in modes[shift:] + modes[:shift]:
            path = os.path.join(work, f"{mode}{round_}.json")
            env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(work, f"cache-{mode}{round_}"))
            python, cwd = module_command(script)
            subprocess.run([*python, "--child", mode, path], check=True, env=env, cwd=cwd)
            with open(path) as f:
                runs[mode].append(json.load(f))
    return runs
