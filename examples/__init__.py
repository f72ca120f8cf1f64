"""The project's Triton kernels, in one place: ``kernels`` (the bundle ``make demo`` compiles, and
the lit corpus's kernels, ``tools/corpus/gen_corpus.py``), ``gpu_kernels`` (the GPU kernel suite,
``benchmarks/kernels.py``) and ``report_example`` (``python -m linear_layouts report``'s example)."""
