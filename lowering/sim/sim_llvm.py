"""The interpreter of ``island_sim``: one island's LLVM-dialect lines, executed on a machine.

``_Island`` reads the island's text line by line (never the plan) and runs each op with its
method (``op_`` and the op's name, dots as underscores: ``op_llvm_select``), on a
``sim_machine.Machine`` holding every thread of the CTA at once (inline PTX goes to
``sim_ptx.run_inline_asm``; ``nvvm.ldmatrix`` / ``nvvm.stmatrix`` to ``sim_ptx.matrix_access``,
the same code as their inline-PTX spellings; ``llvm.load`` / ``llvm.store`` on ``!llvm.ptr<3>``,
both vendors' shared-memory accesses, to the machine's bytes).  It checks the text as it goes: the island starts with the source
cast, defines every SSA name once, casts back once, uses vendor ops only on their vendor's
target, finishes the AMD barrier sequence.  An op it does not know is a failure (the simulator
fails closed).  What the run must produce, and the checks on
the result, are ``island_sim``'s (``check_emitted``) and ``sim_local_memory``'s.
"""

from __future__ import annotations

import re

import numpy as np

from ..emit.emit_llvm import IslandSite
from ..emit.emit_nvidia import CTA_BARRIER_INTRINSIC, GROUP_BARRIER_INTRINSIC
from .sim_machine import (BINARY, SCRATCH_BASE, Machine, Scalar, SimulationError, fullmatch, mask, shift,
                          struct_fields, type_bits, vector_type)
from .sim_ptx import matrix_access, run_inline_asm
from ..target import Vendor

# ops that exist on one vendor only: an NVVM op in an AMD island (or the reverse) is a wrong emitter
_VENDOR_FAMILIES = {"nvvm": Vendor.NVIDIA, "rocdl": Vendor.AMD}

_ASSIGN = re.compile(r"^(%[\w.$#-]+) = (.*)$")

class _Island:
    """Runs the island text once (one pass) on a machine."""

    def __init__(self, lines: list[str], machine: Machine, source_struct: list[Scalar], site: IslandSite,
                 has_result: bool = True, buffer_rank: int = 0, buffer_fields=None):
        self.lines = lines
        self.m = machine
        self.source_struct = source_struct
        self.site = site
        self.output = None
        self.output_type = None
        self.input_type = None
        self.has_result = has_result      # False: a local_store's island (it only stores)
        self.buffer_rank = buffer_rank    # a local_store: the rank of its memdesc operand
        # a local_store: the descriptor's offset fields (a subslice view's start; zero otherwise)
        self.buffer_fields = list(buffer_fields) if buffer_fields is not None else [0] * buffer_rank
        self.buffer_type = None

    def run(self):
        self.first_op = True
        for number, line in enumerate(self.lines, start=1):
            text = line.strip()
            if not text or text.startswith("//"):
                continue
            self.m.line = number
            try:
                self.step(text)
            except SimulationError as error:
                raise SimulationError(f"line {number} ({text[:120]}): {error}") from None
            self.first_op = False
        if self.has_result and self.output is None:
            raise SimulationError(f"the island never casts its result back to a tensor ({self.site.result})")
        if self.m.pending_fence is not None:
            raise SimulationError("the island ends inside an AMD barrier sequence (no acquire fence after s_barrier)")

    def step(self, text: str) -> None:
        m = _ASSIGN.match(text)
        name, body = (m.group(1), m.group(2)) if m else (None, text)
        op = body.split(" ", 1)[0].split("(", 1)[0]
        self.result_name = name
        if self.first_op and op != "builtin.unrealized_conversion_cast":
            raise SimulationError(f"the island must start with the cast of {self.site.source} to a struct, not '{op}'")
        family = op.split(".", 1)[0]
        if family in _VENDOR_FAMILIES and _VENDOR_FAMILIES[family] != self.m.vendor:
            raise SimulationError(f"'{op}' is a {_VENDOR_FAMILIES[family]} op; the target is {self.m.vendor}")
        handler = getattr(self, "op_" + op.replace(".", "_"), None)
        if handler is None:
            raise SimulationError(f"unsupported op '{op}'")
        if name is not None and name in self.m.env:
            raise SimulationError(f"SSA value {name} is defined twice")
        result = handler(body)
        if name is not None:
            if result is None:
                raise SimulationError(f"op '{op}' has no result")
            self.m.env[name] = result
        elif result is not None:
            raise SimulationError(f"op '{op}' has a result but no SSA name")

    # -- casts between the tensor and the struct ------------------------------------------
    def op_builtin_unrealized_conversion_cast(self, body):
        m = fullmatch(r"builtin\.unrealized_conversion_cast (\S+) : (.+?) to (.+)", body)
        if not m:
            raise SimulationError("cannot read the cast")
        operand, from_type, to_type = m.groups()
        if operand == self.site.source:
            if self.input_type is not None:
                raise SimulationError(f"a second cast of {self.site.source}")
            if from_type.strip() != self.site.src_type:
                raise SimulationError(f"the source cast is from {from_type}, the convert's source type is "
                                      f"{self.site.src_type}")
            self.input_type = to_type
            return list(self.source_struct)
        if self.first_op:
            raise SimulationError(f"the first cast must read {self.site.source}, not {operand}")
        if self.site.buffer and operand == self.site.buffer:
            from ..emit.emit_llvm import memdesc_struct_type
            if self.buffer_type is not None:
                raise SimulationError(f"a second cast of {self.site.buffer}")
            if from_type.strip() != self.site.buffer_type or to_type.strip() != memdesc_struct_type(self.buffer_rank):
                raise SimulationError(f"the memdesc cast is {from_type} to {to_type}; expected {self.site.buffer_type} "
                                      f"to {memdesc_struct_type(self.buffer_rank)}")
            self.buffer_type = to_type
            return [self.m.full(64, SCRATCH_BASE)] + [self.m.full(32, o) for o in self.buffer_fields]
        if from_type.startswith("!ttg.memdesc"):
            buffer = self.m.get(operand)
            if buffer != "scratch" or to_type.strip() != "!llvm.struct<(ptr<3>, i32)>":
                raise SimulationError("cast of a memdesc that is not our scratch buffer to its (ptr<3>, i32) struct")
            return [self.m.full(64, SCRATCH_BASE), self.m.full(32, 0)]
        if to_type.strip() == self.site.dst_type or to_type.startswith(("tensor<", "@")):
            if to_type.strip() != self.site.dst_type:
                raise SimulationError(f"the result cast is to {to_type}, the convert's result type is "
                                      f"{self.site.dst_type}")
            if self.output is not None:
                raise SimulationError("a second result cast")
            if self.result_name != self.site.result:
                raise SimulationError(f"the result cast defines {self.result_name}, the convert's result is "
                                      f"{self.site.result}")
            value = self.m.get(operand)
            if not isinstance(value, list):
                raise SimulationError(f"{operand} is not a struct")
            self.output = value
            self.output_type = from_type
            return "tensor"
        raise SimulationError(f"unexpected cast from {from_type} to {to_type}")

    # -- constants, arithmetic -------------------------------------------------------------
    def op_llvm_mlir_constant(self, body):
        m = fullmatch(r"llvm\.mlir\.constant\((-?\d+) : (\w+)\) : (\w+)", body)
        if not m:
            raise SimulationError("cannot read the constant")
        bits = type_bits(m.group(2))
        return self.m.full(bits, int(m.group(1)) & ((1 << bits) - 1))

    def op_llvm_mlir_undef(self, body):
        t = body.split(":", 1)[1].strip()
        vec = vector_type(t)
        if vec:
            return [None] * vec[0]
        return [None] * len(struct_fields(t))

    def _binary(self, body, opname):
        m = fullmatch(r"llvm\.\w+ (\S+), (\S+) : (\w+)", body)
        if not m:
            raise SimulationError(f"cannot read llvm.{opname}")
        a, b = self.m.scalar(m.group(1)), self.m.scalar(m.group(2))
        bits = type_bits(m.group(3))
        if a.bits != bits or b.bits != bits:
            raise SimulationError(f"llvm.{opname}: operand widths {a.bits}, {b.bits} differ from i{bits}")
        if opname in ("shl", "lshr"):
            value = shift(opname, a, b)
        else:
            # Arrays of unsigned integers wrap around silently (numpy checks overflow only in
            # scalar arithmetic), so no np.errstate here: it costs more than the operation.
            value = BINARY[opname](a.value, b.value, mask(bits)).astype(np.uint64, copy=False)
        return Scalar(bits, value, a.defined & b.defined)

    def op_llvm_and(self, body): return self._binary(body, "and")      # noqa: E704
    def op_llvm_or(self, body): return self._binary(body, "or")        # noqa: E704
    def op_llvm_xor(self, body): return self._binary(body, "xor")      # noqa: E704
    def op_llvm_add(self, body): return self._binary(body, "add")      # noqa: E704
    def op_llvm_sub(self, body): return self._binary(body, "sub")      # noqa: E704
    def op_llvm_mul(self, body): return self._binary(body, "mul")      # noqa: E704
    def op_llvm_shl(self, body): return self._binary(body, "shl")      # noqa: E704
    def op_llvm_lshr(self, body): return self._binary(body, "lshr")    # noqa: E704

    def op_llvm_icmp(self, body):
        m = fullmatch(r'llvm\.icmp "(\w+)" (\S+), (\S+) : (\w+)', body)
        if not m:
            raise SimulationError("cannot read llvm.icmp")
        pred, a, b = m.group(1), self.m.scalar(m.group(2)), self.m.scalar(m.group(3))
        ops = {"eq": np.equal, "ne": np.not_equal, "ult": np.less, "ule": np.less_equal, "ugt": np.greater,
               "uge": np.greater_equal}
        if pred not in ops:
            raise SimulationError(f"icmp predicate '{pred}' not supported")
        return Scalar(1, ops[pred](a.value, b.value).astype(np.uint64), a.defined & b.defined)

    def op_llvm_select(self, body):
        m = fullmatch(r"llvm\.select (\S+), (\S+), (\S+) : i1, (\S+)", body)
        if not m:
            raise SimulationError("cannot read llvm.select")
        c, a, b = self.m.scalar(m.group(1)), self.m.scalar(m.group(2)), self.m.scalar(m.group(3))
        if c.bits != 1 or a.bits != b.bits:
            raise SimulationError("llvm.select: operand types differ")
        if not c.defined.all():
            raise SimulationError("llvm.select on an undefined condition")
        pick = c.value.astype(bool)
        return Scalar(a.bits, np.where(pick, a.value, b.value), np.where(pick, a.defined, b.defined))

    def _cast(self, body, kind):
        m = fullmatch(r"llvm\.\w+ (\S+) : (.+?) to (.+)", body)
        if not m:
            raise SimulationError(f"cannot read llvm.{kind}")
        value, from_type, to_type = self.m.get(m.group(1)), m.group(2).strip(), m.group(3).strip()
        from_vec, to_vec = vector_type(from_type), vector_type(to_type)
        if kind == "bitcast" and (from_vec or to_vec):
            return self._vector_bitcast(value, from_type, to_type, from_vec, to_vec)
        if not isinstance(value, Scalar):
            raise SimulationError(f"llvm.{kind} of a non-scalar")
        from_bits, to_bits = type_bits(from_type), type_bits(to_type)
        if value.bits != from_bits:
            raise SimulationError(f"llvm.{kind}: operand is i{value.bits}, the op says {from_type}")
        if kind == "zext":
            if to_bits <= from_bits:
                raise SimulationError("zext to a narrower type")
            return Scalar(to_bits, value.value.copy(), value.defined)
        if kind == "trunc":
            if to_bits >= from_bits:
                raise SimulationError("trunc to a wider type")
            return Scalar(to_bits, value.value & mask(to_bits), value.defined)
        if from_bits != to_bits:
            if kind not in ("ptrtoint", "inttoptr"):
                raise SimulationError(f"llvm.{kind} between widths {from_bits} and {to_bits}")
            return Scalar(to_bits, value.value & mask(to_bits), value.defined)
        return Scalar(to_bits, value.value.copy(), value.defined)

    def _vector_bitcast(self, value, from_type, to_type, from_vec, to_vec):
        if from_vec and to_vec:  # vector -> vector: element j of the result is bits [j tb, (j+1) tb)
            n, bits = from_vec
            m, to_bits = to_vec
            if not isinstance(value, list) or len(value) != n:
                raise SimulationError(f"bitcast: operand is not a {from_type}")
            if any(v is None for v in value):
                raise SimulationError("bitcast of a vector with undefined elements")
            if n * bits != m * to_bits:
                raise SimulationError(f"bitcast {from_type} to {to_type}: sizes differ")
            out = []
            for j in range(m):
                if to_bits >= bits:   # several source elements make one result element
                    per = to_bits // bits
                    word = self._vector_bitcast(value[j * per:(j + 1) * per], f"vector<{per}xi{bits}>",
                                                f"i{to_bits}", (per, bits), None)
                else:                 # one source element makes several result elements
                    per = bits // to_bits
                    word = self._vector_bitcast(value[j // per], f"i{bits}", f"vector<{per}xi{to_bits}>",
                                                None, (per, to_bits))[j % per]
                out.append(word)
            return out
        if from_vec:  # vector -> scalar
            n, bits = from_vec
            if not isinstance(value, list) or len(value) != n:
                raise SimulationError(f"bitcast: operand is not a {from_type}")
            if any(v is None for v in value):
                raise SimulationError("bitcast of a vector with undefined elements")
            total = type_bits(to_type)
            if total != n * bits:
                raise SimulationError(f"bitcast {from_type} to {to_type}: sizes differ")
            out = np.zeros(self.m.T, dtype=np.uint64)
            defined = np.ones(self.m.T, dtype=bool)
            for i, v in enumerate(value):
                out |= (v.value & mask(bits)) << np.uint64(i * bits)
                defined &= v.defined
            return Scalar(total, out, defined)
        n, bits = to_vec
        if not isinstance(value, Scalar) or value.bits != n * bits:
            raise SimulationError(f"bitcast {from_type} to {to_type}: sizes differ")
        return [Scalar(bits, (value.value >> np.uint64(i * bits)) & mask(bits), value.defined) for i in range(n)]

    def op_llvm_zext(self, body): return self._cast(body, "zext")            # noqa: E704
    def op_llvm_trunc(self, body): return self._cast(body, "trunc")          # noqa: E704
    def op_llvm_bitcast(self, body): return self._cast(body, "bitcast")      # noqa: E704
    def op_llvm_ptrtoint(self, body): return self._cast(body, "ptrtoint")    # noqa: E704
    def op_llvm_inttoptr(self, body): return self._cast(body, "inttoptr")    # noqa: E704

    # -- aggregates --------------------------------------------------------------------------
    def op_llvm_extractvalue(self, body):
        m = fullmatch(r"llvm\.extractvalue (\S+)\[(\d+)\] : (.+)", body)
        if not m:
            raise SimulationError("cannot read llvm.extractvalue")
        struct, index = self.m.get(m.group(1)), int(m.group(2))
        fields = struct_fields(m.group(3))
        if not isinstance(struct, list) or len(struct) != len(fields):
            raise SimulationError(f"extractvalue: the struct has {len(struct) if isinstance(struct, list) else '?'} "
                                  f"fields, the type {len(fields)}")
        if not 0 <= index < len(struct):
            raise SimulationError(f"extractvalue index {index} out of range")
        if struct[index] is None:
            raise SimulationError(f"extractvalue of undefined field {index}")
        return struct[index]

    def op_llvm_insertvalue(self, body):
        m = fullmatch(r"llvm\.insertvalue (\S+), (\S+)\[(\d+)\] : (.+)", body)
        if not m:
            raise SimulationError("cannot read llvm.insertvalue")
        value, struct, index = self.m.scalar(m.group(1)), self.m.get(m.group(2)), int(m.group(3))
        fields = struct_fields(m.group(4))
        if not isinstance(struct, list) or len(struct) != len(fields) or not 0 <= index < len(fields):
            raise SimulationError("insertvalue: struct and type disagree")
        if value.bits != type_bits(fields[index]):
            raise SimulationError(f"insertvalue: a {value.bits}-bit value into a {fields[index]} field")
        out = list(struct)
        out[index] = value
        return out

    def _vector_index(self, text):
        index = self.m.scalar(text)
        if not index.defined.all() or (index.value != index.value[0]).any():
            raise SimulationError("vector index is not a uniform constant")
        return int(index.value[0])

    def op_llvm_extractelement(self, body):
        m = fullmatch(r"llvm\.extractelement (\S+)\[(\S+) : i32\] : (.+)", body)
        if not m:
            raise SimulationError("cannot read llvm.extractelement")
        vec, i = self.m.get(m.group(1)), self._vector_index(m.group(2))
        if not isinstance(vec, list) or not 0 <= i < len(vec) or vec[i] is None:
            raise SimulationError(f"extractelement {i}: out of range or undefined")
        return vec[i]

    def op_llvm_insertelement(self, body):
        m = fullmatch(r"llvm\.insertelement (\S+), (\S+)\[(\S+) : i32\] : (.+)", body)
        if not m:
            raise SimulationError("cannot read llvm.insertelement")
        value, vec, i = self.m.scalar(m.group(1)), self.m.get(m.group(2)), self._vector_index(m.group(3))
        n, bits = vector_type(m.group(4))
        if not isinstance(vec, list) or len(vec) != n or not 0 <= i < n or value.bits != bits:
            raise SimulationError("insertelement: vector and type disagree")
        out = list(vec)
        out[i] = value
        return out

    # -- thread ids -------------------------------------------------------------------------
    def op_nvvm_read_ptx_sreg_tid_x(self, body):
        return Scalar(32, self.m.tid.copy(), np.ones(self.m.T, dtype=bool))

    def op_rocdl_workitem_id_x(self, body):
        return Scalar(32, self.m.tid.copy(), np.ones(self.m.T, dtype=bool))

    # -- cross-lane moves ----------------------------------------------------------------------
    def _from_lane(self, value: Scalar, source_lane: np.ndarray, what: str) -> Scalar:
        m = self.m
        if (source_lane < 0).any() or (source_lane >= m.L).any():
            raise SimulationError(f"{what}: a source lane is outside the warp")
        source = (np.arange(m.T) - m.lane + source_lane).astype(np.int64)
        defined = value.defined[source]
        return Scalar(32, value.value[source], defined)

    def op_nvvm_shfl_sync(self, body):
        m = fullmatch(r"nvvm\.shfl\.sync (bfly|idx) (\S+), (\S+), (\S+), (\S+) : i32 -> i32", body)
        if not m:
            raise SimulationError("cannot read nvvm.shfl.sync")
        kind, mask, value, b, clamp = m.group(1), *(self.m.scalar(x) for x in m.groups()[1:])
        if self.m.L != 32:
            raise SimulationError("shfl.sync on a warp that is not 32 lanes")
        if not mask.defined.all() or (mask.value != 0xFFFFFFFF).any():
            raise SimulationError("shfl.sync member mask is not the full warp")
        if not clamp.defined.all() or (clamp.value != 0x1F).any():
            raise SimulationError("shfl.sync clamp value is not 0x1f")
        if not b.defined.all():
            raise SimulationError("shfl.sync lane operand is undefined")
        lane_arg = b.value.astype(np.int64)
        if kind == "idx":
            if (lane_arg >= 32).any():
                raise SimulationError("shfl.sync.idx source lane >= 32")
            source = lane_arg
        else:
            if (lane_arg >= 32).any():
                raise SimulationError("shfl.sync.bfly xor mask >= 32")
            source = self.m.lane ^ lane_arg
        if value.bits != 32:
            raise SimulationError("shfl.sync of a value that is not 32 bits")
        return self._from_lane(value, source, "shfl.sync")

    def op_rocdl_ds_bpermute(self, body):
        m = fullmatch(r"rocdl\.ds_bpermute (\S+), (\S+) : \(i32, i32\) -> i32", body)
        if not m:
            raise SimulationError("cannot read rocdl.ds_bpermute")
        index, value = self.m.scalar(m.group(1)), self.m.scalar(m.group(2))
        if not index.defined.all():
            raise SimulationError("ds_bpermute index is undefined")
        byte = index.value.astype(np.int64)
        if (byte % 4).any():
            raise SimulationError("ds_bpermute byte index is not a multiple of 4")
        if (byte >= 4 * self.m.L).any():
            raise SimulationError(f"ds_bpermute byte index beyond lane {self.m.L - 1}")
        return self._from_lane(value, byte // 4, "ds_bpermute")

    # -- shared memory ---------------------------------------------------------------------
    def op_ttg_local_alloc(self, body):
        m = fullmatch(r"ttg\.local_alloc : \(\) -> !ttg\.memdesc<(\d+)xi8,.*", body)
        if not m:
            raise SimulationError("cannot read the scratch buffer's ttg.local_alloc")
        self.m.alloc(int(m.group(1)))
        return "scratch"

    def op_ttg_local_dealloc(self, body):
        return None

    def op_llvm_getelementptr(self, body):
        m = fullmatch(r"llvm\.getelementptr (\S+)\[(\S+)\] : \(!llvm\.ptr<3>, i32\) -> !llvm\.ptr<3>, i8", body)
        if not m:
            raise SimulationError("cannot read llvm.getelementptr")
        base, offset = self.m.scalar(m.group(1)), self.m.scalar(m.group(2))
        return Scalar(64, (base.value + offset.value) & mask(64), base.defined & offset.defined)

    @staticmethod
    def _lds_access(t: str, alignment: int, what: str) -> tuple[int, int]:
        """(count, bits) of a shared-memory access type the emitters make (AMD always, NVIDIA in
        its LLVM form: ``island_writer.shared_access_type``): i8, i16, i32, vector<2|4xi32>; the
        alignment it claims must be its natural one (LLVM trusts it), and the address
        (``Machine.byte_addresses``) must have it."""
        vec = vector_type(t)
        n, bits = vec if vec else (1, type_bits(t))
        if vec and (bits != 32 or n not in (2, 4)) or not vec and bits not in (8, 16, 32):
            raise SimulationError(f"{what} of {t} is not a shared-memory access the emitters make")
        if alignment != n * bits // 8:
            raise SimulationError(f"{what} of {t} claims alignment {alignment}, its natural alignment is {n * bits // 8}")
        return n, bits

    def op_llvm_store(self, body):
        m = fullmatch(r"llvm\.store (\S+), (\S+) \{alignment = (\d+) : i64\} : (.+?), !llvm\.ptr<3>", body)
        if not m:
            raise SimulationError("cannot read llvm.store")
        value, address, t = self.m.get(m.group(1)), self.m.scalar(m.group(2)), m.group(4).strip()
        n, bits = self._lds_access(t, int(m.group(3)), "llvm.store")
        values = value if vector_type(t) else [value]
        if not isinstance(values, list) or len(values) != n or any(v is None for v in values):
            raise SimulationError(f"llvm.store: the value is not a fully defined {t}")
        if any(not isinstance(v, Scalar) or v.bits != bits for v in values):
            raise SimulationError(f"llvm.store: value and type {t} disagree")
        threads = self.m.all_threads
        offsets = self.m.byte_addresses(address, n * bits // 8, n * bits // 8, "llvm.store")
        for i, v in enumerate(values):  # element by element: the same bytes, the same race rules
            self.m.store_bytes(offsets + i * bits // 8, v.value, v.defined, bits // 8, threads, "llvm.store")
        return None

    def op_llvm_load(self, body):
        m = fullmatch(r"llvm\.load (\S+) \{alignment = (\d+) : i64\} : !llvm\.ptr<3> -> (.+)", body)
        if not m:
            raise SimulationError("cannot read llvm.load")
        address, t = self.m.scalar(m.group(1)), m.group(3).strip()
        n, bits = self._lds_access(t, int(m.group(2)), "llvm.load")
        offsets = self.m.byte_addresses(address, n * bits // 8, n * bits // 8, "llvm.load")
        threads = self.m.all_threads
        out = [Scalar(bits, *self.m.load_bytes(offsets + i * bits // 8, bits // 8, threads, "llvm.load"))
               for i in range(n)]
        return out if vector_type(t) else out[0]

    # -- ldmatrix / stmatrix (NVIDIA), the NVVM ops ---------------------------------------------
    _MATRIX_ATTRIBUTES = (r"\{eltType = #nvvm\.ld_st_matrix_elt_type<b16>, layout = #nvvm\.mma_layout<(row|col)>"
                          r"(?:, num = (\d) : i32)?, shape = #nvvm\.ld_st_matrix_shape<m = 8, n = 8>\}")

    def op_nvvm_ldmatrix(self, body):
        """``nvvm.ldmatrix %p {eltType = b16, layout = row|col, num = N, shape = m8n8} : (!llvm.ptr<3>)
        -> i32 | !llvm.struct<(i32 x N)>``: ``ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16``
        (``col``: ``.trans``), run as ``sim_ptx`` runs the inline-PTX form."""
        m = fullmatch(r"nvvm\.ldmatrix (\S+) " + self._MATRIX_ATTRIBUTES + r" : \(!llvm\.ptr<3>\) -> (.+)", body)
        if not m or m.group(3) is None:
            raise SimulationError("cannot read nvvm.ldmatrix")
        address, trans, count, rtype = self.m.scalar(m.group(1)), m.group(2) == "col", int(m.group(3)), m.group(4)
        if count not in (1, 2, 4):
            raise SimulationError(f"nvvm.ldmatrix num = {count}")
        fields = ("i32",) if rtype == "i32" else struct_fields(rtype)
        if fields != ("i32",) * count or (count == 1) != (rtype == "i32"):
            raise SimulationError(f"nvvm.ldmatrix num = {count} returns {rtype}")
        words = matrix_access(self.m, "ldmatrix", count, trans, address, None)
        return words[0] if count == 1 else words

    def op_nvvm_stmatrix(self, body):
        """``nvvm.stmatrix %p, %w0, ... {eltType = b16, layout = row|col, shape = m8n8} :
        !llvm.ptr<3>, i32, ...``: ``stmatrix.sync.aligned.m8n8.xN[.trans].shared.b16``, N the
        number of words."""
        m = fullmatch(r"nvvm\.stmatrix (\S+), ([^{]+) " + self._MATRIX_ATTRIBUTES + r" : !llvm\.ptr<3>((?:, i32)+)", body)
        if not m or m.group(4) is not None:
            raise SimulationError("cannot read nvvm.stmatrix")
        address = self.m.scalar(m.group(1))
        words = [self.m.scalar(x.strip()) for x in m.group(2).split(",")]
        if len(words) not in (1, 2, 4) or m.group(5).count("i32") != len(words):
            raise SimulationError(f"nvvm.stmatrix of {len(words)} words, types {m.group(5)}")
        if any(word.bits != 32 for word in words):
            raise SimulationError("nvvm.stmatrix of a value that is not i32")
        matrix_access(self.m, "stmatrix", len(words), m.group(3) == "col", address, words)
        return None

    # -- barriers (NVIDIA) ------------------------------------------------------------------
    # the quoted intrinsic name -> its operand count (the id; the id and the thread count)
    _BARRIER_INTRINSICS = {f'"{CTA_BARRIER_INTRINSIC}"': 1, f'"{GROUP_BARRIER_INTRINSIC}"': 2}

    def op_llvm_call_intrinsic(self, body):
        """The barrier intrinsics, the only ones an island calls:
        ``llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"(%id) : (i32) -> ()``
        (``bar.sync id``: every thread of the CTA; the id is 0) and ``...aligned.count"(%id, %n)
        : (i32, i32) -> ()`` (``bar.sync id, n``: a warp group's named barrier)."""
        m = fullmatch(r'llvm\.call_intrinsic ("[^"]+")\(([^)]*)\) : \(([^)]*)\) -> \(\)', body)
        if not m or m.group(1) not in self._BARRIER_INTRINSICS:
            raise SimulationError(f"cannot read '{body}' (an island calls the barrier intrinsics only)")
        if self.m.vendor != Vendor.NVIDIA:
            raise SimulationError(f"{m.group(1)} is an {Vendor.NVIDIA} intrinsic; the target is {self.m.vendor}")
        operands = [x.strip() for x in m.group(2).split(",")]
        if len(operands) != self._BARRIER_INTRINSICS[m.group(1)] or m.group(3) != ", ".join(["i32"] * len(operands)):
            raise SimulationError(f"{m.group(1)} with operands ({m.group(2)}) : ({m.group(3)})")
        values = [self.m.scalar(x) for x in operands]
        if any(not v.defined.all() or len(set(v.value)) != 1 for v in values):
            raise SimulationError(f"{m.group(1)}: its id and thread count must be one constant each")
        barrier_id, *threads = (int(v.value[0]) for v in values)
        if not threads and barrier_id != 0:
            raise SimulationError(f"{m.group(1)} with id {barrier_id}: the whole CTA's barrier is 0")
        self.m.named_barrier(barrier_id, threads[0] if threads else None)
        return None

    def op_nvvm_bar_warp_sync(self, body):
        """``nvvm.bar.warp.sync %mask : i32``, the full warp's mask (-1)."""
        m = fullmatch(r"nvvm\.bar\.warp\.sync (\S+) : i32", body)
        if not m:
            raise SimulationError(f"cannot read '{body}'")
        mask = self.m.scalar(m.group(1))
        if not mask.defined.all() or mask.bits != 32 or (mask.value != np.uint64(0xFFFFFFFF)).any():
            raise SimulationError("bar.warp.sync member mask is not the full warp")
        m = self.m
        # a one-warp group's barrier (Triton's, in a partition of one warp) orders the group
        m.barrier(cta=m.W == 1 and m.group.barrier_id is not None)
        return None

    # -- inline assembly (NVIDIA) ------------------------------------------------------------
    def op_llvm_inline_asm(self, body):
        """Inline PTX: ``lowering.sim.sim_ptx`` reads it as LLVM does and runs its instruction."""
        return run_inline_asm(self.m, body)

    # -- AMD barriers ----------------------------------------------------------------------
    def op_llvm_fence(self, body):
        m = fullmatch(r'llvm\.fence syncscope\("workgroup"\) (\w+)', body)
        if not m:
            raise SimulationError("cannot read llvm.fence")
        order = m.group(1)
        if order == "release":
            if self.m.pending_fence is not None:
                raise SimulationError("a release fence inside an unfinished barrier sequence")
            self.m.pending_fence = "release"
        elif order == "acquire":
            if self.m.pending_fence != "s_barrier":
                raise SimulationError("an acquire fence without release; s_barrier before it")
            self.m.pending_fence = None
        elif order == "acq_rel":
            if self.m.pending_fence is not None:
                raise SimulationError("a warp fence inside a barrier sequence")
            self.m.barrier(cta=False)
        else:
            raise SimulationError(f"fence ordering '{order}' not supported")
        return None

    def op_rocdl_s_barrier(self, body):
        if self.m.pending_fence != "release":
            raise SimulationError("s_barrier without a release fence before it (LDS traffic is not waited for)")
        self.m.pending_fence = "s_barrier"
        self.m.barrier(cta=True)
        return None
