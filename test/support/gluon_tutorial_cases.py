"""Triton's own Gluon tutorials and examples in the Gluon corpus (``gen_corpus_gluon.py``): each
kernel a tutorial or example launches, written out as the launch of its own test or benchmark,
for a compile without a GPU.

Two sets, carried by ``benchmarks/harness/carry_gluon_tutorials.py`` (never committed):

* ``RELEASE_36``: triton v3.6.0's tutorials and its example (commit ``4b184ccc``) beside the
  kernels ``hopper_cases.py`` already launches (04's ``elementwise_add_tma_kernel``, 05's two
  blocked matmuls, 07's three, 08's elementwise add): 01-intro's two kernels, 02-layouts' three,
  03-async-copy's four, 04's ``memcpy_1d_tma_kernel``, 05's ``small_mma_kernel`` (sm_90); 06-tcgen05's
  four kernels, 08's ``matmul_warp_specialized_kernel`` and the example's Blackwell attention
  forward (sm_100);
* ``NEXT``: the same launches of the newest Triton tree this workplace can read (main at
  ``9d9a2d7a``, 2026-04-27: see the carry script for why not v3.9.0's own) plus 10-tcgen05-copy's
  two kernels and 09-tma-gather-scatter's three (sm_100).  Its files that no case here compiles are listed by ``next_file_reasons``
  with why (Gluon names that 3.9 removed, found in the file, or an import 3.9 fails).

Arguments as in ``hopper_cases`` (``Desc``, ``Ptr``, ``Const``; an ``int`` is a runtime integer,
specialized by its value as the JIT does), plus ``Expr``: a constexpr written as the launcher writes
it, evaluated in the loaded module (its imports, ``t7`` and other siblings bound).  The shapes are
each test's or benchmark's first configuration that runs on the target; ``shapes`` says which.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, replace

from harness import gluon_forms_cases
from harness.carry_gluon_tutorials import EXAMPLES_ROOT, NEXT, NEXT_COMMIT, SOURCE_COMMIT, TUTORIALS_DIR, \
    check, check_next, next_path
from harness.hopper_cases import Case, Const, Desc, Ptr


@dataclass(frozen=True)
class Expr(Const):
    """A constexpr argument written as the launcher writes it (``gl``, the module's names)."""

    expression: str = ""

    def resolve(self, module):
        from triton.experimental.gluon import language as gl
        return eval(self.expression, {"gl": gl, **vars(module)})


@dataclass(frozen=True)
class RowDesc(Desc):
    """A descriptor whose block is one row (09's gather and scatter) but whose NVMMA layout the
    launcher takes for the whole tile: ``get_default_for(layout_block, dtype)``."""

    layout_block: tuple = ()

    def layout(self):
        from triton.experimental.gluon import language as gl
        from harness.hopper_cases import _GL_DTYPES
        return gl.NVMMASharedLayout.get_default_for(list(self.layout_block), getattr(gl, _GL_DTYPES[self.dtype]))


@dataclass(frozen=True)
class HostFunction(Const):
    """A constexpr the launcher builds with a host function of a sibling (07's
    ``GroupedPersistentTileScheduler(8)``, which ``kernel_tree`` leaves out): that function's
    definition, read from ``file``, run in the sibling's namespace, then ``expression``."""

    sibling: str = ""
    file: str = ""
    function: str = ""
    expression: str = ""

    def resolve(self, module):
        namespace = dict(vars(getattr(module, self.sibling)))
        tree = ast.parse(open(self.file).read())
        definition = next(node for node in tree.body
                          if isinstance(node, ast.FunctionDef) and node.name == self.function)
        exec(compile(ast.Module([definition], []), self.file, "exec"), namespace)
        return eval(self.expression, namespace)


@dataclass(frozen=True)
class TutorialCase:
    case: Case                     # hopper_cases' launch, written out
    targets: tuple                 # ("sm90",), ("sm100",)
    label: str                     # "<file stem>/<kernel>"


def _forms_args(compile_args: dict) -> dict:
    """``gluon_forms_cases``' written-out launch (02, 03) as ``hopper_cases`` arguments."""
    out = {}
    for name, value in compile_args.items():
        if value == gluon_forms_cases.PTR:
            out[name] = Ptr("fp32")
        elif isinstance(value, gluon_forms_cases.Descriptor):
            out[name] = Desc(tuple(value.block_shape), "fp32")
        elif isinstance(value, gluon_forms_cases.Layout):
            out[name] = Expr(expression=value.expression.replace("num_warps", "4"))
        elif isinstance(value, int) and (name.isupper() or name.startswith("num_")):
            out[name] = Const(value)
        else:
            out[name] = value
    return out


def _matmul(bm, bn, bk, dtype="fp16", c_dtype=None, b_block=None):
    return {"a_desc": Desc((bm, bk), dtype), "b_desc": Desc(b_block or (bk, bn), dtype),
            "c_desc": Desc((bm, bn), c_dtype or dtype)}


def _cases(tutorials: str, examples: str | None, project: str, newer: bool) -> list[TutorialCase]:
    def t(name):
        return os.path.join(tutorials, name)

    out = []

    def add(file, kernel, args, targets, shapes, **options):
        label = f"{os.path.splitext(os.path.basename(file))[0]}/{kernel}"
        out.append(TutorialCase(Case(f"{project}/{label}", project, file, kernel, args, None, shapes, **options),
                                targets, label))

    add(t("01-intro.py"), "copy_scalar_kernel", {"in_ptr": Ptr("fp32"), "out_ptr": Ptr("fp32")}, ("sm90",),
        "test_copy_scalar", num_warps=1)
    add(t("01-intro.py"), "memcpy_kernel", {"in_ptr": Ptr("fp32"), "out_ptr": Ptr("fp32"), "xnumel": 500,
                                            "XBLOCK": Const(64)}, ("sm90",), "test_memcpy (xnumel 500)", num_warps=1)
    for forms_case in gluon_forms_cases.cases():
        if forms_case.builtin or not forms_case.name.startswith(("02-", "03-")):
            continue
        add(t(os.path.basename(forms_case.file)), forms_case.kernel, _forms_args(forms_case.compile_args), ("sm90",),
            "gluon_forms_cases' launch (its benchmark's)", num_warps=forms_case.num_warps)
    add(t("04-tma.py"), "memcpy_1d_tma_kernel", {"in_desc": Desc((64,), "fp32"), "out_desc": Desc((64,), "fp32"),
                                                 "XBLOCK": Const(64)}, ("sm90",), "test_memcpy_1d_tma (XBLOCK 64)",
        num_warps=1)
    add(t("05-wgmma.py"), "small_mma_kernel",
        {"a_desc": Desc((64, 128), "fp16"), "b_desc": Desc((128, 256), "fp16"), "c_desc": Desc((64, 256), "fp32"),
         "d_desc": Desc((64, 256), "fp32"), "LHS_IN_REG": Const(False), "INSTR_SHAPE_N": Const(64)}, ("sm90",),
        "test_small_mma (64 x 256 x 128, N 64, 4 warps)")
    # Blackwell
    add(t("06-tcgen05.py"), "tmem_example_kernel",
        {"in_ptr": Ptr("fp32"), "out_ptr": Ptr("fp32"), "M": Const(128), "N": Const(128)}, ("sm100",),
        "test_tmem_example_kernel (128 x 128)")
    add(t("06-tcgen05.py"), "small_mma_kernel",
        {"a_desc": Desc((128, 128), "fp16"), "b_desc": Desc((128, 128), "fp16"), "c_desc": Desc((128, 128), "fp32"),
         "d_desc": Desc((128, 128), "fp32"), "tmem_block": Expr(expression="gl.constexpr((128, 128))"),
         "LHS_IN_TMEM": Const(False), "USE_COMMIT": Const(True)}, ("sm100",),
        "test_small_mma (128 x 128 x 128, commit)")
    add(t("06-tcgen05.py"), "blocked_matmul_kernel", {**_matmul(128, 128, 128), "TRANSPOSE_B": Const(False)},
        ("sm100",), "test_blocked_matmul (128 x 128 x 128 blocks)")
    add(t("06-tcgen05.py"), "blocked_matmul_pipelined_kernel", _matmul(128, 128, 64), ("sm100",),
        "its benchmark (128 x 128 x 64 blocks)")
    add(t("08-warp-specialization.py"), "matmul_warp_specialized_kernel",
        {**_matmul(128, 256, 64), "SchedulerImpl": Expr(expression="t7.PersistentTileScheduler"),
         "num_buffers": Const(3), "SUBTILE_FACTOR": Const(4)}, ("sm100",),
        "test_matmul_warp_specialized (128 x 256 x 64, 3 buffers, subtiles 4)", siblings={"t7": t("07-persistence.py")})
    if examples and not newer:
        q = Desc((128, 64), "fp16")
        add(os.path.join(examples, "01-attention-forward.py"), "attention_kernel",
            {"sm_scale": 0.125, "M": Ptr("fp32"), "Z": 4, "H": 48, "N_CTX": 4096, "desc_q": q,
             "desc_k": Desc((128, 64), "fp16"), "desc_v": Desc((128, 64), "fp16"), "desc_o": q, "BLOCK_M": Const(256),
             "BLOCK_N": Const(128), "HEAD_DIM": Const(64), "GROUP_SIZE_N": Const(1), "NUM_SMS": Const(148),
             "STAGE": Const(1), "dtype": Expr(expression="gl.float16")}, ("sm100",),
            "its benchmark (Z 4, H 48, 4096, head 64, fp16, not causal; 148 SMs)", maxnreg=128)
    if newer:
        add(t("10-tcgen05-copy.py"), "tcgen05_copy_kernel",
            {"in_ptr": Ptr("fp32"), "in_stride0": 128, "in_stride1": 1, "out_ptr": Ptr("fp32"), "out_stride0": 128,
             "out_stride1": 1, "M": Const(128), "N": Const(128),
             "smem_layout": Expr(expression="gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=32, "
                                            "rank=2)"),
             "tmem_layout": Expr(expression="TensorMemoryLayout(block=(128, 32), col_stride=1)")}, ("sm100",),
            "test_tcgen05_copy_nvmma_shared (128 x 128 fp32, TMEM block N 32, swizzle 128)")
        add(t("10-tcgen05-copy.py"), "matmul_accumulate_kernel",
            {**_matmul(128, 128, 64, c_dtype="fp32"), "d_ptr": Ptr("fp32"), "d_stride_m": 1024, "d_stride_n": 1,
             "SchedulerImpl": HostFunction(sibling="t7", file=t("07-persistence.py"),
                                           function="GroupedPersistentTileScheduler",
                                           expression="GroupedPersistentTileScheduler(8)"), "num_buffers": Const(3)},
            ("sm100",), "test_matmul_accumulate (1024 x 1024 x 2048, 128 x 128 x 64, 3 buffers)",
            siblings={"t7": t("07-persistence.py"), "t8": t("08-warp-specialization.py")})
        add(t("09-tma-gather-scatter.py"), "async_gather_kernel",
            {"out_ptr": Ptr("bf16"), "out_stride_x": 16, "out_stride_y": 1,
             "tensor_desc": RowDesc((1, 16), "bf16", layout_block=(8, 16)), "x_offsets_ptr": Ptr("i32"),
             "y_offset": 48, "BLOCK_X": Const(8)}, ("sm100",),
            "test_async_gather (bf16, BLOCK_X 8, BLOCK_Y 16, y_offset 48)")
        add(t("09-tma-gather-scatter.py"), "async_scatter_kernel",
            {"tensor_desc": RowDesc((1, 16), "bf16", layout_block=(8, 16)), "x_offsets_ptr": Ptr("i32"),
             "y_offset": 48, "src_ptr": Ptr("bf16"), "src_stride_x": 16, "src_stride_y": 1, "BLOCK_X": Const(8)},
            ("sm100",), "test_async_scatter (bf16, BLOCK_X 8, BLOCK_Y 16, y_offset 48)")
        add(t("09-tma-gather-scatter.py"), "matmul_fused_gather_scatter_kernel",
            {"X_desc": RowDesc((1, 64), "bf16", layout_block=(128, 64)),
             "W_desc": Desc((64, 128), "bf16"), "out_desc": RowDesc((1, 128), "bf16", layout_block=(128, 128)),
             "X_gather_indx_ptr": Ptr("i32"), "out_scatter_indx_ptr": Ptr("i32"), "BLOCK_M": Const(128),
             "SchedulerImpl": HostFunction(sibling="t7", file=t("07-persistence.py"),
                                           function="GroupedPersistentTileScheduler",
                                           expression="GroupedPersistentTileScheduler(8)"),
             "num_buffers": Const(3)}, ("sm100",),
            "test_matmul_fused_gather_scatter (1024 x 1024 x 2048 bf16, 128 x 128 x 64, 3 buffers)",
            siblings={"t7": t("07-persistence.py")})
    return out


def _kernel_text(path: str) -> str:
    """``hopper_cases.kernel_tree`` of a file, plus the host functions its kept decorators name
    (the attention example's ``@gluon.jit(..., repr=attention_repr)``)."""
    from harness.hopper_cases import kernel_tree
    text = open(path).read()
    tree = kernel_tree(text)
    defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    named = {n.id for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))
             for decorator in node.decorator_list for n in ast.walk(decorator) if isinstance(n, ast.Name)}
    extra = [node for node in ast.parse(text).body
             if isinstance(node, ast.FunctionDef) and node.name in named - defined]
    first = next((i for i, node in enumerate(tree.body) if not isinstance(node, (ast.Import, ast.ImportFrom))),
                 len(tree.body))
    tree.body[first:first] = extra
    return ast.unparse(ast.fix_missing_locations(tree))


class _HostStub:
    """Stands for torch and pytest while a whole file is imported: every attribute, call and
    decorator gives a stub (a decorated test stays a stub; no kernel reads one)."""

    def __getattr__(self, name):
        return _HostStub()

    def __call__(self, *args, **kwargs):
        return _HostStub()

    def __iter__(self):
        return iter(())

    def __getitem__(self, key):
        return _HostStub()

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__


def _import_whole(path: str, stem: str):
    """The whole file imported as written, torch and pytest stubbed (an example whose kernels
    read host-level code that ``kernel_tree`` does not keep: the attention example's channels)."""
    import importlib.util
    import sys
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver

    class NoGPU(_HostStub):           # what a module-level is_blackwell() or is_hopper() asks
        def get_current_target(self):
            return GPUTarget("cuda", 100, 32)
    saved = {name: sys.modules.get(name) for name in ("torch", "pytest")}
    sys.modules.update({name: _HostStub() for name in saved})
    saved_driver, driver._active = driver._active, NoGPU()
    try:
        spec = importlib.util.spec_from_file_location(f"ll_tutorial_{stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    finally:
        driver._active = saved_driver
        for name, value in saved.items():
            if value is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = value
    return module


def _load(case: Case):
    """The case's file as written (``hopper_cases.load``'s expert form), its siblings bound."""
    from harness.hopper_cases import _import_source

    def stem(path):
        return os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    if os.sep + "examples" + os.sep in case.file:
        module = _import_whole(case.file, stem(case.file))
    else:
        module = _import_source(_kernel_text(case.file), stem(case.file))
    for attribute, sibling in case.siblings.items():
        setattr(module, attribute, _import_source(_kernel_text(sibling), attribute))
    return module


def source(case: Case):
    """(GluonASTSource, options) of a case: ``hopper_cases``' written-out launch, with the
    kernel's ``do_not_specialize`` honoured as the JIT honours it (an integer named there stays a
    runtime ``i32``, without divisibility, whatever its value: 10's ``d_stride_n`` of 1)."""
    from triton.experimental.gluon._runtime import GluonASTSource
    from harness import hopper_cases
    module = _load(case)
    kernel, signature, constexprs, attrs = hopper_cases.signature(case, module)
    kept = {param.name for param in kernel.params if param.do_not_specialize}
    for index, name in enumerate(kernel.arg_names):
        value = case.args.get(name)
        if name in kept and isinstance(value, int) and not isinstance(value, bool):
            constexprs.pop(name, None)
            attrs.pop((index,), None)
            signature[name] = "i32"
    signature = {name: signature[name] for name in kernel.arg_names if name in signature}
    options = {"num_warps": case.num_warps, **({"maxnreg": case.maxnreg} if case.maxnreg is not None else {})}
    return GluonASTSource(kernel, signature, constexprs, attrs=attrs), options


def release_36_cases() -> list[TutorialCase]:
    """3.6.0's launches not in ``hopper_cases`` (which the corpus takes from there)."""
    return _cases(TUTORIALS_DIR, os.path.join(EXAMPLES_ROOT, "python", "examples", "gluon"), "triton", False)


def next_cases() -> list[TutorialCase]:
    """The NEXT set's launches: this module's and ``hopper_cases``' tutorial launches re-pointed at it."""
    from harness import hopper_cases
    tutorials = os.path.dirname(next_path("python/tutorials/gluon/01-intro.py"))
    out = _cases(tutorials, None, "triton-next", True)
    for case in hopper_cases.cases():
        if case.project != "triton":
            continue
        moved = replace(case, project="triton-next", file=os.path.join(tutorials, os.path.basename(case.file)),
                        siblings={k: os.path.join(tutorials, os.path.basename(v)) for k, v in case.siblings.items()})
        label = f"{os.path.splitext(os.path.basename(case.file))[0]}/{case.kernel}"
        out.append(TutorialCase(moved, ("sm90",), label))
    return out


def why_not_carried(newer: bool) -> str | None:
    if newer:
        return check_next(NEXT)
    problems = check()
    return None if not problems else f"triton {SOURCE_COMMIT[:10]} tutorials not carried as pinned ({problems[0]})"


# Names 3.9's Gluon removed, with the message its front end gives for a call to one (read off the
# compiles of 3.6's tutorials under 3.9), or the import that fails.
REMOVED_IN_39 = {
    "async_copy_global_to_shared": "async_copy_global_to_shared has been removed; call async_load instead",
    "async_copy_shared_to_global": "async_copy_shared_to_global has been removed; call async_store instead",
    "get_tmem_reg_layout": "ImportError: cannot import name 'get_tmem_reg_layout' from "
                           "'triton.experimental.gluon.language.nvidia.blackwell'",
    "get_tmem_32x32b_reg_layout": "ImportError: cannot import name 'get_tmem_32x32b_reg_layout'",
}


def next_file_reasons(compiled_files: set) -> list[tuple[str, str]]:
    """(file, why) for each NEXT tutorial or example of which no kernel compiled here: the names
    3.9 removed that its kernels (``hopper_cases.kernel_tree``) call, with their counts."""
    from harness.hopper_cases import kernel_tree
    out = []
    for path in sorted(NEXT):
        if not path.endswith(".py") or next_path(path) in compiled_files:
            continue
        text = open(next_path(path)).read()
        try:
            kernels = ast.unparse(kernel_tree(text))
        except SyntaxError as error:
            out.append((path, f"does not parse: {error}"))
            continue
        found = {name: len(re.findall(rf"\b{name}\b", kernels)) for name in REMOVED_IN_39}
        found = {name: n for name, n in found.items() if n}
        if found:
            why = "; ".join(f"{REMOVED_IN_39[name]} ({n} use{'s' if n > 1 else ''})" for name, n in found.items())
        else:
            why = "no launch written out here (its kernels call none of the names 3.9 removed)"
        out.append((path, why))
    return out


NEXT_ORIGIN = f"triton main {NEXT_COMMIT[:10]}"
