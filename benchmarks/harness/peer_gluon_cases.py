"""Which Gluon kernels of other projects ``peer_gluon_gpu.py`` measures, and how each is launched.

The selection rule, stated before measuring: open-source projects other than Triton whose Gluon
kernels run on an H100 (sm_90) or an A100 (sm_80) - no tcgen05 or tensor memory - and that the
workplace can pin (a git snapshot to carry them from, ``carry_peer_gluon.py``); of each, every
kernel that writes a ``BlockedLayout`` or ``SliceLayout`` (the automatic form has something to
replace), compiles with the GPU machine's triton 3.6.0 (with at most the shim of
``peer_gluon_forms.install_api_shims``) and has a launch that does real work (not one tile).
Searched (November 2026) and left out: meta-pytorch/tritonbench (its two Gluon kernels are
Blackwell's tcgen05 attention), FLA's Gluon attention kernels (``fla/ops/attn/backends/gluon``:
newer than any snapshot of FLA the workplace can fetch), flash-sparse-attention's Gluon sm80
kernels (no snapshot), FlagGems (its one Gluon kernel is no longer at the fetched commit),
sglang and vLLM (snapshots over the fetch limit; their Gluon kernels found are AMD's), piper
kernels (the fetched repository has no Gluon), triton-viz's TMA kernels (one tile at offset 0) and
its ``_converted_layout_add_kernel`` (stock 3.6.0 rejects it as written: "Layout mismatch in
broadcast", it stores a value converted to ``layout_out`` through offsets in ``layout_in``;
triton-viz's CPU simulator accepts it).  That leaves seven kernels of two projects:

* flash-linear-attention (``fla``), ``fla/ops/attnres/backends/gluon.py``: the AttnRes forward
  (``attnres_fwd_kernel_gluon``: L residual sources staged by cp.async, softmax over them, an
  RMSNorm), its backward for the sources (``attnres_bwd_kernel_dv_gluon``) and the reduction of
  the per-program partials (``attnres_bwd_kernel_dqdw_gluon``).  Shapes: L = 8 sources, 8192
  tokens, D = 4096, fp16 (the size of FLA's test cases); each kernel's configuration is one of its
  autotuner's list (FLA's launcher autotunes; the harness launches one configuration, the same in
  every mode): forward BT = 2, 8 warps; dv BT = 2, 8 warps (all L tiles resident in shared memory);
  dqdw BN = 512, BD = 64, 4 warps.  Inputs: random (``randn``; the backward's saved statistics too:
  the kernels read them, nothing checks them against the forward).  Its own test tolerance: an
  RMS error ratio below 0.005 (``assert_close(..., 0.005)`` in ``tests/ops/test_attnres.py``,
  FLA's ``get_err_ratio``), or an absolute error at most 1e-6.
* triton-viz (``triton-viz``), ``tests/end_to_end/test_gluon.py``: ``_masked_1d_memcpy_kernel``,
  ``_masked_2d_memcpy_kernel``, ``_async_copy_1d_kernel`` and ``_async_copy_elementwise_add_kernel``
  (the last two cp.async, written against Gluon's later ``async_copy_global_to_local``: shimmed),
  launched with the layouts and warp counts their tests pass, on 2**26 fp32 elements, an
  8192 x 8192 and a 16384 x 256 fp32 matrix.  Their tests' tolerance: exact (``atol=0, rtol=0``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from harness.carry_peer_gluon import carried_path

N_TOKENS, D_MODEL, L_SOURCES, GROUP = 8192, 4096, 8, 32


@dataclass(frozen=True)
class Tensor:
    """A pointer argument: a tensor of ``shape`` and ``dtype`` ("fp16", "fp32"); ``out`` if the kernel
    writes it (compared between modes), filled from ``init`` ("randn", "empty") otherwise."""

    shape: tuple
    dtype: str
    out: bool = False
    init: str = "randn"


@dataclass(frozen=True)
class Tensors:
    """A tuple of ``count`` tensors (FLA's ``res`` / ``dres``)."""

    count: int
    tensor: Tensor


@dataclass(frozen=True)
class Layout:
    """A layout the launch passes as a constexpr argument, as the expression its test writes."""

    expression: str


@dataclass(frozen=True)
class Case:
    project: str
    path: str                      # the kernel's file, in the project's repository
    kernel: str
    args: dict                     # argument -> Tensor | Tensors | Layout | None | int (runtime) | constexpr value
    constexprs: tuple              # the arguments that are gl.constexpr (their value is in ``args``)
    grid: tuple
    num_warps: int
    tolerance: str                 # "fla" (RMS error ratio < 0.005) or "exact"
    options: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.project}/{self.kernel}"

    @property
    def file(self) -> str:
        return carried_path(self.project, self.path)


FLA_FILE = "fla/ops/attnres/backends/gluon.py"
VIZ_FILE = "tests/end_to_end/test_gluon.py"
_ROWS_4 = "gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])"     # triton-viz's tests' layouts
_ONE_WARP = "gl.BlockedLayout([1], [32], [1], [0])"
_SMEM = "gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0])"


def _fla_cases() -> list[Case]:
    n, d, L = N_TOKENS, D_MODEL, L_SOURCES
    fp16, fp32 = (lambda *s, **k: Tensor(s, "fp16", **k)), (lambda *s, **k: Tensor(s, "fp32", **k))
    common = {"eps": 1e-6, "scale": d ** -0.5}
    vec = 8     # FLA's _vec_width(fp16, 4096, 4096): 16-byte lane segments
    np_ = n // GROUP
    fwd = Case("fla", FLA_FILE, "attnres_fwd_kernel_gluon",
               {"q": fp16(d), "res": Tensors(L, fp16(n, d)), "w": fp16(d), "ow": None,
                "o": fp16(n, d, out=True), "o_pre": None, "rstd": fp32(L, n, out=True),
                "logit": fp32(L, n, out=True), "lse": fp32(n, out=True), "N": n, "L": L, "D": d, **common,
                "BT": 2, "BD": d, "NW": 8, "R": vec, "ES": 2, "HAS_ONORM": False, "SAVE_OPRE": False},
               ("L", "D", "eps", "scale", "BT", "BD", "NW", "R", "ES", "HAS_ONORM", "SAVE_OPRE"),
               (n // 2,), 8, "fla")
    dv = Case("fla", FLA_FILE, "attnres_bwd_kernel_dv_gluon",
              {"q": fp16(d), "res": Tensors(L, fp16(n, d)), "w": fp16(d), "ow": None, "o_pre": None,
               "rstd": fp32(L, n, init="rstd"), "logit": fp32(L, n), "lse": fp32(n), "do": fp16(n, d),
               "dres": Tensors(L, fp16(n, d, out=True)), "dqw": fp32(np_, d, out=True), "dow_partial": None,
               "N": n, "L": L, "D": d, **common, "G": GROUP, "BT": 2, "BD": d, "NW": 8, "R": vec, "ES": 2,
               "HAS_ONORM": False, "SAVE_OPRE": False},
              ("L", "D", "eps", "scale", "G", "BT", "BD", "NW", "R", "ES", "HAS_ONORM", "SAVE_OPRE"),
              (np_,), 8, "fla")
    dqdw = Case("fla", FLA_FILE, "attnres_bwd_kernel_dqdw_gluon",
                {"q": fp16(d), "w": fp16(d), "dqw": fp32(np_, d), "dow_partial": None, "dq": fp16(d, out=True),
                 "dw": fp16(d, out=True), "dow": None, "NP": np_, "D": d, "BN": 512, "BD": 64, "NW": 4,
                 "HAS_ONORM": False},
                ("D", "BN", "BD", "NW", "HAS_ONORM"), (d // 64,), 4, "fla")
    return [fwd, dv, dqdw]


def _viz_cases() -> list[Case]:
    def matrix(m, n, **k):
        return Tensor((m, n), "fp32", **k)
    m = 8192
    copy = Case("triton-viz", VIZ_FILE, "_masked_2d_memcpy_kernel",
                {"in_ptr": matrix(m, m), "out_ptr": matrix(m, m, out=True, init="empty"), "xnumel": m, "ynumel": m,
                 "xstride_in": m, "ystride_in": 1, "xstride_out": m, "ystride_out": 1, "layout": Layout(_ROWS_4),
                 "XBLOCK": 64, "YBLOCK": 128},
                ("layout", "XBLOCK", "YBLOCK"), (m // 64, m // 128), 4, "exact")
    n = 1 << 26
    copy_1d = Case("triton-viz", VIZ_FILE, "_masked_1d_memcpy_kernel",
                   {"in_ptr": Tensor((n,), "fp32"), "out_ptr": Tensor((n,), "fp32", out=True, init="empty"),
                    "xnumel": n, "BLOCK": 1024, "layout": Layout(_ONE_WARP)},
                   ("BLOCK", "layout"), (n // 1024,), 1, "exact")
    cp_copy = Case("triton-viz", VIZ_FILE, "_async_copy_1d_kernel",
                   {"in_ptr": Tensor((n,), "fp32"), "out_ptr": Tensor((n,), "fp32", out=True, init="empty"),
                    "xnumel": n, "BLOCK": 2048},
                   ("BLOCK",), (n // 2048,), 4, "exact")
    rows = 16384
    cols = 256
    cp_add = Case("triton-viz", VIZ_FILE, "_async_copy_elementwise_add_kernel",
                  {"a_ptr": matrix(rows, cols), "b_ptr": matrix(rows, cols),
                   "out_ptr": matrix(rows, cols, out=True, init="empty"), "xnumel": rows, "ynumel": cols,
                   "xstride_a": cols, "ystride_a": 1, "xstride_b": cols, "ystride_b": 1, "xstride_out": cols,
                   "ystride_out": 1, "XBLOCK": 32, "YBLOCK": cols, "smem_layout": Layout(_SMEM)},
                  ("XBLOCK", "YBLOCK", "smem_layout"), (rows // 32,), 4, "exact")
    return [copy_1d, copy, cp_copy, cp_add]


def cases() -> list[Case]:
    return _fla_cases() + _viz_cases()


def layout_value(expression: str, form: str, arange: str = "coalesced"):
    """A launch's layout argument in ``form`` (the automatic form's rule applies to it too)."""
    from triton.experimental.gluon import language as gl

    from harness.peer_gluon_forms import auto_expression
    text = auto_expression(expression, arange) if form == "auto" else expression
    return eval(text, {"gl": gl})  # noqa: S307 - an expression of this file


def compile_spec(case: Case, form: str, arange: str = "coalesced"):
    """(signature, constexprs, attrs) of ``case`` for a compile without a GPU: pointers as
    ``*fp16`` / ``*fp32`` (16-byte divisible, as the JIT specializes torch's allocations), a
    tuple of pointers as a tuple, ``None`` as a constexpr, integers as ``i32`` (divisible by 16
    where they are; 1 a constant, as the JIT specializes it)."""
    signature, constexprs, attrs = {}, {}, {}
    for index, (name, value) in enumerate(case.args.items()):
        if isinstance(value, Tensor):
            signature[name] = f"*{value.dtype}"
            attrs[(index,)] = [["tt.divisibility", 16]]
        elif isinstance(value, Tensors):
            signature[name] = tuple(f"*{value.tensor.dtype}" for _ in range(value.count))
            for j in range(value.count):
                attrs[(index, j)] = [["tt.divisibility", 16]]
        elif value is None or name in case.constexprs:
            signature[name] = "constexpr"
            constexprs[name] = layout_value(value.expression, form, arange) if isinstance(value, Layout) else value
        elif value == 1:
            signature[name], constexprs[name] = "constexpr", 1
        else:
            signature[name] = "i32"
            if value % 16 == 0:
                attrs[(index,)] = [["tt.divisibility", 16]]
    return signature, constexprs, attrs


# ------------------------------------------------------------------------------ the GPU side

_TORCH_DTYPES = {"fp16": "float16", "fp32": "float32"}


def make_tensor(torch, spec: Tensor, generator):
    dtype = getattr(torch, _TORCH_DTYPES[spec.dtype])
    if spec.init == "empty":
        return torch.empty(spec.shape, dtype=dtype, device="cuda")
    values = torch.randn(spec.shape, generator=generator, device="cuda", dtype=torch.float32)
    if spec.init == "rstd":          # an RMSNorm's reciprocal: positive, about 1
        values = 1.0 + 0.1 * values.abs()
    return values.to(dtype)


def launch_arguments(case: Case, torch, form: str, arange: str = "coalesced", seed: int = 0):
    """(positional arguments, outputs {name: tensor}) of one launch; the same inputs in every mode
    and process (a seeded generator), outputs filled with NaN first where the kernel writes them."""
    generator = torch.Generator(device="cuda")
    generator.manual_seed(seed)
    args, outputs = [], {}
    for name, value in case.args.items():
        if isinstance(value, Tensor):
            t = make_tensor(torch, value, generator)
            if value.out:
                t.fill_(float("nan"))
                outputs[name] = t
            args.append(t)
        elif isinstance(value, Tensors):
            ts = tuple(make_tensor(torch, value.tensor, generator) for _ in range(value.count))
            if value.tensor.out:
                for i, t in enumerate(ts):
                    t.fill_(float("nan"))
                    outputs[f"{name}[{i}]"] = t
            args.append(ts)
        elif isinstance(value, Layout):
            args.append(layout_value(value.expression, form, arange))
        else:
            args.append(value)
    return args, outputs


def project_tolerance_ok(case: Case, torch, ours, stock) -> tuple[bool, str]:
    """Whether ``ours`` is within the project's own test tolerance of ``stock`` (see the module
    docstring), and the measure: FLA's RMS error ratio and absolute error; exact elsewhere."""
    if case.tolerance == "exact":
        return False, "differs (the project's tests ask for exact)"
    a, b = stock.float(), ours.float()
    abs_err = (a - b).abs().max().item()
    ratio = ((a - b).square().mean().sqrt() / (a.square().mean().sqrt() + 1e-8)).item()
    ok = abs_err <= 1e-6 or ratio < 0.005
    return ok, f"abs {abs_err:.3g}, ratio {ratio:.3g}"


def carried(case: Case) -> bool:
    return os.path.isfile(case.file)
