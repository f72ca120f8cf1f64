"""A program for the report's browser test and its screenshots: the kernels of
``gpu_kernels.py`` with loops, reductions, a matmul epilogue and an attention tile, compiled for a
target without a GPU (as a launch would specialize them: pointers and sizes 16-aligned)::

    python -m linear_layouts report -o report/ examples/report_tour.py [--target sm_90]
"""

import argparse
import os
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gpu_kernels import (attention_fwd_kernel, column_sum_kernel, layer_norm_fwd_kernel,  # noqa: E402
                         matmul_kernel, softmax_kernel)

TARGETS = {"sm_90": GPUTarget("cuda", 90, 32), "sm_80": GPUTarget("cuda", 80, 32),
           "gfx942": GPUTarget("hip", "gfx942", 64)}


def aligned(signature: dict) -> dict:
    """tt.divisibility 16 on every pointer and integer argument, as a launch with aligned
    tensors and sizes specializes them."""
    return {(i,): [["tt.divisibility", 16]] for i, kind in enumerate(signature.values()) if kind != "fp32"}


def compile_all(target) -> int:
    kernels = [
        (softmax_kernel, {"X": "*fp32", "Y": "*fp32"}, {"N": 1024, "BLOCK": 1024}, {}),
        (layer_norm_fwd_kernel, {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16"},
         {"N": 1024, "eps": 1e-5, "BLOCK": 1024}, {}),
        (matmul_kernel, {"A": "*fp16", "B": "*fp16", "C": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
         {"BM": 128, "BN": 128, "BK": 64}, {"num_warps": 8}),
        (attention_fwd_kernel, {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "SEQ": "i32",
                                "sm_scale": "fp32"}, {"D": 64, "BM": 128, "BN": 64}, {"num_warps": 8}),
        (column_sum_kernel, {"X": "*fp32", "Y": "*fp32", "M": "i32", "N": "i32"}, {"BM": 64, "BN": 64}, {}),
    ]
    for function, signature, constexprs, options in kernels:
        triton.compile(ASTSource(function, signature, constexprs=constexprs, attrs=aligned(signature)),
                       target=target, options=options)
    return len(kernels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=sorted(TARGETS), default="sm_90")
    target = TARGETS[parser.parse_args().target]
    print(f"compiled {compile_all(target)} kernels for {target.backend} {target.arch}")


if __name__ == "__main__":
    main()
