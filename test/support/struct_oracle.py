"""Oracle: does Triton's own conversion to LLVM accept the struct types of our islands?

Run as a subprocess (``python struct_oracle.py < cases.json``): Triton may abort on bad input.
Input: a JSON list of TTGIR module texts with islands (cuda:90 targets).  For each, the module
is parsed and taken through Triton's passes up to ``convert-triton-gpu-to-llvm``; our island's
two casts cancel against Triton's own only if our ``!llvm.struct`` has exactly the fields that
Triton's type converter gives the tensor.  Output: one JSON line per case, the struct/tensor cast
pairs whose struct types differ (``[]`` when the island fits), or ``{"error": ...}``.
"""

import json
import os
import re
import sys
import tempfile

from triton._C.libtriton import ir, nvidia, passes


_CAST = re.compile(r"^\s*(%[\w.#]+) = builtin\.unrealized_conversion_cast (%[\w.#]+) : (.+?) to (.+?)(?: loc\(.*\))?$")


def mismatched_casts(text: str) -> list:
    """Pairs ``struct A -> tensor -> struct B`` with A != B.  Triton's type converter wraps
    every tensor in such pairs (struct of its own making -> tensor -> struct its user expects)
    and folds them later when A == B; our island's cast is the user's side."""
    made_from = {}   # tensor SSA name -> the struct type it was cast from
    bad = []
    for line in text.splitlines():
        m = _CAST.match(line)
        if not m:
            continue
        result, source, from_type, to_type = m.groups()
        if from_type.startswith("!llvm.struct") and to_type.startswith("tensor<"):
            made_from[result] = from_type
        elif from_type.startswith("tensor<") and to_type.startswith("!llvm.struct"):
            if source in made_from and made_from[source] != to_type:
                bad.append(f"{made_from[source]} -> {from_type} -> {to_type}")
    return bad


def leftover_casts(text: str) -> list:
    fd, path = tempfile.mkstemp(suffix=".ttgir")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    try:
        ctx = ir.context()
        ir.load_dialects(ctx)
        nvidia.load_dialects(ctx)
        module = ir.parse_mlir_module(path, ctx)
        pm = ir.pass_manager(ctx)
        passes.convert.add_scf_to_cf(pm)
        nvidia.passes.ttgpuir.add_allocate_shared_memory_nv(pm, 90, 86)
        try:
            nvidia.passes.ttgpuir.add_to_llvmir(pm, 90, 86)
        except TypeError:  # 3.8+: a fourth argument (a debug flag)
            nvidia.passes.ttgpuir.add_to_llvmir(pm, 90, 86, False)
        try:
            pm.run(module, "struct_oracle")
        except TypeError:
            pm.run(module)
        return mismatched_casts(str(module))
    finally:
        os.unlink(path)


def main():
    for text in json.load(sys.stdin):
        try:
            print(json.dumps(leftover_casts(text)), flush=True)
        except Exception as error:  # noqa: BLE001 - reported to the caller
            print(json.dumps({"error": str(error)[:500]}), flush=True)


if __name__ == "__main__":
    main()
