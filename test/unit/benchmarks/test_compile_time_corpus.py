"""benchmarks/compile_time_corpus.py without timing anything: targets from file names, the summary."""

import os
import sys

import pytest

pytest.importorskip("triton")

from support import REPO  # noqa: E402

sys.path.insert(0, os.path.join(str(REPO), "benchmarks"))
import compile_time_corpus  # noqa: E402


def test_importing_it_leaves_the_environment_alone():
    """Importing the benchmark (as this file does) must not switch Triton's cache off for the
    tests that run after it in the same process."""
    assert os.environ.get("TRITON_ALWAYS_COMPILE") != "1"


def test_the_target_comes_from_the_file_name():
    target = compile_time_corpus.target_of("x/softmax_f32_1024.cuda80.ttgir")
    assert (target.backend, target.arch, target.warp_size) == ("cuda", 80, 32)
    with pytest.raises(ValueError, match="does not say its target"):
        compile_time_corpus.target_of("x/softmax.ttgir")


def test_summary_counts_the_median_the_worst_and_those_above_15_percent():
    rows = [{"file": "a", "converts": 0, "stock": 1.0, "ours": 1.0, "ratio": 1.0},
            {"file": "b", "converts": 2, "stock": 1.0, "ours": 1.2, "ratio": 1.2},
            {"file": "c", "converts": 1, "stock": 0.5, "ours": 0.52, "ratio": 1.04}]
    assert compile_time_corpus.summary_lines(rows) == [
        "* kernels: 3 (2 with a `ttg.convert_layout`)",
        "* overhead, median over kernels: **+4.0%**; over the kernels with a conversion: +12.0%",
        "* worst: b +20.0% (1000 ms -> 1200 ms)",
        "* above +15%: 1 (b)",
        "* the machine's noise: the 1 kernels without a conversion (the plugin leaves them alone) range 1.000 to "
        "1.000, median 1.000; with a conversion, above the noise's top (1.000): 2"]
