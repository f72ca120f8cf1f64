"""Triton's atomics through tensors of pointers in ``ll-resolve-auto-layouts`` and
``ll-assign-layouts``: ``tt.atomic_rmw`` (Gluon's ``gl.atomic_add``, ``_max``, ...) and
``tt.atomic_cas`` take the rule of a load (pointers, values, mask and the old values in the key,
``passes/assign/layout_rules.py``), are priced at what one instruction of the target updates
(``backend_requirements.atomic_elements``) and take any layout, but for a ``tt.atomic_cas`` on AMD
under triton 3.6, which takes one element a thread (``backend_requirements.OneElementCasFacts``).

The requirements are the lowering's own verdicts: compiling Gluon kernels of 1024 elements in
``BlockedLayout([s])`` (s = 1, 2, 4) for f32, f16, bf16 and i32 for sm_90, sm_80, gfx942 and
gfx950 on the CPU under triton 3.9 and 3.6, every layout compiles, but for 3.6's tensor
``atomic_cas`` on AMD: 256 i32 compile in ``[1]`` only, 1024 in none (the module docstring of
``backend_requirements.py`` has the details)."""

import json
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("triton.experimental.gluon")
from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402

from linear_layouts.passes.advice.apply_advice import apply_advice  # noqa: E402
from linear_layouts.passes.advice.layout_advice import GLOBAL_ACCESS, advise  # noqa: E402
from linear_layouts.passes.assign.backend_requirements import (OneElementCasFacts, atomic_elements,  # noqa: E402
                                                                layout_problem, requirement_facts)
from linear_layouts.passes.assign.dram_floor import bytes_moved  # noqa: E402
from linear_layouts.passes.assign.layout_graph import build_graph  # noqa: E402
from linear_layouts.passes.assign.layout_rules import global_access, rule_for  # noqa: E402
from linear_layouts.passes.assign.pointer_contiguity import Contiguity, PointerAnalysis  # noqa: E402
from linear_layouts.passes.gluon.resolve_auto_layouts import resolve_module  # noqa: E402
from linear_layouts.passes.ir.bindings import installed_triton_version  # noqa: E402
from linear_layouts.passes.ir.module_lines import ModuleLines  # noqa: E402
from linear_layouts.passes.ir.snapshot import parse_module  # noqa: E402

KERNELS = pathlib.Path(__file__).with_name("atomic_kernels.py")
AUTO = "#gluon.auto_encoding"

# A tile loaded from %X and added into %Y (RMW) or compared and swapped into %Y, the old values
# stored back into %X (CAS), as Gluon's gl.atomic_add / gl.atomic_cas leave them (3.6 and 3.9 print
# them alike).
_HEAD = """\
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "TARGET", "ttg.threads-per-warp" = LANES : i32} {
  tt.func public @k(%X: !tt.ptr<ELEM> {tt.divisibility = 16 : i32}, %Y: !tt.ptr<ELEM> {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %offs = tt.make_range {end = N : i32, start = 0 : i32} : tensor<Nxi32, L>
    %xs = tt.splat %X : !tt.ptr<ELEM> -> tensor<Nx!tt.ptr<ELEM>, L>
    %xp = tt.addptr %xs, %offs : tensor<Nx!tt.ptr<ELEM>, L>, tensor<Nxi32, L>
    %x = tt.load %xp : tensor<Nx!tt.ptr<ELEM>, L>
    %ys = tt.splat %Y : !tt.ptr<ELEM> -> tensor<Nx!tt.ptr<ELEM>, L>
    %yp = tt.addptr %ys, %offs : tensor<Nx!tt.ptr<ELEM>, L>, tensor<Nxi32, L>
"""
_RMW = """\
    %m = arith.constant dense<true> : tensor<Nxi1, L>
    %old = tt.atomic_rmw KIND, acq_rel, gpu, %yp, %x, %m : (tensor<Nx!tt.ptr<ELEM>, L>, tensor<NxELEM, L>, tensor<Nxi1, L>) -> tensor<NxELEM, L>
    tt.return
  }
}
"""
_CAS = """\
    %new = arith.addi %x, %x : tensor<NxELEM, L>
    %old = tt.atomic_cas acq_rel, gpu, %yp, %x, %new : (tensor<Nx!tt.ptr<ELEM>, L>, tensor<NxELEM, L>, tensor<NxELEM, L>) -> tensor<NxELEM, L>
    tt.store %xp, %old : tensor<Nx!tt.ptr<ELEM>, L>
    tt.return
  }
}
"""


def _module(tail=_RMW, target="cuda:90", element="f32", layout=None, n=1024, kind="fadd"):
    """The kernel in automatic layouts (``layout`` None) or in ``layout``."""
    lanes = 64 if target.startswith("hip:") else 32
    text = (_HEAD + tail).replace("TARGET", target).replace("LANES", str(lanes)).replace("ELEM", element)
    text = text.replace("KIND", kind).replace(" L>", f" {layout or AUTO}>").replace("N", str(n))
    return parse_module(text, "k.mlir", safe=False)


def _blocked(per_thread, lanes=32):
    return (f"#ttg.blocked<{{sizePerThread = [{per_thread}], threadsPerWarp = [{lanes}], warpsPerCTA = [4], "
            f"order = [0]}}>")


def _pointers(module):
    (function,) = module.ops_named("tt.func")
    lines = ModuleLines(module, module.print(debuginfo=True))
    return lines, PointerAnalysis.of_function(lines, function)


def _op(module):
    return (module.ops_named("tt.atomic_rmw") + module.ops_named("tt.atomic_cas"))[0]


# --------------------------------------------------------------------------- the rule

@pytest.mark.parametrize("tail, element", [(_RMW, "f32"), (_RMW, "f16"), (_CAS, "i32")])
def test_an_atomics_addresses_are_its_pointers(tail, element):
    module = _module(tail, element=element, layout=_blocked(4))
    op = _op(module)
    access = global_access(op)
    assert access.addresses is op.operands[0] and access.base is None
    assert access.element_bytes == (2 if element == "f16" else 4) and access.shape == (1024,)


@pytest.mark.parametrize("tail", [_RMW, _CAS])
def test_atomics_take_the_rule_of_a_load(tail):
    """Pointers, value (compared and new values), mask and the old values share the key."""
    layout = _blocked(4)
    op = _op(_module(tail, element="i32" if tail is _CAS else "f32", layout=layout))
    assert rule_for(op, memory_ops=False) is None
    rule = rule_for(op, memory_ops=True)
    assert (rule.kind, rule.stock_key) == ("identity", layout)


# --------------------------------------------------------------------------- what one instruction updates

@pytest.mark.parametrize("tail, kind, element, target, elements", [
    (_RMW, "fadd", "f32", "cuda:90", 4),       # atom.global.v4.f32.add
    (_RMW, "fadd", "f16", "cuda:90", 8),       # atom.global.v8.f16.add.noftz
    (_RMW, "fadd", "bf16", "cuda:100", 8),
    (_RMW, "fadd", "f32", "cuda:80", 1),
    (_RMW, "fadd", "f16", "cuda:80", 2),       # atom.add.noftz.f16x2
    (_RMW, "max", "i32", "cuda:90", 1),        # vectorized atomics: fadd only
    (_RMW, "fadd", "f16", "hip:gfx942", 2),    # global_atomic_pk_add_f16
    (_RMW, "fadd", "bf16", "hip:gfx950", 2),
    (_RMW, "fadd", "f32", "hip:gfx942", 1),
    (_CAS, "", "i32", "cuda:90", 1),
    (_CAS, "", "i32", "hip:gfx942", 1),
])
def test_what_one_atomic_instruction_updates(tail, kind, element, target, elements):
    module = _module(tail, target=target, element=element, layout=_blocked(1, 64 if "hip" in target else 32),
                     kind=kind)
    lines, _ = _pointers(module)
    op = _op(module)
    assert atomic_elements(op, lines.header(op), target) == elements


@pytest.mark.parametrize("target, element, vector", [("cuda:90", "f32", 4), ("cuda:80", "f32", 1),
                                                     ("hip:gfx942", "f16", 2), ("hip:gfx942", "f32", 1)])
def test_the_graph_prices_an_atomic_as_the_lowering_issues_it(target, element, vector):
    """The atomic is a node (with memory_ops) whose vector is what one instruction updates; the
    load beside it keeps its 16 bytes."""
    lanes = 64 if target.startswith("hip:") else 32
    module = _module(target=target, element=element, layout=_blocked(8, lanes))
    lines, _ = _pointers(module)
    (function,) = module.ops_named("tt.func")
    graph = build_graph(function, lines, memory_ops=True)
    (atomic,) = [n for n in graph.nodes if n.op.name == "tt.atomic_rmw"]
    (load,) = [n for n in graph.nodes if n.op.name == "tt.load"]
    assert atomic.contiguity == Contiguity(0, vector)
    assert load.contiguity == Contiguity(0, 16 // (int(element[1:]) // 8))
    assert atomic.problem(_blocked(1, lanes)) is None and atomic.problem(_blocked(8, lanes)) is None


@pytest.mark.parametrize("tail, element", [(_RMW, "f32"), (_CAS, "i32")])
def test_the_dram_floor_reads_and_writes_an_atomics_elements(tail, element):
    assert bytes_moved(_op(_module(tail, element=element, layout=_blocked(4)))) == 2 * 1024 * 4


# --------------------------------------------------------------------------- the requirement

@pytest.mark.parametrize("tail, target", [(_RMW, "cuda:90"), (_RMW, "hip:gfx942"), (_CAS, "cuda:90"),
                                         (_CAS, "cuda:80")])
def test_atomics_take_any_layout(tail, target):
    module = _module(tail, target=target, element="i32" if tail is _CAS else "f16",
                     layout=_blocked(4, 64 if "hip" in target else 32))
    _, pointers = _pointers(module)
    assert requirement_facts(_op(module), pointers) is None


@pytest.mark.parametrize("n, release, valid", [
    (256, (3, 6), [1]),          # 4 warps of 64 lanes: one element a thread in [1] only
    (1024, (3, 6), []),
    (256, (3, 7), [1, 2, 4]),
    (1024, (3, 9), [1, 2, 4]),
])
def test_a_cas_on_amd_under_triton_3_6_takes_one_element_a_thread(n, release, valid):
    module = _module(_CAS, target="hip:gfx942", element="i32", layout=_blocked(1, 64), n=n)
    _, pointers = _pointers(module)
    facts = OneElementCasFacts.of(_op(module), pointers, release)
    assert [s for s in (1, 2, 4) if layout_problem(_blocked(s, 64), facts) is None] == valid
    assert (facts is not None) == (release < (3, 7))


def test_a_one_element_cas_problem_says_why():
    module = _module(_CAS, target="hip:gfx942", element="i32", layout=_blocked(1, 64), n=256)
    _, pointers = _pointers(module)
    assert layout_problem(_blocked(2, 64), OneElementCasFacts.of(_op(module), pointers, (3, 6))) == \
        "Triton 3.6's AMD lowering of tt.atomic_cas takes one element a thread; this layout gives each thread 2"


def test_the_installed_tritons_cas_requirement_is_the_lowerings():
    module = _module(_CAS, target="hip:gfx942", element="i32", layout=_blocked(1, 64), n=256)
    _, pointers = _pointers(module)
    facts = requirement_facts(_op(module), pointers)
    assert isinstance(facts, OneElementCasFacts) == (installed_triton_version() < (3, 7))


# --------------------------------------------------------------------------- the pass on TTGIR

@pytest.mark.parametrize("tail, target, element, layout", [
    (_RMW, "cuda:90", "f32", _blocked(4)),         # 16-byte loads and 16-byte atomics
    (_RMW, "cuda:90", "f16", _blocked(8)),
    (_RMW, "cuda:80", "f32", _blocked(1)),         # one f32 an atomic: each instruction on 128 consecutive bytes
    (_RMW, "hip:gfx942", "f16", _blocked(2, 64)),
    (_CAS, "cuda:90", "i32", _blocked(1)),
])
def test_resolution_gives_an_atomic_a_layout(tail, target, element, layout):
    """Before, the atomic had no rule: "no layout rule for this op with automatic layouts"."""
    module = _module(tail, target=target, element=element)
    resolution = resolve_module(module, compare=False)
    assert resolution.resolved, resolution.reason
    op = _op(module)
    assert {v.tensor_type.encoding for v in list(op.operands) + list(op.results)} == {layout}


def test_resolution_of_a_cas_no_layout_fits_says_why():
    """1024 elements over 256 threads: under triton 3.6 no layout gives a thread one element, and
    the resolution says so (Triton's lowering would fail to verify); later releases take it."""
    module = _module(_CAS, target="hip:gfx942", element="i32", n=1024)
    resolution = resolve_module(module, compare=False)
    if installed_triton_version() >= (3, 7):
        assert resolution.resolved, resolution.reason
    else:
        assert not resolution.resolved
        assert "Triton 3.6's AMD lowering of tt.atomic_cas takes one element a thread; this layout gives each " \
               "thread 4" in resolution.reason


# --------------------------------------------------------------------------- the advice

@gluon.jit
def swapped_and_zeroed(X, Y, Z):
    # 256 elements compared and swapped, one a thread; 15 tiles of 1024 zeroed in the same layout
    L: gl.constexpr = gl.BlockedLayout([1], [64], [4], [0])
    offs = gl.arange(0, 256, layout=L)
    x = gl.load(X + offs)
    old = gl.atomic_cas(Y + offs, x, x + 1)
    gl.store(Z + offs, old)
    wide = gl.arange(0, 1024, layout=L)
    for t in range(1, 16):
        gl.store(Z + t * 1024 + wide, gl.zeros([1024], gl.int32, L))


@pytest.mark.skipif(installed_triton_version() >= (3, 7), reason="the lowering of 3.7 and later takes any layout")
def test_the_advice_keeps_the_layout_a_cas_on_amd_needs(tmp_path, monkeypatch):
    """The stores alone would gain from 4 elements a thread; laid out so, the cas would take 1
    element a thread no more.  Before, the advice suggested [4] for the layout and
    ``ll-apply-advice`` gave it to the cas too."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    compiled = triton.compile(GluonASTSource(swapped_and_zeroed, {"X": "*i32", "Y": "*i32", "Z": "*i32"}, {},
                                             attrs={(i,): [["tt.divisibility", 16]] for i in range(3)}),
                              target=GPUTarget("hip", "gfx942", 64))
    ttgir = compiled.asm["ttgir"]
    (finding,) = [f for f in advise(ttgir, "gfx942") if f.kind == GLOBAL_ACCESS]
    assert finding.op == "tt.store" and finding.suggestion.startswith(
        "gl.BlockedLayout([4], [64], [4], [0]) for this tt.store alone (the tt.atomic_cas at ")
    assert finding.suggestion.endswith(
        "keeps gl.BlockedLayout([1], [64], [4], [0]): in the suggestion it would be rejected (Triton 3.6's AMD "
        "lowering of tt.atomic_cas takes one element a thread; this layout gives each thread 4))")
    module = parse_module(ttgir, "<kernel>")
    apply_advice(module, "gfx942")
    (cas,) = module.ops_named("tt.atomic_cas")
    assert cas.operands[0].tensor_type.encoding == _blocked(1, 64)


# --------------------------------------------------------------------------- Gluon, compiled

def _compile(tmp_path, *args):
    env = {**__import__("os").environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, str(KERNELS), *map(str, args)], capture_output=True, text=True,
                         timeout=600, env=env)
    lines = run.stdout.strip().splitlines()
    return (json.loads(lines[-1]) if run.returncode == 0 and lines else None), run.stderr


@pytest.mark.parametrize("kernel, dtype, target, n, layout, atomics", [
    ("add", "fp32", "sm_90", 1024, _blocked(4), ["atom.global.gpu.acq_rel.add.v4.f32"]),
    ("add", "fp16", "sm_90", 1024, _blocked(8), ["atom.global.gpu.acq_rel.add.noftz.v8.f16"]),
    ("add", "fp32", "gfx942", 1024, _blocked(1, 64), ["global_atomic_add_f32"]),
    ("add", "fp16", "gfx942", 1024, _blocked(2, 64), ["global_atomic_pk_add_f16"]),
    ("cas", "i32", "sm_90", 1024, _blocked(1), ["atom.global.acq_rel.gpu.cas.b32"]),
    ("cas", "i32", "gfx942", 256, _blocked(1, 64), ["global_atomic_cmpswap"]),
])
def test_automatic_atomics_compile(tmp_path, kernel, dtype, target, n, layout, atomics):
    """Before, ours had no rule for the atomic and left the kernel to Triton's resolution, which
    fails ("'tt.make_range' op Failed to infer return type")."""
    verdict, stderr = _compile(tmp_path, kernel, dtype, target, n)
    assert verdict is not None and verdict["compiled"], stderr[-3000:]
    assert verdict["layout"] == layout and verdict["atomics"] == atomics
    assert (verdict["resolved"], verdict["fallbacks"]) == (1, [])
