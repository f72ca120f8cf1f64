"""A port checked against its original.

On any machine: the port compiles for the target; its argument list is the original's; every
global load and store it emits is at least as wide as the original's (counted from the assembly:
as many instructions or fewer for the same kernel); the original's matrix instruction is kept;
the conversions it keeps are counted beside the original's; on NVIDIA targets, the port's
assembler warnings of lost performance (``ptxas``: a wgmma serialized) are none the original does
not have.  On a GPU, with sample tensors and a
``grid``: both kernels run on copies of the same inputs and every tensor argument is compared
afterwards (bits, or ``atol``/``rtol`` where the reduction order may differ).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

from .translation import PortError

_NVIDIA_ACCESS = re.compile(r"\b(ld|st)\.global(?:\.[a-z]+)*?(?:\.v(\d))?\.[bfsu](\d+)\b")
_CP_ASYNC = re.compile(r"\bcp\.async\.c[ag]\.shared\.global(?:\.[\w:]+)*\s+\[[^\]]*\],\s*\[[^\]]*\],\s*(0x[0-9a-fA-F]+|\d+)")
_AMD_ACCESS = re.compile(r"\b(global|buffer)_(load|store)_(?:lds_)?(dwordx(\d)|dword|short|ushort|byte|ubyte|b(\d+))\b")
_MMA = ("wgmma.mma_async", "mma.sync", "tcgen05.mma", "v_mfma", "v_wmma")


@dataclass
class Accesses:
    loads: list = field(default_factory=list)    # bytes per instruction
    stores: list = field(default_factory=list)

    def describe(self) -> str:
        def one(widths):
            if not widths:
                return "none"
            counts = {}
            for width in widths:
                counts[width] = counts.get(width, 0) + 1
            return ", ".join(f"{n} x {w} B" for w, n in sorted(counts.items(), reverse=True))
        return f"loads {one(self.loads)}; stores {one(self.stores)}"


def global_accesses(assembly: str) -> Accesses:
    """The global loads and stores of PTX or AMDGCN text, each with its width in bytes (an
    asynchronous copy global -> shared, ``cp.async``, and AMD's direct load to LDS,
    ``global_load_lds_dwordx4``, count as loads)."""
    found = Accesses()
    for kind, vector, bits in _NVIDIA_ACCESS.findall(assembly):
        (found.loads if kind == "ld" else found.stores).append(int(vector or 1) * int(bits) // 8)
    found.loads += [int(size, 0) for size in _CP_ASYNC.findall(assembly)]   # asynchronous copies to shared memory
    for _, kind, size, dwords, bits in _AMD_ACCESS.findall(assembly):
        width = int(dwords) * 4 if dwords else int(bits) // 8 if bits else {"short": 2, "ushort": 2, "byte": 1,
                                                                            "ubyte": 1}.get(size, 4)
        (found.loads if kind == "load" else found.stores).append(width)
    return found


def mma_instructions(assembly: str) -> set:
    return {name for name in _MMA if name in assembly}


def ptxas_performance_warnings(ptx: str, target: str) -> list:
    """The warnings ``ptxas -v`` (Triton's own) gives on ``ptx`` for ``target`` that say code runs
    slower than written, such as "(C7515) Potential Performance Loss: wgmma.mma_async instructions
    are serialized ..." (a wgmma's accumulator touched between its start and its wait); [] for
    targets that are not NVIDIA's."""
    import os
    import subprocess
    import tempfile

    from .launch import gpu_target
    gpu = gpu_target(target)
    if gpu.backend != "cuda" or not ptx:
        return []
    from triton.backends.nvidia.compiler import get_ptxas
    arch = f"sm_{gpu.arch}{'a' if gpu.arch >= 90 else ''}"
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "kernel.ptx")
        with open(source, "w") as handle:
            handle.write(ptx)
        done = subprocess.run([get_ptxas(gpu.arch).path, "-v", f"--gpu-name={arch}", source, "-o",
                               os.path.join(folder, "kernel.cubin")], capture_output=True, text=True)
    return [re.sub(r" in line \d+$", "", line[line.index("("):].strip()) for line in done.stderr.splitlines()
            if "Performance Loss" in line and "(" in line]


@dataclass
class PortCheck:
    compiled: bool = False
    same_arguments: bool = False
    original: Accesses = None
    ported: Accesses = None
    as_wide: bool = False
    original_mma: set = field(default_factory=set)
    ported_mma: set = field(default_factory=set)
    original_conversions: int = 0
    ported_conversions: int = 0
    slower_assembly: list = field(default_factory=list)    # ptxas warnings of the port's the original has not
    original_tma_copies: int = 0      # TMA copies (cp.async.bulk.tensor) in the assembly: a whole tile each
    ported_tma_copies: int = 0
    outputs: str = "not run (no GPU or no sample tensors)"

    @property
    def ok(self) -> bool:
        return self.compiled and self.same_arguments and self.as_wide and self.original_mma <= self.ported_mma and \
            not self.slower_assembly and not self.outputs.startswith("differ")

    def summary(self) -> str:
        lines = [f"compiled for the target: {'yes' if self.compiled else 'no'}",
                 f"same arguments as the original: {'yes' if self.same_arguments else 'no'}",
                 f"global accesses, original: {self.original.describe()}",
                 f"global accesses, port:     {self.ported.describe()}  "
                 f"({'at least as wide' if self.as_wide else 'NARROWER than the original'})",
                 f"layout conversions: original {self.original_conversions}, port {self.ported_conversions}"]
        if self.original_tma_copies or self.ported_tma_copies:
            lines.append(f"TMA copies: original {self.original_tma_copies}, port {self.ported_tma_copies}")
        if self.original_mma or self.ported_mma:
            lines.append(f"matrix instructions: original {sorted(self.original_mma)}, port {sorted(self.ported_mma)}")
        lines += [f"assembler warning of the port's, not the original's: {warning}" for warning in self.slower_assembly]
        lines.append(f"outputs: {self.outputs}")
        return "\n".join(lines)


def compile_port(source: str, kernel_name: str, launch):
    """Compile the port's source for ``launch``; (compiled kernel, the Gluon kernel object)."""
    import triton

    from .launch import gpu_target
    from .module_file import loaded_module
    try:
        from triton.experimental.gluon._runtime import GluonASTSource
    except ImportError:   # pragma: no cover
        from triton.experimental.gluon import GluonASTSource
    with loaded_module(source) as (module, _):
        kernel = gluon_function(getattr(module, kernel_name))
        compiled = triton.compile(GluonASTSource(kernel, dict(launch.signature), dict(launch.constexprs),
                                                 attrs=launch.attrs),
                                  target=gpu_target(launch.target),
                                  options={"num_warps": launch.num_warps, "num_stages": launch.num_stages})
    return compiled, kernel


def gluon_function(kernel):
    """The ``gluon.jit`` function under a port's ``@triton.autotune`` (the kernel itself if none)."""
    from triton.runtime.jit import JITFunction
    while not isinstance(kernel, JITFunction) and hasattr(kernel, "fn"):
        kernel = kernel.fn
    return kernel


def check_port(made, jit_fn, launch_arguments, grid=None, atol=None, rtol=None) -> PortCheck:
    result = PortCheck()
    launch = made.launch
    try:
        compiled, kernel = compile_port(made.source, made.kernel_name, launch)
    except Exception as error:
        lines = str(error).strip().splitlines()
        raise PortError(f"the port of {made.kernel_name} does not compile for {launch.target}: "
                        f"{lines[-1] if lines else type(error).__name__}") from None
    result.compiled = True
    result.same_arguments = list(inspect.signature(kernel.fn).parameters) == list(inspect.signature(jit_fn.fn).parameters)
    assembly = compiled.asm.get("ptx", "") or compiled.asm.get("amdgcn", "")
    result.original = global_accesses(made.original.ptx)
    result.ported = global_accesses(assembly)
    result.as_wide = (len(result.ported.loads) <= len(result.original.loads) and
                      len(result.ported.stores) <= len(result.original.stores))
    result.original_tma_copies = made.original.ptx.count("cp.async.bulk.tensor")
    result.ported_tma_copies = assembly.count("cp.async.bulk.tensor")
    result.original_mma = mma_instructions(made.original.ptx)
    result.ported_mma = mma_instructions(assembly)
    result.original_conversions = moving_conversions(made.original.ttgir)
    result.ported_conversions = moving_conversions(compiled.asm["ttgir"])
    if result.ported_mma:
        original_warnings = set(ptxas_performance_warnings(made.original.ptx, launch.target))
        result.slower_assembly = [warning for warning in ptxas_performance_warnings(assembly, launch.target)
                                  if warning not in original_warnings]
    if grid is not None:
        result.outputs = run_both(jit_fn, made.source, made.kernel_name, launch_arguments, grid, launch, atol, rtol)
    return result


def run_both(jit_fn, source, kernel_name, arguments, grid, launch, atol=None, rtol=None) -> str:
    """Run the original and the port on copies of the same tensors; compare every tensor after."""
    try:
        import torch
    except ImportError:
        return "not run (no torch)"
    if not torch.cuda.is_available():
        return "not run (no GPU)"
    from .module_file import loaded_module
    tensors = [name for name, value in arguments.items() if hasattr(value, "data_ptr")]
    if not tensors:
        return "not run (no sample tensors)"
    first = {name: (value.clone() if name in tensors else value) for name, value in arguments.items()}
    second = {name: (value.clone() if name in tensors else value) for name, value in arguments.items()}
    parameters = inspect.signature(jit_fn.fn).parameters
    options = {name: value for name, value in (("num_warps", launch.num_warps), ("num_stages", launch.num_stages))
               if name not in parameters}
    jit_fn[grid](**first, **options)
    with loaded_module(source) as (module, _):
        gluon_function(getattr(module, kernel_name))[grid](**second, **{k: v for k, v in options.items()
                                                                         if k == "num_warps"})
        torch.cuda.synchronize()
    worst = 0.0
    for name in tensors:
        a, b = first[name], second[name]
        if torch.equal(a, b):
            continue
        if atol is None and rtol is None:
            largest = (a.float() - b.float()).abs().nan_to_num(float("inf")).max().item()
            return (f"differ in {name} (bits; largest difference {largest:g}; give atol/rtol where the order "
                    "of a reduction or a fused multiply-add may differ)")
        if not torch.allclose(a.float(), b.float(), atol=atol or 0, rtol=rtol or 0, equal_nan=True):
            return f"differ in {name} beyond atol={atol} rtol={rtol}"
        worst = max(worst, (a.float() - b.float()).abs().max().item())
    return "equal (bits)" if worst == 0 else f"equal within tolerance (largest difference {worst:g})"


def moving_conversions(ttgir: str) -> int:
    """The ``ttg.convert_layout`` ops of ``ttgir`` that change a layout: one from a layout to the
    same layout (a helper converting a value that already has it) moves nothing and lowers to
    nothing."""
    count = 0
    for line in ttgir.splitlines():
        if "ttg.convert_layout" not in line:
            continue
        types = re.search(r" : (tensor<.*>) -> (tensor<.*>)(?: loc\(|$)", line)
        if types is None or types.group(1) != types.group(2):
            count += 1
    return count
