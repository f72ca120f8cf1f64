"""Random inputs for testing the planner and the passes, and ``ll-fuzz``, which runs them.

* ``conversion_fuzz``: the ``ll-fuzz`` command: random layout conversions, lowered, simulated
  and (some) compiled with stock Triton and ours;
* ``random_layouts``: random layouts and conversion cases (permutation-like layouts with
  broadcast; pairs from the encoding zoo);
* ``random_programs``: random TTGIR functions for ``ll-assign-layouts``, with the bounds of the
  values they compute;
* ``testcases``: the smallest kernel that exercises one conversion, as TTGIR text, random
  linear encodings, and the data-movement instructions of PTX / AMDGCN counted.

Nothing in the passes uses them; they ship in the package so that the GPU harnesses of
``benchmarks/`` draw the same cases from an installed wheel.
"""
