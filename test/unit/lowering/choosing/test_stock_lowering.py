"""The prediction of stock Triton 3.6's warp shuffles (lowering/choosing/stock_lowering.py): the worked
examples, every measured round trip of the committed runs, and Triton's own PTX (oracle, in a
subprocess, under triton 3.6 only: the rules are that release's)."""

import gzip
import json
import os
import sys

import pytest

from linear_layouts.dialect.conventions import TritonConventions
from linear_layouts.dialect.encodings import to_linear_layout as _to_linear_layout
from linear_layouts.lowering.choosing.stock_lowering import stock_warp_shuffles
from support import REPO

RELEASE = TritonConventions((3, 6))
RESULTS = REPO / "benchmarks" / "results"
MEASURED = ("plan_train.json.gz", "plan_train_303_404.json.gz", "plan_fresh_101.json.gz", "plan_fresh_202.json.gz",
            "plan_fresh_505_606.json.gz")


def _blocked(size, threads, warps, order):
    return (f"#ttg.blocked<{{sizePerThread = {size}, threadsPerWarp = {threads}, warpsPerCTA = {warps}, "
            f"order = {order}}}>")


def _shuffles(src, dst, shape, bits):
    return stock_warp_shuffles(_to_linear_layout(src, shape, conventions=RELEASE),
                               _to_linear_layout(dst, shape, conventions=RELEASE), bits)


# (source, destination, shape, bits, stock's shuffles per thread): the module docstring's examples
# and the kinds of pair the rules tell apart.
EXAMPLES = [
    # a lane permutation besides the register/lane swap: every one of the 64 registers moves
    (_blocked([1, 8], [2, 16], [2, 2], [1, 0]), _blocked([1, 4], [2, 16], [2, 2], [1, 0]), (32, 16), 32, 64),
    # the other lanes stay put: the swap is a butterfly, one shuffle per register pair
    (_blocked([1, 8], [4, 8], [2, 2], [1, 0]), _blocked([1, 4], [4, 8], [2, 2], [1, 0]), (64, 8), 32, 32),
    # the f16 pair of test_stock_gate.py: 16-bit elements packed two to a word
    (_blocked([1, 8], [4, 8], [4, 1], [1, 0]), _blocked([1, 4], [4, 8], [4, 1], [1, 0]), (64, 128), 16, 32),
    # a transpose inside one warp: several register/lane swaps, shared memory
    (_blocked([1, 4], [8, 4], [1, 1], [1, 0]), _blocked([4, 1], [4, 8], [1, 1], [0, 1]), (32, 32), 32, None),
    # across warps: shared memory
    (_blocked([1, 4], [8, 4], [4, 1], [1, 0]), _blocked([1, 4], [8, 4], [1, 4], [1, 0]), (64, 64), 32, None),
]


@pytest.mark.parametrize("src, dst, shape, bits, expected", EXAMPLES)
def test_worked_examples(src, dst, shape, bits, expected):
    assert _shuffles(src, dst, shape, bits) == expected


def test_every_measured_round_trip_of_stock():
    """Stock's round trip A -> B -> A in the committed runs (training and fresh draws, 991
    conversions): its measured shfl count is the two directions' prediction, exactly."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from plan_choice import release
    wrong, rows = [], 0
    for name in MEASURED:
        run = json.load(gzip.open(RESULTS / name, "rt"))
        version = release(run["environment"]["triton"])
        for row in run["rows"]:
            measured = row["modes"]["stock"].get("chain_mix")
            if measured is None:
                continue
            rows += 1
            shape = tuple(row["shape"])
            a = _to_linear_layout(row["src"], shape, conventions=version)
            b = _to_linear_layout(row["dst"], shape, conventions=version)
            predicted = (stock_warp_shuffles(a, b, row["bits"]) or 0) + (stock_warp_shuffles(b, a, row["bits"]) or 0)
            if predicted != measured["shfl"]:
                wrong.append((row["case"], measured["shfl"], predicted))
    assert rows >= 900 and not wrong


def test_agrees_with_tritons_ptx():
    """Oracle: Triton 3.6 compiles a load -> convert -> store kernel (in a subprocess, no GPU
    needed) and its PTX's shfl.sync count is the prediction."""
    triton = pytest.importorskip("triton")
    if tuple(int(x) for x in triton.__version__.split(".")[:2]) != (3, 6):
        pytest.skip(f"the rules are triton 3.6's; installed: {triton.__version__}")
    sys.path[:0] = [str(REPO / "benchmarks"), str(REPO / "benchmarks" / "studies")]
    import planner_vs_triton
    dtype = {16: "f16", 32: "f32", 64: "i64"}
    for src, dst, shape, bits, expected in EXAMPLES[:4]:
        warps = 1 if "warpsPerCTA = [1, 1]" in src else 4
        text = planner_vs_triton.ttgir(src, dst, list(shape), dtype[bits], warps, 90)
        result = planner_vs_triton.compile_stock(text, 90)
        assert "error" not in result, result
        assert result["ops"].get("shfl.sync", 0) == (expected or 0), (src, dst, result["ops"])
