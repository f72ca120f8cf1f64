"""The drop-in: our passes inside ``triton.compile``, ``@triton.jit`` and torch.compile.

Entered through :func:`linear_layouts.enable` / :func:`linear_layouts.disable`
(:mod:`.hook`) and, in every Python process of a program that sets ``LINEAR_LAYOUTS``, through
the start-up import (:mod:`.after_triton`).  What a pass does to a module lives one folder up
(``passes/``); this folder is how those passes reach Triton's compile:

* the hook and its configuration: :mod:`.hook`, :mod:`.enable_options`, :mod:`.plugin_config`,
  :mod:`.environment` (the setting in every process), :mod:`.inductor` (torch.compile's workers);
* the stages: :mod:`.stage_wrappers` (``llir`` with our pipeline before it), :mod:`.layout_stages`
  (Gluon's ``ttgir``), :mod:`.plugin_pipeline` (one kernel through our passes), :mod:`.in_place`
  and :mod:`.types_first` (islands as Triton's own ops; asked before printing);
* what it remembers and counts: :mod:`.cache_dirs`, :mod:`.cache_hits`, :mod:`.process_memory`,
  :mod:`.plugin_stats`, :mod:`.shared_stats`, :mod:`.recorder` (``python -m linear_layouts report``).
"""
