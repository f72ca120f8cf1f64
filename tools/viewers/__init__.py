"""Seeing layouts and conversion plans: ``ll-viz`` and the data behind its grids and pictures.

* ``viz``: the ``ll-viz`` command (element grids, shared-memory banks, two layouts compared,
  a conversion's plan), as text or as a picture;
* ``layout_view``: who holds which element of a layout (the grids' data, the colours);
* ``plan_view``: a conversion plan in words and pictures (shuffle rounds, shared-memory
  accesses and their bank conflicts, its cost), also drawn by ``ll-demo`` and the report.
"""
