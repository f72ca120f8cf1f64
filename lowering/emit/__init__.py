"""Emitting islands: verified plans printed as LLVM-dialect text for Triton's pipeline.

``emit_llvm`` (``emit_island``, ``emit_local_load_island``, ...: an island for a conversion or a
local load/store, and the struct Triton's type converter expects), ``island_writer`` (the text
itself: SSA names, thread maps, addresses), ``thread_conditions`` (conditions on the
thread and selects by thread), ``emit_nvidia`` / ``emit_amd`` (each vendor's instructions).
Nothing is imported here.
"""
