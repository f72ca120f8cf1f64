"""Which of Triton's shared-memory ops can never touch the bytes of an island's scratch buffer.

An island's scratch buffer is a ``ttg.local_alloc`` freed by a ``ttg.local_dealloc`` right after
the island (``passes.lower_conversions``, "Scratch memory"), and Triton's allocator gives two
buffers the same bytes only when their live ranges do not overlap.  Triton numbers the ops of a
function in a post-order walk and makes a buffer live from the first to the last op at which its
value, or a view of it, is live (``lib/Analysis/Allocation.cpp``, ``resolveLiveness``): from its
``ttg.local_alloc`` to its last use, every op in between in text order included, whatever
region it sits in.  So a buffer allocated before the island and used after it *spans* the
island: its range overlaps the scratch buffer's, and it lies in other bytes.  An op whose every
shared-memory access is to buffers that span the island is *apart* from it: it cannot race with
the island's stores and loads, in whatever order the two run.

Example, the pipelined loop of a one-warp FLA kernel (``chunk_fwd_kernel_h``)::

    %k = ttg.local_alloc                          the pipeline's buffers, before the loop
    scf.for ... {
      %h = ttg.convert_layout %acc                our island: its scratch is live here only
      ttg.async_wait ...
      %a = ttg.local_load (memdesc_index %k)      reads %k's bytes: never the scratch's
      ttg.async_copy_global_to_local ..., (memdesc_index %k)
    }
    ttg.local_dealloc %k                          after the island: %k spans it

Every one of Triton's shared-memory users here is apart from the island, so Triton's code needs
no guard barrier against it (``passes.barriers.guard_placement``).  What counts, conservatively:

* ops that access no shared memory themselves: an allocation without a source, a deallocation,
  ``ttg.async_commit_group``, ``ttng.fence_async_shared``, ``gpu.barrier``, ``tt.dot`` (Triton
  lowers it on registers: its operands come from ``ttg.local_load`` ops of their own);
* ``ttg.local_load``, ``ttg.local_store``, ``ttg.async_copy_global_to_local`` and an
  allocation with a source (a store into its own new buffer): apart when every buffer they
  access spans the island.  A memdesc is traced to its allocations through views
  (``memdesc_index``, ``memdesc_subslice``, ``memdesc_trans``, ``memdesc_reshape``,
  ``memdesc_reinterpret``) and ``scf.for`` iteration arguments (the initial value and every
  yielded one); a memdesc from anywhere else (a function argument, another op) is not traced
  and the op is not apart;
* ``ttg.async_wait``: the asynchronous copies' writes land by it, so it is apart when every
  ``ttg.async_copy_global_to_local`` of its function is.

Anything else (an op with scratch of its own: a reduction, a convert left to Triton; a call;
wgmma or TMA, which read and write through the async proxy) is not apart.

Positions are those of ``Module.walk`` (a pre-order walk).  Triton's ids come from a post-order
one; the two orders agree on any two ops neither of which holds the other, and an island, an
allocation and the uses looked at here (an ancestor of the island is never one) hold nothing.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..ir.snapshot import Operation, Value

MEMDESC = "!ttg.memdesc"
_VIEWS = {"ttg.memdesc_index", "ttg.memdesc_subslice", "ttg.memdesc_trans", "ttg.memdesc_reshape",
          "ttg.memdesc_reinterpret"}
# Ops whose own lowering reads and writes no shared memory (an allocation with a source is the
# exception, handled with the accesses below).
_NO_ACCESS = {"ttg.local_alloc", "ttg.local_dealloc", "ttg.async_commit_group", "ttng.fence_async_shared",
              "gpu.barrier", "tt.dot"}
# Ops that access shared memory only through their memdesc operands (and results).
_BUFFER_ACCESSES = {"ttg.local_load", "ttg.local_store", "ttg.async_copy_global_to_local", "ttg.local_alloc"}
ASYNC_COPY = "ttg.async_copy_global_to_local"
ASYNC_WAIT = "ttg.async_wait"


def is_memdesc(value: Value) -> bool:
    return value.type.startswith(MEMDESC)


class BufferSpans:
    """Answers "is this op apart from the island at that position?" for one module.

    ``walked``: ``Module.walk()`` as a list (the module op first), ``position_of``: id(op) ->
    its index there, if the caller has it; uses of every value are gathered once, so each
    question looks only at the op, its buffers and their uses."""

    def __init__(self, walked: Sequence[Operation], position_of: Optional[dict[int, int]] = None):
        self._walked = walked
        self._position = position_of if position_of is not None else {id(op): k for k, op in enumerate(walked)}
        self._users: dict[int, list[Operation]] = {}
        for op in walked:
            for value in op.operands:
                self._users.setdefault(id(value), []).append(op)
        self._async_copies: dict[int, list[Operation]] = {}   # id(function) -> its async copies
        for op in walked:
            if op.name == ASYNC_COPY:
                self._async_copies.setdefault(id(_function_of(op)), []).append(op)

    def apart(self, op: Operation, island: Operation) -> bool:
        """Whether ``op`` (one of Triton's) can never touch the island's scratch bytes."""
        if op.name == "ttg.local_alloc" and op.operands:
            return self._spans(op, island)              # a store into its own, new buffer
        if op.name in _NO_ACCESS:
            return True
        if op.name == ASYNC_WAIT:
            return all(self.apart(copy, island) for copy in self._async_copies.get(id(_function_of(op)), []))
        if op.name not in _BUFFER_ACCESSES:
            return False
        memdescs = [value for value in list(op.operands) + list(op.results) if is_memdesc(value)]
        if not memdescs:
            return False
        for value in memdescs:
            allocations = self.allocations_of(value)
            if allocations is None or not all(self._spans(alloc, island) for alloc in allocations):
                return False
        return True

    def allocations_of(self, value: Value, seen: Optional[set[int]] = None) -> Optional[list[Operation]]:
        """The ``ttg.local_alloc`` ops whose buffer ``value`` may be (a view of); None where a
        path leads anywhere else."""
        seen = set() if seen is None else seen
        if id(value) in seen:
            return []
        seen.add(id(value))
        op = value.defining_op
        if op is not None:
            if op.name == "ttg.local_alloc":
                return [op]
            if op.name in _VIEWS and op.operands:
                return self.allocations_of(op.operands[0], seen)
            return None
        loop = _loop_of_iteration_argument(value)
        if loop is None:
            return None
        index = value.index - 1                       # block argument 0 is the induction variable
        sources = [loop.operands[3 + index]]          # scf.for %i = lb to ub step s iter_args(...)
        body = loop.regions[0].blocks[0]
        terminator = body.operations[-1] if body.operations else None
        if terminator is None or terminator.name != "scf.yield" or index >= len(terminator.operands):
            return None
        sources.append(terminator.operands[index])
        found: list[Operation] = []
        for source in sources:
            allocations = self.allocations_of(source, seen)
            if allocations is None:
                return None
            found += allocations
        return found

    def _spans(self, alloc: Operation, island: Operation) -> bool:
        """The buffer of ``alloc`` is allocated before the island and used (itself or through
        a view) after it, by an op that does not hold the island."""
        here = self._position[id(island)]
        if self._position[id(alloc)] >= here:
            return False
        ancestors = set()
        parent = island.parent_op
        while parent is not None:
            ancestors.add(id(parent))
            parent = parent.parent_op
        work, seen = [alloc.results[0]], set()
        while work:
            value = work.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            for user in self._users.get(id(value), []):
                if self._position[id(user)] > here and id(user) not in ancestors:
                    return True
                if user.name in _VIEWS:
                    work += user.results
        return False


def _loop_of_iteration_argument(value: Value) -> Optional[Operation]:
    """The ``scf.for`` whose body's iteration argument ``value`` is (not the induction
    variable); None for any other block argument."""
    block = value.owner
    region = getattr(block, "parent", None)
    loop = region.parent if region is not None else None
    if loop is None or loop.name != "scf.for" or value.index == 0 or block is not loop.regions[0].blocks[0]:
        return None
    if len(loop.operands) < 3 + value.index:
        return None
    return loop


def _function_of(op: Operation) -> Optional[Operation]:
    parent = op.parent_op
    while parent is not None and parent.name not in ("tt.func", "func.func"):
        parent = parent.parent_op
    return parent
