"""``python -m linear_layouts report``: what layout conversions a user's program has, explained.

* ``run``: runs the report: its options, the environment mode (``LINEAR_LAYOUTS=report``),
  writing under a lock, once;
* ``model``: the data model: records -> kernels -> conversions, analysed (nothing renders here);
* ``text``: the tables and sentences both forms show, computed from the model;
* ``markdown`` and ``html_pages``: the two renderers (``--format md``; ``index.html`` and a page
  per kernel);
* the parts the model computes: ``conversion_report`` (one row per ``ttg.convert_layout``: scope,
  plan, cost; also ``ll-demo``'s table), ``conversion_why`` (why a conversion exists),
  ``loop_weights`` (how often it runs), ``final_code`` (stock's final code and ours, per
  conversion), ``launch_timing`` (``--measure``: the program's launches timed stock and ours);
* ``site/``: the ``sitecustomize`` put first on ``PYTHONPATH`` for the program's child processes.
"""
