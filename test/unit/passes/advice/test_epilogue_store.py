"""The advice on an epilogue that stores straight from an MMA accumulator's layout
(``layout_advice``'s epilogue-store finding, ``epilogue_edit``): the direct epilogues get the
finding, priced on the whole kernel; ``ll-apply-advice`` converts the value before the store, the
kernel keeps its meaning and compiles for sm_90 to 16-byte stores; epilogues that convert
already, and the other Hopper-class kernels, get none.

The kernels: ``benchmarks/studies/epilogue_store.py``'s pipelined TMA + wgmma matmul in its two
epilogues (direct, converted) and ``benchmarks/harness/hopper_kernels.py``'s one-tile
``wgmma_direct_epilogue`` and ``wgmma_epilogue``."""

import os
import re
import sys

import pytest

from support import REPO  # noqa: E402

pytest.importorskip("triton.experimental.gluon")
for _path in (REPO / "benchmarks", REPO / "benchmarks" / "studies"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import triton  # noqa: E402
from support import hopper_gluon_kernels as H  # noqa: E402

from linear_layouts.passes.advice.apply_advice import apply_advice, applicable  # noqa: E402
from linear_layouts.passes.advice.findings import EPILOGUE_STORE, MIN_KERNEL_GAIN  # noqa: E402
from linear_layouts.passes.advice.layout_advice import advise  # noqa: E402
from linear_layouts.passes.ir.module_lines import ModuleLines  # noqa: E402
from linear_layouts.passes.ir.snapshot import parse_module  # noqa: E402

pytestmark = pytest.mark.usefixtures("every_compile_counted")  # conftest.py

_TTGIR: dict = {}


def _source(name: str):
    if name.startswith("study:"):
        import epilogue_store
        return epilogue_store.source(name.split(":", 1)[1])
    return H.source(name, False)


def _target(name: str):
    return H.SM90 if name.startswith("study:") else H.target(name)


def _arch(name: str) -> str:
    return f"sm_{_target(name).arch}"


def _ttgir(name: str) -> str:
    if name not in _TTGIR:
        _TTGIR[name] = triton.compile(_source(name), target=_target(name)).asm["ttgir"]
    return _TTGIR[name]


def _epilogue_findings(ttgir: str) -> list:
    return [f for f in advise(ttgir, "sm_90") if f.kind == EPILOGUE_STORE]


def _stores(ptx: str) -> dict:
    return {kind: len(re.findall(rf"\bst\.global{kind}\.[bfu]\d+", ptx)) for kind in ("", ".v2", ".v4")}


@pytest.mark.parametrize("name", ["study:direct", "wgmma_direct_epilogue"])
def test_a_direct_epilogue_gets_the_finding_priced_on_the_whole_kernel(name):
    [finding] = _epilogue_findings(_ttgir(name))
    assert finding.op == "tt.store" and finding.key == "tt.store#0:epilogue-store"
    assert finding.gain >= MIN_KERNEL_GAIN
    assert "gl.NVMMADistributedLayout(version=[3, 0]" in finding.finding
    # the suggestion is Gluon the author writes: the conversion, at the value the edit converts
    assert re.search(r"y = gl\.convert_layout\(y, gl\.BlockedLayout\(\[1, 8\], \[\d+, \d+\], \[4, 1\], \[1, 0\]\)\)",
                     finding.suggestion), finding.suggestion
    assert "#ttg.blocked<{sizePerThread = [1, 8]" in finding.layout
    # the store's own global-access finding (its layout alone, the bias left in the accumulator's)
    # is not shown beside it
    assert not [f for f in advise(_ttgir(name), "sm_90") if f.kind != EPILOGUE_STORE and f.op == "tt.store"]


@pytest.mark.parametrize("name", ["study:converted", "wgmma_epilogue"])
def test_an_epilogue_that_converts_already_gets_none(name):
    assert _epilogue_findings(_ttgir(name)) == []


@pytest.mark.parametrize("name", [n for n in H.KERNELS if n != "wgmma_direct_epilogue"])
def test_the_other_hopper_class_kernels_get_no_finding(name):
    # their epilogues convert the accumulator (mma_v2, tcgen05's tmem load, wgmma) or store it
    # through shared memory and TMA: nothing to gain
    assert advise(_ttgir(name), _arch(name)) == []


def _signature(lines: ModuleLines, op) -> str:
    """The op as its header prints it, less names, types and location (its attributes, a
    constant's value, a comparison's predicate stay)."""
    header = re.sub(r"\s+loc\(.*\)\s*$", "", lines.header(op)).strip()
    header = re.sub(r"^%[^=]*= ", "", header)
    head = header.rpartition(" : ")[0] if " : " in header else header
    return re.sub(r"%[\w$.#-]+", "%", head)


def _stored_values(module) -> list:
    """Per store, in order, what it stores where: the tree of ops each operand is computed by
    (conversions of layout read through, layouts left out), hash-consed to integers."""
    lines = ModuleLines(module, module.print(debuginfo=True))
    table: dict = {}
    memo: dict = {}

    def node(value) -> int:
        if id(value) in memo:
            return memo[id(value)]
        op = value.defining_op if not value.is_block_argument else None
        if op is None:
            key = ("argument", value.index, value.owner.parent.parent.name if value.owner.parent else "")
        elif op.name == "ttg.convert_layout":
            key = ("=", node(op.operands[0]))
        else:
            key = (_signature(lines, op), value.index,
                   tuple(node(o) for o in op.operands))
        memo[id(value)] = table.setdefault(key, len(table))
        return memo[id(value)]
    return [_tree(table, tuple(node(o) for o in op.operands)) for op in module.walk() if op.name == "tt.store"]


def _tree(table: dict, ids: tuple):
    """The integers ``ids`` as the trees they stand for (comparable between modules)."""
    back = {i: key for key, i in table.items()}

    def expand(i):
        key = back[i]
        if key[0] == "=":
            return expand(key[1])
        if key[0] == "argument":
            return key
        return (key[0], key[1], tuple(expand(j) for j in key[2]))
    return tuple(expand(i) for i in ids)


@pytest.mark.parametrize("name,wide", [("study:direct", 8), ("wgmma_direct_epilogue", 4)])
def test_apply_advice_converts_before_the_store_keeping_the_kernels_meaning(name, wide, tmp_path):
    ttgir = _ttgir(name)
    module = parse_module(ttgir, "<direct epilogue>")
    applied = apply_advice(module, "sm_90")
    assert applied.rounds >= 1 and applied.cost_after * MIN_KERNEL_GAIN <= applied.cost_before
    assert any("its value converted before it" in line for line in applied.edits)
    [store] = module.ops_named("tt.store")
    assert store.operands[0].tensor_type.encoding.startswith("#ttg.blocked<{sizePerThread = [1, 8]")
    # a pure change of layouts: every store stores what it stored, where it stored it
    assert _stored_values(module) == _stored_values(parse_module(ttgir, "<as written>"))
    # a fixed point: nothing of the kind left to say
    assert [f for f in applicable(advise(module.print(debuginfo=True), "sm_90", merged=False))
            if f.kind == EPILOGUE_STORE] == []
    # and Triton compiles it for sm_90 to 16-byte stores, as the expert's converted epilogue
    path = os.path.join(str(tmp_path), "advised.ttgir")
    with open(path, "w") as f:
        f.write(module.print())
    ptx = triton.compile(path, target=H.SM90).asm["ptx"]
    assert _stores(triton.compile(_source(name), target=H.SM90).asm["ptx"])[".v4"] == 0
    assert _stores(ptx) == {"": 0, ".v2": 0, ".v4": wide}


def test_the_finding_applied_by_name_is_the_edit_it_was_priced_on():
    module = parse_module(_ttgir("wgmma_direct_epilogue"), "<direct epilogue>")
    [finding] = _epilogue_findings(_ttgir("wgmma_direct_epilogue"))
    applied = apply_advice(module, "sm_90", findings=[finding.key])
    assert applied.rounds == 1
    assert applied.cost_before / applied.cost_after == pytest.approx(finding.gain)
