"""Which lowering a conversion gets: one of our verified plans, or stock Triton's own.

The question is answered in one place, ``lowering_choice`` (``choose_conversion``,
``choose_local_load``, ``choose_local_store``), by named rules in the order ``choice_order``
declares, each with the file of its evidence and what it was measured on.  The rules read:
``fitted_model`` (the choice where conversions were timed, sm_90 + triton 3.6: per conversion,
``choose_by_stock_shuffles``; a per-family gate as ``plan_choice.py fit`` writes it; ``decide``),
``measured_choices`` (conversions a GPU run settled, and their table), ``stock_lowering`` (stock's
warp shuffles, predicted), ``stock_bounds`` (a floor under what stock's lowering issues: where
nothing was measured, ours only where it needs no more), ``stock_hazards`` (conversions stock
hangs on or computes wrong: never left to Triton), ``island_limits`` (what any island of ours
may be) and ``plan_memory`` (plans remembered within a module and a process).  The JSON files
beside them are the model (its rule) and the measured table.  Nothing is imported here.
"""
