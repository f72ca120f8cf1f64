"""passes.barriers.guard_barriers: our guard barriers go only where Triton's own already order every
access they would; on hand-written LLVM IR (each case one reason to keep or drop) and on real
kernels compiled by the installed Triton, where the barrier count must come out as stock's."""

import re

import pytest

from linear_layouts.passes.barriers.guard_barriers import BOTH, READ, WRITE, classify, prune_guard_barriers
from support.barrier_paths import (GLOBAL_STORE, GUARD, OUR_LOAD, OUR_STORE, TRITON_BARRIER, TRITON_BARRIER_36,
                                   TRITON_STORE, kernel, llvm_program, ptx_program, terminator,
                                   unprotected_pairs)


def guards_left(text: str) -> int:
    return prune_guard_barriers(text)[0].count("// guard")


def test_classification_of_instructions():
    assert classify(GUARD) == "guard"
    assert classify(TRITON_BARRIER) == "barrier" and classify(TRITON_BARRIER_36) == "barrier"
    assert classify('  call void asm sideeffect "bar.sync 0;", ""()') == "barrier"   # a plan's own barrier
    assert classify(OUR_LOAD) == READ and classify(OUR_STORE) == WRITE and classify(TRITON_STORE) == WRITE
    assert classify("  %x = load <4 x i32>, ptr addrspace(3) getelementptr (i8, ptr addrspace(3) @s, i32 16)") == READ
    assert classify("  %x = load float, ptr addrspace(1) %p, align 4") == 0
    assert classify("  %x = load i32, ptr %p") == READ             # generic: may be shared
    assert classify("  store ptr addrspace(3) %s, ptr addrspace(1) %p") == 0   # the pointer stored is not the target
    assert classify(GLOBAL_STORE) == 0
    assert classify("  %r = atomicrmw add ptr addrspace(1) %p, i32 1 seq_cst") == 0
    assert classify("  %r = atomicrmw add ptr addrspace(3) %p, i32 1 seq_cst") == BOTH
    assert classify("  %r = cmpxchg ptr %p, i32 %a, i32 %b seq_cst seq_cst") == BOTH
    assert classify("  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()") == 0
    # the matrix intrinsics (Triton's local loads, our islands' nvvm.ldmatrix / nvvm.stmatrix)
    assert classify("  %m = tail call { i32, i32, i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3"
                    "(ptr addrspace(3) %p), !dbg !18") == READ
    assert classify("  %m = tail call i32 @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.trans.b16.p3(ptr addrspace(3) %p)") == READ
    assert classify("  tail call void @llvm.nvvm.stmatrix.sync.aligned.m8n8.x4.b16.p3(ptr addrspace(3) %p, i32 %a, "
                    "i32 %b, i32 %c, i32 %d)") == WRITE
    # Anything not recognised is a read and a write: wgmma, cp.async, a named barrier, a call.
    assert classify("  call void @llvm.nvvm.wgmma.commit_group.sync.aligned()") == BOTH
    assert classify('  call void asm sideeffect "cp.async.wait_group 0;", ""()') == BOTH
    assert classify('  call void asm sideeffect "bar.sync 1, 128;", ""()') == BOTH
    assert classify("  call void @helper(i32 %x)") == BOTH


def test_guard_after_a_triton_barrier_goes():
    text = kernel(TRITON_STORE, TRITON_BARRIER, GUARD, OUR_LOAD, "  ret void")
    assert guards_left(text) == 0


def test_guard_between_a_write_and_a_read_stays():
    text = kernel(TRITON_STORE, GUARD, OUR_LOAD, "  ret void")
    assert guards_left(text) == 1
    text = kernel(OUR_LOAD, GUARD, TRITON_STORE, "  ret void")          # read, then a write: stays
    assert guards_left(text) == 1


def test_reads_on_both_sides_need_no_guard():
    assert guards_left(kernel(OUR_LOAD, GUARD, "  %w = load i32, ptr addrspace(3) %p", "  ret void")) == 0


def test_two_guards_in_a_row_never_both_go():
    text = kernel(TRITON_STORE, GUARD, GUARD, OUR_LOAD, "  ret void")
    out, dropped = prune_guard_barriers(text)
    assert dropped == 1 and out.count("// guard") == 1


def test_loop_back_edge_reaches_a_triton_barrier():
    # loop: our reads, the guard, the back edge; the loop's top is Triton's barrier, then its store.
    text = kernel("  br label %loop",
                  "loop:", TRITON_BARRIER, TRITON_STORE, TRITON_BARRIER, OUR_LOAD, GUARD,
                  "  br i1 %c, label %loop, label %exit",
                  "exit:", GLOBAL_STORE, "  ret void")
    assert guards_left(text) == 0


def test_loop_back_edge_reaches_a_write_without_barrier():
    text = kernel("  br label %loop",
                  "loop:", TRITON_STORE, TRITON_BARRIER, OUR_LOAD, GUARD,
                  "  br i1 %c, label %loop, label %exit",
                  "exit:", "  ret void")
    assert guards_left(text) == 1


def test_every_successor_of_a_switch_is_followed():
    text = kernel(OUR_LOAD, GUARD,
                  "  switch i32 %x, label %a [",
                  "    i32 0, label %b",
                  "  ]",
                  "a:", "  ret void",
                  "b:", TRITON_STORE, "  ret void")
    assert guards_left(text) == 1


def test_text_without_guards_is_returned_as_is():
    text = kernel(TRITON_STORE, TRITON_BARRIER, OUR_LOAD, "  ret void")
    assert prune_guard_barriers(text) == (text, 0)


# ----------------------------------------------------------------------------- calls
#
# A noinline helper is an LLVM function of its own, called from the kernel.  Its guards are
# judged across calls: a walk that reaches the helper's entry (backward) or a ``ret`` (forward)
# goes on at every call of it, and a call of a function of the module is met as what that
# function does (up to its first barrier) instead of "unknown: both".

PLAN_BARRIER = '  call void asm sideeffect "bar.sync 0;", ""()'     # a barrier inside an island's plan
ENTRY_GUARD, EXIT_GUARD = GUARD + ", !dbg !1", GUARD + ", !dbg !2"
HELPER = ("define internal void @helper() {", ENTRY_GUARD, OUR_STORE, PLAN_BARRIER, OUR_LOAD, EXIT_GUARD,
          "  ret void", "}")


def function(name: str, *lines: str) -> str:
    return "\n".join((f"define void @{name}() {{",) + lines + ("}",))


def pruned_both_orders(*functions: str) -> list[str]:
    """The pruned module with its functions in the given order and reversed: the answer must not
    depend on which comes first."""
    return [prune_guard_barriers("\n".join(order) + "\n")[0] for order in (functions, functions[::-1])]


def guards_kept(text: str) -> set[str]:
    return set(re.findall(r"// guard\", \"\"\(\), (!dbg !\d+)", text))


def test_helper_called_twice_keeps_one_guard_between_the_calls():
    """kernel: call @helper; call @helper.  The second call's stores may overwrite bytes the
    first call's loads still read: one guard must stay (stock Triton puts a barrier between the
    two calls).  Which one: the helper's guards are judged first (callees before callers); its
    entry guard sees, backward, the kernel's entry and the first call's exit guard, so it goes;
    the exit guard then sees, forward, the second call's stores and stays.  Before calls were
    followed both went (each walk stopped at the helper's entry or ret with nothing met)."""
    caller = function("k", "  call void @helper()", "  call void @helper()", "  ret void")
    for pruned in pruned_both_orders("\n".join(HELPER), caller):
        assert guards_kept(pruned) == {"!dbg !2"}
        assert not unprotected_pairs(llvm_program(pruned), across_calls=True)


def test_helper_called_once_keeps_no_guard():
    caller = function("k", GLOBAL_STORE, "  call void @helper()", GLOBAL_STORE, "  ret void")
    for pruned in pruned_both_orders("\n".join(HELPER), caller):
        assert guards_kept(pruned) == set()


def test_helper_guards_see_the_callers_accesses():
    # A write in the caller before the call: the entry guard stays; a write after it: the exit guard.
    before = function("k", TRITON_STORE, "  call void @helper()", "  ret void")
    after = function("k", "  call void @helper()", TRITON_STORE, "  ret void")
    for pruned in pruned_both_orders("\n".join(HELPER), before):
        assert guards_kept(pruned) == {"!dbg !1"}
    for pruned in pruned_both_orders("\n".join(HELPER), after):
        assert guards_kept(pruned) == {"!dbg !2"}


def test_helper_called_in_a_loop_keeps_one_guard():
    caller = function("k", "  br label %loop", "loop:", "  call void @helper()",
                      "  br i1 %c, label %loop, label %exit", "exit:", "  ret void")
    for pruned in pruned_both_orders("\n".join(HELPER), caller):
        assert len(guards_kept(pruned)) == 1
        assert not unprotected_pairs(llvm_program(pruned), across_calls=True)


def test_call_of_a_function_without_shared_memory_is_seen_through():
    """The call was "unknown: both" before; now it is what @pure does: nothing, and no barrier,
    so the walk goes on to Triton's barrier and the guard goes.  A callee that writes keeps it."""
    pure = function("pure", "  %n = add i32 %a, 1", "  ret void")
    writes = function("writes", TRITON_STORE, "  ret void")
    kernel_with = lambda callee: function("k", OUR_LOAD, GUARD, f"  call void @{callee}()", TRITON_BARRIER,  # noqa: E731
                                          TRITON_STORE, "  ret void")
    for pruned in pruned_both_orders(pure, kernel_with("pure")):
        assert pruned.count("// guard") == 0
    for pruned in pruned_both_orders(writes, kernel_with("writes")):
        assert pruned.count("// guard") == 1


def test_callee_that_always_synchronises_first_ends_the_walk():
    syncs = function("syncs", TRITON_BARRIER, TRITON_STORE, "  ret void")
    sometimes = function("sometimes", "  br i1 %c, label %sync, label %skip", "sync:", TRITON_BARRIER,
                         "  br label %skip", "skip:", TRITON_STORE, "  ret void")
    for callee, left in (("syncs", 0), ("sometimes", 1)):
        kernel_ = function("k", OUR_LOAD, GUARD, f"  call void @{callee}()", "  ret void")
        for pruned in pruned_both_orders(syncs if callee == "syncs" else sometimes, kernel_):
            assert pruned.count("// guard") == left


def test_recursive_calls_end_and_keep_the_guard():
    """@rec stores, then may call itself: the inner call's guard separates the outer call's
    store from the inner's.  The summaries reach a fixed point; the walks end."""
    rec = function("rec", GUARD, OUR_STORE, "  br i1 %c, label %again, label %done",
                   "again:", "  call void @rec()", "  br label %done", "done:", "  ret void")
    for pruned in pruned_both_orders(rec, function("k", "  call void @rec()", "  ret void")):
        assert pruned.count("// guard") == 1


def test_external_and_indirect_calls_stay_unknown():
    for call in ("  call void @elsewhere()", "  call void %pointer()"):
        text = "declare void @elsewhere()\n" + kernel(OUR_LOAD, GUARD, call, TRITON_BARRIER, "  ret void")
        assert prune_guard_barriers(text)[1] == 0          # the callee may read and write: the guard stays
        assert classify(call) == BOTH


def test_quoted_function_names_are_followed():
    helper = "\n".join(HELPER).replace("@helper", '@"helper.$1"')
    caller = function("k", '  call void @"helper.$1"()', '  call void @"helper.$1"()', "  ret void")
    for pruned in pruned_both_orders(helper, caller):
        assert guards_kept(pruned) == {"!dbg !2"}


# ----------------------------------------------------------------------- real kernels

pytestmark = pytest.mark.usefixtures("private_triton_cache")


def _ptx_barriers(kernel_fn, signature, constexprs, only, monkeypatch, mma_v3: bool):
    """(bar.sync count in the PTX, the plugin's stats) of one sm_90 compile; ``only=None``: stock."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from linear_layouts.passes.drop_in import hook
    if not mma_v3:
        monkeypatch.setenv("DISABLE_MMA_V3", "1")
    hook.reset_stats()
    if only is None:
        hook.disable()
    else:
        hook.enable(only=only)
    signature = dict(signature, **{name: "constexpr" for name in constexprs})
    compiled = triton.compile(ASTSource(kernel_fn, signature, constexprs=constexprs),
                              target=GPUTarget("cuda", 90, 32), options={"num_warps": 8, "num_stages": 3})
    hook.disable()
    return len(re.findall(r"^\s*bar\.sync", compiled.asm["ptx"], re.M)), hook.stats()


MATMUL_FP8 = ({"A": "*fp8e4nv", "B": "*fp8e4nv", "C": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
              {"BM": 128, "BN": 128, "BK": 128})
INT4 = ({"A": "*fp16", "Wq": "*i8", "S": "*fp16", "C": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
        {"BM": 128, "BN": 128, "BK": 64})


def test_pipelined_mma_v2_loads_get_stock_barrier_count(monkeypatch):
    """fp8 matmul on the mma v2 path: our local-load islands in the loop keep no guard of their
    own; the kernel has as many CTA barriers as stock (before pruning: two more per iteration)."""
    from linear_layouts.examples.gpu_kernels import matmul_kernel
    stock, _ = _ptx_barriers(matmul_kernel, *MATMUL_FP8, None, monkeypatch, mma_v3=False)
    ours, stats = _ptx_barriers(matmul_kernel, *MATMUL_FP8, "noop,rename,shuffle,shared,local_load",
                                monkeypatch, mma_v3=False)
    assert stats.local_loads_lowered == 2 and stats.guard_barriers_dropped >= 2
    assert ours == stock


def test_wgmma_operand_allocations_get_stock_barrier_count(monkeypatch):
    """int4 matmul on the wgmma path (these signatures: scalar global loads, no cp.async): the
    dequantised operand and A are our allocations; no guard between the two (distinct live
    buffers), and whatever guard Triton's own barriers make redundant goes (with 3.9's TTGIR the
    one before them: Triton's barrier ends the previous iteration), so the count is stock's."""
    from linear_layouts.examples.gpu_kernels import int4_matmul_kernel
    stock, _ = _ptx_barriers(int4_matmul_kernel, *INT4, None, monkeypatch, mma_v3=True)
    ours, stats = _ptx_barriers(int4_matmul_kernel, *INT4, "noop,rename,shuffle,shared,local_alloc",
                                monkeypatch, mma_v3=True)
    assert stats.local_writes_lowered == 2 and stats.guard_barriers >= 1
    assert ours == stock


# ------------------------------------------------- real kernels: a noinline helper's calls

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit(noinline=True)
def transpose_store(X, Y, N: tl.constexpr):
    """Y = X transposed: the store's layout is not the load's, so Triton converts between them
    (through shared memory: our island), inside a function of its own."""
    rows = tl.arange(0, N)
    x = tl.load(X + rows[:, None] * N + rows[None, :])
    tl.store(Y + rows[None, :] * N + rows[:, None], x)


@triton.jit
def calls_once(X, Y, N: tl.constexpr):
    transpose_store(X, Y, N)


@triton.jit
def calls_twice(X, Y, N: tl.constexpr):
    transpose_store(X, Y, N)
    transpose_store(Y, X, N)


@triton.jit
def calls_in_a_loop(X, Y, T, N: tl.constexpr):
    for _ in range(T):
        transpose_store(X, Y, N)


@triton.jit
def call_then_column_sums(X, Y, S, N: tl.constexpr):
    transpose_store(X, Y, N)
    rows = tl.arange(0, N)
    x = tl.load(Y + rows[:, None] * N + rows[None, :])
    tl.store(S + rows, tl.sum(x, axis=0))     # the rows are spread over the warps: through shared memory


CALLERS = {
    "once": (calls_once, {"X": "*fp32", "Y": "*fp32"}, 1),
    "twice": (calls_twice, {"X": "*fp32", "Y": "*fp32"}, 2),
    "in a loop": (calls_in_a_loop, {"X": "*fp32", "Y": "*fp32", "T": "i32"}, 1),
    "then a reduction": (call_then_column_sums, {"X": "*fp32", "Y": "*fp32", "S": "*fp32"}, 1),
}

def _compile(kernel_fn, signature, plugin: bool):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from linear_layouts.passes.drop_in import hook
    hook.reset_stats()
    if plugin:
        hook.enable()
    else:
        hook.disable()
    try:
        return triton.compile(ASTSource(kernel_fn, dict(signature, N="constexpr"), constexprs={"N": 64}),
                              target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    finally:
        hook.disable()


def _compile_lowered(ttgir: str, path):
    """Our lowering of ``ttgir`` compiled as ``linear_layouts.enable()`` would: islands in, then
    Triton's back end with guard pruning on its LLVM IR."""
    from triton.backends.compiler import GPUTarget

    from linear_layouts.passes.barriers.guard_barriers import guard_pruning
    from linear_layouts.passes.lower_conversions import lower_text
    lowered, outcomes = lower_text(ttgir)
    assert any(o.lowered for o in outcomes)
    path.write_text(lowered)
    with guard_pruning():
        return lowered, triton.compile(str(path), target=GPUTarget("cuda", 90, 32))


def _functions_reversed(ttgir: str) -> str:
    """The module with its ``tt.func``s in the opposite order (each from its ``  tt.func`` line
    to its closing ``  } loc(...)``)."""
    lines = ttgir.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("  tt.func ")]
    ends = [next(j for j in range(i, len(lines)) if lines[j].startswith("  }")) for i in starts]
    functions = [lines[i:j + 1] for i, j in zip(starts, ends)]
    return "\n".join(lines[:starts[0]] + [line for f in functions[::-1] for line in f] + lines[ends[-1] + 1:])


def _barriers(ptx: str) -> int:
    return len(re.findall(r"^\s*(?:bar|barrier)\.sync\s", ptx, re.M))


def _guards_per_function(ttgir: str) -> dict[str, int]:
    """How many guard barriers the islands of each function hold (3.6 quotes a helper's name)."""
    counts, name = {}, None
    for line in ttgir.split("\n"):
        function = re.match(r'  tt\.func (?:\w+ )?@("[^"]+"|[\w.$]+)', line)
        if function:
            name = function.group(1)
            counts[name] = 0
        elif name is not None:
            counts[name] += "// guard" in line
    return counts


@pytest.mark.parametrize("caller", CALLERS)
def test_noinline_helper_calls_are_separated_by_a_barrier(caller, tmp_path):
    """Calls racing on shared memory: a noinline helper whose store goes through our shared-memory
    island, called once, twice in a row, in a loop, or followed by a cross-warp reduction.
    In the PTX a barrier must lie on every path between one call's shared-memory accesses and
    the next call's (or the reduction's), as in stock's, where Triton puts one in the kernel;
    the failure guarded against: both guards of the helper pruned, no barrier.  Checked on the drop-in's
    PTX and on our lowering of stock's TTGIR with its functions in either order, which must
    come out the same; and never more barriers than stock."""
    kernel_fn, signature, calls = CALLERS[caller]
    stock = _compile(kernel_fn, signature, plugin=False)
    ours = _compile(kernel_fn, signature, plugin=True)
    helper_first = _functions_reversed(stock.asm["ttgir"])
    assert helper_first.index("noinline = true") < helper_first.index("tt.func public")
    lowered = {}
    for order, ttgir in (("kernel first", stock.asm["ttgir"]), ("helper first", helper_first)):
        lowered[order] = _compile_lowered(ttgir, tmp_path / f"{order.replace(' ', '_')}.ttgir")
    # Triton keeps the order in the LLVM IR: the two compiles give the pruning both orders.
    kernel_llir, helper_llir = (lowered[o][1].asm["llir"] for o in ("kernel first", "helper first"))
    assert kernel_llir.index("define ptx_kernel") < kernel_llir.index("define internal")
    assert helper_llir.index("define ptx_kernel") > helper_llir.index("define internal")

    assert not unprotected_pairs(ptx_program(stock.asm["ptx"]), across_calls=True)
    for compiled in (ours, lowered["kernel first"][1], lowered["helper first"][1]):
        ptx = compiled.asm["ptx"]
        assert ptx.count("call.uni") == calls
        assert not unprotected_pairs(ptx_program(ptx), across_calls=True)
        assert _barriers(ptx) <= _barriers(stock.asm["ptx"])
    guards = _guards_per_function(lowered["kernel first"][0])
    assert guards == _guards_per_function(lowered["helper first"][0])
    assert [count for name, count in guards.items() if name != kernel_fn.__name__] == [2]   # the helper's island
    assert len({_barriers(c.asm["ptx"]) for c in (ours, lowered["kernel first"][1], lowered["helper first"][1])}) == 1


# ------------------------------------------------------------ soundness on random control flow

from hypothesis import Phase, find, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from linear_layouts.passes.barriers import guard_barriers  # noqa: E402


def _instruction(kind: str, uid: int) -> str:
    """One line of LLVM IR with a unique name, so that it can be found after pruning.  ``C3``:
    a call of ``@f3``; ``X``: a call of a function the module only declares."""
    if kind.startswith("C"):
        return f"  call void @f{kind[1:]}(), !dbg !{uid}"
    return {"W": f"  store i32 %x{uid}, ptr addrspace(3) %p{uid}, align 4",
            "R": f"  %v{uid} = load i32, ptr addrspace(3) %p{uid}, align 4",
            "N": f"  %n{uid} = add i32 %a, {uid}",
            "X": f"  call void @elsewhere(), !dbg !{uid}",
            "G": GUARD + f", !dbg !{uid}",
            "B": TRITON_BARRIER + f", !dbg !{uid}"}[kind]


@st.composite
def _function(draw, callees: list[int] = ()):
    """Blocks of one function: (instruction kinds, branch targets); no branch to the entry."""
    n_blocks = draw(st.integers(1, 4))
    kinds = st.sampled_from("WRNGGB")
    if callees:
        kinds = st.one_of(kinds, st.sampled_from([f"C{c}" for c in callees]), st.just("X"))
    blocks = []
    for b in range(n_blocks):
        body = draw(st.lists(kinds, min_size=1, max_size=6))
        targets = draw(st.lists(st.integers(0, n_blocks - 1), max_size=2))
        targets = [t for t in targets if t != 0]          # nothing branches to the entry block
        blocks.append((body, sorted(set(targets))))
    return blocks


_functions = _function     # one function: the kernel alone


@st.composite
def _programs(draw, recursion: bool = False):
    """A kernel ``@f0`` and up to three functions it may call, in loops and branches; each
    function calls later ones only (a DAG), or, with ``recursion``, any but the kernel."""
    n = draw(st.integers(2, 4))
    return [draw(_function([c for c in range(1, n) if recursion or c > f])) for f in range(n)]


def _function_text(name: str, blocks, uid: int) -> tuple[list[str], int]:
    lines = [f"define void @{name}() {{"]
    for b, (body, targets) in enumerate(blocks):
        if b:
            lines.append(f"b{b}:")
        for kind in body:
            uid += 1
            lines.append(_instruction(kind, uid))
        lines.append(terminator(targets))
    return lines + ["}"], uid


def _text(blocks) -> str:
    return _program_text([blocks])


def _program_text(functions, order=None) -> str:
    """The module: ``declare @elsewhere`` and the functions ``@f0``... in ``order`` (default:
    by number); every instruction keeps its uid whatever the order."""
    texts, uid = [], 0
    for number, blocks in enumerate(functions):
        lines, uid = _function_text(f"f{number}", blocks, uid)
        texts.append("\n".join(lines))
    order = order or range(len(functions))
    return "declare void @elsewhere()\n" + "\n".join(texts[i] for i in order) + "\n"


def _unprotected_pairs(text: str, depth: int = 4) -> set:
    """(access, access) pairs that may conflict and have a path between them that crosses no
    barrier (guard or Triton's), calls followed: by brute force on the text (support.barrier_paths)."""
    return unprotected_pairs(llvm_program(text), depth=depth)


def _pruning_is_sound(functions, depth: int = 4) -> bool:
    text = _program_text(functions)
    pruned, dropped = prune_guard_barriers(text)
    assert dropped == text.count("// guard") - pruned.count("// guard")
    return _unprotected_pairs(pruned, depth) <= _unprotected_pairs(text, depth)


@settings(max_examples=300, deadline=None)
@given(_functions())
def test_pruning_never_leaves_a_conflicting_pair_unseparated(blocks):
    """Whatever guards go, every pair of conflicting accesses a barrier separated on every path
    before still is; pairs that were already unseparated (Triton's own business) may stay."""
    assert _pruning_is_sound([blocks])


@settings(max_examples=300, deadline=None)
@given(_programs())
def test_pruning_across_calls_never_leaves_a_conflicting_pair_unseparated(functions):
    """The same on random call graphs (a kernel and up to three functions, calls inside loops
    and branches, calls of a declared-only function): the brute-force search follows every
    call and every return to its call.  And the result does not depend on the functions' order
    in the text: the same guards go."""
    assert _pruning_is_sound(functions)
    forward = prune_guard_barriers(_program_text(functions))[0]
    backward = prune_guard_barriers(_program_text(functions, order=range(len(functions))[::-1]))[0]
    assert sorted(forward.split("\n")) == sorted(backward.split("\n"))


@settings(max_examples=150, deadline=None)
@given(_programs(recursion=True))
def test_pruning_with_recursion_never_leaves_a_conflicting_pair_unseparated(functions):
    """With recursive calls (Triton has none, but the summaries must still be sound): the search
    keeps call stacks up to 3 calls deep.  Any pair it finds is real, and a sound pruning leaves
    no path of any depth newly unseparated, so the bound can hide a failure but not invent one."""
    assert _pruning_is_sound(functions, depth=3)


def _unsound_example(mutation, monkeypatch):
    """A random program on which pruning, broken by ``mutation``, leaves a pair unseparated
    (``hypothesis.find`` raises if it finds none).  The first one found, unshrunk (the tests ask
    only that one exists: shrinking it took most of their time, 6 to 33 s a run), from a fixed
    seed."""
    with monkeypatch.context() as patch:
        mutation(patch)
        return find(_programs(), lambda functions: not _pruning_is_sound(functions),
                    settings=settings(max_examples=2000, deadline=None, database=None, derandomize=True,
                                      phases=[Phase.generate]))


# The two tests below check the property's power on pruning alone (our Python over LLVM IR text,
# nothing of Triton): the same answer under every release, so make test-compat leaves them out.
@pytest.mark.release_independent
def test_the_property_fails_if_walks_stop_at_function_boundaries(monkeypatch):
    """The bug this guards against: walks that stop at a function's entry or ``ret``
    instead of going on at its call sites.  The property test must catch it."""
    walk = guard_barriers._Program.walk
    example = _unsound_example(lambda patch: patch.setattr(
        guard_barriers._Program, "walk",
        lambda self, kinds, summaries, starts, forward, leave: walk(self, kinds, summaries, starts, forward, False)),
        monkeypatch)
    assert len(example) >= 2


@pytest.mark.release_independent
def test_the_property_fails_if_calls_are_met_as_nothing(monkeypatch):
    """Calls of functions of the module crossed as if they did nothing (empty, transparent
    summaries) instead of what the callee does: caught too."""
    def nothing(self, kinds):
        return guard_barriers._Summaries({n: 0 for n in self.functions}, {n: 0 for n in self.functions},
                                         {n: True for n in self.functions})
    example = _unsound_example(lambda patch: patch.setattr(guard_barriers._Program, "summaries", nothing),
                               monkeypatch)
    assert len(example) >= 2


# ----------------------------------------------------------------------------- lazy classification
#
# Lines are classified when a walk first meets them (passes.barriers.guard_barriers._LineKinds): in a
# large kernel the walks from a guard stop at the nearest barriers.  The answer must be the one
# an eager classification of every line gives.

def _pruned_with_eager_kinds(text: str, monkeypatch) -> tuple[str, int]:
    from linear_layouts.passes.barriers import guard_barriers

    class EagerKinds(dict):
        def __init__(self, lines):
            super().__init__((index, classify(line)) for index, line in enumerate(lines))

    with monkeypatch.context() as patched:
        patched.setattr(guard_barriers, "_LineKinds", EagerKinds)
        return prune_guard_barriers(text)


@pytest.mark.parametrize("text", [
    kernel(TRITON_STORE, GUARD, OUR_LOAD, "  ret void"),
    kernel(TRITON_STORE, TRITON_BARRIER, GUARD, OUR_LOAD, GUARD, OUR_STORE, "  ret void"),
    kernel("  br label %1", "1:", OUR_LOAD, GUARD, OUR_STORE, "  br i1 %c, label %1, label %2", "2:", "  ret void"),
    "\n".join(HELPER) + "\n" + function("k", "  call void @helper()", "  call void @helper()", "  ret void") + "\n",
])
def test_lazy_classification_prunes_as_the_eager_one(text, monkeypatch):
    assert prune_guard_barriers(text) == _pruned_with_eager_kinds(text, monkeypatch)


def test_lines_past_the_nearest_barriers_are_never_classified(monkeypatch):
    from linear_layouts.passes.barriers import guard_barriers

    far = [TRITON_STORE] * 500
    text = kernel(*far, TRITON_BARRIER, OUR_STORE, GUARD, OUR_LOAD, TRITON_BARRIER, *far, "  ret void")
    seen = []
    real = guard_barriers.classify
    monkeypatch.setattr(guard_barriers, "classify", lambda line: (seen.append(line), real(line))[1])
    assert prune_guard_barriers(text) == _pruned_with_eager_kinds(text, monkeypatch)
    assert prune_guard_barriers(text)[1] == 0           # write before, read after: the guard stays
    seen.clear()
    prune_guard_barriers(text)
    assert 0 < len(seen) < 10


# ------------------------------------------------------------------ the lines a walk looks at
#
# A walk looks only at lines that may access shared memory, synchronise or call, in the blocks
# it enters, from its guard outward (passes.barriers.guard_barriers._Block); blocks come from the
# labels and each block's terminator.  Each case: the exact text out.

def plain(count: int, first: int = 0) -> list[str]:
    """``count`` lines of arithmetic (no access, no call): the lines a walk steps over."""
    return [f"  %n{first + i} = add i32 %a, {first + i}" for i in range(count)]


def without(text: str, line: str) -> str:
    """``text`` less its one line ``line`` (as the pruning drops a guard)."""
    assert text.count(line + "\n") == 1
    return text.replace(line + "\n", "", 1)


def test_the_pointer_operand_after_brackets():
    """The pointer is the operand after the first comma outside brackets: after a vector type
    (one match), after a struct or a vector constant whose commas do not count."""
    assert classify("  store <2 x i32> %v, ptr addrspace(3) %p, align 8") == WRITE
    assert classify("  store <2 x i32> %v, ptr addrspace(1) %p, align 8") == 0
    assert classify("  store { i32, i32 } %s, ptr addrspace(3) %p") == WRITE
    assert classify("  store { i32, i32 } %s, ptr addrspace(1) %p") == 0
    assert classify("  store <2 x i32> <i32 1, i32 2>, ptr addrspace(1) %p") == 0
    assert classify("  store <2 x i32> <i32 1, i32 2>, ptr %p") == WRITE
    assert classify("  %v = load <2 x float>, ptr addrspace(3) getelementptr (i8, ptr addrspace(3) @s, i32 8)") == READ


def test_accesses_far_apart_in_one_block():
    """The store and the load 300 lines from the guard, nothing between that matters: the guard
    stays; with Triton's barrier past the arithmetic behind it, it goes."""
    kept = kernel(TRITON_STORE, *plain(300), GUARD, *plain(300, 300), OUR_LOAD, "  ret void")
    assert prune_guard_barriers(kept) == (kept, 0)
    fenced = kernel(TRITON_STORE, TRITON_BARRIER, *plain(300), GUARD, *plain(300, 300), OUR_LOAD, "  ret void")
    assert prune_guard_barriers(fenced) == (without(fenced, GUARD), 1)


def test_blocks_with_nothing_that_matters_are_crossed():
    """Behind the guard, two blocks of arithmetic only (a branch and a join), then the store:
    the guard stays; with Triton's barrier after the store, it goes."""
    def text(*entry: str) -> str:
        return kernel(*entry, "  br i1 %c, label %left, label %right",
                      "left:", *plain(50), "  br label %join",
                      "right:", *plain(50, 50), "  br label %join",
                      "join:", GUARD, OUR_LOAD, "  ret void")
    kept = text(TRITON_STORE)
    assert prune_guard_barriers(kept) == (kept, 0)
    fenced = text(TRITON_STORE, TRITON_BARRIER)
    assert prune_guard_barriers(fenced) == (without(fenced, GUARD), 1)


def test_both_targets_of_a_branch_are_followed():
    """A block's successors are read off its terminator: the store behind the second target of
    the guard's block's branch keeps the guard; on neither branch, it goes."""
    def text(second: str) -> str:
        return kernel(OUR_LOAD, GUARD, *plain(20), "  br i1 %c, label %first, label %second",
                      "first:", *plain(20, 20), "  ret void",
                      "second:", *plain(20, 40), second, "  ret void")
    kept = text(TRITON_STORE)
    assert prune_guard_barriers(kept) == (kept, 0)
    dropped = text(GLOBAL_STORE)
    assert prune_guard_barriers(dropped) == (without(dropped, GUARD), 1)


def test_a_call_far_from_the_guard_is_met():
    """A call of a function that writes, 200 lines of arithmetic after the guard (after our
    reads): the guard stays; a function with no access there, and it goes."""
    writes = function("writes", TRITON_STORE, "  ret void")
    pure = function("pure", *plain(3), "  ret void")
    for name, callee, dropped in (("writes", writes, False), ("pure", pure, True)):
        caller = function("k", OUR_LOAD, GUARD, *plain(200), f"  call void @{name}()", *plain(200, 200),
                          "  ret void")
        for text in ("\n".join((callee, caller)) + "\n", "\n".join((caller, callee)) + "\n"):
            assert prune_guard_barriers(text) == ((without(text, GUARD), 1) if dropped else (text, 0))


def test_a_helpers_guard_sees_past_a_call_in_the_middle_of_a_block():
    """The helper's exit guard: its walk leaves the helper at its ``ret`` and goes on after the
    call, in the middle of the caller's block: 100 lines later, a store (the guard stays), or
    Triton's barrier first (it goes).  The entry guard: nothing but arithmetic before the call."""
    for after, kept in (([TRITON_STORE], {"!dbg !2"}), ([TRITON_BARRIER, TRITON_STORE], set())):
        caller = function("k", *plain(100), "  call void @helper()", *plain(100, 100), *after, "  ret void")
        for pruned in pruned_both_orders("\n".join(HELPER), caller):
            assert guards_kept(pruned) == kept


def test_comments_are_not_instructions():
    """A comment that spells a barrier neither stops a walk nor counts as an access."""
    text = kernel(TRITON_STORE, "  ; call void @llvm.nvvm.barrier0()", GUARD, OUR_LOAD, "  ret void")
    assert prune_guard_barriers(text) == (text, 0)
    text = kernel(TRITON_BARRIER, "  ; store i32 %x, ptr addrspace(3) %p", GUARD, OUR_LOAD, "  ret void")
    assert prune_guard_barriers(text) == (without(text, GUARD), 1)


def test_a_body_that_starts_with_a_label():
    """The first label is the entry block (nothing before it): the backward walk leaves the
    kernel there, having met nothing, and the guard goes."""
    text = kernel("start:", *plain(5), "  br label %next", "next:", GUARD, OUR_LOAD, TRITON_STORE, "  ret void")
    assert prune_guard_barriers(text) == (without(text, GUARD), 1)


def test_an_indirect_call_counts_only_where_a_walk_leaves_the_function():
    """A call through a pointer could enter any function, so a walk that leaves one meets both
    kinds; a guard whose walks stop at barriers is judged without it."""
    fenced = kernel(TRITON_BARRIER, GUARD, OUR_LOAD, TRITON_BARRIER, "  call void %p()", "  ret void")
    assert prune_guard_barriers(fenced) == (without(fenced, GUARD), 1)
    leaves = kernel(GUARD, OUR_LOAD, TRITON_BARRIER, "  call void %p()", "  ret void")
    assert prune_guard_barriers(leaves) == (leaves, 0)
    direct = kernel(GUARD, OUR_LOAD, TRITON_BARRIER, "  call void @elsewhere()", "  ret void")
    assert prune_guard_barriers("declare void @elsewhere()\n" + direct)[1] == 1


def test_two_guards_dropped_from_the_middle_of_the_text():
    """The text out is the text in less exactly the dropped lines, wherever they are."""
    first, second = GUARD + ", !dbg !1", GUARD + ", !dbg !2"
    text = ("; a module\n" + kernel(TRITON_BARRIER, first, OUR_LOAD, *plain(3), TRITON_BARRIER, second, OUR_LOAD,
                                    "  ret void") + "declare void @elsewhere()\n")
    assert prune_guard_barriers(text) == (without(without(text, first), second), 2)


def test_lines_far_from_the_guard_are_never_read(monkeypatch):
    """A guard between two of Triton's barriers in a block of 5,000 lines: the walks look at the
    few lines between the barriers, not at the block (nor at the other blocks)."""
    from linear_layouts.passes.barriers import guard_barriers

    text = kernel(*plain(2500), TRITON_BARRIER, TRITON_STORE, GUARD, OUR_LOAD, TRITON_BARRIER, *plain(2500, 2500),
                  "  br label %next", "next:", *plain(1000, 5000), "  ret void")
    read = []
    real = guard_barriers.may_access
    monkeypatch.setattr(guard_barriers, "may_access", lambda line: (read.append(line), real(line))[1])
    assert prune_guard_barriers(text) == (text, 0)          # a write behind, a read ahead: it stays
    assert 0 < len(read) < 10
