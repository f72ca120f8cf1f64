"""What layouts an op allows: the inference rules of ``ll-assign-layouts``.

Choosing layouts keeps *legality* apart from *policy*.  This module is legality: for every op
kind the assignment may change, one rule says, given the op's **key** layout (one encoding
chosen for the op), which encoding each of its tensor results has and which encoding each of
its tensor operands must arrive in.  The cost model (:mod:`.layout_costs`) says what is good,
the solver (:mod:`.layout_solver`) picks.

The rules, with ``K`` the key (the encoding text, e.g. ``#ttg.blocked<{...}>``):

========================  ======================================  ==============================
op                        operands                                results
========================  ======================================  ==============================
elementwise (arith,       every tensor operand in ``K``           every result in ``K``
math, tt.addptr, ...)
``tt.splat``,             (a scalar: none)                        ``K``
``tt.make_range``,
splat ``arith.constant``
``tt.broadcast``          ``K`` (of the smaller shape)            ``K``
``tt.expand_dims`` axis a ``#ttg.slice<{dim = a, parent = K}>``   ``K``
``tt.reduce`` axis a      every operand in ``K``                  ``#ttg.slice<{dim = a,
                                                                  parent = K}>`` (a scalar for
                                                                  1-D operands)
``ttg.convert_layout``    anything: the op *is* the conversion    ``K``
``tt.trans`` order p      ``K`` (blocked or linear)               ``K`` transposed by ``p``
                                                                  (:func:`transpose_encoding`)
``tt.reshape``,           ``K`` (both operands of a join)         ``K`` with its coordinates
``tt.join``, ``tt.split``                                         renamed
                                                                  (:mod:`.shape_layouts`)
``tt.gather``             source: as today; indices in ``K``      ``K``
``scf.for`` iter arg i    init, yield in ``K``                    result, block argument ``K``
``scf.while`` carried     init, ``scf.condition``'s forwarded     result, both regions' block
value i                   value i, after region's yield in ``K``  arguments ``K``
``scf.if`` result i       both branches' yields in ``K``          result ``K``
``tt.load``/``tt.store``  pointer, mask, other value in ``K``     the loaded value in ``K``
(with ``memory_ops``)
``tt.atomic_rmw``/        pointer, value, mask in ``K``           the old values in ``K``
``tt.atomic_cas`` (with   (``cas``: pointer, compared and new
``memory_ops``)           values in ``K``)
``amdg.buffer_load``/     offsets, mask, other / stored value     the loaded value in ``K``
``amdg.buffer_store``     in ``K``; the base pointer a scalar
(with ``memory_ops``)
``amdg.buffer_atomic_    offsets, value, mask in ``K``; the      the old values in ``K``
rmw``/``amdg.buffer_      base pointer a scalar (``cas``:
atomic_cas`` (with        offsets, compared and new values in
``memory_ops``)           ``K``)
``ttg.async_copy_global_  pointer, mask, other value in ``K``;    (a token)
to_local`` (cp.async,     the shared destination as it is
with ``shared_ops``)
``amdg.buffer_load_to_    offsets, mask, other value in ``K``;    (a token)
local`` (``shared_ops``)  the base a scalar, the buffer as it is
``ttg.local_load``        (a memdesc, as it is)                   ``K``
(with ``shared_ops``)
``ttg.local_store``,      the stored value in ``K``; the memdesc  (``local_alloc``: the memdesc,
``ttg.local_alloc``       as it is                                as it is)
(with ``shared_ops``)
========================  ======================================  ==============================

Every other op (dots, memory descriptors, calls, an ``scf.while``'s values whose
layouts differ between its regions, reshapes that may reorder elements, gathers Triton marked
``efficient_layout``, transposes of MMA or slice layouts, ...) is **fixed**: its operands must arrive in the layouts they have today and its
results keep theirs.  A rule applies to an op only if the op's types *today* obey it (an
elementwise op whose operands differ in encoding, which Triton allows for some ops, stays
fixed), so Triton's own assignment is always one answer the rules allow.

A ``tt.reduce`` decides the order in which its elements are combined: with another layout a
float sum adds in another order and its result may differ in the last bits.  Only reductions
whose combiner is order-free (integer arithmetic, min/max, comparisons and selects, as in
``argmax``) may change layout unless ``reorder_reductions`` is set.

Worked example (a 64x128 sum along axis 1, stored through a 1-D layout)::

    %r = "tt.reduce"(%x) <{axis = 1}> : (tensor<64x128xf32, #B>) -> tensor<64xf32, #ttg.slice<{dim = 1, parent = #B}>>
    %c = ttg.convert_layout %r : ... #ttg.slice<{dim = 1, parent = #B}> -> tensor<64xf32, #B1>

The reduce's key is ``#B`` (its operand's layout).  The convert's key is ``#B1``; choosing
instead the key ``#ttg.slice<{dim = 1, parent = #B}>`` makes its result the same layout as its
operand, and the convert disappears.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional

from ...dialect.attribute_parser import parse_attribute
from ...dialect.attributes import BlockedEncoding, LinearEncoding
from ...dialect.linear_layout import LayoutError
from .shape_layouts import same_layout, shape_op_operand, shape_op_result
from ..ir.snapshot import Operation, Value

# Ops that apply one scalar function to every element: operands and results share a layout.
ELEMENTWISE_PREFIXES = ("arith.", "math.")
ELEMENTWISE_OPS = frozenset({
    "tt.addptr", "tt.fp_to_fp", "tt.bitcast", "tt.int_to_ptr", "tt.ptr_to_int", "tt.clampf",
    "tt.precise_sqrt", "tt.precise_divf", "tt.mulhiui", "tt.extern_elementwise",
})
SOURCE_OPS = frozenset({"tt.splat", "tt.make_range", "arith.constant"})
# Triton's atomics through a tensor of pointers (Gluon's ``gl.atomic_add``, ``_max``, ``_min``,
# ``_and``, ``_or``, ``_xor``, ``_xchg``: ``rmw``; ``gl.atomic_cas``): one atomic per element of
# the pointers, the old values returned in the pointers' layout, so they take the rule of a load.
# Which thread updates an element does not change what is computed (the order of atomics to one
# address is the hardware's either way); what the lowering requires of the layout is
# ``.backend_requirements``' (nothing, for these).
ATOMIC_RMW, ATOMIC_CAS = "tt.atomic_rmw", "tt.atomic_cas"
ATOMICS = frozenset({ATOMIC_RMW, ATOMIC_CAS})
# Global memory accesses through tensors of pointers: their layout decides coalescing, priced by
# ``layout_costs.memory_cost``.
MEMORY_OPS = frozenset({"tt.load", "tt.store"}) | ATOMICS
# ``cp.async``: a global load into shared memory.  Its pointers (and mask, other value) are a
# distributed tensor whose layout decides coalescing as a load's does; its destination is a
# memdesc whose layout is fixed.  With ``shared_ops`` it takes the rule of a load.
ASYNC_COPY = "ttg.async_copy_global_to_local"
# AMD's buffer ops: a scalar base pointer and a tensor of offsets (elements) in place of a tensor
# of pointers; base + offsets are the pointers.  ``buffer_load`` / ``buffer_store`` take the rule
# of a load / store (offsets, mask, other value, stored or loaded value in the key, with
# ``memory_ops``); ``buffer_load_to_local`` (a direct-to-LDS load, as ``ttg.async_copy_global_to_local``
# on AMD) the rule of a ``cp.async`` (with ``shared_ops``).
BUFFER_LOAD, BUFFER_STORE, BUFFER_LOAD_TO_LOCAL = "amdg.buffer_load", "amdg.buffer_store", "amdg.buffer_load_to_local"
# AMD's buffer atomics (Gluon's ``cdna3`` / ``cdna4.buffer_atomic_add`` and the like: ``rmw``;
# ``cas`` only from Triton's own ``tt.atomic_cas``): one atomic per element of the offsets, the
# old values returned in the offsets' layout, so they take the rule of a load too.  Which
# element a thread updates does not change what is computed (the order of atomics to one
# address is the hardware's either way); what the lowering requires of the layout is
# ``.backend_requirements``'.
BUFFER_ATOMIC_RMW, BUFFER_ATOMIC_CAS = "amdg.buffer_atomic_rmw", "amdg.buffer_atomic_cas"
BUFFER_ATOMICS = frozenset({BUFFER_ATOMIC_RMW, BUFFER_ATOMIC_CAS})
BUFFER_OPS = frozenset({BUFFER_LOAD, BUFFER_STORE, BUFFER_LOAD_TO_LOCAL}) | BUFFER_ATOMICS
# Buffer ops whose offsets, values and mask take the identity rule with ``memory_ops``.
BUFFER_MEMORY_OPS = frozenset({BUFFER_LOAD, BUFFER_STORE}) | BUFFER_ATOMICS
# Global loads straight into shared memory: the backend's rules of ``.backend_requirements`` apply.
DIRECT_TO_SHARED_OPS = frozenset({ASYNC_COPY, BUFFER_LOAD_TO_LOCAL})
# Accesses priced by their pointers (``layout_costs.memory_work``).
GLOBAL_ACCESS_OPS = MEMORY_OPS | BUFFER_OPS | {ASYNC_COPY}
# Shared-memory accesses between a distributed tensor and a memdesc whose layout is fixed: the
# tensor's layout is free, priced by the wavefronts of our local-load / local-store plans
# (``shared_access_costs``).  With ``shared_ops``.
SHARED_ACCESS_OPS = frozenset({"ttg.local_load", "ttg.local_store", "ttg.local_alloc"})

# Combiner ops of a reduction whose result does not depend on the order of combination.
ORDER_FREE_COMBINERS = frozenset({
    "arith.addi", "arith.muli", "arith.andi", "arith.ori", "arith.xori",
    "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui",
    "arith.maxnumf", "arith.minnumf", "arith.maximumf", "arith.minimumf",
    "arith.cmpi", "arith.cmpf", "arith.select", "arith.constant", "tt.reduce.return",
})

# Encodings a key may be.  dot_op layouts are kept for identity rules only: Triton accepts no
# slice of a dot operand layout for expand_dims or reduce results.
KEY_PREFIXES = ("#ttg.blocked<", "#ttg.linear<", "#ttg.slice<", "#ttg.nvidia_mma<", "#ttg.amd_mfma<",
                "#ttg.amd_wmma<")
IDENTITY_KEY_PREFIXES = KEY_PREFIXES + ("#ttg.dot_op<",)

# Ops that rename coordinates without moving data (see :mod:`.shape_layouts`).
SHAPE_KINDS = ("reshape", "join", "split")

_SLICE = re.compile(r"^#ttg\.slice<\{dim = (\d+), parent = (.*)\}>$", re.S)
_TRANS_ORDER = re.compile(r"\{order = array<i32: ([\d, ]+)>\}")


def slice_of(dim: int, parent: str) -> str:
    """The encoding text Triton prints for a slice of ``parent`` along ``dim``."""
    return f"#ttg.slice<{{dim = {dim}, parent = {parent}}}>"


def slice_parts(encoding: str) -> Optional[tuple[int, str]]:
    """``(dim, parent)`` of a slice encoding's text, None for any other encoding."""
    m = _SLICE.match(encoding)
    return (int(m.group(1)), m.group(2)) if m else None


def inverse_permutation(perm: tuple) -> tuple:
    """``inverse[perm[i]] = i``: the permutation that undoes ``perm``."""
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)


def transpose_encoding(encoding: str, perm: tuple) -> Optional[str]:
    """The encoding of ``tt.trans`` with ``order = perm`` applied to a tensor in ``encoding``, as
    Triton infers and prints it, or None for an encoding this rule does not transpose (MMA, dot
    operand, slice, multi-CTA blocked layouts: Triton turns most of them into linear layouts
    whose text we do not reproduce, so those transposes stay fixed).

    Result dimension ``i`` is operand dimension ``perm[i]``.  Per-dimension lists are permuted
    (``new[i] = old[perm[i]]``), but a blocked layout's ``order`` lists dimensions, fastest
    first, so its *entries* are renamed instead: dimension ``d`` becomes ``inverse(perm)[d]``.
    Worked example, ``perm = [1, 0]``::

        blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
        -> blocked<{sizePerThread = [4, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>

    (four consecutive elements of a row per thread become four of a column, still the fastest).
    A linear layout's bases are tensor coordinates, one per dimension: each basis is permuted
    the same way, ``[[0, 1], [2, 0]]`` under ``[1, 0]`` becomes ``[[1, 0], [0, 2]]``."""
    if sorted(perm) != list(range(len(perm))):
        return None
    try:
        attr = parse_attribute(encoding)
    except LayoutError:
        return None
    if attr.rank != len(perm):
        return None
    permuted = lambda values: [values[p] for p in perm]   # noqa: E731
    if type(attr) is BlockedEncoding and attr.cga is None:
        inverse = inverse_permutation(perm)
        return str(replace(attr, size_per_thread=permuted(attr.size_per_thread),
                           threads_per_warp=permuted(attr.threads_per_warp), warps_per_cta=permuted(attr.warps_per_cta),
                           order=[inverse[d] for d in attr.order]))
    if type(attr) is LinearEncoding:
        return str(LinearEncoding(**{name: [permuted(b) for b in bases] for name, bases in attr.named_bases()}))
    return None


def trans_order(header: str) -> Optional[tuple]:
    """The ``order`` of a ``tt.trans`` from its printed line, or None."""
    m = _TRANS_ORDER.search(header)
    return tuple(int(x) for x in m.group(1).split(",")) if m else None


def encoding_of(value: Optional[Value]) -> Optional[str]:
    """A distributed tensor value's encoding text (aliases expanded); None for scalars,
    memory descriptors and tensors without an encoding."""
    if value is None:
        return None
    tensor_type = value.tensor_type
    if tensor_type is None or tensor_type.is_shared or tensor_type.encoding is None:
        return None
    return tensor_type.encoding


@dataclass(frozen=True)
class Rule:
    """How one op's tensor layouts follow from its key.

    ``kind``: ``identity`` (every tensor operand and result in the key), ``source`` (results in
    the key, scalar operands), ``expand_dims`` and ``reduce`` (``axis`` says along which
    dimension), ``convert`` (result in the key, the operand anything: the op converts),
    ``trans`` (the operand in the key, the result the key transposed by ``perm``),
    ``reshape``, ``join``, ``split`` (the operands in the key, the result the key with its
    coordinates renamed: ``shapes`` holds the operand's and the result's shape, and
    ``stock_result`` the result encoding Triton printed, reused wherever it is the same layout),
    ``gather`` (the indices and the result in the key, the source in ``fixed_operand``).
    ``stock_key``: the key that gives the op's types today."""

    kind: str
    stock_key: str
    axis: int = -1
    perm: tuple = ()
    shapes: tuple = ()
    stock_result: str = ""
    fixed_operand: str = ""
    known: tuple = ()

    # ``known``: for the shape ops, the encodings the function already prints; a result that is
    # the same layout as one of them is printed as it, so no conversion between two spellings of
    # one layout is ever needed.

    def result(self, key: str) -> Optional[str]:
        """The encoding of every tensor result under ``key`` (None: the result is a scalar)."""
        if self.kind == "reduce":
            return slice_of(self.axis, key) if self.axis >= 0 else None
        if self.kind == "trans":
            return transpose_encoding(key, self.perm)
        if self.kind in SHAPE_KINDS:
            return shape_op_result(self.kind, key, *self.shapes, known=(self.stock_result,) + self.known)
        return key

    def operand(self, key: str, position: int = -1) -> Optional[str]:
        """The encoding tensor operand number ``position`` must arrive in under ``key`` (None:
        any, as for a convert's operand)."""
        if self.kind == "expand_dims":
            return slice_of(self.axis, key)
        if self.kind == "convert":
            return None
        if self.kind == "gather" and position == 0:
            return self.fixed_operand
        return key

    def keys_for_result(self, encoding: str) -> list[str]:
        """Keys under which a result has ``encoding`` (inverse of :meth:`result`)."""
        if self.kind == "reduce":
            parts = slice_parts(encoding)
            return [parts[1]] if parts and parts[0] == self.axis else []
        if self.kind == "trans":
            key = transpose_encoding(encoding, inverse_permutation(self.perm))
            return [key] if key is not None and self.result(key) == encoding else []
        if self.kind in SHAPE_KINDS:
            # The key's result may print differently from ``encoding`` (a #ttg.linear for a
            # blocked layout): it is the same layout, which a conversion between costs nothing.
            key = shape_op_operand(self.kind, encoding, *self.shapes, known=(self.stock_key,) + self.known)
            result = self.result(key) if key is not None else None
            return [key] if result is not None and same_layout(result, encoding, self.shapes[1]) else []
        return [encoding]

    def keys_for_operand(self, encoding: str, position: int = -1) -> list[str]:
        """Keys under which operand number ``position`` may arrive in ``encoding`` (inverse of
        :meth:`operand`)."""
        if self.kind == "expand_dims":
            parts = slice_parts(encoding)
            return [parts[1]] if parts and parts[0] == self.axis else []
        if self.kind in ("convert", "source") or (self.kind == "gather" and position == 0):
            return []
        return [encoding]

    def accepts(self, key: str) -> bool:
        """Whether ``key`` is an encoding this rule may give its op."""
        if self.kind == "trans":
            return transpose_encoding(key, self.perm) is not None
        if self.kind in SHAPE_KINDS:
            return key.startswith(KEY_PREFIXES) and self.result(key) is not None
        prefixes = IDENTITY_KEY_PREFIXES if self.kind in ("identity", "source", "convert") else KEY_PREFIXES
        return key.startswith(prefixes)


@dataclass(frozen=True)
class GlobalAccess:
    """Where a global access's addresses are: a tensor of pointers (``tt.load``, ``tt.store``,
    ``cp.async``, ``tt.atomic_rmw(pointers, value, [mask])``, ``tt.atomic_cas(pointers, compared,
    value)``), or a tensor of offsets from a scalar base pointer (AMD's buffer ops, whose
    operands are ``buffer_load(base, offsets, [stride], [mask], [other])``,
    ``buffer_store(value, base, offsets, [stride], [mask])``,
    ``buffer_load_to_local(buffer, base, offsets, [mask], [other], [stride])``,
    ``buffer_atomic_rmw(base, offsets, value, [stride], [mask])`` and
    ``buffer_atomic_cas(base, offsets, compared, value, [stride])``).  ``addresses`` carries the
    access's layout and shape either way."""

    addresses: Value
    base: Optional[Value] = None

    @property
    def element_bytes(self) -> int:
        from .pointer_contiguity import pointee_bytes
        return pointee_bytes(self.base.type if self.base is not None else self.addresses.tensor_type.element_type)

    @property
    def shape(self) -> tuple:
        return tuple(self.addresses.tensor_type.shape)


def global_access(op: Operation) -> Optional[GlobalAccess]:
    """The addresses of a global access op (one of ``GLOBAL_ACCESS_OPS``), None where it has no
    tensor of them (e.g. ``tt.load`` of a tensor descriptor)."""
    if op.name in BUFFER_OPS:
        for i, v in enumerate(op.operands[:-1]):
            # the base: the first scalar pointer; the offsets: the operand after it
            if v is not None and v.tensor_type is None and v.type.startswith("!tt.ptr<"):
                offsets = op.operands[i + 1]
                return GlobalAccess(offsets, v) if offsets.tensor_type is not None and \
                    not offsets.tensor_type.is_shared else None
        return None
    if op.name in GLOBAL_ACCESS_OPS and op.operands and op.operands[0].tensor_type is not None:
        return GlobalAccess(op.operands[0])
    return None


def _tensor_operands(op: Operation) -> list[Value]:
    return [v for v in op.operands if v is not None and v.tensor_type is not None]


def _all_distributed(values: list[Value]) -> bool:
    return all(encoding_of(v) is not None for v in values)


# Combiners Triton lowers with one ``redux.sync`` per output on NVIDIA sm_80 and later, where the
# reduction spans all 32 lanes of a warp (``TargetInfo::warpReduce`` and ``matchReduxKind`` in
# Triton's NVIDIA backend, 3.6-3.9): a single integer op of at most 32 bits on one operand.
REDUX_COMBINERS = frozenset({"arith.addi", "arith.andi", "arith.ori", "arith.xori",
                             "arith.minsi", "arith.minui", "arith.maxsi", "arith.maxui"})
_INTEGER_TYPE = re.compile(r"^i(\d+)$")


def combiner_is_redux(op: Operation) -> bool:
    """``op`` (a ``tt.reduce``) has one tensor operand and a combiner Triton can lower with
    ``redux.sync``: one integer op of at most 32 bits, then ``tt.reduce.return``."""
    if len(_tensor_operands(op)) != 1:
        return False
    body = [child for region in op.regions for block in region.blocks for child in block.operations]
    if len(body) != 2 or body[0].name not in REDUX_COMBINERS or body[1].name != "tt.reduce.return":
        return False
    element = op.operands[0].tensor_type.element_type
    width = _INTEGER_TYPE.match(element)
    return bool(width) and int(width.group(1)) <= 32


def combiner_ops(op: Operation) -> int:
    """How many ops one combine of the ``tt.reduce`` ``op`` runs (its body but the return)."""
    body = [child for region in op.regions for block in region.blocks for child in block.operations]
    return max(1, sum(1 for child in body if child.name != "tt.reduce.return"))


def _combiner_is_order_free(op: Operation) -> bool:
    body = [child for region in op.regions for block in region.blocks for child in block.operations]
    return bool(body) and all(child.name in ORDER_FREE_COMBINERS for child in body)


def rule_for(op: Operation, header: str = "", reorder_reductions: bool = False,
             memory_ops: bool = False, shared_ops: bool = False) -> Optional[Rule]:
    """The rule the op's types obey today, or None: the op is fixed.  ``header``: the op's
    printed first line (it tells a splat ``arith.constant`` from a list of values).
    ``memory_ops``: ``tt.load`` and ``tt.store`` may change layout too (identity rule: pointer,
    mask, other value and result in the key), and so may Triton's atomics and AMD's buffer loads,
    stores and atomics.  ``shared_ops``: so may the distributed side of
    ``cp.async`` and of local loads and stores (the memdesc keeps its layout)."""
    operands, results = _tensor_operands(op), [v for v in op.results if v.tensor_type is not None]
    if op.name in DIRECT_TO_SHARED_OPS or op.name in SHARED_ACCESS_OPS:
        return _shared_side_rule(op, operands + results) if shared_ops else None
    if not _all_distributed(operands + results):
        return None
    if op.name == "tt.reduce":
        return _reduce_rule(op, operands, results, reorder_reductions)
    if op.name in MEMORY_OPS or op.name in BUFFER_MEMORY_OPS:
        values = operands + results
        if not memory_ops or not values or op.regions or any(encoding_of(v) != encoding_of(values[0]) for v in values):
            return None
        # Inside loops too: this pass runs on the TTGIR Triton finished, after its software
        # pipeliner, so a tt.load still in a loop is an ordinary load (the pipelined ones are
        # asynchronous copies by then, which are not tt.load).  The loop weight prices it.
        if len({v.tensor_type.shape for v in values}) != 1:
            return None
        return Rule("identity", encoding_of(values[0]))
    if not results:
        return None
    first = encoding_of(results[0])
    name = op.name
    if name == "ttg.convert_layout":
        return Rule("convert", first)
    if name in SOURCE_OPS:
        if name == "arith.constant" and not re.search(r"= arith\.constant dense<[^\[]", header):
            return None
        return Rule("source", first) if not operands else None
    shapes = {v.tensor_type.shape for v in operands + results}
    if name in ELEMENTWISE_OPS or (name.startswith(ELEMENTWISE_PREFIXES) and name != "arith.constant"):
        if len(shapes) == 1 and all(encoding_of(v) == first for v in operands + results) and not op.regions:
            return Rule("identity", first)
        return None
    if name == "tt.broadcast" and len(operands) == 1 and encoding_of(operands[0]) == first:
        return Rule("identity", first)
    if name == "tt.trans" and len(operands) == 1 and len(results) == 1:
        # The rule applies only where it reproduces Triton's own result text: then every key it
        # gives is a transpose Triton infers the same way (blocked and linear layouts).
        perm, key = trans_order(header), encoding_of(operands[0])
        if perm and transpose_encoding(key, perm) == first:
            return Rule("trans", key, perm=perm)
        return None
    if name in ("tt.reshape", "tt.join", "tt.split"):
        return _shape_rule(name, header, operands, results)
    if name == "tt.gather" and len(operands) == 2 and len(results) == 1:
        # Indices and result share a layout (Triton's verifier says so); the source keeps its
        # own.  A gather Triton marked efficient_layout has layouts chosen for its warp-local
        # lowering: it stays as it is.
        if "efficient_layout" in header or encoding_of(operands[1]) != first:
            return None
        axis = re.search(r"axis = (\d+)", header)
        return Rule("gather", first, int(axis.group(1)) if axis else -1, fixed_operand=encoding_of(operands[0]))
    if name == "tt.expand_dims" and len(operands) == 1:
        parts = slice_parts(encoding_of(operands[0]))
        if parts and parts[1] == first:
            return Rule("expand_dims", first, parts[0])
        return None
    return None


def _shared_side_rule(op: Operation, values: list[Value]) -> Optional[Rule]:
    """An op between distributed tensors and one memdesc (cp.async, local load/store/alloc):
    the identity rule over its distributed values when they share one layout and shape (a
    local_alloc without a source has none: fixed)."""
    memdescs = [v for v in values if v.tensor_type.is_shared]
    distributed = [v for v in values if not v.tensor_type.is_shared]
    if len(memdescs) != 1 or not distributed or op.regions or not _all_distributed(distributed):
        return None
    key = encoding_of(distributed[0])
    if any(encoding_of(v) != key for v in distributed) or len({v.tensor_type.shape for v in distributed}) != 1:
        return None
    return Rule("identity", key)


def _reduce_rule(op: Operation, operands: list[Value], results: list[Value], reorder_reductions: bool) -> Optional[Rule]:
    key = encoding_of(operands[0]) if operands else None
    if key is None or any(encoding_of(v) != key for v in operands):
        return None
    if not (reorder_reductions or _combiner_is_order_free(op)):
        return None
    if not results:                      # a 1-D reduction: scalar results
        return Rule("reduce", key, -1)
    parts = slice_parts(encoding_of(results[0]))
    if not parts or parts[1] != key or any(encoding_of(v) != encoding_of(results[0]) for v in results):
        return None
    return Rule("reduce", key, parts[0])


def _shape_rule(name: str, header: str, operands: list[Value], results: list[Value]) -> Optional[Rule]:
    """The rule of a reshape, join or split whose printed result is the layout the algebra
    gives (None otherwise, and for a reshape that may reorder elements: with
    ``allow_reorder`` the result's element order follows its layouts, so changing them would
    change what the program computes)."""
    kind = name.split(".")[1]
    expected_operands, expected_results = {"reshape": (1, 1), "join": (2, 1), "split": (1, 2)}[kind]
    if len(operands) != expected_operands or len(results) != expected_results:
        return None
    if kind == "reshape" and re.search(r"\b(allow_reorder|efficient_layout)\b", header):
        return None
    key, printed = encoding_of(operands[0]), encoding_of(results[0])
    if any(encoding_of(v) != key for v in operands) or any(encoding_of(v) != printed for v in results):
        return None
    rule = Rule(kind, key, shapes=(operands[0].tensor_type.shape, results[0].tensor_type.shape), stock_result=printed)
    return rule if rule.result(key) == printed else None
