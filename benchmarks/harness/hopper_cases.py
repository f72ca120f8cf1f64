"""The Hopper-class Gluon kernels of Triton's tutorials and of other projects that
``peer_gluon_gpu.py hopper`` measures beside our own four, and how each is launched.

The selection rule, stated before measuring:

* Triton's Gluon tutorials of the GPU machine's release (v3.6.0, commit ``4b184ccc``, MIT; carried
  by ``carry_gluon_tutorials.py``) on TMA, wgmma, persistence and warp specialization, every kernel
  their Hopper code path launches with a benchmark or test of its own: ``04-tma``'s pipelined TMA
  ``elementwise_add_tma_kernel``; ``05-wgmma``'s ``blocked_matmul_kernel`` and
  ``blocked_matmul_pipelined_kernel``; ``07-persistence``'s ``matmul_pipelined_kernel``,
  ``persistent_matmul_kernel`` and ``persistent_matmul_pipelined_kernel`` (with its ``WGMMA``
  wrapper, the one ``select_mma_impl`` picks on sm_90); ``08-warp-specialization``'s
  ``elementwise_add_warp_specialized_kernel``.  Left out: ``04``'s ``memcpy_1d_tma_kernel`` (no
  layout of any kind and no benchmark), ``05``'s ``small_mma_kernel`` (one tile, grid (1,)), and
  ``06``/``08``'s tcgen05 kernels (Blackwell).
* Hopper Gluon kernels (TMA, mbarrier, wgmma, persistent or warp-specialized; no tcgen05) of
  public projects not benchmarked before (FLA and triton-viz were), under MIT, Apache-2.0 or BSD,
  of which a pinned snapshot can be carried (``carry_hopper_sources.py``, the MANIFEST), each
  kernel file under 50 KB, launched as the project's own launcher launches it: FlagDNN's three
  SM90 matmuls, LMDeploy's three blocked-FP8 GEMM schedules, gpt-oss-gluon's attention forward.

Each launch has the shapes of the project's own benchmark or test (``shapes`` says which); its
inputs are random (``torch.Generator`` seeded 0) or, where the project's test builds them a
particular way (LMDeploy's FP8 quantization), built that way.

The automatic form: one rule, the one ``peer_gluon_forms.py`` states and
``gluon_forms.py``'s auto form shares, applied mechanically to the kernel source: every
distributed layout the author wrote that the hardware does not force - each ``<gl>.BlockedLayout``,
``<gl>.SliceLayout`` (``DistributedLinearLayout``: none occurs in these sources) - becomes
``<gl>.AutoLayout()``; the layout of every ``<gl>.arange`` becomes ``<gl>.CoalescedLayout()``
(``AutoLayout()`` where Gluon's front end rejects that: ``hopper_gluon.compile_case``, as
``peer_gluon_forms.by_the_arange_rule``); a
``<gl>.convert_layout(x, L)`` to such a layout becomes ``x``, and so does a
``<gl>.set_auto_layout(x, L)`` (one clause added here, ``_AutoForm``: LMDeploy writes one, and an
automatic layout set to an automatic one is rejected by Gluon's verifier).  NVMMA (wgmma accumulators),
dot-operand, TMA/NVMMA-shared, swizzled-shared and mbarrier layouts stay.  Where a kernel writes no
such layout (05, 07; FlagDNN's fp16 kernels, but for a copy layout in a branch their fp16 launch
does not take) the rule changes nothing that is compiled; ``replaced`` counts the calls replaced
over the whole file (05, 07: 0; FlagDNN's 2 are its FP8 kernel's copy layout and that branch's).

``kernel_source`` keeps of a file what compiling its kernels needs: its imports but torch's,
pytest's, importlib's and relative ones (the project's own package), ``try`` blocks of imports,
the ``gluon.jit`` / ``constexpr_function`` / ``aggregate`` definitions (other decorators dropped)
and the top-level assignments they read.  A tutorial that imports a sibling
(``t5 = importlib.import_module("05-wgmma")``) gets it loaded in the same form (``siblings``).

CPU: ``source(case, auto, arange)`` is a ``GluonASTSource`` with the launch written out as a
signature (``args``: descriptors by block shape and dtype with the launcher's default NVMMA layout,
pointers, integers as their values - 1 a constexpr and multiples of 16 divisible, as the JIT
specializes them - and constexprs), compiled for sm_90.  GPU: ``case.inputs(torch, sms)`` builds
the launch's tensors and host ``TensorDescriptor``\\ s as the project's launcher does, returns the
grid, every runtime argument and the tensors the kernel writes (compared between modes).
"""

from __future__ import annotations

import ast
import importlib.util
import math
import os
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Callable

from harness.carry_gluon_tutorials import check_tutorials
from harness.carry_hopper_sources import carried_path, why_not_carried
from harness.gluon_forms_cases import TUTORIALS_DIR
from harness import peer_gluon_forms
from harness.gluon_forms import _call_of, _hardware_layout_names, _is_sibling_import
from harness.peer_gluon_forms import _is_kernel_definition, _names_read

_HOST_ONLY = {"torch", "pytest", "importlib"}
_GL_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp8e4nv": "float8e4nv"}


# ------------------------------------------------------------------------------ arguments

@dataclass(frozen=True)
class Desc:
    """A host ``TensorDescriptor`` argument of this block shape and element type, with the layout
    every launcher here gives it: ``NVMMASharedLayout.get_default_for(block, dtype)``."""

    block: tuple
    dtype: str

    def layout(self):
        from triton.experimental.gluon import language as gl
        return gl.NVMMASharedLayout.get_default_for(list(self.block), getattr(gl, _GL_DTYPES[self.dtype]))

    def signature(self) -> str:
        return f"tensordesc<{self.dtype}[{','.join(map(str, self.block))}],{self.layout()!r}>"


@dataclass(frozen=True)
class Ptr:
    """A pointer argument (a torch tensor) to elements of ``dtype`` ("fp16", "i32", ...)."""

    dtype: str


@dataclass(frozen=True)
class Const:
    """A ``gl.constexpr`` argument: ``value``, or ``attr`` of the loaded module (``WGMMA``), or the
    default NVMMA layout of ``layout_of`` (a ``Desc``)."""

    value: object = None
    attr: str = ""
    layout_of: Desc | None = None

    def resolve(self, module):
        if self.attr:
            return getattr(module, self.attr)
        if self.layout_of is not None:
            return self.layout_of.layout()
        return self.value


@dataclass(frozen=True)
class Case:
    name: str
    project: str                   # "triton" (the tutorials) or a project of carry_hopper_sources
    file: str                      # the carried source
    kernel: str
    args: dict                     # every kernel argument -> Desc | Ptr | Const | int | float
    inputs: Callable               # (torch, sms) -> (grid, {runtime argument: value}, [tensors written])
    shapes: str                    # where the launch's shapes come from
    num_warps: int = 4
    maxnreg: int | None = None
    siblings: dict = field(default_factory=dict)   # module attribute -> carried file (same form)
    tolerance: float | None = None                  # max |difference| from the expert accepted (None: bit for bit)

    def why_not_available(self) -> str | None:
        """None when the source is carried as pinned; else why not."""
        return check_tutorials() if self.project == "triton" else why_not_carried(self.project)


# ------------------------------------------------------------------------------ sources and forms

def _keeps_import(node) -> bool:
    if isinstance(node, ast.ImportFrom) and node.level:
        return False                               # the project's own package
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    return not any(n.split(".")[0] in _HOST_ONLY for n in names)


def _is_import_try(node) -> bool:
    """``try: from gluon import aggregate`` / ``except ImportError: from triton... import ...``."""
    return isinstance(node, ast.Try) and all(
        isinstance(n, (ast.Import, ast.ImportFrom)) for n in node.body + [s for h in node.handlers for s in h.body])


def kernel_tree(text: str) -> ast.Module:
    """The parts of a source file its kernels need (see the module docstring)."""
    tree = ast.parse(text)
    kernels = []
    for node in tree.body:
        if _is_kernel_definition(node):
            node.decorator_list = [d for d in node.decorator_list
                                   if ast.unparse(d).split("(")[0].endswith(("jit", "constexpr_function", "aggregate"))]
            kernels.append(node)
    needed = _names_read(kernels)
    body = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if _keeps_import(node):
                body.append(node)
        elif _is_import_try(node) or node in kernels:
            body.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and not _is_sibling_import(node):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in needed for t in targets):
                body.append(node)
    return ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))


class _AutoForm(peer_gluon_forms._AutoForm):
    """``peer_gluon_forms``'s rule, with ``set_auto_layout`` read as ``convert_layout`` is: a
    ``<gl>.set_auto_layout(x, L)`` whose ``L`` the rule replaces becomes ``x`` (an automatic layout
    set to an automatic layout names nothing; Gluon's verifier rejects it: "result type must not
    be auto layout").  LMDeploy's persistent schedule writes one."""

    def visit_Call(self, node):
        target = node.args[1] if _call_of(node, {"set_auto_layout"}) and len(node.args) >= 2 else None
        if target is not None and ((isinstance(target, ast.Name) and target.id not in self.hardware_names)
                                   or _call_of(target, peer_gluon_forms.AUTO_LAYOUTS)):
            node = self.generic_visit(node)
            self.replaced += 1
            return node.args[0]
        return super().visit_Call(node)


def kernel_source(text: str, auto: bool, arange: str = "coalesced") -> tuple[str, int]:
    """The kernel source in its expert (as written) or automatic form, and how many calls the rule
    replaced in the file (0 for the expert form)."""
    tree = kernel_tree(text)
    if not auto:
        return ast.unparse(tree), 0
    transformer = _AutoForm(_hardware_layout_names(tree), peer_gluon_forms.ARANGE_LAYOUTS[arange])
    tree = ast.fix_missing_locations(transformer.visit(tree))
    return ast.unparse(tree), transformer.replaced


_LOADED = 0


def _import_source(text: str, stem: str):
    global _LOADED
    _LOADED += 1
    name = f"ll_hopper_case_{stem}_{_LOADED}"
    file = os.path.join(tempfile.mkdtemp(prefix="ll_hopper_cases_"), name + ".py")
    with open(file, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load(case: Case, auto: bool, arange: str = "coalesced"):
    """The case's file in the form asked for, imported as a new module (a fresh one each call: no
    kernel shared between modes), its siblings bound; ``module.replaced``: the rule's count."""
    with open(case.file) as f:
        text, replaced = kernel_source(f.read(), auto, arange)
    stem = os.path.splitext(os.path.basename(case.file))[0].replace("-", "_")
    module = _import_source(text, stem)
    for attribute, sibling in case.siblings.items():
        with open(sibling) as f:
            sibling_text, sibling_replaced = kernel_source(f.read(), auto, arange)
        setattr(module, attribute, _import_source(sibling_text, attribute))
        replaced += sibling_replaced
    module.replaced = replaced
    return module


def _i32(value: int) -> str:
    return "i32" if -2**31 <= value < 2**31 else "i64"


def signature(case: Case, module):
    """(kernel, signature, constexprs, attrs) of the case's launch as the JIT would specialize it."""
    kernel = getattr(module, case.kernel)
    signature, constexprs, attrs = {}, {}, {}
    for index, name in enumerate(kernel.arg_names):
        if name == "num_warps" and name not in case.args:
            constexprs[name] = case.num_warps
            continue
        spec = case.args[name]
        if isinstance(spec, Const):
            constexprs[name] = spec.resolve(module)
        elif isinstance(spec, Desc):
            signature[name] = spec.signature()
        elif isinstance(spec, Ptr):
            signature[name] = "*" + spec.dtype
            attrs[(index,)] = [["tt.divisibility", 16]]
        elif isinstance(spec, bool):
            constexprs[name] = spec
        elif isinstance(spec, int):
            if spec == 1:
                constexprs[name] = 1
            else:
                signature[name] = _i32(spec)
                if spec % 16 == 0:
                    attrs[(index,)] = [["tt.divisibility", 16]]
        elif isinstance(spec, float):
            signature[name] = "fp32"
        else:
            raise TypeError(f"{case.name}: argument {name}: {spec!r}")
    missing = set(case.args) - set(kernel.arg_names)
    if missing:
        raise KeyError(f"{case.name}: no kernel argument {', '.join(sorted(missing))}")
    return kernel, signature, constexprs, attrs


def source(case: Case, auto: bool, arange: str = "coalesced"):
    """(GluonASTSource, compile options, the rule's replaced count) of the case in one form."""
    from triton.experimental.gluon._runtime import GluonASTSource
    module = load(case, auto, arange)
    kernel, sig, constexprs, attrs = signature(case, module)
    options = {"num_warps": case.num_warps}
    if case.maxnreg is not None:
        options["maxnreg"] = case.maxnreg
    return GluonASTSource(kernel, sig, constexprs, attrs=attrs), options, module.replaced


def runtime_args(case: Case, arg_names, values: dict) -> list:
    """The launch's runtime arguments in the compiled kernel's order (``arg_names``: the kernel's;
    constexprs left out, as ``signature`` leaves them out), each checked against the case's
    written-out argument."""
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    out = []
    for name in arg_names:
        spec = case.args.get(name, Const())          # num_warps: a constexpr
        if isinstance(spec, (Const, bool)) or (isinstance(spec, int) and spec == 1):
            continue
        value = values[name]
        if isinstance(spec, Desc):
            if not isinstance(value, TensorDescriptor) or list(value.block_shape) != list(spec.block):
                raise ValueError(f"{case.name}: {name} is not a descriptor of block {spec.block}")
        elif isinstance(spec, int) and not isinstance(spec, bool) and value != spec:
            raise ValueError(f"{case.name}: {name} is {value}, the compiled launch says {spec}")
        out.append(value)
    return out


# ------------------------------------------------------------------------------ launches (GPU)

def _generator(torch):
    return torch.Generator(device="cuda").manual_seed(0)


def _desc(tensor, block, dtype):
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    return TensorDescriptor.from_tensor(tensor, list(block), Desc(tuple(block), dtype).layout())


def _tutorial(name: str) -> str:
    return os.path.join(TUTORIALS_DIR, name)


# 04-tma and 08-warp-specialization: their benchmark's 32K x 32K fp32 sum, in their benchmark's
# final configuration (XBLOCK 64, YBLOCK 128, three load buffers)
SIDE = 32 * 1024
ADD_BLOCK = (64, 128)


def _add_inputs():
    def inputs(torch, sms):
        g = _generator(torch)
        a = torch.randn(SIDE, SIDE, device="cuda", generator=g)
        b = torch.randn(SIDE, SIDE, device="cuda", generator=g)
        c = torch.empty_like(a)
        values = {"a_desc": _desc(a, ADD_BLOCK, "fp32"), "b_desc": _desc(b, ADD_BLOCK, "fp32"),
                  "c_desc": _desc(c, ADD_BLOCK, "fp32"), "xnumel": SIDE, "ynumel": SIDE}
        return (SIDE // ADD_BLOCK[0], 1, 1), values, [c]
    return inputs


def _add_args(**constexprs):
    return {"a_desc": Desc(ADD_BLOCK, "fp32"), "b_desc": Desc(ADD_BLOCK, "fp32"), "c_desc": Desc(ADD_BLOCK, "fp32"),
            "xnumel": SIDE, "ynumel": SIDE, "XBLOCK": Const(ADD_BLOCK[0]), "YBLOCK": Const(ADD_BLOCK[1]),
            **{k: Const(v) for k, v in constexprs.items()}}


# 05-wgmma: its benchmark's 8192 x 8192 x 16384 fp16 matmul with the best configuration it lists
# (64 x 256 x 128, 4 warps); 07-persistence: its benchmark's 8192 x 8192 (K 4096 of its 512..16384
# sweep) with its Hopper configuration (128 x 256 x 64, 3 buffers, 8 warps)
def _matmul_inputs(m, n, k, bm, bn, bk, persistent=False):
    def inputs(torch, sms):
        g = _generator(torch)
        a = torch.randn(m, k, device="cuda", dtype=torch.float16, generator=g)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16, generator=g)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        values = {"a_desc": _desc(a, (bm, bk), "fp16"), "b_desc": _desc(b, (bk, bn), "fp16"),
                  "c_desc": _desc(c, (bm, bn), "fp16")}
        tiles = math.ceil(m / bm) * math.ceil(n / bn)
        grid = (min(sms, tiles), 1, 1) if persistent else (math.ceil(m / bm), math.ceil(n / bn), 1)
        return grid, values, [c]
    return inputs


def _matmul_args(bm, bn, bk, **constexprs):
    return {"a_desc": Desc((bm, bk), "fp16"), "b_desc": Desc((bk, bn), "fp16"), "c_desc": Desc((bm, bn), "fp16"),
            **{k: v if isinstance(v, Const) else Const(v) for k, v in constexprs.items()}}


# FlagDNN: run_sm90_matmul (commit 4a364b91) on a [batch, m, k] x [batch, k, n] problem of its
# validated shape table, with the table's configuration
def _flagdnn_inputs(batch, m, n, k, bm, bn, bk, dtype, out_dtype, grid_multiplier=1):
    def inputs(torch, sms):
        g = _generator(torch)
        if dtype == "fp8e4nv":        # its FP8 test: randn * 0.25 in float8_e4m3fn
            a = (torch.randn(batch, m, k, device="cuda", generator=g) * 0.25).to(torch.float8_e4m3fn)
            b = (torch.randn(batch, k, n, device="cuda", generator=g) * 0.25).to(torch.float8_e4m3fn)
        else:
            a = torch.randn(batch, m, k, device="cuda", dtype=torch.float16, generator=g)
            b = torch.randn(batch, k, n, device="cuda", dtype=torch.float16, generator=g)
        c = torch.empty(batch, m, n, device="cuda", dtype=getattr(torch, {"fp16": "float16", "fp32": "float32"}[out_dtype]))
        values = {"a_desc": _desc(a.reshape(batch * m, k), (bm, bk), dtype),
                  "b_desc": _desc(b.reshape(batch * k, n), (bk, bn), dtype),
                  "c_desc": _desc(c.reshape(batch * m, n), (bm, bn), out_dtype),
                  "batch": batch, "m": m, "n": n, "k": k}
        tiles = batch * math.ceil(m / bm) * math.ceil(n / bn)
        return (min(tiles, sms * grid_multiplier), 1, 1), values, [c]
    return inputs


def _flagdnn_args(batch, m, n, k, bm, bn, bk, dtype, out_dtype, **constexprs):
    return {"a_desc": Desc((bm, bk), dtype), "b_desc": Desc((bk, bn), dtype), "c_desc": Desc((bm, bn), out_dtype),
            "batch": batch, "m": m, "n": n, "k": k, **{name: Const(v) for name, v in constexprs.items()}}


# LMDeploy: fp8_gemm_nt's launchers, on inputs quantized as its test quantizes them
# (_make_inputs: bf16 randn with K- and N-block factors, per-row-and-128-K A scales stored
# column-major with 16-byte aligned columns, 128 x 128 B scales)
LMDEPLOY_GROUP = 128


def _lmdeploy_quantized(torch, m, n, k):
    g = _generator(torch)
    a = torch.randn((m, k), device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn((n, k), device="cuda", dtype=torch.bfloat16, generator=g)
    k_factors = torch.logspace(-1, 1, k // LMDEPLOY_GROUP, device="cuda").repeat_interleave(LMDEPLOY_GROUP)
    n_factors = torch.logspace(-0.5, 0.5, math.ceil(n / LMDEPLOY_GROUP), device="cuda")
    n_factors = n_factors.repeat_interleave(LMDEPLOY_GROUP)[:n]
    a = (a.float() * k_factors[None, :]).to(torch.bfloat16)
    b = (b.float() * n_factors[:, None] * k_factors[None, :]).to(torch.bfloat16)
    fp8 = torch.finfo(torch.float8_e4m3fn)
    blocks = a.float().view(m, k // LMDEPLOY_GROUP, LMDEPLOY_GROUP)
    a_scale = blocks.abs().amax(dim=-1).clamp_min(1e-6) / fp8.max
    a_quant = (blocks / a_scale[..., None]).clamp(fp8.min, fp8.max).to(torch.float8_e4m3fn).view(m, k)
    aligned_m = math.ceil(m / 4) * 4
    a_scale_cm = torch.empty_strided(a_scale.shape, (1, aligned_m), dtype=torch.float32, device="cuda")
    a_scale_cm.copy_(a_scale)
    padded_n = math.ceil(n / LMDEPLOY_GROUP) * LMDEPLOY_GROUP
    padded = torch.zeros((padded_n, k), dtype=torch.float32, device="cuda")
    padded[:n] = b
    bblocks = padded.view(padded_n // LMDEPLOY_GROUP, LMDEPLOY_GROUP, k // LMDEPLOY_GROUP, LMDEPLOY_GROUP)
    b_scale = bblocks.abs().amax(dim=(1, 3)).clamp_min(1e-6) / fp8.max
    b_quant = (bblocks / b_scale[:, None, :, None]).clamp(fp8.min, fp8.max).to(torch.float8_e4m3fn)
    b_quant = b_quant.view(padded_n, k)[:n].contiguous()
    return a_quant, a_scale_cm, b_quant, b_scale.contiguous()


def _lmdeploy_inputs(m, n, k, schedule):
    def inputs(torch, sms):
        a_quant, a_scale, b_quant, b_scale = _lmdeploy_quantized(torch, m, n, k)
        d = torch.empty((m, n), device="cuda", dtype=torch.bfloat16)
        bm, bn = LMDEPLOY_BLOCKS[schedule]
        values = {"a_desc": _desc(a_quant, (bm, LMDEPLOY_GROUP), "fp8e4nv"),
                  "b_desc": _desc(b_quant, (bn, LMDEPLOY_GROUP), "fp8e4nv"),
                  "d_desc": _desc(d, (bm, bn), "bf16"), "b_scale_ptr": b_scale, "M": m}
        if schedule == "persistent":
            values["a_scale_desc"] = _desc(a_scale.T, (1, bm), "fp32")
            grid = (min(sms, math.ceil(m / bm) * math.ceil(n / bn)), 1, 1)
        else:
            values["a_scale_ptr"] = a_scale
            grid = (math.ceil(m / bm), math.ceil(n / bn), 1)
        return grid, values, [d]
    return inputs


LMDEPLOY_BLOCKS = {"single": (64, 64), "warp_specialized": (64, 128), "persistent": (256, 128)}


def _lmdeploy_args(m, n, k, schedule):
    bm, bn = LMDEPLOY_BLOCKS[schedule]
    common = {"a_desc": Desc((bm, LMDEPLOY_GROUP), "fp8e4nv"), "b_desc": Desc((bn, LMDEPLOY_GROUP), "fp8e4nv"),
              "b_scale_ptr": Ptr("fp32"), "d_desc": Desc((bm, bn), "bf16"), "M": m, "K": Const(k)}
    k_blocks = k // LMDEPLOY_GROUP
    b_strides = {"stride_bsn": Const(k_blocks), "stride_bsk": Const(1)}
    if schedule == "persistent":
        return {**common, "a_scale_desc": Desc((1, bm), "fp32"), "N": Const(n), **b_strides,
                "SCALE_BLOCK_N": Const(LMDEPLOY_GROUP), "NUM_BUFFERS": Const(3)}
    a_strides = {"stride_asm": Const(1), "stride_ask": Const(math.ceil(m / 4) * 4)}
    if schedule == "single":      # m > 64 and not the transposed small-M path: BN 64, six buffers
        return {**common, "a_scale_ptr": Ptr("fp32"), **a_strides, **b_strides, "transpose_output": Const(False),
                "scale_block_n": Const(LMDEPLOY_GROUP), "num_buffers": Const(6)}
    return {**common, "a_scale_ptr": Ptr("fp32"), **a_strides, **b_strides,
            "scale_block_n": Const(LMDEPLOY_GROUP), "num_buffers": Const(4)}


# gpt-oss-gluon: _attention.forward on its benchmark's prefill shapes (gpt-oss: head_dim 64, 64
# query heads over 8 KV heads; batch 1, 4096 tokens, full causal, fp16 of its --dtype).  Only the
# output is compared: the kernel's log-sum-exp ``M`` (kept for a backward) is stored by every query
# block of a head at rows 0..63 (its offsets lack ``start_m * BLOCK_M``), so which block's value
# lands there is a race - two runs of the expert's own binary differ (seen on an H200: up to 0.52).
GPT_HEADS, GPT_DIM, GPT_CTX, GPT_BLOCK = 64, 64, 4096, 64


def _gpt_oss_inputs(torch, sms):
    g = _generator(torch)
    n_kv, repeat = 8, GPT_HEADS // 8
    q = torch.randn(1, GPT_CTX, n_kv, repeat, GPT_DIM, device="cuda", generator=g).to(torch.float16)
    k = torch.randn(1, GPT_CTX, n_kv, GPT_DIM, device="cuda", generator=g).to(torch.float16)
    v = torch.randn(1, GPT_CTX, n_kv, GPT_DIM, device="cuda", generator=g).to(torch.float16)
    sinks = torch.randn(GPT_HEADS, device="cuda", generator=g).to(torch.float16)
    start_q = torch.zeros(1, dtype=torch.int32, device="cuda")
    q = q.view(1, GPT_CTX, GPT_HEADS, GPT_DIM).transpose(1, 2).contiguous()
    k = k.repeat_interleave(repeat, dim=2).transpose(1, 2).contiguous()
    v = v.repeat_interleave(repeat, dim=2).transpose(1, 2).contiguous()
    rows = GPT_HEADS * GPT_CTX
    o = torch.empty_like(q)
    lse = torch.empty((1, GPT_HEADS, GPT_CTX), device="cuda", dtype=torch.float32)
    block = (GPT_BLOCK, GPT_DIM)
    values = {"Q_desc": _desc(q.view(rows, GPT_DIM), block, "fp16"), "K_desc": _desc(k.view(rows, GPT_DIM), block, "fp16"),
              "V_desc": _desc(v.view(rows, GPT_DIM), block, "fp16"), "Sinks": sinks, "sm_scale": 1.0 / math.sqrt(GPT_DIM),
              "M": lse, "Out_desc": _desc(o.view(rows, GPT_DIM), block, "fp16"), "Start_q": start_q,
              "Z": 1, "H": GPT_HEADS, "N_Q_CTX": GPT_CTX, "N_KV_CTX": GPT_CTX}
    return (GPT_CTX // GPT_BLOCK, GPT_HEADS, 1), values, [o]


def _gpt_oss_args():
    block = Desc((GPT_BLOCK, GPT_DIM), "fp16")
    return {"Q_desc": block, "K_desc": block, "V_desc": block, "Sinks": Ptr("fp16"), "sm_scale": 1.0 / math.sqrt(GPT_DIM),
            "M": Ptr("fp32"), "Out_desc": block, "Start_q": Ptr("i32"), "Z": 1, "H": GPT_HEADS, "N_Q_CTX": GPT_CTX,
            "N_KV_CTX": GPT_CTX, "HEAD_DIM": Const(GPT_DIM), "BANDWIDTH": Const(0), "BLOCK_M": Const(GPT_BLOCK),
            "BLOCK_N": Const(GPT_BLOCK), "N_QK": Const(GPT_BLOCK), "N_PV": Const(GPT_DIM),
            "Q_SMEM_LAYOUT": Const(layout_of=block), "KV_SMEM_LAYOUT": Const(layout_of=block),
            "P_SMEM_LAYOUT": Const(layout_of=Desc((GPT_BLOCK, GPT_BLOCK), "fp16"))}


def cases() -> list[Case]:
    flagdnn = carried_path("flagdnn", "backends/nvidia/kernels/matmul_sm90.py")
    lmdeploy = carried_path("lmdeploy", "lmdeploy/pytorch/kernels/cuda/blocked_fp8_gemm_gluon.py")
    gpt_oss = carried_path("gpt-oss-gluon", "gpt_oss/triton/attention_gluon.py")
    t5 = {"t5": _tutorial("05-wgmma.py")}
    wgmma_8192 = (8192, 8192, 4096, 128, 256, 64)
    return [
        Case("triton/04-tma/elementwise_add_tma_kernel", "triton", _tutorial("04-tma.py"), "elementwise_add_tma_kernel",
             _add_args(num_buffers=3), _add_inputs(), "04-tma's benchmark (32K x 32K fp32, 64 x 128, 3 buffers)"),
        Case("triton/05-wgmma/blocked_matmul_kernel", "triton", _tutorial("05-wgmma.py"), "blocked_matmul_kernel",
             _matmul_args(64, 256, 128, TRANSPOSE_B=False), _matmul_inputs(8192, 8192, 16384, 64, 256, 128),
             "05-wgmma's benchmark (8192 x 8192 x 16384 fp16, its best listed block 64 x 256 x 128, 4 warps)"),
        Case("triton/05-wgmma/blocked_matmul_pipelined_kernel", "triton", _tutorial("05-wgmma.py"),
             "blocked_matmul_pipelined_kernel", _matmul_args(64, 256, 128), _matmul_inputs(8192, 8192, 16384, 64, 256, 128),
             "05-wgmma's pipelined benchmark (8192 x 8192 x 16384 fp16, 64 x 256 x 128, 4 warps)"),
        Case("triton/07-persistence/matmul_pipelined_kernel", "triton", _tutorial("07-persistence.py"),
             "matmul_pipelined_kernel", _matmul_args(128, 256, 64, MMAImpl=Const(attr="WGMMA"), num_buffers=3),
             _matmul_inputs(*wgmma_8192), "07-persistence's benchmark (8192 x 8192, K 4096; 128 x 256 x 64, 3 buffers, 8 warps)",
             num_warps=8, siblings=t5),
        Case("triton/07-persistence/persistent_matmul_kernel", "triton", _tutorial("07-persistence.py"),
             "persistent_matmul_kernel",
             _matmul_args(128, 256, 64, MMAImpl=Const(attr="WGMMA"), SchedulerImpl=Const(attr="PersistentTileScheduler"),
                          num_buffers=3),
             _matmul_inputs(*wgmma_8192, persistent=True), "07-persistence's benchmark (as above, grid min(SMs, tiles))",
             num_warps=8, siblings=t5),
        Case("triton/07-persistence/persistent_matmul_pipelined_kernel", "triton", _tutorial("07-persistence.py"),
             "persistent_matmul_pipelined_kernel",
             _matmul_args(128, 256, 64, MMAImpl=Const(attr="WGMMA"), SchedulerImpl=Const(attr="PersistentTileScheduler"),
                          num_buffers=3, STEALB=False),
             _matmul_inputs(*wgmma_8192, persistent=True), "07-persistence's benchmark (as above; STEALB off with 3 buffers)",
             num_warps=8, siblings=t5),
        Case("triton/08-warp-specialization/elementwise_add_warp_specialized_kernel", "triton",
             _tutorial("08-warp-specialization.py"), "elementwise_add_warp_specialized_kernel",
             _add_args(num_load_buffers=3, num_store_buffers=1), _add_inputs(),
             "08-warp-specialization's benchmark (32K x 32K fp32, 64 x 128, 3 load / 1 store buffers, maxnreg 128)",
             maxnreg=128),
        Case("flagdnn/_matmul_sm90_kernel", "flagdnn", flagdnn, "_matmul_sm90_kernel",
             _flagdnn_args(8, 2048, 2048, 2048, 128, 256, 64, "fp16", "fp16", num_buffers=3, precision="ieee"),
             _flagdnn_inputs(8, 2048, 2048, 2048, 128, 256, 64, "fp16", "fp16"),
             "FlagDNN's validated table: batch 8, 2048^3 fp16 -> lowp 128 x 256 x 64, 3 buffers, 8 warps, maxnreg 168",
             num_warps=8, maxnreg=168),
        Case("flagdnn/_matmul_sm90_ws_kernel", "flagdnn", flagdnn, "_matmul_sm90_ws_kernel",
             _flagdnn_args(16, 1024, 1024, 1024, 128, 256, 64, "fp16", "fp16", num_buffers=3, precision="ieee",
                           cube_variant=True),
             _flagdnn_inputs(16, 1024, 1024, 1024, 128, 256, 64, "fp16", "fp16"),
             "FlagDNN's validated table: batch 16, 1024^3 fp16 -> warp-specialized lowp (cube variant), maxnreg 168",
             num_warps=8, maxnreg=168),
        Case("flagdnn/_matmul_sm90_fp8_ws_kernel", "flagdnn", flagdnn, "_matmul_sm90_fp8_ws_kernel",
             _flagdnn_args(8, 2048, 2048, 2048, 128, 64, 64, "fp8e4nv", "fp32", num_buffers=3),
             _flagdnn_inputs(8, 2048, 2048, 2048, 128, 64, 64, "fp8e4nv", "fp32"),
             "FlagDNN's FP8 test configuration (fp8 128 x 64 x 64, 3 buffers, 8 warps, maxnreg 168) on batch 8, "
             "2048^3 of its FP8 shape table",
             num_warps=8, maxnreg=168),
        Case("lmdeploy/_fp8_gemm_nt_single_partition_kernel", "lmdeploy", lmdeploy,
             "_fp8_gemm_nt_single_partition_kernel", _lmdeploy_args(256, 4096, 1152, "single"),
             _lmdeploy_inputs(256, 4096, 1152, "single"),
             "LMDeploy's tests: M 256, N 4096 (its single-partition policy row), K 1152 (its persistent test)",
             num_warps=4),
        Case("lmdeploy/_fp8_gemm_nt_warp_specialized_kernel", "lmdeploy", lmdeploy,
             "_fp8_gemm_nt_warp_specialized_kernel", _lmdeploy_args(160, 4096, 1152, "warp_specialized"),
             _lmdeploy_inputs(160, 4096, 1152, "warp_specialized"),
             "LMDeploy's tests: M 160, N 4096 (a policy row that leaves the single partition), K 1152; maxnreg 128",
             num_warps=4, maxnreg=128),
        Case("lmdeploy/_fp8_gemm_nt_persistent_kernel", "lmdeploy", lmdeploy, "_fp8_gemm_nt_persistent_kernel",
             _lmdeploy_args(1280, 4096, 1152, "persistent"), _lmdeploy_inputs(1280, 4096, 1152, "persistent"),
             "LMDeploy's persistent test on 132 SMs: M 1280, N 4096, K 1152; maxnreg 168",
             num_warps=8, maxnreg=168),
        Case("gpt-oss-gluon/_attn_fwd_kernel", "gpt-oss-gluon", gpt_oss, "_attn_fwd_kernel", _gpt_oss_args(),
             _gpt_oss_inputs, "its bench_attention.py: batch 1, 4096 tokens, 64 heads of 64 (8 KV heads), causal, fp16",
             num_warps=4, tolerance=0.05),
    ]
