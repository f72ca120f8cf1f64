"""Barriers around our islands: where guards go, which of them Triton's own barriers make
redundant, and which warps each op runs in.

``guard_placement`` (the guard barriers an island's shared-memory accesses need),
``guard_barriers`` (dropping the redundant ones on the final LLVM IR: ``prune_guard_barriers``),
``partitions`` (the warp group of every op of a warp-specialized kernel).  Nothing is imported here.
"""
