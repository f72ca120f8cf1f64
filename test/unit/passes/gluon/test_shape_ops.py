"""``tt.reshape``, ``tt.join`` and ``tt.split`` with automatic layouts in
``ll-resolve-auto-layouts``: the assignment's shape rules (``passes/assign/layout_rules.py``,
``shape_layouts.py``: the operand in the key, the result the key with its coordinates renamed),
given to Gluon's automatic values by ``passes/gluon/auto_seeds.py``.  Before, each of these ops
was "no layout rule for this op with automatic layouts" and the kernel went to Triton's own
resolution, which rejects the join and split kernels here ("'tt.make_range' op Failed to infer
return type").  A reshape that may reorder elements (``allow_reorder``) keeps no rule
(``lit/resolve-auto-layouts/reshape-reorder.mlir``)."""

import pathlib
import subprocess
import sys
import warnings

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")
import linear_layouts  # noqa: E402
from linear_layouts.passes.assign.shape_layouts import same_layout  # noqa: E402
from linear_layouts.passes.gluon.resolve_auto_layouts import has_auto_layouts, resolve_module  # noqa: E402
from linear_layouts.passes.gluon.stock_resolution import resolve_like_triton  # noqa: E402
from linear_layouts.passes.ir.bindings import installed_triton_version  # noqa: E402
from linear_layouts.passes.ir.snapshot import parse_module  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from support.gluon_auto_kernels import TARGET, source  # noqa: E402

LIT = pathlib.Path(__file__).parents[3] / "lit" / "resolve-auto-layouts"
TARGETS = {"sm_90": TARGET, "gfx942": GPUTarget("hip", "gfx942", 64)}
L = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>"
# L reshaped to 1-D (row-major): element 32 i + j of the range is element (i, j) of the 32x32 tile
L_FLAT = ("#ttg.linear<{register = [[1], [2], [16]], lane = [[4], [8], [32], [64], [128]], warp = [[256], [512]], "
          "block = []}>")

pytestmark = pytest.mark.usefixtures("every_compile_counted")  # conftest.py


def _only(module, name):
    (op,) = [op for op in module.walk() if op.name == name]
    return op


def _compile_with_ours(name, target):
    linear_layouts.enable(resolve_auto_layouts=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kernel = triton.compile(source(name), target=TARGETS[target])
    finally:
        linear_layouts.disable()
    return kernel, [str(w.message) for w in caught if "linear-layouts" in str(w.message)]


# --------------------------------------------------------------------------- reshape

def test_a_reshape_takes_the_layouts_triton_infers():
    """reshape.mlir (the kernel ``reshape_fixed``): the author's L on the reshape's result flows
    back through it; the reshape's result is L, its operand L reshaped, the same layout Triton's
    own resolution gives it, and no conversion is left."""
    text = (LIT / "reshape.mlir").read_text()
    module = parse_module(text, "reshape.mlir")
    resolution = resolve_module(module, compare=False)
    assert resolution.resolved, resolution.reason
    reshape = _only(module, "tt.reshape")
    assert (reshape.operands[0].tensor_type.encoding, reshape.results[0].tensor_type.encoding) == (L_FLAT, L)
    assert "ttg.convert_layout" not in module.print()
    stock = _only(parse_module(resolve_like_triton(text), "stock.mlir"), "tt.reshape")
    assert same_layout(stock.operands[0].tensor_type.encoding, L_FLAT, (1024,))
    assert same_layout(stock.results[0].tensor_type.encoding, L, (32, 32))


def test_reshape_fixed_compiles_with_ours():
    kernel, caught = _compile_with_ours("reshape_fixed", "sm_90")
    stats = linear_layouts.stats()
    assert caught == [] and (stats.auto_layouts_resolved, stats.fallbacks) == (1, [])
    assert ".entry reshape_fixed" in kernel.asm["ptx"]


# --------------------------------------------------------------------------- join and split

@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("name", ["join_auto", "split_auto"])
def test_join_and_split_compile_with_ours(name, target):
    """Stock's resolution rejects both kernels; ours resolves them, no fallback."""
    if name == "split_auto" and installed_triton_version() < (3, 8):
        pytest.skip("triton 3.6 and 3.7's Gluon abort building gl.split of an automatic layout "
                    "(test_split_resolves_and_compiles covers the op from TTGIR)")
    kernel, caught = _compile_with_ours(name, target)
    stats = linear_layouts.stats()
    assert caught == [] and (stats.auto_layouts_resolved, stats.fallbacks) == (1, [])
    assert "#gluon" not in kernel.asm["ttgir"]
    code = kernel.asm["ptx"] if target == "sm_90" else kernel.asm["amdgcn"]
    assert (".entry " + name if target == "sm_90" else name + ":") in code


_SPLIT_TARGETS = {"sm_90": ("cuda:90", 32, "ptx", ".entry split"), "gfx942": ("hip:gfx942", 64, "amdgcn", "split:")}


def _split_text(target):
    """join-split.mlir (Gluon's split_auto as 3.6 and 3.9 print it before resolution; 3.6's
    Gluon cannot build it) for ``target``."""
    where, lanes, _, _ = _SPLIT_TARGETS[target]
    return (LIT / "join-split.mlir").read_text().replace('ttg.target = "cuda:90"', f'ttg.target = "{where}"').replace(
        '"ttg.threads-per-warp" = 32', f'"ttg.threads-per-warp" = {lanes}')


def test_a_split_takes_an_operand_whose_pairs_are_in_one_thread():
    """The load's coalesced layout puts the pair's two halves in two lanes, which a split cannot
    take (its last dimension must be register basis 0): the split gets the layout that gives its
    results one element a thread, coalesced (its key's pairs in consecutive registers), and the
    load's value is converted to it."""
    module = parse_module(_split_text("sm_90"), "split.mlir", safe=False)
    resolution = resolve_module(module, compare=False)
    assert resolution.resolved, resolution.reason
    split = _only(module, "tt.split")
    assert split.operands[0].tensor_type.encoding == (
        "#ttg.linear<{register = [[0, 1], [1, 0], [2, 0]], lane = [[4, 0], [8, 0], [16, 0], [32, 0], [64, 0]], "
        "warp = [[128, 0], [256, 0]], block = []}>")
    assert {v.tensor_type.encoding for v in split.results} == {
        "#ttg.linear<{register = [[1], [2]], lane = [[4], [8], [16], [32], [64]], warp = [[128], [256]], block = []}>"}
    assert not has_auto_layouts(module.print())


@pytest.mark.parametrize("target", sorted(_SPLIT_TARGETS))
def test_split_resolves_and_compiles(target, tmp_path):
    """The split kernel from TTGIR, under every triton: resolved by ours and lowered to code."""
    _, _, emit, entry = _SPLIT_TARGETS[target]
    path = tmp_path / "split.mlir"
    path.write_text(_split_text(target))
    ll_opt = pathlib.Path(sys.executable).parent / "ll-opt"
    run = subprocess.run([str(ll_opt), str(path), "-p", "ll-resolve-auto-layouts{compare=false},ll-lower-conversions",
                          "--emit", emit], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert entry in run.stdout
