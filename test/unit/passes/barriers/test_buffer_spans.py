"""passes.barriers.buffer_spans and the guards it saves (passes.barriers.guard_placement): which of
Triton's ops can never touch a conversion's scratch bytes, on modules written for each reason."""

from linear_layouts.passes.barriers.buffer_spans import BufferSpans
from linear_layouts.passes.barriers.guard_placement import GuardPlacement
from linear_layouts.lowering.plan import Method
from linear_layouts.passes.ir.snapshot import parse_module

HEADER = '''#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:80", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%X: !tt.ptr<f16>, %Y: !tt.ptr<f16>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf16, #blocked>
    %xs = tt.splat %X : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked>
    %ys = tt.splat %Y : !tt.ptr<f16> -> tensor<64x64x!tt.ptr<f16>, #blocked1>
'''
FOOTER = '''    tt.return
  }
}
'''
BUF = "!ttg.memdesc<2x64x64xf16, #shared, #smem, mutable>"
SLOT = "!ttg.memdesc<64x64xf16, #shared, #smem, mutable>"


# A software-pipelined loop's parts: the buffers %buf, allocated before the loop, and its first async
# copy, the loop's top (LOOP_TOP); an iteration's wait, local load of %buf and next copy (ITERATION).
LOOP_TOP = f'''    %buf = ttg.local_alloc : () -> {BUF}
    %s0 = ttg.memdesc_index %buf[%c0] : {BUF} -> {SLOT}
    %t0 = ttg.async_copy_global_to_local %xs, %s0 : tensor<64x64x!tt.ptr<f16>, #blocked> -> <64x64xf16, #shared, #smem, mutable>
    %g0 = ttg.async_commit_group tokens %t0
    %out:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %tok = %g0) -> (tensor<64x64xf16, #blocked>, !ttg.async.token)  : i32 {{
'''
ITERATION = f'''      %w = ttg.async_wait %tok {{num = 0 : i32}}
      %s = ttg.memdesc_index %buf[%c0] : {BUF} -> {SLOT}
      %v = ttg.local_load %s token %w : {SLOT} -> tensor<64x64xf16, #blocked>
      %acc2 = arith.addf %acc, %v : tensor<64x64xf16, #blocked>
      %t = ttg.async_copy_global_to_local %xs, %s : tensor<64x64x!tt.ptr<f16>, #blocked> -> <64x64xf16, #shared, #smem, mutable>
      %g = ttg.async_commit_group tokens %t
'''


def module(body: str):
    return parse_module(HEADER + body + FOOTER)


def spans_of(body: str):
    """(spans, the island: the one convert_layout, Triton's ops by name -> list)."""
    m = module(body)
    walked = list(m.walk())
    island = next(op for op in walked if op.name == "ttg.convert_layout")
    named = {}
    for op in walked:
        named.setdefault(op.name, []).append(op)
    return m, walked, BufferSpans(walked), island, named


PIPELINED = LOOP_TOP + f'''      %c = ttg.convert_layout %acc : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #blocked1>
      tt.store %ys, %c : tensor<64x64x!tt.ptr<f16>, #blocked1>
{ITERATION}      scf.yield %acc2, %g : tensor<64x64xf16, #blocked>, !ttg.async.token
    }}
    %done = ttg.async_wait {{num = 0 : i32}}
    ttg.local_dealloc %buf : {BUF}
'''


def test_the_pipelines_buffers_span_the_island():
    _, walked, spans, island, named = spans_of(PIPELINED)
    for name in ("ttg.local_alloc", "ttg.local_load", "ttg.async_copy_global_to_local", "ttg.async_wait",
                 "ttg.async_commit_group", "ttg.local_dealloc"):
        assert all(spans.apart(op, island) for op in named[name]), name
    assert spans.allocations_of(named["ttg.local_load"][0].operands[0]) == named["ttg.local_alloc"]


def test_the_guards_of_the_pipelined_island():
    m, walked, _, island, _ = spans_of(PIPELINED)
    guards = GuardPlacement(m, [(island, Method.SHARED)])
    assert guards.before(island) and not guards.after(island) and guards.before_alone(island)


def test_without_a_use_after_the_island_nothing_is_apart():
    # The island last in the loop body, after every use of %buf, and no deallocation after the
    # loop: no use of %buf follows the island in the text.  (Triton's post-order ids would
    # still make the loop op itself a later use; we do not lean on that: not apart, guards.)
    body = LOOP_TOP + f'''{ITERATION}      %c = ttg.convert_layout %acc2 : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #blocked1>
      tt.store %ys, %c : tensor<64x64x!tt.ptr<f16>, #blocked1>
      scf.yield %acc2, %g : tensor<64x64xf16, #blocked>, !ttg.async.token
    }}
'''
    m, walked, spans, island, named = spans_of(body)
    assert not any(spans.apart(op, island) for op in named["ttg.local_load"] + named["ttg.async_copy_global_to_local"])
    assert not spans.apart(named["ttg.async_wait"][0], island)
    assert spans.apart(named["ttg.async_commit_group"][0], island)          # accesses nothing
    guards = GuardPlacement(m, [(island, Method.SHARED)])
    assert guards.before(island) and guards.after(island) and not guards.before_alone(island)


def test_a_buffer_allocated_after_the_island_is_not_apart():
    body = '''    %out = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf16, #blocked>)  : i32 {
      %c = ttg.convert_layout %acc : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #blocked1>
      tt.store %ys, %c : tensor<64x64x!tt.ptr<f16>, #blocked1>
      %v = tt.load %xs : tensor<64x64x!tt.ptr<f16>, #blocked>
      %m = ttg.local_alloc %v : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem>
      %d = ttg.local_load %m : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #blocked>
      %acc2 = arith.addf %acc, %d : tensor<64x64xf16, #blocked>
      scf.yield %acc2 : tensor<64x64xf16, #blocked>
    }
'''
    m, walked, spans, island, named = spans_of(body)
    assert not spans.apart(named["ttg.local_alloc"][0], island)
    assert not spans.apart(named["ttg.local_load"][0], island)
    guards = GuardPlacement(m, [(island, Method.SHARED)])
    assert guards.before(island) and guards.after(island) and not guards.before_alone(island)


def test_a_memdesc_carried_by_the_loop_is_traced_to_its_allocation():
    body = f'''    %buf = ttg.local_alloc : () -> {BUF}
    %s0 = ttg.memdesc_index %buf[%c0] : {BUF} -> {SLOT}
    %out:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %slot = %s0) -> (tensor<64x64xf16, #blocked>, {SLOT})  : i32 {{
      %c = ttg.convert_layout %acc : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #blocked1>
      tt.store %ys, %c : tensor<64x64x!tt.ptr<f16>, #blocked1>
      %v = ttg.local_load %slot : {SLOT} -> tensor<64x64xf16, #blocked>
      %acc2 = arith.addf %acc, %v : tensor<64x64xf16, #blocked>
      %next = ttg.memdesc_index %buf[%c1] : {BUF} -> {SLOT}
      scf.yield %acc2, %next : tensor<64x64xf16, #blocked>, {SLOT}
    }}
    ttg.local_dealloc %buf : {BUF}
'''
    _, walked, spans, island, named = spans_of(body)
    load = named["ttg.local_load"][0]
    assert spans.allocations_of(load.operands[0]) == named["ttg.local_alloc"]     # the initial and the yielded
    assert spans.apart(load, island)


def test_ops_with_scratch_of_their_own_are_never_apart():
    body = '''    %c = ttg.convert_layout %zero : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #blocked1>
    tt.store %ys, %c : tensor<64x64x!tt.ptr<f16>, #blocked1>
    %r = "tt.reduce"(%zero) <{axis = 0 : i32}> ({
    ^bb0(%a: f16, %b: f16):
      %s = arith.addf %a, %b : f16
      tt.reduce.return %s : f16
    }) : (tensor<64x64xf16, #blocked>) -> tensor<64xf16, #ttg.slice<{dim = 0, parent = #blocked}>>
'''
    _, walked, spans, island, named = spans_of(body)
    assert not spans.apart(named["tt.reduce"][0], island)
