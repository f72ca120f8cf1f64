"""``ll-resolve-auto-layouts``: Gluon's automatic layouts resolved by modelled cost.

``resolve_auto_layouts`` (the pass: ``ResolveAutoLayouts``, ``resolve_module``,
``has_auto_layouts``), ``auto_seeds`` (a first legal layout for every automatic value),
``rematerialize`` (index arithmetic recomputed in the layout it is needed in instead of
converted), ``priced_as_emitted`` (each conversion priced as the rewrites after the choice
emit it: recomputed index arithmetic, a conversion folded into a local load),
``epilogue_stores`` (a store meeting an accumulator's layout, written automatic behind one
conversion: the alternative weighed, and the advice's epilogue edit), ``kernel_price`` (a whole
kernel's modelled cost and carried registers, which weighs it) and
``stock_resolution`` (Triton's own resolution, run in a subprocess to compare
against).  From outside, import from ``resolve_auto_layouts``.  Nothing is imported here.
"""
