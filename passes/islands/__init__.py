"""Islands: the LLVM-dialect code ``ll-lower-conversions`` puts in place of an op.

:mod:`.island_checks` proves each island with the emitted-code simulator before it replaces the
op, :mod:`.verified_islands` remembers the islands already proved (so a kernel compiled again
does not pay for the simulation again), and :mod:`.island_splicing` puts them into the module's
printed text.
"""
