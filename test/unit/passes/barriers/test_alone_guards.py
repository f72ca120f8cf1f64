"""passes.barriers.guard_barriers: the guard before an island alone (``bar.sync 0; // guard alone``)
goes where one of Triton's barriers lies on every path from the island back to it; on hand-written
LLVM IR and on random control flow, against the brute-force search of support.barrier_paths."""

from hypothesis import find, given, settings
from hypothesis import strategies as st

from linear_layouts.lowering.emit.emit_nvidia import ALONE_GUARD_BARRIER_ASM
from linear_layouts.passes.barriers import guard_barriers
from linear_layouts.passes.barriers.guard_barriers import classify, prune_guard_barriers
from support.barrier_paths import (GUARD, TRITON_BARRIER, TRITON_STORE, kernel, llvm_program, terminator,
                                   unprotected_pairs)
from support.barrier_paths import OUR_LOAD as ISLAND_LOAD, OUR_STORE as ISLAND_STORE

ALONE = f'  call void asm sideeffect "{ALONE_GUARD_BARRIER_ASM}", ""()'
PLAN_BARRIER = '  call void asm sideeffect "bar.sync 0;", ""()'
TRITON_LOAD = "  %t = load i32, ptr addrspace(3) %p, align 4"
ASYNC_WAIT = '  call void asm sideeffect "cp.async.wait_group 0;", ""()'


def loop(*body: str) -> str:
    """A kernel whose loop body is ``body`` (the island inside it)."""
    return kernel("  br label %loop", "loop:", *body, "  br i1 %c, label %loop, label %exit", "exit:", "  ret void")


ISLAND = [ALONE, ISLAND_STORE, PLAN_BARRIER, ISLAND_LOAD]


def left(text: str) -> int:
    return prune_guard_barriers(text)[0].count("// guard")


def test_an_alone_guard_is_a_guard_to_every_other_walk():
    assert classify(ALONE) == "guard"


def test_triton_barrier_after_the_island_in_the_loop_removes_it():
    # the pipelined loop: the island, Triton's async wait and barrier, Triton's loads and copies
    assert left(loop(*ISLAND, ASYNC_WAIT, TRITON_BARRIER, TRITON_LOAD, TRITON_STORE)) == 0
    # Triton's barrier at the top of the loop, before the island: also on every path back
    assert left(loop(TRITON_BARRIER, TRITON_STORE, *ISLAND, TRITON_LOAD)) == 0


def test_triton_accesses_alone_do_not_keep_it_but_the_island_itself_does():
    # no barrier of Triton's in the loop: the island's loads reach its next stores
    assert left(loop(*ISLAND, TRITON_LOAD, TRITON_STORE)) == 1
    # outside a loop nothing of the island runs before it: it goes, Triton's stores behind or not
    assert left(kernel(TRITON_STORE, *ISLAND, TRITON_LOAD, "  ret void")) == 0


def test_the_plans_own_barrier_does_not_count():
    # the plan's barrier (inline bar.sync) sits inside the island, before its loads
    text = loop(ALONE, ISLAND_STORE, PLAN_BARRIER, ISLAND_LOAD, PLAN_BARRIER, ISLAND_LOAD)
    assert left(text) == 1


def test_a_barrier_on_one_path_only_keeps_it():
    text = kernel("  br label %loop",
                  "loop:", *ISLAND, "  br i1 %c, label %a, label %b",
                  "a:", TRITON_BARRIER, "  br label %latch",
                  "b:", TRITON_LOAD, "  br label %latch",
                  "latch:", "  br i1 %d, label %loop, label %exit",
                  "exit:", "  ret void")
    assert left(text) == 1


def test_a_copy_of_the_island_is_the_island():
    # LLVM duplicated the island into two blocks of the loop; from one copy, the other is met
    # before any barrier of Triton's: both stay
    text = kernel("  br label %loop",
                  "loop:", "  br i1 %c, label %a, label %b",
                  "a:", *ISLAND, "  br label %latch",
                  "b:", *ISLAND, "  br label %latch",
                  "latch:", "  br i1 %d, label %loop, label %exit",
                  "exit:", "  ret void")
    assert left(text) == 2
    with_barrier = text.replace("latch:", "latch:\n" + TRITON_BARRIER)
    assert left(with_barrier) == 0


def test_with_a_regular_guard_in_the_module_the_regular_rule_judges():
    # a regular guard's walk may have stopped at the alone one: the regular rule for both
    text = loop(TRITON_STORE, *ISLAND, ASYNC_WAIT, TRITON_BARRIER, TRITON_LOAD, GUARD, TRITON_STORE)
    out = prune_guard_barriers(text)[0]
    assert ALONE_GUARD_BARRIER_ASM in out          # Triton's store behind it: kept by the regular rule


# ------------------------------------------------------------ soundness on random control flow

def _line(kind: str, uid: int) -> list[str]:
    """One item of a random loop body, each line named by a unique ``!dbg``."""
    if kind == "I":             # the island: its guard, a store, the plan's barrier, a load
        return [f"{ALONE}, !dbg !{uid}", f"{ISLAND_STORE}, !dbg !{uid + 1}", f"{PLAN_BARRIER}, !dbg !{uid + 2}",
                f"{ISLAND_LOAD}, !dbg !{uid + 3}"]
    return [{"W": f"  store i32 %x{uid}, ptr addrspace(3) %p{uid}, align 4",
             "R": f"  %v{uid} = load i32, ptr addrspace(3) %p{uid}, align 4",
             "N": f"  %n{uid} = add i32 %a, {uid}",
             "B": f"{TRITON_BARRIER}, !dbg !{uid}"}[kind]]


@st.composite
def _kernels(draw):
    """A kernel of 1-5 blocks with random branches (loops included) holding Triton's accesses
    and barriers, and the island in one or two of its blocks (two: LLVM's duplication)."""
    n_blocks = draw(st.integers(1, 5))
    island_blocks = draw(st.sets(st.integers(0, n_blocks - 1), min_size=1, max_size=2))
    lines, uid = ["define void @k() {"], 0
    for b in range(n_blocks):
        if b:
            lines.append(f"b{b}:")
        body = draw(st.lists(st.sampled_from("WRNB"), max_size=4))
        if b in island_blocks:
            body.insert(draw(st.integers(0, len(body))), "I")
        for kind in body:
            uid += 10
            lines += _line(kind, uid)
        targets = sorted(set(draw(st.lists(st.integers(1, n_blocks - 1), max_size=2)))) if n_blocks > 1 else []
        lines.append(terminator(targets))
    return "\n".join(lines + ["}"]) + "\n"


def _island_pairs(text: str) -> set:
    """Pairs of the island's own accesses that some path runs one after the other with no
    barrier between (the accesses of Triton's are apart from the island: their pairs with it
    do not matter, and Triton's own barriers order Triton's)."""
    return {(a, b) for a, b in unprotected_pairs(llvm_program(text)) if "asm" in a and "asm" in b}


def _sound(text: str) -> bool:
    return _island_pairs(prune_guard_barriers(text)[0]) <= _island_pairs(text)


@settings(max_examples=400, deadline=None)
@given(_kernels())
def test_pruning_alone_guards_never_leaves_the_island_unordered_after_itself(text):
    assert _sound(text)


def _unsound_when(wrong_kind) -> str:
    """A random kernel on which pruning goes wrong once ``_AloneKinds`` answers ``wrong_kind(line)``
    ("barrier") for the lines it picks (``hypothesis.find`` raises if there is none)."""
    missing = guard_barriers._AloneKinds.__missing__

    def patched(self, index):
        if wrong_kind(self.lines[index]):
            self[index] = "barrier"
            return "barrier"
        return missing(self, index)

    guard_barriers._AloneKinds.__missing__ = patched
    try:
        return find(_kernels(), lambda text: not _sound(text),
                    settings=settings(max_examples=3000, deadline=None, database=None))
    finally:
        guard_barriers._AloneKinds.__missing__ = missing


def test_the_property_fails_if_the_plans_barriers_count():
    """A walk that stops at the plan's own inline barrier (inside the island) would drop guards
    the island's loads need: the property test must catch it."""
    example = _unsound_when(lambda line: line.strip().startswith('call void asm sideeffect "bar.sync 0;", ""()'))
    assert ALONE_GUARD_BARRIER_ASM in example


def test_the_property_fails_if_copies_of_the_island_are_not_the_island():
    """A walk that meets another copy of the guard as a barrier (as a regular guard's walk
    does) would drop both copies of a duplicated island: caught too."""
    example = _unsound_when(lambda line: ALONE_GUARD_BARRIER_ASM in line)
    assert example.count(ALONE_GUARD_BARRIER_ASM) >= 1
