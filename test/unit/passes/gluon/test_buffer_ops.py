"""AMD's buffer ops in ``ll-resolve-auto-layouts``: ``amdg.buffer_load`` / ``amdg.buffer_store``
take the rule of a load / store and ``amdg.buffer_load_to_local`` the rule and the direct-to-LDS
requirement of ``ttg.async_copy_global_to_local`` on AMD (``passes/assign/layout_rules.py``,
``backend_requirements.py``); their pointers are a scalar base plus a tensor of offsets, read by
``pointer_contiguity.PointerAnalysis.contiguity(offsets, base)``.

The expected widths of ``buffer_load_to_local`` are the lowering's own verdicts: compiling
``[1, s]`` blocked layouts (s = 1, 2, 4, 8) of a 64 x 64 copy on the CPU under triton 3.9 and
3.6 compiles f16 ``[1, 2]`` on gfx942, ``[1, 2]`` and ``[1, 8]`` on gfx950; f32 ``[1, 1]`` on
gfx942, ``[1, 1]`` and ``[1, 4]`` on gfx950, as for the copy through pointers."""

import json
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("triton.experimental.gluon")
from linear_layouts.passes.assign.backend_requirements import AsyncCopyFacts, async_copy_problem  # noqa: E402
from linear_layouts.passes.assign.layout_rules import global_access, rule_for  # noqa: E402
from linear_layouts.passes.assign.pointer_contiguity import Contiguity, PointerAnalysis  # noqa: E402
from linear_layouts.passes.gluon.resolve_auto_layouts import resolve_module  # noqa: E402
from linear_layouts.passes.ir.diagnostics import IRError  # noqa: E402
from linear_layouts.passes.ir.module_lines import ModuleLines  # noqa: E402
from linear_layouts.passes.ir.snapshot import parse_module  # noqa: E402

KERNELS = pathlib.Path(__file__).with_name("amd_copy_kernels.py")
AUTO = "#gluon.auto_encoding"

_HEAD = """\
#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:ARCH", "ttg.threads-per-warp" = 64 : i32} {
  tt.func public @k(%src: !tt.ptr<ELEM> {tt.divisibility = ALIGN : i32}, %dst: !tt.ptr<ELEM> {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, SLICE1>
    %r2 = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32, SLICE1> -> tensor<64x1xi32, L>
    %c64 = arith.constant dense<64> : tensor<64x1xi32, L>
    %rows = arith.muli %r2, %c64 : tensor<64x1xi32, L>
    %rb = tt.broadcast %rows : tensor<64x1xi32, L> -> tensor<64x64xi32, L>
    %c = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, SLICE0>
    %c2 = tt.expand_dims %c {axis = 0 : i32} : tensor<64xi32, SLICE0> -> tensor<1x64xi32, L>
    %cb = tt.broadcast %c2 : tensor<1x64xi32, L> -> tensor<64x64xi32, L>
    %offsets = arith.addi %rb, %cb : tensor<64x64xi32, L>
"""
# The buffer ops as triton 3.9 prints them, then as 3.6 does (its base pointer type is shorter).
_COPY = ("""\
    %x = amdg.buffer_load %src[%offsets] : !tt.ptr<ELEM> -> tensor<64x64xELEM, L>
    amdg.buffer_store %x, %dst[%offsets] : !tt.ptr<ELEM> -> tensor<64x64xELEM, L>
    tt.return
  }
}
""", """\
    %x = amdg.buffer_load %src[%offsets] : tensor<64x64xELEM, L>
    amdg.buffer_store %x, %dst[%offsets] : tensor<64x64xELEM, L>
    tt.return
  }
}
""")
_TO_LOCAL = ("""\
    %smem = ttg.local_alloc : () -> !ttg.memdesc<64x64xELEM, #shared, #smem, mutable>
    %token = amdg.buffer_load_to_local %src[%offsets] into %smem : !tt.ptr<ELEM>[tensor<64x64xi32, L>]  -> <64x64xELEM, #shared, #smem, mutable>
    tt.return
  }
}
""", """\
    %smem = ttg.local_alloc : () -> !ttg.memdesc<64x64xELEM, #shared, #smem, mutable>
    %token = amdg.buffer_load_to_local %src[%offsets] into %smem : <ELEM>[tensor<64x64xi32, L>]  -> <64x64xELEM, #shared, #smem, mutable>
    tt.return
  }
}
""")


def _module(tail, arch="gfx942", element="f16", align=16, layout=None):
    """The kernel in automatic layouts (``layout`` None) or in ``layout``, parsed in this
    triton's syntax of the buffer ops."""
    slices = (AUTO, AUTO) if layout is None else tuple(f"#ttg.slice<{{dim = {d}, parent = {layout}}}>" for d in (0, 1))
    for syntax in tail:
        text = (_HEAD + syntax).replace("ARCH", arch).replace("ELEM", element).replace("ALIGN", str(align))
        text = text.replace("SLICE0", slices[0]).replace("SLICE1", slices[1]).replace(" L>", f" {layout or AUTO}>")
        try:
            return parse_module(text, "k.mlir", safe=False)
        except IRError:
            continue
    raise AssertionError("neither syntax of the buffer ops parses")


def _row(per_thread):
    return (f"#ttg.blocked<{{sizePerThread = [1, {per_thread}], threadsPerWarp = [{per_thread}, {64 // per_thread}], "
            f"warpsPerCTA = [4, 1], order = [1, 0]}}>")


def _pointers(module):
    (function,) = module.ops_named("tt.func")
    lines = ModuleLines(module, module.print(debuginfo=True))
    return lines, PointerAnalysis(lines, lines.header(function), lines.of[id(function)].arguments)


# --------------------------------------------------------------------------- the rules

def test_a_buffer_ops_addresses_are_its_offsets_from_its_base():
    module = _module(_COPY)
    (load,), (store,) = module.ops_named("amdg.buffer_load"), module.ops_named("amdg.buffer_store")
    (offsets,) = [op.results[0] for op in module.ops_named("arith.addi")]
    for op in (load, store):
        access = global_access(op)
        assert access.addresses is offsets and access.element_bytes == 2 and access.shape == (64, 64)
    assert global_access(load).base is load.operands[0] and global_access(store).base is store.operands[1]


@pytest.mark.parametrize("element, align, expected", [
    ("f16", 16, Contiguity(1, 8)),     # base 16-byte aligned, rows of 128 bytes: 8 f16
    ("f16", 4, Contiguity(1, 2)),      # base 4-byte aligned only
    ("f32", 16, Contiguity(1, 4)),
    ("f16", 1, Contiguity(1, 1)),
])
def test_offsets_from_a_base_are_read_as_its_pointers(element, align, expected):
    module = _module(_COPY, element=element, align=align)
    _, pointers = _pointers(module)
    (load,) = module.ops_named("amdg.buffer_load")
    access = global_access(load)
    assert pointers.contiguity(access.addresses, access.base) == expected


def test_buffer_load_and_store_take_the_rule_of_a_load_and_store():
    layout = _row(8)
    module = _module(_COPY, layout=layout)
    for name in ("amdg.buffer_load", "amdg.buffer_store"):
        (op,) = module.ops_named(name)
        assert rule_for(op, memory_ops=False) is None
        rule = rule_for(op, memory_ops=True)
        assert (rule.kind, rule.stock_key) == ("identity", layout)
    (copy,) = _module(_TO_LOCAL, layout=_row(2)).ops_named("amdg.buffer_load_to_local")
    assert rule_for(copy, shared_ops=False) is None
    assert (rule_for(copy, shared_ops=True).kind, rule_for(copy, shared_ops=True).stock_key) == ("identity", _row(2))


# --------------------------------------------------------------------------- the requirement

@pytest.mark.parametrize("element, arch, valid", [
    ("f16", "gfx942", [2]), ("f16", "gfx950", [2, 8]), ("f32", "gfx942", [1]), ("f32", "gfx950", [1, 4]),
])
def test_buffer_load_to_local_has_the_direct_to_lds_rules(element, arch, valid):
    module = _module(_TO_LOCAL, arch=arch, element=element)
    _, pointers = _pointers(module)
    (copy,) = module.ops_named("amdg.buffer_load_to_local")
    facts = AsyncCopyFacts.of(copy, pointers)
    assert facts.pointer == Contiguity(1, 16 // facts.element_bytes)
    assert [s for s in (1, 2, 4, 8) if async_copy_problem(_row(s), facts) is None] == valid


def test_a_buffer_load_to_local_problem_names_the_op():
    module = _module(_TO_LOCAL, arch="gfx942")
    _, pointers = _pointers(module)
    (copy,) = module.ops_named("amdg.buffer_load_to_local")
    assert async_copy_problem(_row(8), AsyncCopyFacts.of(copy, pointers)) == \
        "the direct-to-LDS load (amdg.buffer_load_to_local on gfx942) would load 16 bytes a lane (gfx942 has 4)"


# --------------------------------------------------------------------------- the pass on TTGIR

def _encoding(module, name, position):
    (op,) = module.ops_named(name)
    return op.operands[position].tensor_type.encoding


@pytest.mark.parametrize("align, per_thread", [(16, "[1, 8]"), (4, "[1, 2]")])
def test_resolution_coalesces_buffer_loads_and_stores(align, per_thread):
    module = _module(_COPY, align=align)
    resolution = resolve_module(module, compare=False)
    assert resolution.resolved, resolution.reason
    for name, offsets in (("amdg.buffer_load", 1), ("amdg.buffer_store", 2)):
        assert f"sizePerThread = {per_thread}, threadsPerWarp" in _encoding(module, name, offsets)
    assert _encoding(module, "amdg.buffer_store", 0) == _encoding(module, "amdg.buffer_store", 2)


@pytest.mark.parametrize("arch, per_thread", [("gfx942", "[1, 2]"), ("gfx950", "[1, 8]")])
def test_resolution_gives_buffer_load_to_local_a_width_the_target_has(arch, per_thread):
    module = _module(_TO_LOCAL, arch=arch)
    resolution = resolve_module(module, compare=False)
    assert resolution.resolved, resolution.reason
    assert f"sizePerThread = {per_thread}, threadsPerWarp" in _encoding(module, "amdg.buffer_load_to_local", 2)


# --------------------------------------------------------------------------- Gluon, compiled

def _compile(tmp_path, kernel, dtype, arch):
    env = {**__import__("os").environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, str(KERNELS), kernel, dtype, arch], capture_output=True, text=True,
                         timeout=600, env=env)
    lines = run.stdout.strip().splitlines()
    return (json.loads(lines[-1]) if run.returncode == 0 and lines else None), run.stderr


def _front_end_takes_automatic_buffer_copies():
    from triton.experimental.gluon.language.amd.cdna4 import async_copy
    import inspect
    return "DistributedLayout" in inspect.getsource(async_copy.buffer_load_to_shared)


@pytest.mark.parametrize("dtype, arch, per_thread, ops", [
    ("fp16", "gfx942", [1, 8], ["buffer_load_dwordx4", "buffer_store_dwordx4"]),
    ("fp32", "gfx950", [1, 4], ["buffer_load_dwordx4", "buffer_store_dwordx4"]),
])
def test_automatic_buffer_load_and_store_compile(tmp_path, dtype, arch, per_thread, ops):
    """Before, ours had no rule for the buffer ops and left the kernel to Triton's resolution,
    which fails ("'tt.make_range' op Failed to infer return type")."""
    verdict, stderr = _compile(tmp_path, "copy", dtype, arch)
    assert verdict is not None and verdict["compiled"], stderr[-3000:]
    assert verdict["size_per_thread"] == per_thread and verdict["buffer_ops"] == ops
    assert (verdict["resolved"], verdict["fallbacks"]) == (1, [])


@pytest.mark.skipif(not _front_end_takes_automatic_buffer_copies(),
                    reason="this triton's Gluon asks for a blocked or slice layout in buffer_load_to_shared")
@pytest.mark.parametrize("dtype, arch, per_thread, load", [
    ("fp16", "gfx942", [1, 2], "buffer_load_dword ... lds"),
    ("fp32", "gfx942", [1, 1], "buffer_load_dword ... lds"),
    ("fp16", "gfx950", [1, 8], "buffer_load_dwordx4 ... lds"),
    ("fp32", "gfx950", [1, 4], "buffer_load_dwordx4 ... lds"),
])
def test_automatic_buffer_load_to_shared_compiles(tmp_path, dtype, arch, per_thread, load):
    verdict, stderr = _compile(tmp_path, "to_shared", dtype, arch)
    assert verdict is not None and verdict["compiled"], stderr[-3000:]
    assert verdict["size_per_thread"] == per_thread and verdict["buffer_ops"] == [load]
    assert (verdict["resolved"], verdict["fallbacks"]) == (1, [])
