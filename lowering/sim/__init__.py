"""The emitted-code simulator: the islands we print, executed for every thread before use.

``island_sim`` (``check_emitted``: a conversion's island), ``sim_local_memory``
(``check_emitted_local_load`` / ``check_emitted_local_store``), ``sim_llvm`` (the interpreter of
an island's LLVM-dialect ops), ``sim_machine`` (the machine: values, shared memory, barriers,
races), ``sim_ptx`` (inline PTX).  Nothing is imported here.
"""
