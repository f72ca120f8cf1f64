"""Every memdesc as a linear layout, against Triton: pipelined allocations, views, a grid of
shared encodings.

``memdesc_oracle.py`` (run in a subprocess with this interpreter: Triton aborts on invalid
input) builds each case with Triton's own op builders: a ``ttg.local_alloc`` of a shape (a
leading buffer dim of 2, 3 or 5 buffers, or none), then ``memdesc_index``,
``memdesc_subslice``, ``memdesc_trans`` or ``memdesc_reshape`` (Triton infers the encodings of
the last two).  It returns every value's printed type and, on Triton 3.7+, Triton's linear
layout of the type (``toLinearLayout(MemDescType)``).  We check:

* every printed type translates (``memdesc_layout``);
* Triton 3.7+: one buffer's layout has exactly Triton's bases (a view included: its layout is
  its allocation's);
* a pipelined allocation's buffer layout is what ``memdesc_index`` yields, its count the
  leading dim, its buffers ``getAllocationShapePerCTA``'s product apart;
* ``memdesc_trans`` / ``memdesc_reshape`` results (Triton's inferred encodings) have the
  source's layout with the out dims permuted / reshaped: they move no data.  This holds on
  Triton 3.6 too, where Gluon's ``to_linear_layout`` aborts on every shared encoding (it wraps
  the result in a ``#ttg.linear``, whose verifier rejects an ``offset`` dim).

Not covered by an oracle, and why: ``amd_rotating_shared`` (no Gluon constructor, and
``get_gluon_layout_from_memdesc`` raises "Unhandled encoding encountered" on a parsed one: see
``test_memdesc.py`` for its exact values); ``padded_shared`` (Triton's ``toLinearLayout`` is
not implemented for it: Gluon raises "toLinearLayout not implemented"; its types are checked
here, its layout is the bases it is written with).
"""

import itertools
import json
import os
import subprocess
import sys
from functools import lru_cache

import pytest

pytest.importorskip("triton")
from importlib.metadata import version as _pkg_version  # noqa: E402

from linear_layouts.dialect.conventions import TritonConventions  # noqa: E402
from linear_layouts.dialect.memdesc import memdesc_layout  # noqa: E402
from linear_layouts.passes.ir.types import parse_tensor_type  # noqa: E402
from support import ORACLES  # noqa: E402

pytestmark = pytest.mark.oracle

TRITON = tuple(int(x) for x in _pkg_version("triton").split(".")[:2])
CONVENTIONS = TritonConventions(TRITON)
ORACLE = str(ORACLES / "memdesc_oracle.py")
CONVERTS = TRITON >= (3, 7)
NO_CONVERT = ("Triton 3.6's Gluon to_linear_layout aborts on every shared encoding (it wraps the result in a "
              "#ttg.linear, whose verifier rejects an offset dim)")
ELEMENT = {8: "i8", 16: "bf16", 32: "f32"}


# ------------------------------------------------------------------ the cases

def cga_variants(rank):
    """No CGA, then each dim split over 2 CTAs, then the first two dims over 2 each."""
    unit = [[1 if e == d else 0 for e in range(rank)] for d in range(rank)]
    return [[], [unit[0]], [unit[rank - 1]], [unit[0], unit[rank - 1]]]


def split_of(cga, rank):
    split = [1] * rank
    for b in cga:
        for d, c in enumerate(b):
            if c:
                split[d] *= 2
    return split


def nvmma_grid():
    """Every swizzle width, both orders, every element width (fp4Padded for 8 bits), ranks 2
    and 3, each CGA split, at one swizzle tile and at larger shapes."""
    for swizzle, width, transposed, rank in itertools.product((0, 32, 64, 128), (8, 16, 32), (False, True), (2, 3)):
        for fp4 in ((False, True) if width == 8 and swizzle == 128 else (False,)):  # Gluon: fp4Padded needs 128 B
            row = 8 * max(16, swizzle) // width // (2 if fp4 else 1)
            contig = 0 if transposed else rank - 1
            for cga, scale in itertools.product(cga_variants(rank), (1, 4)):
                shape = [2] * rank
                shape[contig] = row * scale
                rows_dim = rank - 1 if transposed else rank - 2
                shape[rows_dim] = 8 * scale
                shape = [s * c for s, c in zip(shape, split_of(cga, rank))]
                yield {"kind": "nvmma_shared", "args": [swizzle, width, transposed, fp4, cga, rank]}, ELEMENT[width], shape


def swizzled_grid():
    """vec x perPhase x maxPhase x both orders, with CGA splits, on shapes from 1x1 up."""
    for vec, per_phase, max_phase, order in itertools.product((1, 2, 4, 8), (1, 2, 4), (1, 2, 4, 8),
                                                              ([1, 0], [0, 1])):
        for cga, shape in itertools.product(cga_variants(2), ([1, 2], [2, 1], [1, 64], [64, 1], [8, 8], [32, 64])):
            shape = [s * c for s, c in zip(shape, split_of(cga, 2))]
            yield {"kind": "swizzled_shared", "args": [vec, per_phase, max_phase, order, cga]}, "f16", shape
    for order in itertools.permutations(range(3)):
        yield {"kind": "swizzled_shared", "args": [4, 2, 4, list(order), []]}, "f16", [4, 16, 32]


def shared_linear_grid():
    """Each grid encoding above written as #ttg.shared_linear bases (Triton's own bases)."""
    yield {"kind": "shared_linear", "args": [[[0, 1], [0, 2], [0, 4], [0, 8], [1, 8], [2, 0], [4, 0]], [], 16]}, \
        "f16", [8, 16]
    yield {"kind": "shared_linear", "args": [[[1, 0], [2, 1], [0, 1], [0, 2], [0, 4]], [[4, 0]], 32]}, "f16", [8, 8]
    yield {"kind": "shared_linear", "args": [[[0, 0, 1], [0, 1, 1], [1, 0, 0], [0, 2, 0]], [], 16]}, "f32", [2, 4, 2]


def plain_cases():
    """One allocation per grid encoding, no view: Triton's layout of the type itself."""
    grids = [nvmma_grid(), swizzled_grid()]
    if TRITON >= (3, 7):  # Triton 3.6's get_shared_linear_layout aborts on valid bases
        grids.append(shared_linear_grid())
    for spec, element, shape in itertools.chain(*grids):
        if all(s == 1 for s in shape):
            continue  # one element: Gluon cannot return a layout with no offset bases
        yield {"encoding": spec, "element": element, "alloc": shape, "steps": [], "bases_of": [0],
               "convert": CONVERTS, "family": "plain"}


def view_cases():
    """Pipelined allocations and each view kind over them."""
    encodings = [
        ({"kind": "nvmma_shared", "args": [128, 16, False, False, [], 2]}, "bf16", [64, 64]),
        ({"kind": "nvmma_shared", "args": [128, 16, True, False, [], 2]}, "bf16", [64, 64]),
        ({"kind": "nvmma_shared", "args": [64, 8, False, False, [[1, 0]], 2]}, "i8", [128, 64]),
        ({"kind": "nvmma_shared", "args": [32, 32, True, False, [], 2]}, "f32", [16, 32]),
        ({"kind": "nvmma_shared", "args": [0, 16, False, False, [], 2]}, "f16", [32, 16]),
        ({"kind": "swizzled_shared", "args": [4, 1, 4, [1, 0], []]}, "f16", [32, 16]),
        ({"kind": "swizzled_shared", "args": [8, 2, 4, [0, 1], [[0, 1]]]}, "f16", [64, 32]),
        ({"kind": "swizzled_shared", "args": [1, 1, 1, [1, 0], []]}, "f32", [1, 64]),
    ]
    for spec, element, tile in encodings:
        rank = len(tile)
        d = tile.index(max(tile))  # slice and split the largest dim in two
        half = tile[:d] + [tile[d] // 2] + tile[d + 1:]
        chains = {
            "subslice": [["subslice", half, [half[d] if e == d else 0 for e in range(rank)]]],
            "trans": [["trans", list(reversed(range(rank)))]],
            "reshape": [["reshape", tile[:d] + [2, tile[d] // 2] + tile[d + 1:]]],
        }
        for buffers in (None, 1, 2, 3, 5):
            alloc = tile if buffers is None else [buffers] + tile
            index = [] if buffers is None else [["index"]]
            for view, steps in chains.items():
                steps = index + steps
                first = 0 if buffers is None else 1
                yield {"encoding": spec, "element": element, "alloc": alloc, "steps": steps,
                       "bases_of": list(range(first, len(steps) + 1)), "convert": CONVERTS,
                       "family": view, "buffers": buffers}


@lru_cache(maxsize=1)
def oracle_results():
    cases = list(plain_cases()) + list(view_cases())
    oracle_cases = [{k: v for k, v in c.items() if k not in ("family", "buffers")} for c in cases]
    proc = subprocess.run([sys.executable, ORACLE], input=json.dumps(oracle_cases), capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        errors = "\n".join(line for line in proc.stderr.splitlines() if "leaked" not in line)
        raise RuntimeError(f"memdesc oracle failed ({proc.returncode}): {errors[-3000:]}")
    return list(zip(cases, json.loads(proc.stdout)))


def ours(type_text):
    t = parse_tensor_type(type_text)
    assert t is not None and t.is_shared, type_text
    return memdesc_layout(t.encoding, t.shape, t.alloc_shape, conventions=CONVENTIONS)


def bases_of(layout):
    return {"offset": [list(b) for b in layout.bases.get("offset", ())],
            "block": [list(b) for b in layout.bases.get("block", ())]}


def results(family):
    return [(c, r) for c, r in oracle_results() if c["family"] == family]


# ------------------------------------------------------------------ the tests

@pytest.mark.parametrize("family", ["plain", "subslice", "trans", "reshape"])
def test_every_type_translates_to_tritons_layout(family):
    checked = compared = 0
    mismatches = []
    for case, result in results(family):
        for i, text in enumerate(result["types"]):
            mine = ours(text)  # raises if any type does not translate
            checked += 1
            if str(i) in result["bases"]:
                compared += 1
                if bases_of(mine.buffer) != result["bases"][str(i)]:
                    mismatches.append((text, bases_of(mine.buffer), result["bases"][str(i)]))
    assert checked >= 20
    assert not mismatches, f"{len(mismatches)} of {compared} differ, first: {mismatches[0]}"
    if CONVERTS:
        assert compared >= 20
    else:
        assert compared == 0


@pytest.mark.skipif(CONVERTS, reason="Triton 3.7+ is compared base by base above")
def test_triton_36_has_no_shared_layout_binding():
    """Say so, and keep the claim honest: the oracle would abort on a shared to_linear_layout."""
    case = {"encoding": {"kind": "swizzled_shared", "args": [2, 1, 2, [1, 0], []]}, "element": "f16",
            "alloc": [8, 8], "steps": [], "bases_of": [0], "convert": True}
    proc = subprocess.run([sys.executable, ORACLE], input=json.dumps([case]), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0 and "Expected input dimension 0 to be 'register'" in proc.stderr, NO_CONVERT


def test_grid_covers_what_it_claims():
    plain = [c["encoding"] for c, _ in results("plain")]
    nvmma = {(a[0], a[1], a[2], a[3], a[5], len(a[4])) for a in (s["args"] for s in plain if s["kind"] == "nvmma_shared")}
    assert {(sw, tr) for sw, _, tr, *_ in nvmma} == set(itertools.product((0, 32, 64, 128), (False, True)))
    assert any(fp4 for _, _, _, fp4, *_ in nvmma) and {n for *_, n in nvmma} == {0, 1, 2}
    swizzled = [s["args"] for s in plain if s["kind"] == "swizzled_shared"]
    assert {tuple(a[3]) for a in swizzled} >= {(1, 0), (0, 1)} and any(a[4] for a in swizzled)


def test_pipelined_allocation_is_its_indexed_buffer_times_the_count():
    seen = set()
    for case, result in oracle_results():
        buffers = case.get("buffers")
        if case["family"] == "plain" or buffers is None:
            continue
        whole, indexed = ours(result["types"][0]), ours(result["types"][1])
        assert whole.buffers == buffers and indexed.buffers is None
        assert whole.buffer == indexed.buffer and whole.buffer_shape == indexed.view_shape
        # Triton's memdesc_index stride: the product of getAllocationShapePerCTA (per-CTA dims).
        split = split_of(case["encoding"]["args"][4], len(whole.buffer_shape))
        per_cta = 1
        for s, c in zip(whole.buffer_shape, split):
            per_cta *= s // c
        assert whole.buffer_elements == per_cta == whole.buffer.in_dim_size("offset")
        assert [whole.buffer_start(i) for i in range(buffers)] == [i * per_cta for i in range(buffers)]
        seen.add(buffers)
    assert seen == {1, 2, 3, 5}


def _renamed(layout, names):
    """``layout`` with out dim ``names[i]`` renamed to ``dim{i}``, in order dim0, dim1, ..."""
    temporary = layout
    for i, name in enumerate(names):
        temporary = temporary.rename_out_dim(name, f"tmp{i}")
    for i in range(len(names)):
        temporary = temporary.rename_out_dim(f"tmp{i}", f"dim{i}")
    return temporary.transpose_outs([f"dim{i}" for i in range(len(names))])


def _unswizzled_nvmma(type_text: str) -> bool:
    return "nvmma_shared<{swizzlingByteWidth = 0," in type_text


def test_trans_is_the_source_layout_with_dims_permuted():
    """Except, on 3.6, a view of an NVMMA buffer without swizzle: 3.6 reads it along its last
    dim whether transposed or not (``TritonConventions.unswizzled_nvmma_ignores_transposed``),
    so its transposed view does move data."""
    checked = 0
    for case, result in results("trans"):
        if CONVENTIONS.unswizzled_nvmma_ignores_transposed and _unswizzled_nvmma(result["types"][-1]):
            continue
        source, transposed = ours(result["types"][-2]), ours(result["types"][-1])
        order = case["steps"][-1][1]
        expected = _renamed(source.buffer, [f"dim{d}" for d in order])
        assert transposed.buffer == expected, result["types"][-1]
        checked += 1
    assert checked >= 30


def test_reshape_is_the_source_layout_reshaped():
    checked = 0
    for case, result in results("reshape"):
        source, reshaped = ours(result["types"][-2]), ours(result["types"][-1])
        rank, new_shape = len(source.buffer_shape), case["steps"][-1][1]
        # Row-major: flatten with the last dim fastest, then split again.
        flat = source.buffer.transpose_outs([f"dim{d}" for d in reversed(range(rank))])
        expected = flat.reshape_outs([(f"dim{d}", new_shape[d]) for d in reversed(range(len(new_shape)))])
        expected = expected.transpose_outs([f"dim{d}" for d in range(len(new_shape))])
        assert reshaped.buffer == expected, result["types"][-1]
        checked += 1
    assert checked >= 30


def test_subslice_keeps_its_buffers_layout():
    checked = 0
    for case, result in results("subslice"):
        source, view = ours(result["types"][-2]), ours(result["types"][-1])
        assert view.buffer == source.buffer and view.buffer_shape == source.buffer_shape
        assert list(view.view_shape) == case["steps"][-1][1]
        assert parse_tensor_type(result["types"][-1]).alloc_shape == tuple(source.buffer_shape)
        checked += 1
    assert checked >= 30


# Shapes smaller than one NVMMA swizzle tile: Triton refuses them (Gluon's checks, or an LLVM
# fatal error "Illegal shared layout"), and so do we, with a message naming the shape.
TOO_SMALL = [
    ([128, 16, False, False, [], 2], [8, 32], "fewer than one 128-byte swizzle row"),
    ([128, 16, False, False, [], 2], [4, 64], "smaller than the 8 x 64 swizzle atom"),
    ([64, 16, False, False, [], 2], [2, 32], "smaller than the 8 x 32 swizzle atom"),
    ([32, 16, True, False, [], 2], [16, 4], "smaller than the 8 x 16 swizzle atom"),
]


@pytest.mark.parametrize("args, shape, message", TOO_SMALL)
def test_smaller_than_a_swizzle_tile_is_refused_by_triton_and_by_us(args, shape, message):
    from linear_layouts.dialect.attributes import NvmmaSharedEncoding
    from linear_layouts.dialect.linear_layout import LayoutError
    if CONVERTS:  # (on 3.6 the oracle aborts on every shared layout, telling nothing)
        case = {"encoding": {"kind": "nvmma_shared", "args": args}, "element": "bf16", "alloc": shape, "steps": [],
                "bases_of": [0], "convert": True}
        proc = subprocess.run([sys.executable, ORACLE], input=json.dumps([case]), capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode != 0, proc.stdout
        assert "Illegal shared layout" in proc.stderr or "is too small for the swizzle" in proc.stderr
    with pytest.raises(LayoutError, match=message):
        memdesc_layout(NvmmaSharedEncoding(args[0], args[2], args[1]), shape)


def test_one_element_has_no_layout_in_triton_either():
    """A 1x1 buffer's layout has no basis vector; Triton cannot hold that as a shared_linear
    either (Gluon: "offset_bases must not be empty"), so ll-attach-layouts gives a remark."""
    from linear_layouts.dialect.attributes import SwizzledSharedEncoding
    mine = memdesc_layout(SwizzledSharedEncoding(1, 1, 1, (1, 0)), [1, 1])
    assert mine.buffer.bases == {"offset": (), "block": ()} and mine.buffer_elements == 1
    if CONVERTS:
        case = {"encoding": {"kind": "swizzled_shared", "args": [1, 1, 1, [1, 0], []]}, "element": "f16",
                "alloc": [1, 1], "steps": [], "bases_of": [0], "convert": True}
        proc = subprocess.run([sys.executable, ORACLE], input=json.dumps([case]), capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode != 0 and "offset_bases must not be empty" in proc.stderr
