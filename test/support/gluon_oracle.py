"""Triton's own encoding -> linear layout conversion, as a subprocess oracle for the tests.

Reads a JSON list of cases on stdin and prints a JSON list of results.  A case is
``{"layout": SPEC, "shape": [...]}`` where SPEC is ``{"kind": K, "args": [...]}`` naming a
``GluonOpBuilder.get_<K>_layout`` constructor and its positional arguments; a ``{"kind": ...}``
dict among the arguments is built first (the parent of a slice or dot operand).  A result is
``{"text": <the attribute as Triton prints it>, "bases": {in dim: bases}}``.

Run it only in a subprocess: Triton aborts the whole process on invalid input.
"""

import json
import sys

from triton._C.libtriton import gluon_ir, ir

SHARED_KINDS = {"swizzled_shared", "nvmma_shared", "padded_shared", "shared_linear"}
CONSTRUCTORS = {"linear": "get_distributed_linear_layout", "nvidia_mma": "get_mma_layout",
                "dot_op": "get_dot_operand_layout"}


def main():
    cases = json.load(sys.stdin)
    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)
    f16 = builder.get_half_ty()

    def build(spec):
        args = [build(a) if isinstance(a, dict) and "kind" in a else a for a in spec["args"]]
        name = CONSTRUCTORS.get(spec["kind"], f"get_{spec['kind']}_layout")
        return getattr(builder, name)(*args)

    results = []
    for case in cases:
        spec, shape = case["layout"], case["shape"]
        attr = build(spec)
        if spec["kind"] in SHARED_KINDS:
            text = str(builder.get_shared_mem_desc_ty(f16, shape, attr, shape))
            text = text[text.index("#ttg."):text.rindex(", #ttg.shared_memory")]
        else:
            text = str(builder.get_distributed_ty(f16, shape, attr))
            text = text[text.index("#ttg."):-1]
        result = {"text": text}
        if case.get("convert", True):
            ll = builder.to_linear_layout(attr, shape)
            if hasattr(ll, "offset_bases"):
                result["bases"] = {"offset": ll.offset_bases, "block": ll.block_bases}
            else:
                result["bases"] = {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases,
                                   "block": ll.block_bases}
        results.append(result)
    json.dump(results, sys.stdout)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
