"""Triton's own memdesc views and their linear layouts, as a subprocess oracle for the tests.

Reads a JSON list of cases on stdin and prints a JSON list of results.  A case is::

    {"encoding": SPEC, "element": "bf16", "alloc": [3, 64, 64],
     "steps": [["index"], ["subslice", [32, 64], [32, 0]], ["trans", [1, 0]], ["reshape", [2, 16, 64]]],
     "bases_of": [1, 2, 3, 4], "convert": true}

SPEC is ``{"kind": K, "args": [...]}`` naming a ``GluonOpBuilder.get_<K>_layout`` constructor.
The oracle allocates ``alloc`` elements (``ttg.local_alloc``), then applies each step to the
previous value with Gluon's op builders (``memdesc_index`` at index 0, ``memdesc_subslice``
with the given result shape and offsets, ``memdesc_trans``, ``memdesc_reshape``: Triton infers
the result types of the last two).  A result is ``{"types": [...], "bases": {i: {offset, block}}}``:
the printed type of every value (0 = the allocation), and for the values listed in
``bases_of``, when ``convert`` is set, Triton's linear layout of that memdesc type, which is
``toLinearLayout(MemDescType)``: the encoding over the last ``rank`` dims of the allocation
shape the type prints.

Run it only in a subprocess: Triton aborts the whole process on invalid input.
"""

import json
import os
import re
import sys

from triton._C.libtriton import gluon_ir, ir

ELEMENTS = {"bf16": "get_bf16_ty", "f16": "get_half_ty", "f32": "get_float_ty", "i8": "get_int8_ty",
            "f64": "get_double_ty"}


def shapes_of(type_text):
    """(shape, allocation shape) of a printed memdesc type."""
    body = type_text[type_text.index("<") + 1:]
    shape = []
    for part in body.split("x"):
        if not part.isdigit():
            break
        shape.append(int(part))
    trailing = re.search(r", (\d+(?:x\d+)*)>$", type_text)
    alloc = [int(d) for d in trailing.group(1).split("x")] if trailing else shape
    return shape, alloc


def main():
    cases = json.load(sys.stdin)
    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)
    builder.set_loc("memdesc_oracle.py", 1, 1)
    # Every case's ops go into one function: they are independent of one another.
    module = builder.create_module()
    function = builder.get_or_insert_function(module, "cases", builder.get_function_ty([], []), "public", False)
    module.push_back(function)
    builder.set_insertion_point_to_start(function.add_entry_block())
    results = []
    for case in cases:
        element = getattr(builder, ELEMENTS[case["element"]])()
        spec = case["encoding"]
        attr = getattr(builder, f"get_{spec['kind']}_layout")(*spec["args"])
        alloc = case["alloc"]
        value = builder.create_local_alloc(builder.get_shared_mem_desc_ty(element, alloc, attr, alloc))
        values = [value]
        zero = builder.get_int32(0)
        for step in case["steps"]:
            shape, alloc_shape = shapes_of(str(value.get_type()))
            layout = builder.get_gluon_layout_from_memdesc(value)._to_ir(builder)
            if step[0] == "index":
                result_type = builder.get_shared_mem_desc_ty(element, shape[1:], layout, alloc_shape[1:])
                value = builder.create_memdesc_index(result_type, value, zero)
            elif step[0] == "subslice":
                result_type = builder.get_shared_mem_desc_ty(element, step[1], layout, alloc_shape)
                value = builder.create_memdesc_subslice(result_type, value, step[2])
            elif step[0] == "trans":
                value = builder.create_memdesc_trans(value, step[1])
            elif step[0] == "reshape":
                value = builder.create_memdesc_reshape(value, step[1])
            else:
                raise ValueError(f"unknown step {step}")
            values.append(value)
        result = {"types": [str(v.get_type()) for v in values], "bases": {}}
        if case.get("convert", True):
            for i in case.get("bases_of", []):
                shape, alloc_shape = shapes_of(result["types"][i])
                layout = attr if i == 0 else builder.get_gluon_layout_from_memdesc(values[i])._to_ir(builder)
                ll = builder.to_linear_layout(layout, alloc_shape[len(alloc_shape) - len(shape):])
                result["bases"][str(i)] = {"offset": ll.offset_bases, "block": ll.block_bases}
        results.append(result)
    json.dump(results, sys.stdout)
    sys.stdout.flush()
    # nanobind (Triton 3.9) reports leaked bindings at interpreter exit; nothing here needs a
    # clean shutdown.
    os._exit(0)


if __name__ == "__main__":
    main()
