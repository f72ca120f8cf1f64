"""Islands built in place (the drop-in's default under triton 3.6, opt-in under 3.7-3.9:
``LINEAR_LAYOUTS_IN_PLACE``, ``plugin_config.in_place_enabled``): the drop-in rewrites each
conversion it would lower through shared memory in one round as Triton's own shared-memory ops,
with our swizzle, in Triton's module, instead of splicing an LLVM-dialect island into its text.

Why: a compile with an island pays Triton's print of the module, the island's emission and its
simulation, the re-parse of the edited text and the pruning of our guard barriers
(docs/compile-time.md, "The floor the text round trip puts under a compile with an island").
Triton's bindings create no LLVM-dialect op, but ``gluon_ir.GluonOpBuilder`` creates
``ttg.local_alloc``, ``ttg.local_store`` and ``ttg.local_load`` where we say, and a
``#ttg.shared_linear`` layout from its bases.  A shared-memory plan of one round *is* such a
layout: its ``smem_layout`` maps the scratch offset (``vector``, ``bank``, ``segment`` bits, in
address order) to the element.  So

    %c = ttg.convert_layout %v : tensor<32x32xbf16, #mma> -> tensor<32x32xbf16, #blocked1>

becomes, right after it (its uses moved; the dead convert is left to Triton's clean-up),

    %buf = ttg.local_alloc : () -> !ttg.memdesc<32x32xbf16, #ttg.shared_linear<{offset = [[0, 1],
           [0, 2], [0, 4], [1, 0], [0, 8], [0, 16], [8, 0], [16, 0], [2, 8], [4, 16]]}, alignment = 16>,
           #smem, mutable>
    ttg.local_store %v, %buf
    %c2 = ttg.local_load %buf

Worked example of the bases: the plan's swizzle maps ``vector=1`` to element 32 of the
flattened 32x32 tensor (dim0 lowest), which is ``[0, 1]``; ``segment=4`` to 258 = 2 + 8 * 32,
``[2, 8]``.  Store and load through any layout that is a bijection onto the tensor convert
exactly; which instructions come out (``stmatrix``, ``ldmatrix``, vector widths) is Triton's
lowering of the two ops for that layout, and its barrier analysis sees the buffer
(``benchmarks/studies/in_place_islands.py``: on FLA's kernels under 3.6 the instructions are
our islands' in 13 of 16 kernels, stock's exact code in the other 3).

What is not built in place: plans of several rounds, plans whose data stays in each warp of
several (``waits_for_its_warp_only``: Triton's barriers there are the CTA's), shuffle plans,
conversions of several CTAs, the partitions of a warp-specialized kernel, tensors of pointers,
AMD targets, and any conversion of a kernel that calls a function.  (Booleans are built on
bytes, below.)  Those the pass would lower go the text route after the rewrite
(``passes.drop_in.stage_wrappers``): the module, as rewritten, is printed and they are spliced as
islands; the built conversions, dead by then, are left to Triton (``plans.built_in_place``).
Why both: on held-out conversions the plans this route does not build are where most of the
text route's gain is (``benchmarks/results/plan_fresh_5003_5113_in_place.md``).  One kind of them
is left to Triton instead (``not_worth_a_text_route``): in a kernel whose work is in a loop, a
conversion outside every loop on a tensor that fits one register a thread, which cannot pay back
the text route's print and re-parse of the whole module.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

from ...lowering.choosing.lowering_choice import kept_among_islands
from ...lowering.choosing.plan_memory import ModulePlans
from ...lowering.plan import Method, Scope
from ...lowering.target import Vendor
from ..ir.bindings import op_names
from ..ir.parsing import parse_type, triton_module_from_text
from ..ir.snapshot import snapshot_of
from ..ir.operations import Value
from ..lower_conversions import LowerConversions, plan_module
from .plugin_config import IN_PLACE_VARIABLE, in_place_enabled  # noqa: F401  (read here, kept in plugin_config for its cache key)
from .types_first import conversion_choices

# The element types built in place: TTGIR's spelling -> the builder's method for the buffer's type.
_ELEMENT_TYPES = {"bf16": "get_bf16_ty", "f16": "get_half_ty", "f32": "get_float_ty", "f64": "get_double_ty",
                  "i8": "get_int8_ty", "i16": "get_int16_ty", "i32": "get_int32_ty", "i64": "get_int64_ty",
                  "f8E4M3FN": "get_fp8e4nv_ty", "f8E5M2": "get_fp8e5_ty", "i1": "get_int8_ty"}

# Booleans go through memory as bytes, as in Triton's own conversions (and as our plans count
# them: ``lowering/element_type.py``, i1 stored in 8 bits): the source widened to i8 before the
# store (``arith.extui``, 0 -> 0, 1 -> 1), the load narrowed back (``arith.trunci``), both exact
# on the two values an i1 holds.  Example: ``tensor<64x64xi1, #blocked2> -> #mma`` becomes
#
#     %w = arith.extui %v : tensor<64x64xi1, #blocked2> to tensor<64x64xi8, #blocked2>
#     ttg.local_store %w, %buf        (an i8 buffer in our swizzle)
#     %l = ttg.local_load %buf : ... -> tensor<64x64xi8, #mma>
#     %c = arith.trunci %l : tensor<64x64xi8, #mma> to tensor<64x64xi1, #mma>
_WIDENED_TO_BYTES = "i1"


def offset_bases(plan, shape: list[int]) -> Optional[list[list[int]]]:
    """The ``#ttg.shared_linear`` offset bases of a one-round shared-memory plan (see the module
    docstring), or None where its swizzle is not a bijection onto the tensor (then it is not
    built in place)."""
    swizzle = plan.shared.smem_layout
    flat = [element for dim in ("vector", "bank", "segment") for (element,) in swizzle.bases.get(dim, [])]
    if not flat:
        # A buffer of one element (legacy mode plans a 1-element tensor through shared memory):
        # Triton's ``get_shared_linear_layout`` crashes the process on an empty basis list.
        return None
    elements = 1
    for size in shape:
        elements *= size
    if (1 << len(flat)) != elements or not _independent(flat):
        return None
    bases = []
    for element in flat:
        coords = []
        for size in shape:              # the flattened index has dim0 lowest
            coords.append(element % size)
            element //= size
        bases.append(coords)
    return bases


def _independent(vectors: list[int]) -> bool:
    """The F2 vectors (ints) are linearly independent (none zero, no combination zero)."""
    pivots: dict[int, int] = {}
    for v in vectors:
        while v:
            top = v.bit_length() - 1
            if top not in pivots:
                pivots[top] = v
                break
            v ^= pivots[top]
        if not v:
            return False
    return True


class InPlace(NamedTuple):
    """What :func:`lower_in_place` did: conversions built in place, and conversions the pass
    would lower that were not (several rounds, shuffles, partitions...: the text route's)."""

    built: int
    left_ours: int
    snapshot: object = None     # the module as it was read: still the module where nothing was built


def lower_in_place(handle, text: str, name: str, lowering: LowerConversions, plans: ModulePlans) -> InPlace:
    """Rewrite, in ``handle`` (Triton's module; ``text`` its print), each conversion the pass
    would lower through shared memory in one round, as the module docstring shows; say how many,
    and how many others the pass would lower (the drop-in splices those as text afterwards:
    the built ones are remembered in ``plans.built_in_place``, so that pass leaves them)."""
    from triton._C.libtriton import gluon_ir

    snapshot = snapshot_of(handle, text, f"<{name}>")
    builder = gluon_ir.GluonOpBuilder(handle.context)
    # A kernel that calls a function (a noinline helper) builds nothing in place: Triton's barrier
    # analysis does not order a helper's buffer between two calls of it (the store of the second
    # call races the load of the first; test_guard_barriers' helper called twice), where the text
    # route's guards do.
    calls = any(op.name == "tt.call" for op in snapshot.walk())
    threads = handle.get_int_attr("ttg.num-warps") * handle.get_int_attr("ttg.threads-per-warp")
    loops = any(op.name in LOOPS for op in snapshot.walk())
    built = left_ours = 0
    for op, outcome in plan_module(snapshot, lowering, gate_first=True, plans=plans):
        if outcome.plan is None:
            continue
        bases = None if calls else _buildable(op, outcome)
        # (a function's top block runs once a program only where no function is called: a
        # helper's runs at every call)
        if bases is None and not calls and op.name == "ttg.convert_layout" and \
                not_worth_a_text_route(op._handle, op.results[0].tensor_type, threads, loops):
            plans.left_to_stock.add(op._handle.get_result(0).id())
            continue
        if bases is None:
            left_ours += 1
            continue
        build_in_place(builder, op._handle, op.results[0].tensor_type, bases, plans)
        built += 1
    return InPlace(built, left_ours, snapshot)


def lower_in_place_from_types(handle, config, plans: ModulePlans) -> Optional[InPlace]:
    """:func:`lower_in_place` without a snapshot, for a module of an NVIDIA target with neither a
    warp-specialized region nor a call (the caller knows its op names): there the pass decides
    each conversion from its types alone (``types_first``; ``lower_conversions._decide_op`` sees
    no partition), so the choices asked from them are the pass's, twins kept among islands as it
    keeps them.  None where they cannot be asked so (another pipeline, an unknown target, AMD)."""
    from triton._C.libtriton import gluon_ir

    answered = conversion_choices(handle, config, plans)
    if answered is None or any(choice.ours and choice.plan.target.vendor is not Vendor.NVIDIA
                               for _, choice in answered):
        return None
    builder = gluon_ir.GluonOpBuilder(handle.context)
    threads = handle.get_int_attr("ttg.num-warps") * handle.get_int_attr("ttg.threads-per-warp")
    loops = bool(LOOPS.intersection(op_names(handle)))
    built = left_ours = 0
    for (op, _), choice in zip(answered, kept_among_islands([choice for _, choice in answered])):
        if not choice.ours:
            continue
        result = op.get_result(0)
        tensor = Value(str(result.get_type()), None, 0).tensor_type
        bases = _buildable_plan(choice.plan, tensor)
        if bases is None and not_worth_a_text_route(op, tensor, threads, loops):
            plans.left_to_stock.add(result.id())
            continue
        if bases is None:
            left_ours += 1
            continue
        build_in_place(builder, op, tensor, bases, plans)
        built += 1
    return InPlace(built, left_ours)


# Ops that repeat a kernel's work (``not_worth_a_text_route``).
LOOPS = frozenset({"scf.for", "scf.while"})


def not_worth_a_text_route(op, tensor, threads: int, kernel_loops: bool) -> bool:
    """Whether the drop-in leaves the conversion ``op`` to Triton rather than take the text route
    for it (a plan not built in place: shuffles, several rounds): in a kernel whose work repeats
    in a loop (``kernel_loops``), a conversion outside every loop on a tensor that fits one
    register a thread (``runs_once_in_a_register``).

    Why: the text route prints the whole module, parses it into a snapshot and back after
    splicing: on FLA's ``gla_bwd_inter`` under triton 3.6, 33 of the plugin's 52 ms, its compile
    +13% over stock's where the compile-time target is at most +10% a kernel
    (``benchmarks/results/compile_time_heldout_islands_repeats11_3.6.0.md``).  Such a conversion
    runs once a program while the loop runs many times, so its island's gain is a small share of
    the kernel's time; in a kernel without a loop the same conversion can be a visible share, and
    it stays ours (Liger's ``block_rms_norm`` forward kernel has no loop and such an island; the
    whole op, with the islands of its two kernels, ran 0.989x stock:
    ``benchmarks/results/liger_ops_gpu_b.md``).  Example:
    ``gla_bwd_inter``'s ``tensor<1x16xf32, #mma> -> #blocked`` after its loop, our pick 1 shuffle
    and 3 selects: left to Triton, and the module, whose other islands are built in place, is
    neither printed nor parsed again."""
    return kernel_loops and runs_once_in_a_register(op, tensor, threads)


def runs_once_in_a_register(op, tensor, threads: int) -> bool:
    """Whether the ``ttg.convert_layout`` ``op`` (Triton's op handle; its result of type
    ``tensor``) sits in its function's top block (no loop or branch around it: once a program
    where no function is called) on a tensor whose elements together fit one 32-bit register a
    thread of the CTA (``threads``).  Example: ``tensor<1x16xf32, #blocked>`` after a loop, 128
    threads: True; the same inside the loop, or a 64x16 tile: False."""
    if tensor.element.storage_bits * math.prod(tensor.shape) > 32 * threads:
        return False
    region, depth = op.get_block().get_parent(), 0
    while region is not None and depth <= 2:
        region, depth = region.get_parent_region(), depth + 1
    return depth == 2      # the function's body, then the module's: nothing between


def _buildable(op, outcome) -> Optional[list[list[int]]]:
    """The offset bases to build ``op``'s conversion in place with, or None where this route
    does not build it (see the module docstring)."""
    if op.name != "ttg.convert_layout" or outcome.threads is not None:
        return None
    return _buildable_plan(outcome.plan, op.results[0].tensor_type)


def _buildable_plan(plan, tensor) -> Optional[list[list[int]]]:
    """The offset bases of ``plan`` (a conversion's, to ``tensor``'s type) where this route builds
    it, else None."""
    if plan.method is not Method.SHARED or plan.shared.num_rounds != 1 or plan.scope is Scope.BLOCK \
            or plan.target.vendor is not Vendor.NVIDIA or any(plan.src.bases.get("block", [])):
        return None
    if waits_for_its_warp_only(plan):
        return None
    if tensor.element_type not in _ELEMENT_TYPES:
        return None
    return offset_bases(plan, list(tensor.shape))


def waits_for_its_warp_only(plan) -> bool:
    """The plan's data never leaves a warp (its barrier is ``bar.warp.sync``) in a CTA of
    several warps.  Built in place, Triton's barrier analysis sees only a buffer stored and
    then loaded: it puts a CTA barrier (``bar.sync``) between them and another before the next
    store, where the plan waits for its own warp once.  Example: an f16 32x128 blocked
    (``sizePerThread = [2, 4]``) to an mma v2 accumulator over 2 warps stays in each warp; in a
    loop converting there and back, in place leaves 4 ``bar.sync`` a trip where the spliced
    island leaves 2 and 2 ``bar.warp.sync`` (stock's own code the same), and on an H100 it ran
    1.136x stock (``benchmarks/results/plan_fresh_9301_9409.md``).  Such plans go the text route.
    In a CTA of one warp both barriers wait for the same 32 threads: built in place as before."""
    return bool(plan.src.bases.get("warp")) and plan.shared.waits_for_its_warp


def in_place_module_text(text: str, name: str = "kernel", lowering: Optional[LowerConversions] = None) -> tuple[str, int]:
    """TTGIR ``text`` with its conversions built in place as the drop-in builds them (parsed into
    a fresh context, rewritten, printed; the others as they were), and how many were built: for
    tools and checks that compile modules from text (``benchmarks/fuzz_gpu.py --in-place``, the
    study)."""
    from ..ir.bindings import new_context

    module = triton_module_from_text(text, new_context())
    built = lower_in_place(module, module.str(), name, lowering or LowerConversions(), ModulePlans(None))
    return str(module), built.built


def build_in_place(builder, convert, tensor, bases: list[list[int]], plans: ModulePlans) -> None:
    """After the ``ttg.convert_layout`` op ``convert`` (its result of type ``tensor``): a buffer of
    its element type (bytes for i1) and shape laid out by the offset ``bases``, the convert's
    source stored into it and loaded back in the result's layout; the convert's uses moved to
    the load, and the convert remembered as built (``plans.built_in_place``)."""
    element, shape = getattr(builder, _ELEMENT_TYPES[tensor.element_type])(), list(tensor.shape)
    source, result = convert.get_operand(0), convert.get_result(0)
    widened = tensor.element_type == _WIDENED_TO_BYTES
    layout = builder.get_shared_linear_layout(bases, [], 16)
    builder.set_insertion_point_after(convert)
    if widened:
        source = builder.create_int_cast(source, _as_bytes(source), False)
    buffer = builder.create_local_alloc(builder.get_shared_mem_desc_ty(element, shape, layout, shape))
    builder.create_local_store(buffer, source)
    loaded = builder.create_local_load(_as_bytes(result) if widened else result.get_type(), buffer)
    if widened:
        loaded = builder.create_int_cast(loaded, result.get_type(), False)
    result.replace_all_uses_with(loaded)
    plans.built_in_place.add(result.id())


def _as_bytes(value):
    """The type of ``value`` (a tensor of i1) with i8 elements, its layout kept."""
    text = str(value.get_type())
    shape, rest = text.split("xi1", 1)
    return parse_type(f"{shape}xi8{rest}", value.get_context())
