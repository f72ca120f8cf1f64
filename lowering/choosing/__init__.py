"""Which lowering a conversion gets: one of our verified plans, or stock Triton's own.

``fitted_model`` (the choice model and per-family gate fitted on an H100 for sm_90 + triton 3.6;
``decide``), ``measured_choices`` (conversions a GPU run settled, and their table), ``stock_lowering``
(stock's warp shuffles, predicted), ``stock_bounds`` (a floor under what stock's lowering issues: where
nothing was measured, ours only where it needs no more), ``stock_hazards`` (conversions stock hangs
on or computes wrong: never left to Triton).  The JSON files beside them are the fitted model and the
measured table.  Nothing is imported here.
"""
