"""docs/your-kernel.md runs as written: its blocks, in page order, in one empty folder, on the CPU,
under the installed triton (``make test`` runs this under 3.9, ``make test-compat`` under 3.6).

A ``python`` block whose first line is ``# NAME.py`` is saved as NAME.py (later blocks run or
import it) and run as ``python NAME.py``; a ``sh`` block runs in bash, line by line, with this
interpreter's folder first on PATH (so ``python``, ``ll-opt`` and ``ll-viz`` are this venv's).  A
block starting ``# needs a GPU`` is skipped where there is none (and said so)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

triton = pytest.importorskip("triton")

from support import REPO  # noqa: E402

PAGE = REPO / "docs" / "your-kernel.md"
NEEDS_A_GPU = "# needs a GPU"


def page_blocks() -> list[tuple[str, str]]:
    """(language, text) of every fenced block of the page, in order."""
    return re.findall(r"```(python|sh)\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)


def have_a_gpu() -> bool:
    return shutil.which("nvidia-smi") is not None and \
        subprocess.run(["nvidia-smi"], capture_output=True).returncode == 0


def environment(folder) -> dict:
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_XDIST")}
    env.update(TRITON_CACHE_DIR=str(folder / "cache"), TRITON_DEFAULT_FP_FUSION="1",
               PATH=os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")]))
    return env


def run_block(language: str, text: str, folder) -> subprocess.CompletedProcess:
    if language == "python":
        name = re.match(r"# (\w+\.py)\b", text)
        assert name, f"a python block of the page names no file in its first line:\n{text}"
        (folder / name.group(1)).write_text(text)
        command = [sys.executable, name.group(1)]
    else:
        command = ["bash", "-e", "-c", text]
    return subprocess.run(command, capture_output=True, text=True, cwd=folder, env=environment(folder), timeout=600)


def test_the_page_has_the_blocks_it_promises():
    blocks = page_blocks()
    shown = "\n".join(text for _, text in blocks)
    for needed in ("triton.compile(", 'compiled.asm["ttgir"]', ".warmup(", "TRITON_CACHE_DIR", "MLIR_ENABLE_DUMP=1",
                   "ll-opt dump.txt", "ll-viz", "python -m linear_layouts report", "GluonASTSource"):
        assert needed in shown, needed
    assert any(text.startswith(NEEDS_A_GPU) for _, text in blocks)


def run_blocks(blocks, folder) -> str:
    """Run ``blocks`` in order in ``folder``, each to exit status 0; their output, together."""
    outputs = []
    for language, text in blocks:
        done = run_block(language, text, folder)
        assert done.returncode == 0, f"{language} block failed:\n{text}\n--- stdout\n{done.stdout[-3000:]}" \
                                     f"\n--- stderr\n{done.stderr[-3000:]}"
        outputs.append(done.stdout + done.stderr)
    return "\n".join(outputs)


def test_every_block_runs_as_written(tmp_path):
    """Every block but those that need a GPU, in order; and what each step promises is there."""
    everything = run_blocks([b for b in page_blocks() if not b[1].startswith(NEEDS_A_GPU)], tmp_path)
    assert (tmp_path / "transpose.ttgir").is_file() and (tmp_path / "gluon_transpose.ttgir").is_file()
    assert "reading the module printed before ConvertTritonGPUToLLVM" in everything   # ll-opt on the dump
    assert "scope=warp" in everything                                                  # ll-classify-conversions
    assert "remark: [ll-lower-conversions]" in everything                              # --remarks, enable(remarks=True)
    assert "Read from a TTGIR file: transpose.ttgir (no program ran)." in everything   # report on the module
    assert "## transpose on sm_90" in everything
    assert "linear-layouts: 1 kernel," in everything                                   # run's summary


def test_the_blocks_that_need_a_gpu(tmp_path):
    if not have_a_gpu():
        pytest.skip("the page's blocks marked '# needs a GPU' need one (none here); the others run above")
    blocks = page_blocks()
    kernel = next(b for b in blocks if b[1].startswith("# my_kernel.py"))
    run_blocks([kernel] + [b for b in blocks if b[1].startswith(NEEDS_A_GPU)], tmp_path)
