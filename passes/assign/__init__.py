"""``ll-assign-layouts``: choosing the layouts of a kernel's tensors by modelled cost.

Holds the pass (``assign_layouts``: ``AssignLayouts``, ``assign_module``), the layout graph of a
function and its legality rules (``layout_graph``, ``layout_rules``, ``shape_layouts``,
``layout_seeds``), the cost model and its limits (``layout_costs``, ``pipe_time``, ``dram_floor``,
``pointer_contiguity``, ``register_budget``, ``scratch_budget``), the solver (``layout_solver``)
and the rewrite of the module's text (through ``passes.ir.module_lines``, the text editor the
Gluon resolution and the advice share).  From outside, import the pass from
``assign_layouts``; the rest are its parts.  Nothing is imported here.
"""
