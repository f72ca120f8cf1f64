"""Where an island needs *guard* barriers around its shared-memory accesses.

Triton's barrier analysis cannot see our islands' accesses.  So when a kernel has any other
possible user of shared memory (another convert, a reduction, a loop that runs the island again,
a call of a function that touches shared memory, ...) an island gets a guard barrier before its
first store and after its last load; one that is the kernel's only shared-memory user and runs
once gets none (see ``passes.lower_conversions``' docstring, "Scratch memory and barriers" and
"Calls").  :class:`GuardPlacement` answers, for every op of a module that gets an island, whether
it needs a guard before, after, and a fence for the async proxy; the functions below it are the
rules.  Triton's ops that can never touch an island's bytes (they access only buffers live across
the island, which Triton's allocator keeps apart: ``buffer_spans``) do not count as users.  Which
guards Triton's own barriers make redundant is decided later, on the LLVM IR
(``passes.barriers.guard_barriers``); a conversion's guard that orders its island after nothing
but itself in the previous iteration is marked as such (``GuardPlacement.before_alone``) and
judged there by its own rule.
"""

from __future__ import annotations

import functools
from typing import Optional, Sequence

from ...lowering.plan import Method
from ..ir.snapshot import Module, Operation, in_loop, ops_under
from .buffer_spans import BufferSpans

# Ops whose Triton lowering never touches shared memory.  A kernel made only of these plus one
# shared-memory island needs no guard barriers (see the module docstring).
_SMEM_FREE_PREFIXES = ("arith.", "math.")
_SMEM_FREE = {
    "builtin.module", "tt.func", "tt.return", "tt.load", "tt.store", "tt.splat", "tt.make_range",
    "tt.addptr", "tt.broadcast", "tt.expand_dims", "tt.get_program_id", "tt.get_num_programs",
    "tt.bitcast", "tt.int_to_ptr", "tt.ptr_to_int", "tt.fp_to_fp", "tt.clampf", "tt.precise_sqrt",
    "tt.precise_divf", "tt.mulhiui",
    # Reshaping ops move registers only: Triton's layouts make them free or a register
    # permutation (a reshape or join it cannot do in registers is rejected, never staged).
    "tt.join", "tt.split", "tt.trans", "tt.reshape", "tt.cat", "ub.poison",
    # Views of a shared-memory buffer compute a descriptor; they read and write nothing.
    "ttg.memdesc_index", "ttg.memdesc_subslice", "ttg.memdesc_trans", "ttg.memdesc_reshape",
}


def needs_guards(module: Module, shared_converts: list[Operation], calls: Optional["CallGraph"] = None,
                 walked: Optional[Sequence[Operation]] = None) -> bool:
    """Guard barriers unless one island is the kernel's only possible shared-memory user and
    runs once (it sits directly in a function body, not in a loop or branch, and that function
    is no callee).  A ``tt.call`` of a function that touches no shared memory, itself or through
    its own calls, is no user (see ``CallGraph``).  ``calls`` and ``walked`` (``module.walk()``
    as a list): the module's call graph and ops, if the caller has them already."""
    if len(shared_converts) != 1:
        return True
    island = shared_converts[0]
    parent = island.parent_op
    if parent is None or parent.name != "tt.func":
        return True
    calls = calls if calls is not None else CallGraph.of(island)
    if calls.may_be_called(island):
        return True
    for op in (walked if walked is not None else module.walk()):
        if op is not island and _may_use_shared_memory(op, calls):
            return True
    return False



# Control flow moves no data through shared memory itself.
_CONTROL_FLOW = {"scf.for", "scf.yield", "scf.if", "scf.while", "scf.condition"}
_FUNCTIONS = ("tt.func", "func.func")


def _may_use_shared_memory(op: Operation, calls: "CallGraph") -> bool:
    """The op's lowering may read or write shared memory (a call: its callee may)."""
    if op.name == "tt.call":
        return calls.touches_shared_memory(op.callee)
    return not (op.name in _SMEM_FREE or op.name.startswith(_SMEM_FREE_PREFIXES) or op.name in _CONTROL_FLOW)


def _function_of(op: Operation) -> Optional[Operation]:
    """The ``tt.func`` that holds the op."""
    parent = op.parent_op
    while parent is not None and parent.name not in _FUNCTIONS:
        parent = parent.parent_op
    return parent


class CallGraph:
    """Which functions of a module are called (by a ``tt.call``), and which may touch shared
    memory, themselves or through the functions they call: Triton's barrier analysis is
    interprocedural (a call site counts as its callee's accesses), so ours is too.

    Example: ``@kernel`` calls ``@helper`` twice in a row and ``@helper`` holds an island.
    ``@helper`` is called, so its island gets both guards: the caller may have read shared memory
    before the call (on bytes the island's scratch reuses), and it may touch shared memory, or
    call ``@helper`` again, after it returns.  Which function comes first in the text does not
    matter: nothing here depends on positions.  A function whose callee cannot be read (or that
    is not defined in the module) is assumed to touch shared memory, and when any call's callee
    is unreadable every function counts as called."""

    def __init__(self, module_op: Operation):
        self.functions = {op.symbol: op for op in module_op.regions[0].blocks[0].operations
                          if op.name in _FUNCTIONS} if module_op.regions else {}
        self.calls_in: dict[str, list[Optional[str]]] = {name: [] for name in self.functions}
        uses_directly: set[str] = set()
        for name, function in self.functions.items():
            for op in ops_under(function):
                if op.name == "tt.call":
                    self.calls_in[name].append(op.callee)
                elif _may_use_shared_memory(op, self):
                    uses_directly.add(name)
        self.called = {callee for callees in self.calls_in.values() for callee in callees}
        self._function_ranges: dict[int, range] = {}
        # Transitively, to a fixed point (recursion terminates: the set only grows).
        self._touching = set(uses_directly)
        changed = True
        while changed:
            changed = False
            for name, callees in self.calls_in.items():
                if name not in self._touching and any(self.touches_shared_memory(c) for c in callees):
                    self._touching.add(name)
                    changed = True

    @classmethod
    def of(cls, op: Operation) -> "CallGraph":
        module_op = op
        while module_op.parent_op is not None:
            module_op = module_op.parent_op
        return cls(module_op)

    def touches_shared_memory(self, callee: Optional[str]) -> bool:
        return callee not in self.functions or callee in self._touching

    def may_be_called(self, op: Operation) -> bool:
        """The function holding ``op`` may be entered from a call (not only as the kernel)."""
        function = _function_of(op)
        if function is None:
            return True
        return function.symbol in self.called or (None in self.called and len(self.functions) > 1)

    def same_function(self, op: Operation) -> range:
        """The text positions (``Module.walk`` order) of the ops of the function holding ``op``
        (found once per function: every island of a function asks)."""
        function = _function_of(op)
        module_op = function.parent_op if function is not None else None
        if module_op is None:
            return range(0, 1 << 62)
        known = self._function_ranges.get(id(function))
        if known is not None:
            return known
        start = 0
        for position, other in enumerate(ops_under(module_op)):
            if other is function:
                start = position
                break
        known = self._function_ranges[id(function)] = range(start, start + sum(1 for _ in ops_under(function)))
        return known


def triton_shared_memory_users(module: Module, lowered: set[int], calls: Optional["CallGraph"] = None,
                               walked: Optional[Sequence[Operation]] = None) -> list[int]:
    """Positions (in text order) of the ops that Triton lowers, not our islands, and that may
    use shared memory; a ``tt.call`` is one when its callee may touch shared memory
    (``calls``, ``walked``: as for :func:`needs_guards`)."""
    users = []
    for position, op in enumerate(walked if walked is not None else module.walk()):
        if calls is None:
            calls = CallGraph(op)        # the first op walked is the module
        if id(op) not in lowered and _may_use_shared_memory(op, calls):
            users.append(position)
    return users


def needs_guard_after(op: Operation, position: int, triton_users: list[int],
                      calls: Optional[CallGraph] = None) -> bool:
    """A guard barrier after an island's last load is needed only if one of Triton's own
    shared-memory users can run after the island: Triton may put its buffer on the same bytes,
    and its barrier analysis cannot see our reads.

    When every later shared-memory user is one of our islands, the guard *before* each island's
    first store already orders it after every earlier island's loads (including the same
    island's in the previous loop iteration).  So a matmul epilogue, the kernel's last
    shared-memory user, ends without a barrier, as with stock Triton's membar.

    Only users in the island's own function count by position (a ``tt.call`` after the island
    stands for its callee's users); an island in a function that may be called always gets the
    guard: its caller may touch shared memory after the call returns, or call it again.
    ``calls``: the module's call graph, if already built (the same for every op of the module).
    """
    calls = calls if calls is not None else CallGraph.of(op)
    if calls.may_be_called(op):
        return True
    here = calls.same_function(op)
    users_here = [user for user in triton_users if user in here]
    if not users_here:
        return False
    return in_loop(op) or any(user > position for user in users_here)


def needs_guard_before(op: Operation, position: int, users: list[int], single_function: bool,
                       calls: Optional[CallGraph] = None) -> bool:
    """A guard barrier before the stores into a *fresh* allocation is needed only if a
    shared-memory user (Triton's or an island) can run before it: its bytes may be another
    buffer's whose reads Triton's barrier analysis cannot order before our stores.  Users count
    by position in the island's own function only (a ``tt.call`` before it stands for its
    callee's); an island in a function that may be called always gets it: the caller's accesses
    before the call come first (``single_function``: the module has one function, the kernel,
    which nothing calls; ``calls`` as for :func:`needs_guard_after`)."""
    calls = calls if calls is not None else CallGraph.of(op)
    if in_loop(op) or (not single_function and calls.may_be_called(op)):
        return True
    here = calls.same_function(op)
    return any(user < position for user in users if user in here)


def async_proxy_reads(module: Module, op: Operation, lowered_allocs: set[int]) -> bool:
    """The allocation is read through the async proxy (wgmma, a TMA store): Triton put a
    ``ttng.fence_async_shared`` after it (and after the allocations in a row with it).  Triton's
    own lowering orders stores, fence, barrier, reader; our island's barrier comes before that
    fence, so the island fences its own stores (the later fence of Triton's is then redundant)."""
    seen = False
    for other in module.walk():
        if other is op:
            seen = True
            continue
        if not seen:
            continue
        if other.name == "ttng.fence_async_shared":
            return other.parent_op is op.parent_op
        if id(other) in lowered_allocs or other.name in _SMEM_FREE or other.name.startswith(_SMEM_FREE_PREFIXES):
            continue
        return False
    return False


def following_in_a_row(module: Module, ops: list[Operation], walked: Optional[Sequence[Operation]] = None) -> set[int]:
    """ids of the ops in ``ops`` that directly follow another of them: in the same block, with
    only shared-memory-free ops in between.  Reads do not race with reads, and allocations in a
    row store into distinct live buffers, so a run of local loads, or of allocations, needs one
    guard barrier before its first and one after its last (``walked``: as for
    :func:`needs_guards`)."""
    if len(ops) < 2:
        return set()         # nothing can follow another
    wanted = {id(op) for op in ops}
    follows, previous = set(), None
    for op in (walked if walked is not None else module.walk()):
        if id(op) in wanted:
            if previous is not None and previous.parent_op is op.parent_op:
                follows.add(id(op))
            previous = op
        elif not (op.name in _SMEM_FREE or op.name.startswith(_SMEM_FREE_PREFIXES)):
            previous = None
    return follows


class GuardPlacement:
    """The guard barriers of one module's islands, decided before any island is emitted.

    ``islands``: ``(op, plan method)`` of every op that has a plan, in ``Module.walk`` order.
    Islands that read (``shared`` conversions, local loads) or store (local stores, allocations
    with a source) shared memory count as its users.  A run of local loads, or of allocations,
    in a row shares one guard before its first and one after its last (reads do not race with
    reads; allocations in a row store into distinct live buffers)."""

    def __init__(self, module: Module, islands: list[tuple[Operation, Method]]):
        self._module = module
        shared_ops = [op for op, method in islands
                      if method in (Method.SHARED, Method.LOCAL_LOAD, Method.LOCAL_STORE)]
        # One walk of the module and one call graph: every question below is about the same ops
        # and functions (the graph was built once per island, each a walk of the whole module).
        walked = list(module.walk())         # the module op first
        self._calls = CallGraph(walked[0])
        self._guards = needs_guards(module, shared_ops, self._calls, walked)
        self._triton_users = triton_shared_memory_users(module, {id(op) for op, _ in islands}, self._calls, walked)
        self._position_of = {id(op): position for position, op in enumerate(walked)}
        local_loads = [op for op, method in islands if method == Method.LOCAL_LOAD]
        self._follows = following_in_a_row(module, local_loads, walked)
        self._followed = {id(a) for a, b in zip(local_loads, local_loads[1:]) if id(b) in self._follows}
        allocs = [op for op, _ in islands if op.name == "ttg.local_alloc"]
        allocs_follow = following_in_a_row(module, allocs, walked)
        self._follows |= allocs_follow
        self._followed |= {id(a) for a, b in zip(allocs, allocs[1:]) if id(b) in allocs_follow}
        self._lowered_allocs = {id(op) for op in allocs}
        self._island_positions = [self._position_of[id(op)] for op in shared_ops]
        self._single_function = sum(op.name == "tt.func" for op in walked) == 1
        self._walked = walked
        self._near: dict[int, list[int]] = {}

    @functools.cached_property
    def _spans(self) -> BufferSpans:
        """Built when a guard is first asked about (a module without guards never needs it)."""
        return BufferSpans(self._walked, self._position_of)

    def _triton_users_near(self, op: Operation) -> list[int]:
        """The positions of Triton's shared-memory users that may touch the bytes of ``op``'s
        island: for a conversion (its scratch buffer) or an allocation (its new buffer), all but
        those apart from it (``buffer_spans``); for a local load or store, which access a
        buffer Triton's ops use too, all of them."""
        if op.name not in ("ttg.convert_layout", "ttg.local_alloc"):
            return self._triton_users
        near = self._near.get(id(op))
        if near is None:
            near = self._near[id(op)] = [position for position in self._triton_users
                                         if not self._spans.apart(self._walked[position], op)]
        return near

    def before(self, op: Operation) -> bool:
        """A guard before the island's first store, when a shared-memory user that may touch
        its bytes can run before it (its buffer is fresh): Triton's, other than those apart from
        it, or another island; in a loop, the island itself in the previous iteration."""
        if not self._guards or id(op) in self._follows:
            return False
        return needs_guard_before(op, self._position_of[id(op)], self._triton_users_near(op) + self._island_positions,
                                  self._single_function, self._calls)

    def after(self, op: Operation) -> bool:
        """A guard after the island's last access."""
        return (self._guards and id(op) not in self._followed
                and needs_guard_after(op, self._position_of[id(op)], self._triton_users_near(op), self._calls))

    def before_alone(self, op: Operation) -> bool:
        """The guard before a conversion's island orders it after nothing but itself (in the
        previous iteration of its loop): it is the module's only shared-memory island, in the
        kernel (one function, not called), and every one of Triton's shared-memory users in it
        is apart from it.  Such a guard goes wherever one of Triton's own barriers lies on every
        path from the island back to itself (``guard_barriers``, "Guards of an island alone")."""
        return (self.before(op) and op.name == "ttg.convert_layout" and self._single_function
                and self._island_positions == [self._position_of[id(op)]]
                and not self._calls.may_be_called(op) and not self._triton_users_near(op))

    def async_fence(self, op: Operation) -> bool:
        """An allocation's island fences its stores for the async proxy before its guard after
        (see :func:`async_proxy_reads`)."""
        return (op.name == "ttg.local_alloc" and self.after(op)
                and async_proxy_reads(self._module, op, self._lowered_allocs))
