"""What a whole kernel costs, for the advice: the cost model the resolution of Gluon's automatic
layouts uses, plus the register limit of ``ll-assign-layouts``.

A finding's suggestion is an edit of a layout variable (``apply_advice``), and an edit reaches
every op laid out in that variable, inside loops too: a store after a loop advised 4-byte
accesses with no copies, if its layout is the loop's loads' layout, makes those loads narrower
on every iteration.  Pricing the one store would call that a gain; only the kernel before and
after the edit, priced by one model, says what the edit does.  So the price here is
:func:`..gluon.resolve_auto_layouts.modelled_cost`'s (every op the model prices, loop-weighted:
``passes.assign.layout_graph.loop_weight``), which is also the cost ``ll-resolve-auto-layouts``
minimizes: a layout the resolution chose is one the advice, priced the same way, finds no
cheaper edit of (where the resolution had that edit among its candidates).  The register limit
is ``ll-assign-layouts``' (``passes.assign.register_budget``): an edit that makes a loop carry
more registers than a thread has, where the kernel as written does not, would spill.

The price is computed in :mod:`..gluon.kernel_price` (the resolution weighs an epilogue's
alternative by it too); this module names it for the advice.
"""

from ..gluon.kernel_price import KernelPrice, kernel_price  # noqa: F401
