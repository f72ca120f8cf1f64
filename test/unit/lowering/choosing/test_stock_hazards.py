"""Conversions stock Triton's lowering hangs on or computes wrong are never left to Triton
(``lowering.choosing.stock_hazards``), gate or no gate.

* the property: ``is_permutation_layout`` against triton 3.9's own parser, which rejects every
  ``#ttg.linear`` that is not a permutation after its broadcast bases are removed (random
  layouts, checked in a child process);
* the decision: ``stock_hazard`` on the reproducers and on ordinary pairs, and on every
  conversion the committed GPU runs found stock computing wrong;
* the drop-in: the layout stock 3.6 hangs on compiles with ``linear_layouts.enable()`` (default
  options) in seconds on 3.6, and is rejected with Triton's own message on 3.9, as stock does.
"""

import json
import os
import random
import subprocess
import sys
import textwrap
import time

import pytest

triton = pytest.importorskip("triton")

from support import REPO  # noqa: E402

from linear_layouts.dialect.encodings import is_permutation_layout  # noqa: E402
from linear_layouts.dialect.linear_layout import LinearLayout  # noqa: E402
from linear_layouts.lowering.choosing.stock_hazards import (LOST_BYTE_SWAP, NOT_A_PERMUTATION,  # noqa: E402
                                                            register_lane_permutation, stock_hazard)
from linear_layouts.lowering.target import target_named  # noqa: E402
from linear_layouts.passes.ir.layouts import tensor_layout_of  # noqa: E402

RELEASE = tuple(int(x) for x in triton.__version__.split(".")[:2])
LIT_DIR = os.path.join(REPO, "test", "lit", "lower-conversions")

HANG_SRC = "#ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [1, 0]}>"
HANG_DST = ("#ttg.linear<{register = [[0, 2], [1, 0], [0, 5], [0, 8]], lane = [[0, 0], [0, 0], [0, 0], [0, 1], "
            "[0, 0]], warp = [], block = []}>")
I1_SRC = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>"
I1_DST = ("#ttg.linear<{register = [[8, 0], [0, 1], [1, 0]], lane = [[0, 8], [0, 4], [0, 2], [4, 0], [2, 0]], "
          "warp = [], block = []}>")
SM90 = target_named("sm_90")


def _layout(text, shape):
    if "[0, 5]" in text:   # triton 3.9 cannot read it: build it from its bases
        return LinearLayout([("register", [(0, 2), (1, 0), (0, 5), (0, 8)]),
                             ("lane", [(0, 0), (0, 0), (0, 0), (0, 1), (0, 0)]), ("warp", []), ("block", [])],
                            [("dim0", 2), ("dim1", 16)])
    return tensor_layout_of(text, shape)


def test_the_hang_reproducer_is_no_permutation():
    assert stock_hazard(_layout(HANG_SRC, (2, 16)), _layout(HANG_DST, (2, 16)), 8, SM90) == NOT_A_PERMUTATION
    assert stock_hazard(_layout(HANG_DST, (2, 16)), _layout(HANG_SRC, (2, 16)), 32, SM90) == NOT_A_PERMUTATION


def test_the_lost_byte_swap_in_8_bit_elements_only():
    src, dst = tensor_layout_of(I1_SRC, (16, 16)), tensor_layout_of(I1_DST, (16, 16))
    for bits in (1, 8):          # i1 (widened to bytes), i8 and fp8: four to a shuffled word
        assert stock_hazard(src, dst, bits, SM90) == LOST_BYTE_SWAP
        assert stock_hazard(dst, src, bits, SM90) == LOST_BYTE_SWAP
    for bits in (16, 32):        # two or one to a word: r1 is no packed bit, and stock was right
        assert stock_hazard(src, dst, bits, SM90) == ""


BYTE_SRC = "#ttg.linear<{register = [[1], [2], [16]], lane = [[0], [32], [0], [4], [8]], warp = [], block = []}>"
BYTE_DST = "#ttg.linear<{register = [[2], [1]], lane = [[16], [0], [4], [8], [32]], warp = [], block = []}>"


def test_the_permutation_of_the_byte_swap_reproducer():
    src, dst = tensor_layout_of(BYTE_SRC, (64,)), tensor_layout_of(BYTE_DST, (64,))
    r, lane = "register", "lane"
    # source element bits: r0=1 r1=2 r2=16, l1=32 l3=4 l4=8 (l0, l2 broadcast); destination
    # r0=2 r1=1 (r2 padded zero), l0=16 l2=4 l3=8 l4=32 (l1 broadcast).  The zeros that do not
    # line up pair off in order: source l0 -> destination r2, source l2 -> destination l1.
    assert register_lane_permutation(src, dst, SM90) == {
        (r, 0): (r, 1), (r, 1): (r, 0), (r, 2): (lane, 0), (lane, 0): (r, 2), (lane, 1): (lane, 4),
        (lane, 2): (lane, 1), (lane, 3): (lane, 2), (lane, 4): (lane, 3)}
    assert stock_hazard(src, dst, 8, SM90) == LOST_BYTE_SWAP


@pytest.mark.parametrize("shape, src, dst", [
    # r0 and r1 trade places, but no register bit is exchanged with a lane bit: stock was right
    ((2, 8), "#ttg.blocked<{sizePerThread = [8, 2], threadsPerWarp = [2, 16], warpsPerCTA = [4, 2], order = [0, 1]}>",
     "#ttg.blocked<{sizePerThread = [2, 2], threadsPerWarp = [8, 4], warpsPerCTA = [2, 4], order = [1, 0]}>"),
    ((8, 16), "#ttg.linear<{register = [[2, 0], [0, 2]], lane = [[0, 8], [4, 0], [1, 0], [0, 4], [0, 1]], "
              "warp = [], block = []}>",
     "#ttg.linear<{register = [[0, 2], [2, 0]], lane = [[0, 4], [4, 0], [0, 8], [1, 0], [0, 1]], "
     "warp = [], block = []}>")])
def test_a_swap_without_an_exchange_is_no_hazard(shape, src, dst):
    assert stock_hazard(tensor_layout_of(src, shape), tensor_layout_of(dst, shape), 8, SM90) == ""


RESULTS = os.path.join(REPO, "benchmarks", "results")


def test_every_conversion_stock_got_wrong_on_the_gpu_is_a_hazard():
    """The committed GPU runs (the archived study ``stock_truth_check.py``, docs/studies.md): every case stock got wrong is
    one the rule names, and no group the rule clears has a wrong stock."""
    import glob
    import re
    reports = sorted(glob.glob(os.path.join(RESULTS, "stock_i*_check_seed*.md")))
    assert len(reports) >= 5
    wrong = 0
    for path in reports:
        text = open(path).read()
        for row in re.finditer(r"^\| (shuffles|other), none \| (\d+) \| (\d+) \| (\d+) \|", text, re.M):
            assert row.group(3) == "0", f"{path}: stock wrong where the rule clears it"
        for case in re.finditer(r"^- \d+: \(([\d, ]+)\), \d+ warps.*\n  - src `(.*)`\n  - dst `(.*)`", text, re.M):
            shape = tuple(int(x) for x in case.group(1).split(",") if x.strip())
            src, dst = tensor_layout_of(case.group(2), shape), tensor_layout_of(case.group(3), shape)
            assert stock_hazard(src, dst, 8, SM90) == LOST_BYTE_SWAP, (path, case.group(0))
            wrong += 1
    assert wrong >= 16


def test_ordinary_pairs_have_no_hazard():
    a = tensor_layout_of("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
                         "order = [1, 0]}>", (64, 64))
    b = tensor_layout_of("#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], "
                         "order = [0, 1]}>", (64, 64))
    for bits in (1, 8, 16, 32):
        assert stock_hazard(a, b, bits, SM90) == ""    # across warps: stock does not shuffle, i1 included


def _random_linear(rng, shape):
    """A random surjective register/lane/warp layout of ``shape``: a permutation of the tensor's
    bits over random slots (the rest zero, broadcast), then, half the time, one basis spoiled:
    two bits set, or a copy of another basis."""
    out_bits = [(d, 1 << k) for d, size in enumerate(shape) for k in range(size.bit_length() - 1)]
    counts = {"register": rng.randrange(0, 4), "lane": 5, "warp": rng.randrange(0, 3)}
    slots = [(dim, i) for dim, n in counts.items() for i in range(n)]
    while len(slots) < len(out_bits):
        counts["register"] += 1
        slots.append(("register", counts["register"] - 1))
    vectors = {slot: [0] * len(shape) for slot in slots}
    chosen = rng.sample(slots, len(out_bits))
    for slot, (d, bit) in zip(chosen, out_bits):
        vectors[slot][d] = bit
    if rng.random() < 0.5:
        slot = rng.choice(chosen)
        d, bit = rng.choice(out_bits)
        if rng.random() < 0.5 or len(chosen) == len(slots):
            vectors[slot][d] ^= bit if vectors[slot][d] != bit else 0     # a second bit (or none)
        else:
            spare = rng.choice([s for s in slots if s not in chosen])
            vectors[spare] = list(vectors[slot])                         # a copy
    bases = [(dim, [tuple(vectors[(dim, i)]) for i in range(n)]) for dim, n in counts.items()]
    return LinearLayout(bases + [("block", [])], [(f"dim{d}", s) for d, s in enumerate(shape)])


def _attribute(layout):
    def fmt(rows):
        return "[" + ", ".join("[" + ", ".join(map(str, r)) + "]" for r in rows) + "]"
    return "#ttg.linear<{" + ", ".join(f"{d} = {fmt(layout.bases.get(d, ()))}"
                                       for d in ("register", "lane", "warp", "block")) + "}>"


PARSE_CHILD = textwrap.dedent("""
    import json, sys, tempfile
    from triton._C.libtriton import ir
    from linear_layouts.passes.ir.bindings import new_context
    verdicts = []
    for text in json.load(sys.stdin):
        with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
            f.write(text)
            f.flush()
            try:
                ir.parse_mlir_module(f.name, new_context())
                verdicts.append(True)
            except Exception:
                verdicts.append(False)
    print(json.dumps(verdicts))
""")


@pytest.mark.oracle
@pytest.mark.skipif(RELEASE < (3, 9), reason="triton 3.6 accepts every #ttg.linear; 3.9 checks the property")
def test_permutation_property_agrees_with_triton_39_parser():
    rng = random.Random(20261125)
    layouts = [_random_linear(rng, rng.choice(((2, 16), (4, 8), (32,), (8, 8)))) for _ in range(120)]
    modules = []
    for layout in layouts:
        warps = 1 << len(layout.bases.get("warp", ()))
        shape = "x".join(str(s) for s in layout.out_dims.values())
        modules.append(f'#L = {_attribute(layout)}\nmodule attributes {{"ttg.num-ctas" = 1 : i32, '
                       f'"ttg.num-warps" = {warps} : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32}} {{\n'
                       f'  tt.func public @f(%a: tensor<{shape}xi8, #L>) {{\n    tt.return\n  }}\n}}\n')
    done = subprocess.run([sys.executable, "-c", PARSE_CHILD], input=json.dumps(modules), capture_output=True,
                          text=True, timeout=300)
    accepted = json.loads(done.stdout.strip().splitlines()[-1])
    ours = [is_permutation_layout(layout) for layout in layouts]
    assert 20 < sum(ours) < 100, "the draw must hold both kinds, or this test proves little"
    assert ours == accepted


CHILD = textwrap.dedent("""
    import sys, time, warnings, triton, linear_layouts
    from triton.backends.compiler import GPUTarget
    if sys.argv[2] == "plugin":
        linear_layouts.enable()
    start = time.time()
    try:
        triton.compile(sys.argv[1], target=GPUTarget("cuda", 90, 32))
        print("compiled", time.time() - start)
    except Exception as error:
        print("error", str(error).splitlines()[0] if str(error) else type(error).__name__)
""")


def _compile(path, mode, tmp_path, timeout):
    ttgir = tmp_path / "k.ttgir"     # triton.compile reads a module from a file named .ttgir
    ttgir.write_text(open(path).read())
    path = str(ttgir)
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / mode), TRITON_ALWAYS_COMPILE="1")
    env.pop("LINEAR_LAYOUTS_STOCK_GATE", None)   # the default options: the gate on
    done = subprocess.run([sys.executable, "-c", CHILD, path, mode], env=env, capture_output=True, text=True,
                          timeout=timeout)
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]


@pytest.mark.skipif(RELEASE != (3, 6), reason="only triton 3.6 accepts the layout (3.9: the next test)")
def test_the_stock_hang_compiles_with_the_default_plugin_on_36(tmp_path):
    path = os.path.join(LIT_DIR, "stock-hang-non-permutation.mlir")
    start = time.time()
    outcome = _compile(path, "plugin", tmp_path, timeout=120)
    assert outcome.startswith("compiled"), outcome
    assert time.time() - start < 60   # stock did not finish in 120 s; ours about 0.3 s of compile


@pytest.mark.skipif(RELEASE < (3, 9), reason="triton 3.6 accepts the layout (the test before)")
def test_the_stock_hang_layout_is_rejected_as_stock_rejects_it_on_39(tmp_path):
    path = os.path.join(LIT_DIR, "stock-hang-non-permutation-3.9.mlir")
    stock, ours = _compile(path, "stock", tmp_path, 120), _compile(path, "plugin", tmp_path, 120)
    assert stock.startswith("error") and ours == stock
