"""passes.guard_barriers: our guard barriers go only where Triton's own already order every
access they would; on hand-written LLVM IR (each case one reason to keep or drop) and on real
kernels compiled by the installed Triton, where the barrier count must come out as stock's."""

import re

import pytest

from linear_layouts.passes.guard_barriers import BOTH, READ, WRITE, classify, prune_guard_barriers

GUARD = '  call void asm sideeffect "bar.sync 0; // guard", ""()'
TRITON_BARRIER = "  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)"
TRITON_BARRIER_36 = "  call void @llvm.nvvm.barrier0()"
OUR_LOAD = '  %v = call i32 asm sideeffect "ld.shared.b32 $0, [$1];", "=r,r"(i32 %a)'
OUR_STORE = '  call void asm sideeffect "st.shared.b32 [$0], $1;", "r,r"(i32 %a, i32 %b)'
TRITON_STORE = "  store i32 %x, ptr addrspace(3) %p, align 4"
GLOBAL_STORE = '  call void asm sideeffect "@$2 st.global.b32 [ $1 + 0 ], { $0 };", "r,l,b"(i32 %x, ptr addrspace(1) %q, i1 true)'


def kernel(*blocks: str) -> str:
    return "define void @k() {\n" + "\n".join(blocks) + "\n}\n"


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


# ----------------------------------------------------------------------- real kernels

pytestmark = pytest.mark.usefixtures("private_triton_cache")


def _ptx_barriers(kernel_fn, signature, constexprs, only, monkeypatch, mma_v3: bool):
    """(bar.sync count in the PTX, the plugin's stats) of one sm_90 compile; ``only=None``: stock."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from linear_layouts.passes import hook
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


# ------------------------------------------------------------ soundness on random control flow

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_KINDS = {"W": WRITE, "R": READ, "N": 0}


def _instruction(kind: str, uid: int) -> str:
    """One line of LLVM IR with a unique name, so that it can be found after pruning."""
    return {"W": f"  store i32 %x{uid}, ptr addrspace(3) %p{uid}, align 4",
            "R": f"  %v{uid} = load i32, ptr addrspace(3) %p{uid}, align 4",
            "N": f"  %n{uid} = add i32 %a, {uid}",
            "G": GUARD + f", !dbg !{uid}",
            "B": TRITON_BARRIER + f", !dbg !{uid}"}[kind]


@st.composite
def _functions(draw):
    n_blocks = draw(st.integers(1, 4))
    blocks = []
    for b in range(n_blocks):
        body = draw(st.lists(st.sampled_from("WRNGGB"), min_size=1, max_size=6))
        targets = draw(st.lists(st.integers(0, n_blocks - 1), max_size=2))
        targets = [t for t in targets if t != 0]          # nothing branches to the entry block
        blocks.append((body, sorted(set(targets))))
    return blocks


def _text(blocks) -> str:
    lines, uid = [], 0
    for b, (body, targets) in enumerate(blocks):
        if b:
            lines.append(f"b{b}:")
        for kind in body:
            uid += 1
            lines.append(_instruction(kind, uid))
        if not targets:
            lines.append("  ret void")
        elif len(targets) == 1:
            lines.append(f"  br label %b{targets[0]}")
        else:
            lines.append(f"  br i1 %c, label %b{targets[0]}, label %b{targets[1]}")
    return kernel(*lines)


def _unprotected_pairs(text: str) -> set:
    """(access line, access line) pairs that may conflict and have a path between them that
    crosses no barrier (guard or Triton's): computed on the text alone, by brute force."""
    body = text.split("\n")[1:-2]
    blocks, current = {"entry": []}, "entry"
    for line in body:
        if line.endswith(":") and not line.startswith(" "):
            current = line[:-1]
            blocks[current] = []
        else:
            blocks[current].append(line)

    def kind(line):
        if "// guard" in line or "barrier.cta" in line:
            return "barrier"
        return WRITE if line.lstrip().startswith("store") else READ if " = load " in line else 0

    def successors(name):
        last = blocks[name][-1]
        return [t.split()[0].rstrip(",") for t in last.split("label %")[1:]]

    pairs = set()
    for name, lines in blocks.items():
        for i, line in enumerate(lines):
            first = kind(line)
            if first not in (READ, WRITE):
                continue
            seen, work = set(), [(name, i + 1)]
            while work:
                block, at = work.pop()
                stopped = False
                for other in blocks[block][at:]:
                    k = kind(other)
                    if k == "barrier":
                        stopped = True
                        break
                    if k in (READ, WRITE) and (first | k) & WRITE:
                        pairs.add((line.strip(), other.strip()))
                if not stopped:
                    for nxt in successors(block):
                        if nxt not in seen:
                            seen.add(nxt)
                            work.append((nxt, 0))
    return pairs


@settings(max_examples=300, deadline=None)
@given(_functions())
def test_pruning_never_leaves_a_conflicting_pair_unseparated(blocks):
    """Whatever guards go, every pair of conflicting accesses a barrier separated on every path
    before still is; pairs that were already unseparated (Triton's own business) may stay."""
    text = _text(blocks)
    pruned, dropped = prune_guard_barriers(text)
    assert dropped == text.count("// guard") - pruned.count("// guard")
    assert _unprotected_pairs(pruned) <= _unprotected_pairs(text)
