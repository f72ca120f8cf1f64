"""Real third-party Triton kernels, each with one realistic launch: the corpus of ``port_gpu.py``.

    from harness.port_corpus import CASES, cpu_launch   # (benchmarks/ on sys.path, as for every script)
    case = CASES[0]
    kernel = case.kernel()                           # the @triton.jit function (autotune/heuristics unwrapped)
    arguments = case.launch("cuda")                  # tensors (seeded) + scalars + constexprs, by name
    kernel[case.grid](**arguments, **case.options(kernel))
    port(kernel, "sm100", num_warps=case.num_warps, **cpu_launch(case))   # no torch, no GPU

The kernels are the projects' own files, pinned and unmodified, in ``benchmarks/port_corpus/``
(where each comes from, its licence, and what was left out: ``port_corpus/SOURCES.md``):
Triton's tutorials (``triton_tutorials.py``: the tutorials' kernel definitions, verbatim),
Liger-Kernel 0.8.5 (its wheel, ``port_corpus/wheels/``, unpacked once into a temporary folder)
and flash-linear-attention 0.5.2 at bc3b101 (``port_corpus/fla/``, the files its kernels need; its
block-pointer kernels from 7e46dff, before FLA moved off block pointers).  A case whose kernel a
Triton release cannot compile (block pointers: 3.9 and later) says so in ``triton_below``;
``compiles_under`` tells, and ``port_gpu.py`` leaves such a case out under that release.

Each case gives its launch as the project's own wrapper makes it (the wrapper's block sizes and
warps; an autotuned kernel gets one of its own configurations, named in ``note``), with sizes
such that one launch reads or writes tens of megabytes (>= ~20 us on an H100) where the kernel
allows.  ``outputs`` are the tensors it writes; ``tol`` is ``(atol, rtol)`` where a reduction's
order may differ between two compiles (atomics), ``None`` for bit-for-bit.

Imports: torch only in ``Case.make`` / ``Case.launch``.  The projects' modules import torch at
their top; where torch is missing (a CPU machine making ports for any target) they are loaded
statement by statement and what fails for want of torch is left out (``_Loader``): the kernels
(``@triton.jit`` functions; when a decorator around one fails, the function under its bare
``triton.jit``) are all there, and nothing the kernels use needs torch.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import math
import os
import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "port_corpus")
WHEELS = os.path.join(CORPUS, "wheels")
SM_COUNT = 132          # H100 SXM / H200: the grid of the kernels that launch one program per SM

# --------------------------------------------------------------------------- loading the sources

# Packages whose __init__ is not run: they import every op of the project (and, for liger, pick a
# backend for the device); the kernels' own modules are all the corpus needs.
_SKIP_INIT = {"liger_kernel", "liger_kernel.ops", "fla", "fla.ops", "fla.modules", "fla.ops.utils"}


def _wheel_root() -> str:
    """The carried wheels unpacked into one folder (once per content; kept in the temp folder)."""
    names = sorted(n for n in os.listdir(WHEELS) if n.endswith(".whl"))
    digest = hashlib.sha256()
    for name in names:
        with open(os.path.join(WHEELS, name), "rb") as handle:
            digest.update(handle.read())
    root = os.path.join(tempfile.gettempdir(), f"port_corpus_wheels_{digest.hexdigest()[:12]}")
    if not os.path.isdir(root):
        partial = tempfile.mkdtemp(prefix="port_corpus_unpack_")
        for name in names:
            with zipfile.ZipFile(os.path.join(WHEELS, name)) as wheel:
                wheel.extractall(partial)
        try:
            os.rename(partial, root)
        except OSError:              # another process got there first
            shutil.rmtree(partial, ignore_errors=True)
    return root


def _has_torch() -> bool:
    return importlib.util.find_spec("torch") is not None


class _Loader(importlib.machinery.SourceFileLoader):
    """A corpus module: run as Python runs it, or (``tolerant``, no torch) one top-level statement
    at a time, keeping going past the statements that fail.  Line numbers and the file are the
    original's, so ``inspect.getsource`` (and Triton, and the port) read the file itself."""

    def __init__(self, fullname, path, tolerant):
        super().__init__(fullname, path)
        self.tolerant = tolerant

    def exec_module(self, module):
        if not self.tolerant:
            return super().exec_module(module)
        path = self.get_filename(self.name)
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), path)
        flags = 0
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                for alias in node.names:
                    flags |= getattr(__import__("__future__"), alias.name).compiler_flag
        skipped = module.__dict__.setdefault("__port_corpus_skipped__", [])
        for node in tree.body:
            try:
                self._run(node, module, flags)
                continue
            except Exception as error:          # noqa: BLE001 - any failure: the statement is left out
                failure = f"line {node.lineno}: {type(error).__name__}: {error}"
            bare = _bare_jit(node)
            if bare is not None:
                try:
                    self._run(bare, module, flags)
                    skipped.append(failure + " (kept under its bare @triton.jit)")
                    continue
                except Exception:               # noqa: BLE001
                    pass
            skipped.append(failure)

    def _run(self, node, module, flags):
        code = compile(ast.Module(body=[node], type_ignores=[]), self.get_filename(self.name), "exec",
                       flags=flags, dont_inherit=True)
        exec(code, module.__dict__)


def _bare_jit(node):
    """A decorated function with only its ``triton.jit`` decorator, or None."""
    if not isinstance(node, ast.FunctionDef):
        return None
    jits = [d for d in node.decorator_list if "jit" in ast.unparse(d)]
    if not jits or len(jits) == len(node.decorator_list):
        return None
    copy = ast.FunctionDef(name=node.name, args=node.args, body=node.body, decorator_list=jits[-1:],
                           returns=node.returns, type_comment=node.type_comment,
                           **({"type_params": node.type_params} if hasattr(node, "type_params") else {}))
    return ast.copy_location(copy, node)


class _EmptyPackage(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if module.__name__ == "fla":      # fla.utils reads the package's version
            module.__version__ = "0.5.2"
        elif module.__name__ == "fla.ops.utils":
            module.__getattr__ = _fla_ops_utils_name


def _fla_ops_utils_name(name):
    """``from fla.ops.utils import prepare_chunk_indices`` (``gla/chunk.py``, ``common/chunk_h.py``):
    FLA's ``fla/ops/utils/__init__.py`` re-exports ``index.py``'s ``prepare_*`` helpers; the empty
    package takes them from ``index.py`` when asked."""
    if name.startswith("prepare_"):
        return getattr(importlib.import_module("fla.ops.utils.index"), name)
    raise AttributeError(f"module 'fla.ops.utils' has no attribute {name!r}")


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the corpus's top-level names in their carried folders (before any installed copy)."""

    def __init__(self, roots, tolerant):
        self.roots, self.tolerant = roots, tolerant

    def find_spec(self, fullname, path=None, target=None):
        root = self.roots.get(fullname.split(".")[0])
        if root is None:
            return None
        base = os.path.join(root, *fullname.split("."))
        if os.path.isdir(base):
            init = os.path.join(base, "__init__.py")
            if fullname in _SKIP_INIT or not os.path.isfile(init):
                spec = importlib.machinery.ModuleSpec(fullname, _EmptyPackage(), is_package=True)
                spec.submodule_search_locations = [base]
                return spec
            return importlib.util.spec_from_file_location(fullname, init, loader=_Loader(fullname, init, self.tolerant),
                                                          submodule_search_locations=[base])
        if os.path.isfile(base + ".py"):
            return importlib.util.spec_from_file_location(fullname, base + ".py",
                                                          loader=_Loader(fullname, base + ".py", self.tolerant))
        return None


_FINDER = None


def install() -> _Finder:
    """Make the corpus importable (idempotent): ``triton_tutorials``, ``liger_kernel``, ``fla``."""
    global _FINDER
    if _FINDER is None:
        wheels = _wheel_root()
        roots = {"triton_tutorials": CORPUS, "fla": CORPUS, "liger_kernel": wheels}
        if importlib.util.find_spec("packaging") is None:      # liger and fla import it at their top
            roots["packaging"] = wheels
        _FINDER = _Finder(roots, not _has_torch())
        sys.meta_path.insert(0, _FINDER)
    return _FINDER


def load_kernel(module: str, name: str):
    """The ``triton.jit`` function ``module.name``, under any ``@triton.autotune`` / ``@triton.heuristics``."""
    install()
    from triton.runtime.jit import JITFunction
    found = getattr(importlib.import_module(module), name)
    for _ in range(8):
        if isinstance(found, JITFunction):
            return found
        found = found.fn
    raise TypeError(f"{module}.{name} is not a @triton.jit function")


# --------------------------------------------------------------------------- the cases

_TORCH_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "i32": "int32", "i64": "int64",
                 "u8": "uint8"}


@dataclass(frozen=True)
class T:
    """A tensor argument: shape, dtype (Triton's short name) and how it is filled: ``randn``,
    ``rand`` (in [0.5, 1.5): a positive scale such as 1/std), ``zeros``, ``ones``, ``logp`` (rows
    of log-probabilities), ``p`` (rows of probabilities), ``randint:LO:HI``, ``full:V``."""
    shape: tuple
    dtype: str = "fp32"
    init: str = "randn"

    def make(self, device, generator):
        import torch
        dtype = getattr(torch, _TORCH_DTYPES[self.dtype])
        kind, *rest = self.init.split(":")
        if kind == "randint":
            return torch.randint(int(rest[0]), int(rest[1]), self.shape, generator=generator, device=device, dtype=dtype)
        if kind == "full":
            return torch.full(self.shape, float(rest[0]) if "." in rest[0] else int(rest[0]), device=device, dtype=dtype)
        if kind in ("zeros", "ones"):
            return getattr(torch, kind)(self.shape, device=device, dtype=dtype)
        x = torch.randn(self.shape, generator=generator, device=device, dtype=torch.float32)
        if kind == "rand":
            x = torch.rand(self.shape, generator=generator, device=device, dtype=torch.float32) + 0.5
        elif kind == "logp":
            x = torch.log_softmax(x, dim=-1)
        elif kind == "p":
            x = torch.softmax(x, dim=-1)
        return x.to(dtype)


@dataclass(frozen=True)
class TL:
    """A ``tl`` attribute as a constexpr value (``TL("bfloat16")``), resolved when launched."""
    name: str

    def value(self):
        import triton.language as tl
        return getattr(tl, self.name)


@dataclass
class Case:
    name: str
    project: str                 # triton-tutorials, liger-kernel, flash-linear-attention
    module: str
    function: str
    tensors: dict                # argument -> T
    scalars: dict                # argument -> int / float / None (runtime arguments)
    constexprs: dict             # argument -> value (TL for a tl.dtype)
    grid: tuple
    num_warps: int = 4
    num_stages: int = 3
    outputs: tuple = ()
    tol: tuple | None = None     # (atol, rtol); None: bit for bit
    note: str = ""
    seed: int = 0
    triton_below: str = ""       # the first Triton release that cannot compile the kernel ("3.9": block pointers)
    _kernel: object = field(default=None, repr=False, compare=False)

    def kernel(self):
        """The ``@triton.jit`` function (imported on first use)."""
        if self._kernel is None:
            self._kernel = load_kernel(self.module, self.function)
        return self._kernel

    def make(self, device) -> dict:
        """The tensor arguments, filled from the case's seed."""
        import torch
        generator = torch.Generator(device=device)
        generator.manual_seed(self.seed)
        return {name: spec.make(device, generator) for name, spec in self.tensors.items()}

    def constexpr_values(self) -> dict:
        return {k: (v.value() if isinstance(v, TL) else v) for k, v in self.constexprs.items()}

    def launch(self, device) -> dict:
        """Every argument of the kernel by name: tensors (fresh), scalars, constexprs."""
        return {**self.make(device), **self.scalars, **self.constexpr_values()}

    def options(self, kernel=None) -> dict:
        """``num_warps`` / ``num_stages`` for the launch line, less any that is a kernel parameter
        (the fused-softmax tutorial's kernel has a constexpr ``num_stages``)."""
        import inspect
        names = set(inspect.signature((kernel or self.kernel()).fn).parameters)
        return {k: v for k, v in (("num_warps", self.num_warps), ("num_stages", self.num_stages)) if k not in names}


def compiles_under(case: Case, version: str) -> bool:
    """Whether Triton ``version`` (``triton.__version__``) compiles the case's kernel: every release
    before the case's ``triton_below``."""
    def release(text):
        return tuple(int(part) for part in text.split("+")[0].split(".")[:2])
    return not case.triton_below or release(version) < release(case.triton_below)


def cpu_launch(case: Case, int_types: bool = False) -> dict:
    """The port's launch arguments without torch: a type string for each tensor (``"*bf16"``),
    each scalar as its value (an int's value decides its divisibility by 16 as a GPU launch's
    does; ``int_types=True``: ``"i32"``/``"i64"``/``"fp32"`` instead), each constexpr's value."""
    arguments = {name: "*" + spec.dtype for name, spec in case.tensors.items()}
    for name, value in case.scalars.items():
        if int_types and isinstance(value, bool):
            value = "i1"
        elif int_types and isinstance(value, int):
            value = "i32" if -2**31 <= value < 2**31 else "i64"
        elif int_types and isinstance(value, float):
            value = "fp32"
        arguments[name] = value
    arguments.update(case.constexpr_values())
    return arguments


def _p2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _cases() -> list:
    cases = []
    add = cases.append
    TT, LG, FL = "triton-tutorials", "liger-kernel", "flash-linear-attention"
    tut = "triton_tutorials"

    # ---------------------------------------------------------------- Triton's tutorials
    n = 1 << 25
    add(Case("tutorial_vector_add", TT, tut, "add_kernel",
             {"x_ptr": T((n,)), "y_ptr": T((n,)), "output_ptr": T((n,), init="zeros")},
             {"n_elements": n}, {"BLOCK_SIZE": 1024}, (_cdiv(n, 1024),), 4, 3, ("output_ptr",)))
    M, N = 8192, 4096
    add(Case("tutorial_fused_softmax", TT, tut, "softmax_kernel",
             {"output_ptr": T((M, N), init="zeros"), "input_ptr": T((M, N))},
             {"input_row_stride": N, "output_row_stride": N, "n_rows": M, "n_cols": N},
             {"BLOCK_SIZE": N, "num_stages": 4}, (4 * SM_COUNT,), 8, 4, ("output_ptr",),
             note="persistent: 4 programs an SM (the tutorial's occupancy on an H100), num_stages=4 as on >200 KB of shared memory"))
    add(Case("tutorial_matmul", TT, tut, "matmul_kernel",
             {"a_ptr": T((4096, 4096), "fp16"), "b_ptr": T((4096, 4096), "fp16"), "c_ptr": T((4096, 4096), "fp16", "zeros")},
             {"M": 4096, "N": 4096, "K": 4096, "stride_am": 4096, "stride_ak": 1, "stride_bk": 4096, "stride_bn": 1,
              "stride_cm": 4096, "stride_cn": 1},
             {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8, "ACTIVATION": ""},
             (_cdiv(4096, 128) * _cdiv(4096, 256),), 8, 3, ("c_ptr",), (1e-2, 1e-2),
             note="the first CUDA autotune configuration; tl.dot"))
    M, N = 8192, 4096
    add(Case("tutorial_layer_norm_fwd", TT, tut, "_layer_norm_fwd_fused",
             {"X": T((M, N), "fp16"), "Y": T((M, N), "fp16", "zeros"), "W": T((N,), "fp16", "rand"), "B": T((N,), "fp16"),
              "Mean": T((M,), init="zeros"), "Rstd": T((M,), init="zeros")},
             {"stride": N, "N": N, "eps": 1e-5}, {"BLOCK_SIZE": 4096}, (M,), 8, 3, ("Y", "Mean", "Rstd"), (1e-3, 1e-3)))
    G = 128
    add(Case("tutorial_layer_norm_bwd_dx", TT, tut, "_layer_norm_bwd_dx_fused",
             {"DX": T((M, N), "fp16", "zeros"), "DY": T((M, N), "fp16"), "DW": T((G, N), "fp16", "zeros"),
              "DB": T((G, N), "fp16", "zeros"), "X": T((M, N), "fp16"), "W": T((N,), "fp16", "rand"), "Mean": T((M,)),
              "Rstd": T((M,), init="rand"), "Lock": T((2 * G,), "i32", "zeros")},
             {"stride": N, "N": N}, {"GROUP_SIZE_M": G, "BLOCK_SIZE_N": 4096}, (M,), 8, 3, ("DX", "DW", "DB"), (0.25, 0.05),
             note="DW/DB: fp16 partial sums taken under a spin lock, in whichever order programs arrive"))
    add(Case("tutorial_layer_norm_bwd_dwdb", TT, tut, "_layer_norm_bwd_dwdb",
             {"DW": T((G, N), "fp16"), "DB": T((G, N), "fp16"), "FINAL_DW": T((N,), "fp16", "zeros"),
              "FINAL_DB": T((N,), "fp16", "zeros")},
             {"M": G, "N": N}, {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128}, (_cdiv(N, 128),), 4, 3, ("FINAL_DW", "FINAL_DB"),
             (1e-2, 1e-3), note="2 MB: a few microseconds whatever the size of the layer norm"))

    # ---------------------------------------------------------------- Liger-Kernel 0.8.5
    lg = "liger_kernel.ops."
    M, N = 8192, 4096
    add(Case("liger_rms_norm_fwd", LG, lg + "rms_norm", "_rms_norm_forward_kernel",
             {"Y_ptr": T((M, N), "bf16", "zeros"), "X_ptr": T((M, N), "bf16"), "W_ptr": T((N,), "bf16", "rand"),
              "RSTD_ptr": T((M,), init="zeros")},
             {"Y_row_stride": N, "X_row_stride": N, "W_row_stride": 1, "RSTD_row_stride": 1, "n_cols": N, "eps": 1e-6,
              "offset": 0.0},
             {"casting_mode": 0, "elementwise_affine": True, "BLOCK_SIZE": 4096}, (M,), 8, 3, ("Y_ptr", "RSTD_ptr"),
             note="casting_mode llama"))
    rows = math.ceil(M / SM_COUNT)
    add(Case("liger_rms_norm_bwd", LG, lg + "rms_norm", "_rms_norm_backward_kernel",
             {"dY_ptr": T((M, N), "bf16"), "dX_ptr": T((M, N), "bf16", "zeros"), "X_ptr": T((M, N), "bf16"),
              "W_ptr": T((N,), "bf16", "rand"), "RSTD_ptr": T((M,), init="rand"), "dW_ptr": T((SM_COUNT, N), init="zeros")},
             {"dY_row_stride": N, "dX_row_stride": N, "X_row_stride": N, "W_row_stride": 1, "RSTD_row_stride": 1,
              "dW_row_stride": N, "n_rows": M, "n_cols": N, "offset": 0.0, "rows_per_program": rows},
             {"X_dtype": TL("bfloat16"), "casting_mode": 0, "elementwise_affine": True, "BLOCK_SIZE": 4096,
              "COMPUTE_DW": True}, (SM_COUNT,), 8, 3, ("dX_ptr", "dW_ptr")))
    Mb, Nb = 262144, 128
    add(Case("liger_block_rms_norm_fwd", LG, lg + "rms_norm", "_block_rms_norm_forward_kernel",
             {"Y_ptr": T((Mb, Nb), "bf16", "zeros"), "X_ptr": T((Mb, Nb), "bf16"), "W_ptr": T((Nb,), "bf16", "rand"),
              "RSTD_ptr": T((Mb,), init="zeros")},
             {"Y_row_stride": Nb, "X_row_stride": Nb, "W_row_stride": 1, "RSTD_row_stride": 1, "n_rows": Mb, "n_cols": Nb,
              "eps": 1e-6, "offset": 0.0},
             {"casting_mode": 0, "elementwise_affine": True, "BLOCK_SIZE": 128, "BLOCK_ROW": 16}, (_cdiv(Mb, 16),), 4, 3,
             ("Y_ptr", "RSTD_ptr"), note="the row-block kernel liger takes for narrow rows"))
    add(Case("liger_layer_norm_fwd", LG, lg + "layer_norm", "_layer_norm_forward_kernel",
             {"Y_ptr": T((M, N), "bf16", "zeros"), "X_ptr": T((M, N), "bf16"), "W_ptr": T((N,), "bf16", "rand"),
              "B_ptr": T((N,), "bf16"), "Mean_ptr": T((M,), init="zeros"), "RSTD_ptr": T((M,), init="zeros")},
             {"Y_row_stride": N, "X_row_stride": N, "W_row_stride": 1, "B_row_stride": 1, "Mean_row_stride": 1,
              "RSTD_row_stride": 1, "n_cols": N, "eps": 1e-6},
             {"BLOCK_SIZE": 4096}, (M,), 8, 3, ("Y_ptr", "Mean_ptr", "RSTD_ptr")))
    add(Case("liger_layer_norm_bwd", LG, lg + "layer_norm", "_layer_norm_backward_kernel",
             {"X_ptr": T((M, N), "bf16"), "W_ptr": T((N,), "bf16", "rand"), "Mean_ptr": T((M,)),
              "RSTD_ptr": T((M,), init="rand"), "DX_ptr": T((M, N), "bf16", "zeros"),
              "DW_ptr": T((SM_COUNT, N), init="zeros"), "DB_ptr": T((SM_COUNT, N), init="zeros"), "DY_ptr": T((M, N), "bf16")},
             {"stride_x": N, "stride_mean": 1, "stride_rstd": 1, "stride_dx": N, "stride_dw": N, "stride_db": N,
              "stride_dy": N, "n_rows": M, "n_cols": N},
             {"rows_per_program": rows, "BLOCK_SIZE": 4096, "COMPUTE_DW": True, "COMPUTE_DB": True}, (SM_COUNT,), 8, 3,
             ("DX_ptr", "DW_ptr", "DB_ptr")))
    Ms, Ns = 4096, 11008
    for name, fn, first in (("liger_swiglu_fwd", "_swiglu_forward_kernel", None),
                            ("liger_swiglu_bwd", "_swiglu_backward_kernel", "dc_ptr")):
        tensors = ({"a_ptr": T((Ms, Ns), "bf16"), "b_ptr": T((Ms, Ns), "bf16"), "c_ptr": T((Ms, Ns), "bf16", "zeros")}
                   if first is None else
                   {"dc_ptr": T((Ms, Ns), "bf16"), "a_ptr": T((Ms, Ns), "bf16"), "b_ptr": T((Ms, Ns), "bf16")})
        add(Case(name, LG, lg + "swiglu", fn, tensors, {"stride": Ns, "gate_multiplier": 1.0},
                 {"n_cols": Ns, "BLOCK_SIZE": 16384}, (Ms,), 16, 3,
                 ("c_ptr",) if first is None else ("a_ptr", "b_ptr"), note="LLaMA-7B MLP width"))
    for name, fn, fwd in (("liger_geglu_fwd", "_geglu_tanh_forward_kernel", True),
                          ("liger_geglu_bwd", "_geglu_tanh_backward_kernel", False)):
        tensors = ({"a": T((Ms, Ns), "bf16"), "b": T((Ms, Ns), "bf16"), "c": T((Ms, Ns), "bf16", "zeros")} if fwd else
                   {"dc": T((Ms, Ns), "bf16"), "a": T((Ms, Ns), "bf16"), "b": T((Ms, Ns), "bf16")})
        add(Case(name, LG, lg + "geglu", fn, tensors, {"stride": Ns}, {"n_cols": Ns, "BLOCK_SIZE": 16384}, (Ms,), 16, 3,
                 ("c",) if fwd else ("a", "b")))
    bs, sl, nqh, nkh, hd = 4, 2048, 32, 8, 128
    for name, backward in (("liger_rope_fwd", False), ("liger_rope_bwd", True)):
        add(Case(name, LG, lg + "rope", "_triton_rope",
                 {"q_ptr": T((bs, sl, nqh, hd), "bf16"), "k_ptr": T((bs, sl, nkh, hd), "bf16"),
                  "cos": T((1, sl, hd), "bf16"), "sin": T((1, sl, hd), "bf16")},
                 {"q_row_stride": nqh * hd, "k_row_stride": nkh * hd, "cos_row_stride": hd, "sin_row_stride": hd, "sl": sl},
                 {"bs": bs, "cos_bs": 1, "n_qh": nqh, "n_kh": nkh, "hd": hd, "pad_n_qh": nqh, "pad_n_kh": nkh, "pad_hd": hd,
                  "pad_rd": hd, "rd": hd, "BLOCK_SIZE": nqh, "BACKWARD_PASS": backward},
                 (bs * sl,), 4, 3, ("q_ptr", "k_ptr"), (2.0 ** -3, 2.0 ** -7),
                 note="LLaMA-3-8B heads, q and k rotated in place; bf16 arithmetic: the port has the original's "
                      "instruction mix (40 fma.rn.bf16, 20 neg.bf16) but LLVM may fuse the other product of "
                      "k1*cos - k2*sin, one bf16 ulp (seen: k differs by 0.125 at most, q bit for bit)"))
    BT, V = 2048, 32000
    add(Case("liger_cross_entropy", LG, lg + "cross_entropy", "liger_cross_entropy_kernel",
             {"X_ptr": T((BT, V), "bf16"), "Y_ptr": T((BT,), "i64", f"randint:0:{V}"), "weight_ptr": T((V,), init="rand"),
              "loss_ptr": T((BT,), "bf16", "zeros"), "z_loss_ptr": T((BT,), "bf16", "zeros"),
              "token_accuracy_ptr": T((BT,), init="zeros"), "predicted_tokens_ptr": T((BT,), "i64", "full:-1")},
             {"X_stride": V, "Y_stride": 1, "loss_stride": 1, "token_accuracy_stride": 1, "predicted_tokens_stride": 1,
              "n_cols": V, "n_non_ignore": BT, "sum_non_ignore_weight": float(BT), "weight_sum": float(V),
              "ignore_index": -100, "softcap": 30.0},
             {"lse_square_scale": 1e-4, "label_smoothing": 0.1, "reduction": "mean", "RETURN_Z_LOSS": True,
              "RETURN_TOKEN_ACCURACY": True, "RETURN_PREDICTED_TOKENS": True, "BLOCK_SIZE": 32768, "HAS_WEIGHT": True,
              "HAS_SOFTCAPPING": True, "HAS_GRADIENTS": True},
             (BT,), 32, 3, ("X_ptr", "loss_ptr", "z_loss_ptr", "token_accuracy_ptr", "predicted_tokens_ptr"), (1e-2, 1e-2),
             note="every option on: class weights, z-loss, label smoothing, softcap, accuracy, predicted tokens; "
                  "the gradient written over the logits"))
    add(Case("liger_softmax_fwd", LG, lg + "softmax", "_softmax_single_block_forward_kernel",
             {"Y_ptr": T((M, N), "bf16", "zeros"), "X_ptr": T((M, N), "bf16")},
             {"Y_row_stride": N, "X_row_stride": N, "n_cols": N}, {"BLOCK_SIZE": 4096}, (M,), 8, 3, ("Y_ptr",)))
    add(Case("liger_softmax_bwd", LG, lg + "softmax", "_softmax_single_block_backward_kernel",
             {"dy_ptr": T((M, N), "bf16"), "y_ptr": T((M, N), "bf16", "p"), "dx_ptr": T((M, N), "bf16", "zeros")},
             {"dy_stride": N, "y_stride": N, "dx_stride": N, "n_cols": N}, {"BLOCK_SIZE": 4096}, (M,), 8, 3, ("dx_ptr",)))
    add(Case("liger_dyt_fwd", LG, lg + "dyt", "_dyt_fwd_kernel",
             {"X": T((M, N), "bf16"), "Y": T((M, N), "bf16", "zeros"), "Alpha": T((1,), "bf16", "rand"),
              "Gamma": T((N,), "bf16", "rand"), "Beta": T((N,), "bf16")},
             {}, {"HAVE_BETA": True, "N": N, "BLOCK_N": 1024}, (_cdiv(N, 1024), M), 4, 1, ("Y",),
             note="autotuned: its first configuration (BLOCK_N=1024, 4 warps, 1 stage)"))
    BT, V = 4096, 32000
    add(Case("liger_kl_div_fwd", LG, lg + "kl_div", "_kldiv_kernel_forward",
             {"y_ptr": T((BT, V), init="logp"), "gt_ptr": T((BT, V), init="p"), "loss_ptr": T((BT, V), init="zeros")},
             {"y_stride": V, "gt_stride": V, "loss_stride": V, "n_cols": V, "eps": 1e-10},
             {"BLOCK_SIZE": 16384, "reduction": 0, "log_target": False}, (BT,), 16, 3, ("loss_ptr",),
             note="reduction none"))
    add(Case("liger_kl_div_bwd", LG, lg + "kl_div", "_kldiv_kernel_backward",
             {"target_ptr": T((BT, V), init="p"), "new_grads_ptr": T((BT, V), init="zeros")},
             {"target_stride": V, "new_grads_stride": V, "n_cols": V}, {"BLOCK_SIZE": 16384, "log_target": False},
             (BT,), 16, 3, ("new_grads_ptr",)))
    BT = 2048
    add(Case("liger_jsd", LG, lg + "jsd", "_jsd_kernel",
             {"X_ptr": T((BT, V), init="logp"), "Y_ptr": T((BT, V), init="logp"), "loss_ptr": T((BT, V), init="zeros"),
              "dX_ptr": T((BT, V), init="zeros"), "label_ptr": T((BT,), "i64", f"randint:0:{V}")},
             {"X_stride": V, "Y_stride": V, "loss_stride": V, "dX_stride": V, "n_non_ignore": BT, "n_cols": V},
             {"beta": 0.5, "ignore_index": -100, "BLOCK_SIZE": 32768, "HAS_LABEL": True}, (BT,), 4, 3,
             ("loss_ptr", "dX_ptr"), (1e-5, 1e-4)))
    B, C, Gn, HW = 32, 512, 32, 4096
    hidden = C // Gn * HW
    add(Case("liger_group_norm_fwd", LG, lg + "group_norm", "_group_norm_forward_kernel",
             {"Y_ptr": T((B, Gn, hidden), init="zeros"), "X_ptr": T((B, Gn, hidden)), "Mean_ptr": T((B, Gn), init="zeros"),
              "RSTD_ptr": T((B, Gn), init="zeros"), "W_ptr": T((C,), init="rand"), "B_ptr": T((C,))},
             {"Y_row_stride": Gn * hidden, "Y_col_stride": hidden, "X_row_stride": Gn * hidden, "X_col_stride": hidden,
              "Mean_row_stride": Gn, "Mean_col_stride": 1, "RSTD_row_stride": Gn, "RSTD_col_stride": 1,
              "hidden_size": hidden, "channels_per_group": C // Gn, "eps": 1e-6},
             {"BLOCK_SIZE": 16384}, (B, Gn), 4, 3, ("Y_ptr", "Mean_ptr", "RSTD_ptr"), (1e-4, 1e-4),
             note="32 images of 512 channels, 64x64, 32 groups"))

    # ---------------------------------------------------------------- flash-linear-attention 0.5.2
    T_, D = 8192, 4096
    add(Case("fla_l2norm_fwd_wide", FL, "fla.modules.l2norm", "l2norm_fwd_kernel1",
             {"x": T((T_, D), "bf16"), "y": T((T_, D), "bf16", "zeros"), "rstd": T((T_,), init="zeros")},
             {"eps": 1e-6, "D": D}, {"BD": D}, (T_,), 8, 3, ("y", "rstd"), note="autotuned over warps: 8 of them"))
    add(Case("fla_l2norm_bwd_wide", FL, "fla.modules.l2norm", "l2norm_bwd_kernel1",
             {"y": T((T_, D), "bf16"), "rstd": T((T_,), init="rand"), "dy": T((T_, D), "bf16"),
              "dx": T((T_, D), "bf16", "zeros")},
             {"eps": 1e-6, "D": D}, {"BD": D}, (T_,), 8, 3, ("dx",)))
    Tn, Dn = 2 * 16 * 8192, 128
    add(Case("fla_l2norm_fwd", FL, "fla.modules.l2norm", "l2norm_fwd_kernel",
             {"x": T((Tn, Dn), "bf16"), "y": T((Tn, Dn), "bf16", "zeros"), "rstd": T((Tn,), init="zeros")},
             {"eps": 1e-6, "T": Tn}, {"D": Dn, "BD": Dn, "NB": _cdiv(Tn, 2048 * 32), "BT": 32}, (_cdiv(Tn, 32),), 4, 3,
             ("y", "rstd"), note="q/k of 16 heads of 128 over 2 x 8192 tokens; autotuned: BT=32, 4 warps"))
    x2 = (T_, D)
    el = T_ * D
    for name, fn, kind in (("fla_swish_fwd", "swish_fwd_kernel", "fwd"), ("fla_swish_bwd", "swish_bwd_kernel", "bwd"),
                           ("fla_sigmoid_fwd", "sigmoid_fwd_kernel", "fwd"),
                           ("fla_logsigmoid_fwd", "logsigmoid_fwd_kernel", "fwd_t"),
                           ("fla_swiglu_fwd", "swiglu_fwd_kernel", "glu")):
        if kind == "bwd":
            tensors = {"x": T(x2, "bf16"), "dy": T(x2, "bf16"), "dx": T(x2, "bf16", "zeros")}
            scalars = {"stride_x_row": D, "stride_dy_row": D, "stride_dx_row": D, "T": el}
            out = ("dx",)
        elif kind == "glu":
            tensors = {"x": T(x2, "bf16"), "y": T(x2, "bf16"), "z": T(x2, "bf16", "zeros")}
            scalars = {"stride_x_row": D, "stride_y_row": D, "stride_z_row": D, "T": el}
            out = ("z",)
        else:
            tensors = {"x": T(x2, "bf16"), "y": T(x2, "bf16", "zeros")}
            scalars = {"stride_x_row": D, "stride_y_row": D, **({"temperature": 1.0} if kind == "fwd_t" else {}), "T": el}
            out = ("y",)
        add(Case(name, FL, "fla.modules.activations", fn, tensors, scalars, {"D": D, "B": 4096}, (_cdiv(el, 4096),), 8, 3,
                 out, note="autotuned: B=4096, 8 warps"))
    Bc, Tc, Hc = 4, 32768, 16
    add(Case("fla_chunk_local_cumsum_scalar", FL, "fla.ops.utils.cumsum", "chunk_local_cumsum_scalar_kernel",
             {"s": T((Bc, Tc, Hc)), "o": T((Bc, Tc, Hc), init="zeros")},
             {"scale": None, "cu_seqlens": None, "chunk_indices": None, "T": Tc},
             {"B": Bc, "H": Hc, "BT": 64, "REVERSE": False, "HAS_SCALE": False, "IS_VARLEN": False},
             (_cdiv(Tc, 64), Bc * Hc), 4, 3, ("o",), (1e-5, 1e-5),
             note="the gates' cumulative sum of GLA-style ops; scale, cu_seqlens, chunk_indices None as FLA passes them"))
    Bv, Tv, Hv, Sv = 2, 8192, 16, 128
    add(Case("fla_chunk_local_cumsum_vector", FL, "fla.ops.utils.cumsum", "chunk_local_cumsum_vector_kernel",
             {"s": T((Bv, Tv, Hv, Sv)), "o": T((Bv, Tv, Hv, Sv), init="zeros")},
             {"scale": None, "cu_seqlens": None, "chunk_indices": None, "T": Tv},
             {"B": Bv, "H": Hv, "S": Sv, "BT": 64, "BS": 32, "REVERSE": False, "HAS_SCALE": False, "IS_VARLEN": False},
             (_cdiv(Sv, 32), _cdiv(Tv, 64), Bv * Hv), 4, 3, ("o",), (1e-4, 1e-5),
             note="autotuned: BS=32, 4 warps; a [BT, BS] tl.cumsum over the chunk"))

    # flash-linear-attention's block-pointer kernels (tl.make_block_ptr, boundary_check, padding_option):
    # its files as at 7e46dff, the last commit before FLA moved its GPU kernels off block pointers,
    # which Triton 3.9 removed (port_corpus/SOURCES.md); Triton 3.6-3.8 compile them.
    Bg, Tg, Hg, Kg = 2, 4096, 16, 128
    add(Case("fla_chunk_gla_fwd_A_intra", FL, "fla.ops.gla.chunk", "chunk_gla_fwd_A_kernel_intra_sub_intra",
             {"q": T((Bg, Tg, Hg, Kg), "bf16"), "k": T((Bg, Tg, Hg, Kg), "bf16"), "g": T((Bg, Tg, Hg, Kg), init="logp"),
              "A": T((Bg, Tg, Hg, 64), init="zeros")},
             {"cu_seqlens": None, "chunk_indices": None, "scale": Kg ** -0.5, "T": Tg},
             {"H": Hg, "K": Kg, "BT": 64, "BC": 16, "BK": Kg, "IS_VARLEN": False},
             (_cdiv(Tg, 64), 4, Bg * Hg), 4, 2, ("A",), (1e-4, 1e-4),
             triton_below="3.9",
             note="GLA's diagonal 16x16 blocks of the gated q k^T (K <= 256); autotuned: 4 warps, 2 stages; "
                  "two boundary-checked [BC, BK] block loads, then a row of k a step"))
    NK = 4
    add(Case("fla_chunk_gla_fwd_A_merge", FL, "fla.ops.gla.chunk", "chunk_gla_fwd_A_kernel_intra_sub_intra_merge",
             {"A": T((NK, Bg, Tg, Hg, 16)), "A2": T((Bg, Tg, Hg, 64), init="zeros")},
             {"cu_seqlens": None, "chunk_indices": None, "T": Tg},
             {"B": Bg, "H": Hg, "BT": 64, "BC": 16, "NK": NK, "IS_VARLEN": False},
             (_cdiv(Tg, 64), 4, Bg * Hg), 4, 3, ("A2",),
             triton_below="3.9",
             note="GLA's K > 256 path (K = 512: NK = 4 partial blocks summed); autotuned: 4 warps; "
                  "a block pointer made and loaded each step of the loop"))
    Na, Da = Bg * Tg, 2048
    add(Case("fla_attnres_bwd_dqdw", FL, "fla.ops.attnres.fused", "attnres_bwd_kernel_dqdw",
             {"q": T((Da,)), "w": T((Da,), init="rand"), "dqw": T((Na, Da)), "dow_partial": T((Na, Da)),
              "dq": T((Da,), init="zeros"), "dw": T((Da,), init="zeros"), "dow": T((Da,), init="zeros")},
             {"N": Na}, {"D": Da, "BN": 2048, "BD": 32, "HAS_ONORM": True},
             (_cdiv(Da, 32),), 4, 3, ("dq", "dw", "dow"), (1e-3, 1e-4),
             triton_below="3.9",
             note="attention residuals' backward, the column sums over 8192 tokens (fp32 parameters, the output "
                  "RMSNorm fused); autotuned: BN=2048, BD=32, 4 warps, 3 stages; zero-padded block loads in a loop"))
    add(Case("fla_kda_intra_token_parallel", FL, "fla.ops.kda.chunk_intra_token_parallel",
             "chunk_kda_fwd_kernel_intra_token_parallel",
             {"q": T((Bg, Tg, Hg, Kg), "bf16"), "k": T((Bg, Tg, Hg, Kg), "bf16"), "g": T((Bg, Tg, Hg, Kg), init="logp"),
              "beta": T((Bg, Tg, Hg), "bf16", "rand"), "Aqk": T((Bg, Tg, Hg, 64), "bf16", "zeros"),
              "Akk": T((Bg, Tg, Hg, 16), init="zeros")},
             {"scale": Kg ** -0.5, "cu_seqlens": None, "N": Bg, "T": Tg},
             {"H": Hg, "HV": Hg, "K": Kg, "BT": 64, "BC": 16, "BH": 4, "IS_VARLEN": False},
             (Bg * Tg, _cdiv(Hg, 4)), 4, 3, ("Aqk", "Akk"), (1e-2, 1e-2),
             triton_below="3.9",
             note="KDA's diagonal blocks, one program a token; autotuned: BH=4, 4 warps; [BH, K] and [BH] "
                  "block pointers, one made each step of the loop; Aqk in bf16"))
    # tl.dot over block pointers in a loop: the chunked linear-attention kernels' main products
    Vg, NTg = 128, _cdiv(Tg, 64)
    add(Case("fla_chunk_bwd_dh", FL, "fla.ops.common.chunk_h", "chunk_bwd_kernel_dh",
             {"q": T((Bg, Tg, Hg, Kg), "bf16"), "gk": T((Bg, Tg, Hg, Kg), init="logp"),
              "do": T((Bg, Tg, Hg, Vg), "bf16"), "dh": T((Bg, NTg, Hg, Kg, Vg), init="zeros")},
             {"g": None, "g_gamma": None, "gv": None, "dht": None, "dh0": None, "cu_seqlens": None,
              "split_offsets": None, "scale": Kg ** -0.5, "T": Tg},
             {"HQ": Hg, "H": Hg, "K": Kg, "V": Vg, "BT": 64, "BS": 64, "BK": 64, "BV": 64, "NG": 1, "USE_G": False,
              "USE_G_GAMMA": False, "USE_GK": True, "USE_GV": False, "STORE_INITIAL_STATE_GRADIENT": False,
              "USE_FINAL_STATE_GRADIENT": False, "IS_VARLEN": False, "STATE_V_FIRST": False},
             (_cdiv(Kg, 64), _cdiv(Vg, 64), Bg * Hg), 4, 2, ("dh",), (1e-2, 1e-2),
             triton_below="3.9",
             note="GLA's backward chunk states (chunk_gla_bwd's launch: gk, states in fp32, no initial or final "
                  "state); autotuned: BK=BV=64, 4 warps, 2 stages; dh += q^T do, a tl.dot each chunk from the "
                  "last; on sm100 Triton's tcgen05 keeps an operand of that dot in registers or tensor memory, "
                  "which the port does not write yet (sm80, sm90 and gfx942 port)"))
    add(Case("fla_simple_gla_fwd_h", FL, "fla.ops.common.chunk_h", "chunk_fwd_kernel_h",
             {"k": T((Bg, Tg, Hg, Kg), "bf16"), "v": T((Bg, Tg, Hg, Vg), "bf16"),
              "h": T((Bg, NTg, Hg, Kg, Vg), "bf16", "zeros"), "g": T((Bg, Tg, Hg), init="logp"),
              "ht": T((Bg, Hg, Kg, Vg), init="zeros")},
             {"g_gamma": None, "gk": None, "gv": None, "h0": None, "cu_seqlens": None, "split_offsets": None, "T": Tg},
             {"H": Hg, "K": Kg, "V": Vg, "BT": 64, "BS": 64, "BK": 64, "BV": 64, "USE_G": True, "USE_G_GAMMA": False,
              "USE_GK": False, "USE_GV": False, "USE_INITIAL_STATE": False, "STORE_FINAL_STATE": True,
              "IS_VARLEN": False, "STATE_V_FIRST": False},
             (_cdiv(Kg, 64), _cdiv(Vg, 64), Bg * Hg), 4, 2, ("h", "ht"), (1e-2, 1e-2),
             triton_below="3.9",
             note="simple GLA's chunk states (its chunk_fwd's launch: the scalar gate g, final state kept); "
                  "autotuned: BK=BV=64, 4 warps, 2 stages; h += k^T v, a tl.dot each of the 64 chunks"))
    add(Case("fla_chunk_gla_bwd_dA", FL, "fla.ops.gla.chunk", "chunk_gla_bwd_kernel_dA",
             {"v": T((Bg, Tg, Hg, Vg), "bf16"), "do": T((Bg, Tg, Hg, Vg), "bf16"), "dA": T((Bg, Tg, Hg, 64), init="zeros")},
             {"cu_seqlens": None, "chunk_indices": None, "scale": Kg ** -0.5, "T": Tg},
             {"H": Hg, "V": Vg, "BT": 64, "BV": 64, "IS_VARLEN": False},
             (NTg, Bg * Hg), 4, 2, ("dA",), (1e-2, 1e-2),
             triton_below="3.9",
             note="GLA's dA = do v^T within each chunk; autotuned: 4 warps, 2 stages; a tl.dot a step of the "
                  "loop over V"))
    add(Case("fla_parallel_simple_gla_fwd", FL, "fla.ops.simple_gla.parallel", "parallel_simple_gla_fwd_kernel",
             {"q": T((Bg, Tg, Hg, Kg), "bf16"), "k": T((Bg, Tg, Hg, Kg), "bf16"), "v": T((Bg, Tg, Hg, Vg), "bf16"),
              "g": T((Bg, Tg, Hg), init="logp"), "o": T((1, Bg, Tg, Hg, Vg), "bf16", "zeros")},
             {"attn": None, "scale": Kg ** -0.5, "cu_seqlens": None, "chunk_indices": None, "T": Tg},
             {"B": Bg, "H": Hg, "K": Kg, "V": Vg, "BT": 128, "BS": 32, "BK": 128, "BV": 128, "NV": 1,
              "OUTPUT_ATTENTIONS": False, "IS_VARLEN": False, "USE_G": True},
             (1, _cdiv(Tg, 128), Bg * Hg), 4, 2, ("o",), (1e-2, 1e-2),
             triton_below="3.9",
             note="simple GLA's parallel (attention-like) forward, as parallel_simple_gla_fwd launches it on an "
                  "H100 (BT=128, BS=32, BK=BV=128); autotuned: 4 warps, 2 stages; two loops of two tl.dot, "
                  "the diagonal block masked, the earlier blocks with a running decay; on sm100 Triton's tcgen05 "
                  "keeps an operand of a dot in registers or tensor memory, which the port does not write yet "
                  "(sm80, sm90 and gfx942 port)"))
    return cases


CASES = _cases()
