"""The generators of the TTGIR corpus under ``test/lit/corpus/``: real kernels compiled by Triton
(no GPU needed), committed, regenerated when Triton changes.

* ``gen_corpus``: the project's own kernels (``examples/kernels.py``) for cuda:80, cuda:90 and
  gfx942 (``python -m linear_layouts.tools.corpus.gen_corpus``);
* ``gen_corpus_thirdparty``: a third-party library's kernels (Liger-Kernel, flash-linear-attention),
  with ``SOURCES.md`` beside them.
"""
