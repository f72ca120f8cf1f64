"""The IR layer: the only code that touches Triton's MLIR bindings.

``bindings`` (the bindings, imported lazily, and the installed release), ``parsing`` (text into a
module handle), ``snapshot`` (a module as Python objects: ``parse_module``, ``Module``),
``types`` (type text), ``text_edits`` (edits of printed text), ``layouts`` (a value's type -> its
``LinearLayout``), ``diagnostics`` (Triton's diagnostics as messages), ``sandbox`` (an abort in
Triton's C++ kills a child, not us), ``backend`` (Triton's back end on a module: ``ll-opt --emit``).
Nothing is imported here, so ``import ...passes.ir.x`` costs only what ``x`` needs.
"""
