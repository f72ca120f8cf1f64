"""The modes both Gluon harnesses time (``gluon_forms_gpu.py kernels`` (``gluon_auto_suite``), ``gluon_forms_gpu.py``): which
form of a kernel each mode compiles, and what the plugin does in it.

* ``expert``: the expert's layouts, stock Triton;
* ``auto_ours``: the auto form, ``linear_layouts.enable(resolve_auto_layouts=True)``;
* ``auto_triton``: the auto form, stock Triton (Gluon's own resolution);
* ``newcomer``: the newcomer form (one element per thread), stock Triton;
* ``newcomer_advised``: the newcomer form with the report's layout advice applied
  (``linear_layouts.enable(apply_advice=True)``: ``ll-apply-advice``).
"""

from __future__ import annotations

MODES = ("expert", "auto_ours", "auto_triton", "newcomer", "newcomer_advised")
FORM_OF = {"expert": "expert", "auto_ours": "auto", "auto_triton": "auto", "newcomer": "newcomer",
           "newcomer_advised": "newcomer"}


def enable_for(mode: str) -> None:
    """The plugin as ``mode`` has it: on with the resolution for ``auto_ours``, with the
    advice applied for ``newcomer_advised``, off otherwise."""
    import linear_layouts
    if mode == "auto_ours":
        linear_layouts.enable(resolve_auto_layouts=True)
    elif mode == "newcomer_advised":
        linear_layouts.enable(apply_advice=True)
    else:
        linear_layouts.disable()
