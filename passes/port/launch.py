"""The launch a port is made for: layouts depend on the warps, the block sizes and the target.

A port is made per specialization, as Triton compiles one: ``port(kernel, target="sm90",
num_warps=4, x_ptr="*fp16", n="i32", BLOCK=1024)``.  Each argument of the kernel is given by
its type (``"*fp16"``, ``"i32"``, ``"fp32"``: Triton's signature strings), by a sample value
(a torch tensor, an int, a float) or, for a ``tl.constexpr`` parameter, by its value.

Pointers and integers are compiled as a GPU launch would specialize them: divisible by 16
(``tt.divisibility``), unless ``divisible=False`` or the sample value says otherwise.  Without
that every global access compiles scalar, for Triton and Gluon alike, and the port would be
priced against a kernel no launch runs.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

# target name -> (backend, architecture, threads per warp)
TARGETS = {
    "sm80": ("cuda", 80, 32),
    "sm90": ("cuda", 90, 32),
    "sm100": ("cuda", 100, 32),
    "sm120": ("cuda", 120, 32),
    "gfx942": ("hip", "gfx942", 64),
    "gfx950": ("hip", "gfx950", 64),
}

_SCALAR_TYPES = {"i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "fp64"}


class LaunchError(ValueError):
    """A launch that names no valid specialization (the message says what is wrong)."""


def target_name(target: str) -> str:
    """``sm_90``, ``sm90``, ``cuda:90``, ``hopper`` -> ``sm90``; ``gfx942`` stays."""
    text = str(target).strip().lower().replace("_", "").replace("cuda:", "sm")
    text = {"ampere": "sm80", "hopper": "sm90", "blackwell": "sm100", "mi300": "gfx942", "mi350": "gfx950",
            "hip:gfx942": "gfx942", "hip:gfx950": "gfx950"}.get(text, text)
    if text not in TARGETS:
        raise LaunchError(f"unknown target {target!r}: give one of {', '.join(TARGETS)}")
    return text


def gpu_target(name: str):
    from triton.backends.compiler import GPUTarget
    return GPUTarget(*TARGETS[name])


@dataclass
class Launch:
    """One specialization of a kernel: what Triton compiles and what the port is made for."""

    target: str
    num_warps: int
    num_stages: int
    signature: dict = field(default_factory=dict)     # parameter -> type string or "constexpr"
    constexprs: dict = field(default_factory=dict)    # parameter -> value
    divisible: set = field(default_factory=set)       # parameters compiled as divisible by 16

    @property
    def attrs(self) -> dict:
        names = list(self.signature)
        return {(names.index(name),): [["tt.divisibility", 16]] for name in self.divisible}

    def describe(self) -> str:
        values = ", ".join(f"{k}={v!r}" for k, v in self.constexprs.items())
        return f"{self.target}, num_warps={self.num_warps}, num_stages={self.num_stages}" + (f", {values}" if values else "")


def _torch_type(value) -> str | None:
    dtype = getattr(value, "dtype", None)
    if dtype is None or not hasattr(value, "data_ptr"):
        return None
    name = str(dtype).replace("torch.", "")
    short = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64", "int8": "i8", "int16": "i16",
             "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "i1", "float8_e4m3fn": "fp8e4nv",
             "float8_e5m2": "fp8e5"}.get(name)
    if short is None:
        raise LaunchError(f"a tensor of {dtype} has no Triton pointer type the port knows")
    return "*" + short


def launch_for(kernel, target: str, num_warps: int = 4, num_stages: int = 3, divisible: bool = True,
               arguments: dict = None) -> Launch:
    """The :class:`Launch` of ``kernel`` (a ``triton.jit`` function) for ``arguments`` (a dict:
    a kernel may have parameters named ``num_warps`` or ``num_stages`` too)."""
    arguments = dict(arguments or {})
    from .translation import not_specialized
    parameters = list(inspect.signature(kernel.fn).parameters.values())
    unspecialized = not_specialized(kernel)
    constexpr_names = {parameters[i].name for i in kernel.constexprs}
    launch = Launch(target_name(target), int(num_warps), int(num_stages))
    unknown = sorted(set(arguments) - {p.name for p in parameters})
    if unknown:
        raise LaunchError(f"{kernel.fn.__name__} has no parameter {unknown[0]!r}")
    for parameter in parameters:
        name = parameter.name
        if name not in arguments:
            if parameter.default is not inspect.Parameter.empty and name in constexpr_names:
                launch.signature[name] = "constexpr"
                launch.constexprs[name] = parameter.default
                continue
            kind = "constexpr" if name in constexpr_names else "argument"
            raise LaunchError(f"missing launch {kind} {name!r} of {kernel.fn.__name__} (give it as {name}=...)")
        value = arguments[name]
        if name in constexpr_names:
            launch.signature[name] = "constexpr"
            launch.constexprs[name] = value
            continue
        if value is None:
            # a launch specializes None as the constant None (an optional pointer left out)
            launch.signature[name] = "constexpr"
            launch.constexprs[name] = None
            continue
        if isinstance(value, int) and not isinstance(value, bool) and value == 1 and name not in unspecialized:
            # a launch specializes an integer equal to 1 as the constant 1 (a unit stride)
            launch.signature[name] = "constexpr"
            launch.constexprs[name] = 1
            continue
        launch.signature[name], divides = _argument_type(name, value)
        if divisible and divides and name not in unspecialized:
            launch.divisible.add(name)
    if launch.num_warps < 1 or launch.num_warps & (launch.num_warps - 1):
        raise LaunchError(f"num_warps must be a power of two, not {num_warps}")
    return launch


def _argument_type(name: str, value) -> tuple[str, bool]:
    """(type string, may be divisible by 16) of one runtime argument."""
    if (isinstance(value, str) and value.strip().startswith("tensordesc")) or type(value).__name__ == "TensorDescriptor":
        raise LaunchError(f"argument {name!r} is a tensor descriptor made on the host (TensorDescriptor), which the "
                          "port does not write yet: Gluon's carry their shared layout from the host")
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("*") and (text[1:] in _SCALAR_TYPES or text[1:].startswith("fp8")):
            return text, True
        if text in _SCALAR_TYPES:
            return text, text[0] in "iu" and text != "i1"
        raise LaunchError(f"argument {name!r}: {value!r} is not a Triton type (e.g. '*fp16', 'i32', 'fp32')")
    pointer = _torch_type(value)
    if pointer is not None:
        return pointer, value.data_ptr() % 16 == 0
    if isinstance(value, bool):
        return "i1", False
    if isinstance(value, int):
        return ("i32" if -2**31 <= value < 2**31 else "i64"), value % 16 == 0
    if isinstance(value, float):
        return "fp32", False
    raise LaunchError(f"argument {name!r}: cannot tell a type from {type(value).__name__} (give a type string such as 'i32')")
