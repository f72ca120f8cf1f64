"""Generate the TTGIR corpus of test/lit/corpus/ from real kernels compiled by Triton.

    python -m linear_layouts.tools.corpus.gen_corpus            # rewrite test/lit/corpus/
    python -m linear_layouts.tools.corpus.gen_corpus --check    # list what would be generated

Each case below (a kernel of ``examples/kernels.py``, the one home of the project's Triton
kernels, with its argument types and constants) is compiled for cuda:80, cuda:90 and hip:gfx942
with ``triton.compile(ASTSource(...), target=GPUTarget(...))`` (no GPU needed) and its ``ttgir``
stage is written to ``test/lit/corpus/<target>/<case>.ttgir``.  The files are committed (made
with the Triton version named in ``test/lit/corpus/VERSION``) and regenerated when Triton
changes.  Locations keep line numbers but name the kernels' file relative to the repository
(files made before the kernels moved there name ``tools/gen_corpus.py``).

``test/lit/corpus/liger_kernel/`` (a third-party library's kernels, compiled by us with the same
Triton) is made by ``tools/corpus/gen_corpus_thirdparty.py``, not by this script.

The kernels cover what produces interesting layout conversions: matmul (1 to 8 warps, fp16,
int8, fp64), softmax, layer norm, attention forward, sum and max along each axis, transposes,
gather, int4-weight unpacking (join / permute / reshape), 8-bit and 64-bit element types.
"""

from __future__ import annotations

import argparse
import os
import sys

import triton
import triton.language as tl
from triton.compiler import ASTSource

from ...examples.kernels import (attention_forward, gather_rows, int4_weight_matmul, layer_norm, matmul, matmul_int8,
                               permute_3d, reduce_2d, softmax, split_interleave, transpose)
from ...lowering.target import GFX942, SM80, SM90

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(REPO, "test", "lit", "corpus")
TARGETS = {"cuda80": SM80, "cuda90": SM90, "gfx942": GFX942}  # corpus folder -> target
KERNELS_FILE = os.path.join(REPO, "examples", "kernels.py")


# --------------------------------------------------------------------------- the corpus

def _cases():
    """(file stem, kernel, signature, constexprs, options) for every corpus file."""
    mm = {"A": "*fp16", "B": "*fp16", "C": "*fp16"}
    mm_ce = {"M": 256, "N": 256, "K": 256, "BM": 64, "BN": 64, "BK": 32, "ACC": tl.float32}
    for warps in (1, 2, 4, 8):
        yield f"matmul_w{warps}", matmul, mm, mm_ce, {"num_warps": warps}
    yield "matmul_fp64", matmul, {"A": "*fp64", "B": "*fp64", "C": "*fp64"}, \
        {"M": 64, "N": 64, "K": 64, "BM": 32, "BN": 32, "BK": 16, "ACC": tl.float64}, {"num_warps": 4}
    yield "matmul_int8", matmul_int8, {"A": "*i8", "B": "*i8", "C": "*i32"}, \
        {"K": 64, "BM": 64, "BN": 64, "BK": 64}, {"num_warps": 4}
    yield "softmax", softmax, {"X": "*fp32", "Y": "*fp32"}, {"N": 1024, "ROWS": 4}, {"num_warps": 4}
    yield "layer_norm", layer_norm, {"X": "*fp16", "Y": "*fp16", "W": "*fp32", "B": "*fp32"}, \
        {"N": 512, "eps": 1e-5}, {"num_warps": 4}
    yield "attention_fwd", attention_forward, {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16"}, \
        {"SEQ": 256, "D": 64, "BM": 64, "BN": 64}, {"num_warps": 4}
    for axis in (0, 1):
        for use_max, op in ((False, "sum"), (True, "max")):
            yield f"{op}_axis{axis}", reduce_2d, {"X": "*fp32", "Y": "*fp32"}, \
                {"M": 64, "N": 128, "AXIS": axis, "USE_MAX": use_max}, {"num_warps": 4}
    yield "sum_axis1_i64", reduce_2d, {"X": "*i64", "Y": "*i64"}, \
        {"M": 32, "N": 64, "AXIS": 1, "USE_MAX": False}, {"num_warps": 4}
    yield "max_axis0_i8", reduce_2d, {"X": "*i8", "Y": "*i8"}, \
        {"M": 64, "N": 64, "AXIS": 0, "USE_MAX": True}, {"num_warps": 2}
    for dtype, bits in (("*fp32", 32), ("*fp16", 16), ("*i8", 8), ("*fp64", 64)):
        yield f"transpose_{bits}bit", transpose, {"X": dtype, "Y": dtype}, {"M": 64, "N": 64}, {"num_warps": 4}
    yield "transpose_1warp", transpose, {"X": "*fp32", "Y": "*fp32"}, {"M": 32, "N": 32}, {"num_warps": 1}
    yield "permute_3d", permute_3d, {"X": "*fp32", "Y": "*fp32"}, {"A": 8, "B": 16, "C": 32}, {"num_warps": 4}
    yield "gather", gather_rows, {"X": "*fp32", "I": "*i32", "Y": "*fp32"}, {"M": 64, "N": 32}, {"num_warps": 4}
    yield "int4_unpack_matmul", int4_weight_matmul, {"A": "*fp16", "Wq": "*i8", "C": "*fp32"}, \
        {"M": 64, "N": 64, "K": 64}, {"num_warps": 4}
    yield "split_interleave", split_interleave, {"X": "*fp32", "Y": "*fp32"}, {"N": 256}, {"num_warps": 2}


def compile_ttgir(kernel, signature, constexprs, options, target) -> str:
    signature = dict(signature)
    for name in constexprs:
        signature[name] = "constexpr"
    source = ASTSource(kernel, signature, constexprs=constexprs)
    return triton.compile(source, target=target.gpu_target(), options=options).asm["ttgir"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list the files without compiling")
    parser.add_argument("--out", default=CORPUS, help="corpus directory (default: test/lit/corpus)")
    args = parser.parse_args(argv)
    from ...passes.drop_in import environment
    environment.set_default("TRITON_DEFAULT_FP_FUSION", "1")
    count = 0
    for target_name, target in TARGETS.items():
        os.makedirs(os.path.join(args.out, target_name), exist_ok=True)
        for stem, kernel, signature, constexprs, options in _cases():
            path = os.path.join(args.out, target_name, stem + ".ttgir")
            if args.check:
                print(path)
                continue
            text = compile_ttgir(kernel, signature, constexprs, options, target)
            text = text.replace(KERNELS_FILE, "examples/kernels.py")
            with open(path, "w") as f:
                f.write(text)
            count += 1
    if not args.check:
        with open(os.path.join(args.out, "VERSION"), "w") as f:
            f.write(f"triton {triton.__version__}\n")
        print(f"wrote {count} files under {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
