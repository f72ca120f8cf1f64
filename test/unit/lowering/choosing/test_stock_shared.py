"""Stock Triton's shared-memory instructions and our plans that are its twins
(lowering/choosing/stock_shared.py): the worked examples, the choice that sends a twin to stock,
and Triton's own PTX (oracle, in a subprocess, under triton 3.6 only: the prediction is that
release's), on the examples and on fresh conversions."""

import dataclasses
import json
import subprocess
import sys
from collections import Counter

import pytest

from linear_layouts.dialect.conventions import TritonConventions
from linear_layouts.dialect.encodings import to_linear_layout
from linear_layouts.lowering import plan_candidates, target_named
from linear_layouts.lowering.choosing import fitted_model
from linear_layouts.lowering.choosing.stock_shared import is_stock_twin, stock_matrix_pairs, stock_vector_elements
from linear_layouts.lowering.instructions import AccessForm, AccessKind
from linear_layouts.lowering.plan import STOCK, Method, SharedAccess
from support import REPO

RELEASE = TritonConventions((3, 6))
SM90 = target_named("sm_90")
MMA_V3 = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 16, 8]}>"
MMA_V2 = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>"


def _blocked(size, threads, warps, order):
    return (f"#ttg.blocked<{{sizePerThread = {size}, threadsPerWarp = {threads}, warpsPerCTA = {warps}, "
            f"order = {order}}}>")


# (source, destination, shape, bits, matrix pairs that fit stock's search, stock's vector elements,
#  stock's shared-memory instructions in its PTX under triton 3.6 (4 warps))
EXAMPLES = [
    # the module docstring's example: one common register direction, no matrix pair: .v2.b32
    (MMA_V3, _blocked([1, 4], [8, 4], [4, 1], [1, 0]), (64, 16), 32, [], 2,
     {"st.shared.v2.b32": 4, "ld.shared.v2.b32": 4}),
    # 16-bit accumulator -> rows of 8: two pairs with a matrix side fit; stock picks ldmatrix
    (MMA_V2, _blocked([1, 8], [4, 8], [4, 1], [1, 0]), (64, 64), 16, [("vector", "matrix"), ("matrix", "vector")], 2,
     {"st.shared.v4.b32": 4, "ldmatrix.x4": 4}),
    # ... -> columns of 8: only the transposed stmatrix fits
    (MMA_V2, _blocked([8, 1], [8, 4], [1, 4], [0, 1]), (64, 64), 16, [("matrix.trans", "vector")], 4,
     {"stmatrix.trans.x4": 4, "ld.shared.v4.b32": 4}),
]


def _layouts(src, dst, shape):
    return to_linear_layout(src, shape, conventions=RELEASE), to_linear_layout(dst, shape, conventions=RELEASE)


def _shared_plans(src, dst, shape, bits):
    a, b = _layouts(src, dst, shape)
    plans, _ = plan_candidates(a, b, bits, SM90)
    return [p for p in plans if p.method is Method.SHARED]


def _forms(plan):
    return {op.form for op in plan.shared.ops if isinstance(op, SharedAccess)}


@pytest.mark.parametrize("src, dst, shape, bits, pairs, vector, ptx", EXAMPLES)
def test_worked_examples(src, dst, shape, bits, pairs, vector, ptx):
    a, b = _layouts(src, dst, shape)
    assert stock_matrix_pairs(a, b, bits, SM90) == pairs
    assert stock_vector_elements(a, b, bits) == vector


def test_the_plain_vector_candidate_is_the_twin_where_no_matrix_pair_fits():
    src, dst, shape, bits = EXAMPLES[0][:4]
    plans = _shared_plans(src, dst, shape, bits)
    twins = [p for p in plans if is_stock_twin(p)]
    assert len(twins) == 1 and _forms(twins[0]) == {AccessForm.VECTOR}
    assert (twins[0].shared.store_vector, twins[0].shared.load_vector) == (2, 2)
    assert any(AccessForm.MATRIX in _forms(p) for p in plans)      # our stmatrix plan: not a twin


@pytest.mark.parametrize("example", EXAMPLES[1:])
def test_no_twin_where_stock_uses_matrix_instructions(example):
    src, dst, shape, bits = example[:4]
    plans = _shared_plans(src, dst, shape, bits)
    assert plans and not any(is_stock_twin(p) for p in plans)


def test_no_twin_where_our_vector_is_wider_than_stocks():
    """A slice whose registers run along the tensor while the destination holds none: stock's
    plain vectors hold one element (nothing is common), our candidate stores 8 at once."""
    parent = _blocked([1, 1], [1, 32], [2, 2], [1, 0])
    src, dst = f"#ttg.slice<{{dim = 1, parent = {parent}}}>", _blocked([1], [32], [4], [0])
    plans = _shared_plans(src, dst, (16,), 16)
    a, b = _layouts(src, dst, (16,))
    assert stock_vector_elements(a, b, 16) == 1
    assert plans and all(p.shared.store_vector > 1 for p in plans)
    assert not any(is_stock_twin(p) for p in plans)


def test_the_choice_sends_a_twin_to_stock_as_a_twin_and_the_matrix_pick_by_its_direction():
    """Both go to stock and stay islands beside other islands (``twin``): the twin as stock's
    code, the ``stmatrix`` pick, in Triton's rounds, by ``shared_memory_in_tritons_rounds``; the
    same pick moved into fewer rounds stays ours."""
    model = fitted_model.load_model()
    src, dst, shape, bits = EXAMPLES[0][:4]
    plans = _shared_plans(src, dst, shape, bits)
    twin = next(p for p in plans if is_stock_twin(p))
    choice = fitted_model.choose_by_stock_shuffles(twin, 0, model)
    assert choice.plan is None and choice.rank is STOCK and choice.twin
    assert "stock_shared.py" in choice.reason and "1.043x" in choice.reason
    matrix = next(p for p in plans if AccessForm.MATRIX in _forms(p))
    taken = fitted_model.choose_by_stock_shuffles(matrix, 0, model)
    assert taken.plan is None and taken.twin and "'One direction at a time'" in taken.reason
    fewer_rounds = dataclasses.replace(matrix, shared=dataclasses.replace(matrix.shared, rounds_merged=1))
    assert fitted_model.choose_by_stock_shuffles(fewer_rounds, 0, model).plan is fewer_rounds


def _triton_36():
    triton = pytest.importorskip("triton")
    if tuple(int(x) for x in triton.__version__.split(".")[:2]) != (3, 6):
        pytest.skip(f"the prediction is triton 3.6's; installed: {triton.__version__}")


def _stock_ptx(src, dst, shape, bits) -> dict:
    """Stock's shared-memory instructions for a load -> convert -> store kernel, compiled by
    Triton in a subprocess (no GPU needed)."""
    sys.path[:0] = [str(REPO / "benchmarks" / "studies")]
    import planner_vs_triton
    result = planner_vs_triton.compile_stock(planner_vs_triton.ttgir(src, dst, list(shape), {16: "f16", 32: "f32"}[bits],
                                                                     4, 90), 90)
    assert "error" not in result, result
    return {k: v for k, v in result["ops"].items() if k.startswith(("st.shared", "ld.shared", "stmatrix", "ldmatrix"))}


@pytest.mark.parametrize("src, dst, shape, bits, pairs, vector, ptx", EXAMPLES)
def test_examples_against_tritons_ptx(src, dst, shape, bits, pairs, vector, ptx):
    """Oracle: Triton 3.6's shared-memory instructions are the ones above, and where a twin is
    predicted they are the twin's (its plain vectors: count and width)."""
    _triton_36()
    stock = _stock_ptx(src, dst, shape, bits)
    assert stock == ptx
    for plan in _shared_plans(src, dst, shape, bits):
        if is_stock_twin(plan):
            ours = Counter()
            for op in plan.shared.ops:
                if isinstance(op, SharedAccess):
                    words = len(op.registers) * bits // 32
                    kind = "st.shared" if op.kind is AccessKind.STORE else "ld.shared"
                    ours[f"{kind}.v{words}.b32" if words > 1 else f"{kind}.b32"] += 1
            assert dict(ours) == stock


def test_no_false_twin_on_fresh_conversions(tmp_path):
    """Oracle on 40 conversions drawn fresh (seed 1201, never used to write the rules), by
    ``benchmarks/plan_choice.py stock-shared`` in a subprocess: every predicted twin has stock's
    instructions, and where no matrix pair is predicted stock uses none (the direction a twin
    rests on; a pair predicted where stock uses none only keeps an island)."""
    _triton_36()
    out = tmp_path / "tally.json"
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "plan_choice.py"), "stock-shared", "--seed", "1201",
                           "--count", "40", "--json", str(out)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    tally = json.loads(out.read_text())
    assert tally["false_twins"] == [] and tally["errors"] == []
    matrix = {(p, u): n for p, u, n in tally["matrix"]}
    twins = {(p, same): n for p, same, n in tally["twin"]}
    assert matrix.get((False, True), 0) == 0
    assert sum(matrix.values()) >= 10 and twins.get((True, True), 0) >= 1
