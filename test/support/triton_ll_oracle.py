"""Oracle: evaluate LinearLayout operations with Triton's C++ binding, one JSON batch at a time.

Run as a subprocess (``python triton_ll_oracle.py < cases.json``): invalid input makes Triton's
C++ abort the whole process (LLVM fatal error), so the caller must only send inputs whose
preconditions hold, and must not share its own process with Triton's binding.

Input (stdin): a JSON list of cases.  Each case is an object with

* ``op``: one of ``from_bases`` (inferred out sizes), ``str``, ``matrix``, ``queries``,
  ``apply``, ``compose``, ``mul``, ``invert_and_compose``, ``pseudoinvert``;
* ``a`` (and ``b`` for binary ops): a layout ``{"bases": [[in_dim, [[c, ...], ...]], ...],
  "out": [[out_dim, size], ...]}``; for ``from_bases`` the sizes are ignored and inferred;
* ``inputs`` (for ``apply``): a list of ``{in_dim: value}`` dicts.

Output (stdout): one JSON line per case, flushed as soon as it is known, so that if Triton
aborts on a case the caller can tell which one:

* layout results: ``{"bases": ..., "out": ..., "str": ...}``;
* ``str``: ``{"str": ...}``; ``matrix``: ``{"matrix": [[0/1, ...], ...]}``;
* ``queries``: ``{"surjective": b, "injective": b, "invertible": b}``;
* ``apply``: ``{"outputs": [[[out_dim, value], ...], ...]}`` (out-dim order as returned);
* a Python-level exception: ``{"error": "..."}``.

The binding's surface (checked on triton 3.6.0 and 3.9.0): ``from_bases(bases, out_dim_names,
out_dim_sizes=None, require_surjective=True)`` with bases a list of (name, list of lists);
``.bases`` -> list of (name, list of lists); ``.out_dims`` -> list of (name, size);
``apply(dict) -> dict``; ``get_matrix_view()`` -> rows = out bits, columns = in bits;
``a * b``; ``compose``, ``invert_and_compose``, ``pseudoinvert``; ``str()`` = C++ toString.
"""

from __future__ import annotations

import json
import sys

from triton._C.libtriton.linear_layout import LinearLayout


def build(layout: dict) -> LinearLayout:
    bases = [(name, [list(b) for b in bs]) for name, bs in layout["bases"]]
    names = [n for n, _ in layout["out"]]
    sizes = [s for _, s in layout["out"]]
    return LinearLayout.from_bases(bases, names, sizes, False)


def describe(ll: LinearLayout) -> dict:
    return {
        "bases": [[name, [list(b) for b in bs]] for name, bs in ll.bases],
        "out": [[name, size] for name, size in ll.out_dims],
        "str": str(ll),
    }


def run_case(case: dict) -> dict:
    op = case["op"]
    if op == "from_bases":
        bases = [(name, [list(b) for b in bs]) for name, bs in case["a"]["bases"]]
        return describe(LinearLayout.from_bases(bases, [n for n, _ in case["a"]["out"]]))
    a = build(case["a"])
    if op == "str":
        return {"str": str(a)}
    if op == "matrix":
        return {"matrix": [list(row) for row in a.get_matrix_view()]}
    if op == "queries":
        return {"surjective": a.is_surjective(), "injective": a.is_injective(), "invertible": a.is_invertible()}
    if op == "apply":
        return {"outputs": [[[k, v] for k, v in a.apply(dict(x)).items()] for x in case["inputs"]]}
    if op == "pseudoinvert":
        return describe(a.pseudoinvert())
    b = build(case["b"])
    if op == "compose":
        return describe(a.compose(b))
    if op == "mul":
        return describe(a * b)
    if op == "invert_and_compose":
        return describe(a.invert_and_compose(b))
    raise ValueError(f"unknown op {op!r}")


def main() -> None:
    cases = json.load(sys.stdin)
    out = sys.stdout
    for case in cases:
        try:
            result = run_case(case)
        except Exception as e:  # Python-level errors only; C++ fatal errors end the process
            result = {"error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(result) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
