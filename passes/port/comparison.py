"""The port beside Triton's own choice and Triton's translation, priced alike.

Three kernels of one launch: the original as Triton compiles it (Triton's layouts), Triton's
own translator's Gluon (:mod:`.triton_translator`) and the port, each compiled for the target
and read back: the modelled cost of its TTGIR (the cost model the resolution and the advice
minimize: ``passes.gluon.kernel_price``, loop-weighted), its global accesses and their widths
(:func:`.check.global_accesses`) and its layout conversions.  A kernel that does not compile (the
translator's does not, on some kernels) says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .check import Accesses, compile_port, global_accesses


@dataclass
class Priced:
    """One of the three kernels, read back."""

    title: str
    compiled: bool
    why: str = ""                  # why it did not compile or could not be priced
    cost: Optional[float] = None   # the modelled cost of its TTGIR
    accesses: Accesses = None
    conversions: int = 0
    findings: list = field(default_factory=list)   # the advice on its layouts (Finding), by modelled gain
    advice_problem: str = ""       # why the advice could not read it ("" where it did)

    def describe(self) -> str:
        if not self.compiled:
            return f"{self.title}: does not compile ({self.why})"
        cost = f"modelled cost {self.cost:,.0f}" if self.cost is not None else f"not priced ({self.why})"
        return (f"{self.title}: {cost}; {self.conversions} layout conversions; "
                f"global {self.accesses.describe()}")


def price(ttgir: str, target: str) -> tuple:
    """(modelled cost, "") of a compiled TTGIR module, or (None, why)."""
    from ..gluon.kernel_price import modelled_cost
    from ..ir.diagnostics import IRError
    from ..ir.module_target import module_target
    from ..ir.snapshot import parse_module
    from ...dialect.linear_layout import LayoutError
    try:
        module = parse_module(ttgir, "<port>")
        return modelled_cost(module, module_target(module, None)), ""   # the module names its target
    except (IRError, LayoutError, ValueError, KeyError) as error:
        return None, str(error).splitlines()[0] if str(error) else type(error).__name__


def read_back(title: str, ttgir: str, assembly: str, target: str) -> Priced:
    cost, why = price(ttgir, target)
    return Priced(title, True, why, cost, global_accesses(assembly), ttgir.count("ttg.convert_layout"))


def advice_on(ttgir: str) -> tuple:
    """(the advice's findings on a compiled Gluon kernel, ``ttgir``, which names its target, those
    that price the whole kernel lower first: where the cost model would change the port's layouts;
    "" or why the advice could not read the kernel)."""
    from ..advice.layout_advice import advise_module
    from ..ir.diagnostics import IRError
    from ..ir.module_target import module_target
    from ..ir.snapshot import parse_module
    from ...dialect.linear_layout import LayoutError
    try:
        module = parse_module(ttgir, "<port>")
        findings = advise_module(module, ttgir, module_target(module, None))
    except (IRError, LayoutError, ValueError, KeyError) as error:
        return [], str(error).splitlines()[0] if str(error) else type(error).__name__
    return sorted(findings, key=lambda f: -f.gain), ""


def compare(made, jit_fn) -> list:
    """[Triton's choice, Triton's translation, the port], each :class:`Priced`."""
    from .triton_translator import triton_translation
    launch = made.launch
    rows = [read_back("Triton (the original)", made.original.ttgir, made.original.ptx, launch.target)]
    translation, why = triton_translation(jit_fn, launch.target)
    rows.append(_compiled("Triton's translation", translation, why, made.kernel_name, launch))
    rows.append(_compiled("the port", made.source, "", made.kernel_name, launch, advised=True))
    return rows


def _compiled(title, source, why, kernel_name, launch, advised: bool = False) -> Priced:
    if source is None:
        return Priced(title, False, why)
    try:
        compiled, _ = compile_port(source, kernel_name, launch)
    except Exception as error:   # a compile that fails is the answer for this row
        lines = [line for line in str(error).strip().splitlines() if line.strip()]
        return Priced(title, False, lines[-1][:200] if lines else type(error).__name__)
    asm = compiled.asm
    row = read_back(title, asm["ttgir"], asm.get("ptx", "") or asm.get("amdgcn", ""), launch.target)
    if advised:
        row.findings, row.advice_problem = advice_on(asm["ttgir"])
    return row
