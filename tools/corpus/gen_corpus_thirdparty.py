"""Generate a third-party Triton library's TTGIR corpus under test/lit/corpus/<library>/.

Two libraries, chosen by ``--library``:

* ``liger_kernel`` (the default; ``test/lit/corpus/liger_kernel/``): Liger-Kernel (LinkedIn,
  BSD-2-Clause), version pinned in ``LIGER.version``; the corpus the compile-time benchmark and
  earlier work were tuned on;
* ``fla`` (``test/lit/corpus/fla/``): flash-linear-attention (MIT), the commit pinned in
  ``FLA.version``; a held-out corpus no benchmark of the project was built from (chunked linear
  attention forward and backward, softmax attention forward and backward, triangular solves,
  cumulative sums, norms, pooling, token shift).

Either library's kernels are compiled by *us*, with the Triton of the repository's ``.venv`` (the
one named in ``test/lit/corpus/VERSION``), for sm_90 and (some) sm_80, without a GPU, through
``triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget(...))``.  Nothing of the
library (nor torch, which both import at module level) is a dependency of the package: install
them into a scratch folder outside the repository and put it on ``PYTHONPATH``::

    python -m pip download --no-deps liger-kernel==0.8.5 -d /tmp/ll_scratch/dl
    python -m pip install --no-deps --target /tmp/ll_scratch/site torch==2.13.0 \\
        /tmp/ll_scratch/dl/liger_kernel-0.8.5-py3-none-any.whl
    python -m pip install --target /tmp/ll_scratch/site2 typing_extensions sympy networkx jinja2 fsspec filelock
    PYTHONPATH=/tmp/ll_scratch/site:/tmp/ll_scratch/site2 .venv/bin/python tools/corpus/gen_corpus_thirdparty.py
    PYTHONPATH=... .venv/bin/python tools/corpus/gen_corpus_thirdparty.py --check   # list the files only

    # flash-linear-attention: its source at the pinned commit (no wheel of that commit), plus einops
    git clone https://github.com/fla-org/flash-linear-attention /tmp/ll_scratch/fla_git
    git -C /tmp/ll_scratch/fla_git archive COMMIT fla LICENSE | tar -x -C /tmp/ll_scratch/fla
    python -m pip install --target /tmp/ll_scratch/site2 einops
    PYTHONPATH=/tmp/ll_scratch/fla:/tmp/ll_scratch/site:/tmp/ll_scratch/site2 \\
        .venv/bin/python tools/corpus/gen_corpus_thirdparty.py --library fla

flash-linear-attention's ``fla/__init__.py`` and ``fla/ops/__init__.py`` import every operator,
and some of those modules are rejected by Triton 3.9 at import (an autotune key that names no
argument); so the generator registers those two packages without running their ``__init__``
and imports only the modules it compiles.  Its kernels are wrapped in ``triton.autotune`` /
``triton.heuristics``: the generator takes the ``triton.jit`` function beneath, the first
autotune configuration with 4 warps (else the first) for the block sizes, warps and stages,
and sets the heuristics' flags itself (``IS_VARLEN`` off, ``USE_G`` on, other flags off unless a
case says otherwise).

Each file is ``<case>.<target>.ttgir`` (``target`` = cuda90 or cuda80); ``SOURCES.md`` beside
them (written by this script) says which kernel and which constants each one is.  ``loc(...)``
attributes and ``#loc`` lines are stripped (the files stay small and name no path of this machine);
Triton 3.6 and 3.9 both parse the result (``ll-opt FILE`` under ``.venv`` and ``.venv-compat``).
Liger's ``_softmax_multi_block_*`` kernels are left out: they call ``tl.float32(...)``, which
Triton 3.9 rejects ("'dtype' object is not callable").  A case whose compile fails is reported and skipped (so that a library update does not stop the
rest); the script exits 1 if fewer than ``--min`` files were written.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import types
from typing import Callable, NamedTuple

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(REPO, "test", "lit", "corpus")


class Library(NamedTuple):
    """One library the generator knows: ``key`` is ``--library``'s value and the folder under
    ``test/lit/corpus/``; ``package`` the module its kernels are imported from, ``modules`` the
    prefix of a case's module under it; ``cases()`` yields the cases (see ``_liger_cases``);
    ``prepare(fn, data, overrides, constexprs, warps)`` gives ``(jit function, signature,
    constexprs, options)``; ``installed_version()`` what is installed (warned about when it is not
    ``version``); ``provenance`` how the source was obtained, for SOURCES.md."""

    key: str
    title: str
    package: str
    modules: str
    version: str
    home: str
    license: str
    provenance: str
    cases: Callable
    prepare: Callable
    installed_version: Callable
    minimum: int


# Argument names that are integers (strides, sizes, indices) whatever the kernel.
_INT_NAMES = re.compile(r"(stride|^n_|_size$|^sl$|^T$|^TK$|^L$|^D$|^S$|^dim$|^hidden_dim$|^n_tiles$|^vocab_start$|"
                        r"^ignore_index$|^rows_per_program$|^channels_per_group$|^seq_len$|^batch_size$|^pid$|^M$|^N$)")
# Pointer arguments that hold fp32 statistics whatever the data type (rstd, mean, losses, lse).
_FP32_POINTERS = re.compile(r"(?i)(rstd|mean|loss|lse|z_loss|sum_exp|logits_max|accuracy|sigma|^KL$|^LSE$|LOGP|"
                            r"ADVANTAGES|COEF|PHI_SEQ|VLLM|DKL|DLOSS)")
_INT_POINTERS = re.compile(r"(?i)(label|target_ptr|INPUT_IDS|predicted_tokens|pred_ptr|COMPLETION_MASK|"
                           r"IS_CLIPPED|^mask_ptr$|^MASK$|idx|indices|offs|tile_|expert_|partial_sum|freq)")


def _is_pointer(name: str) -> bool:
    return (name.lower().endswith("ptr") or name.isupper() and not _INT_NAMES.search(name)
            or name in {"a", "b", "c", "dc", "cos", "sin", "y_ptr"})


def signature_for(fn, data: str, overrides: dict[str, str], constexprs: dict) -> dict[str, str]:
    """Triton signature of ``fn``: each runtime argument's type by its name (pointers of the data
    type ``data`` unless they are statistics or indices), ``overrides`` first, constexprs marked."""
    signature = {}
    for param in fn.params:
        name = param.name
        if param.is_constexpr:
            if name in constexprs:
                signature[name] = "constexpr"
            continue
        if name in overrides:
            signature[name] = overrides[name]
        elif _INT_NAMES.search(name) and not name.endswith("_ptr"):
            signature[name] = "i32"
        elif _is_pointer(name):
            if _INT_POINTERS.search(name):
                signature[name] = "*i64" if name in {"label_ptr", "target_ptr", "INPUT_IDS"} else "*i32"
            elif _FP32_POINTERS.search(name):
                signature[name] = "*fp32"
            else:
                signature[name] = data
        else:
            signature[name] = "fp32"
    return signature


# --------------------------------------------------------------------------- the cases
# (stem, module, kernel, {arg: type} overrides, constexprs, options, variants)
# variants: list of (suffix, target, data pointer type, constexpr updates, num_warps)

F32, BF16 = "*fp32", "*bf16"
TRITON_BF16 = "bf16"  # for X_dtype-style constexprs (a tl.dtype)


def _rows(block_small=1024, block_big=4096, warps_small=4, warps_big=8, key="BLOCK_SIZE"):
    """The usual three variants of a row-wise kernel: sm_90 fp32 small block, sm_90 bf16 big
    block with more warps (what calculate_settings picks for it), sm_80 bf16 small block."""
    return [("f32_%d" % block_small, "cuda90", F32, {key: block_small}, warps_small),
            ("bf16_%d" % block_big, "cuda90", BF16, {key: block_big}, warps_big),
            ("bf16_%d" % block_small, "cuda80", BF16, {key: block_small}, warps_small)]


def _liger_cases():
    import triton.language as tl

    bf16 = tl.bfloat16
    rows = _rows()
    yield "rms_norm_fwd", "rms_norm", "_rms_norm_forward_kernel", {}, \
        {"casting_mode": 0, "elementwise_affine": True}, rows
    yield "rms_norm_fwd_gemma", "rms_norm", "_rms_norm_forward_kernel", {}, \
        {"casting_mode": 1, "elementwise_affine": True}, rows[:1]
    yield "rms_norm_bwd", "rms_norm", "_rms_norm_backward_kernel", {"dW_ptr": F32}, \
        {"X_dtype": bf16, "casting_mode": 0, "elementwise_affine": True, "COMPUTE_DW": True}, rows
    yield "block_rms_norm_fwd", "rms_norm", "_block_rms_norm_forward_kernel", {}, \
        {"casting_mode": 0, "elementwise_affine": True, "BLOCK_ROW": 16}, \
        [("f32_1024", "cuda90", F32, {"BLOCK_SIZE": 1024}, 4), ("bf16_256", "cuda90", BF16, {"BLOCK_SIZE": 256}, 4),
         ("bf16_512", "cuda80", BF16, {"BLOCK_SIZE": 512}, 4)]
    yield "block_rms_norm_bwd", "rms_norm", "_block_rms_norm_backward_kernel", {"dW_ptr": F32}, \
        {"X_dtype": bf16, "casting_mode": 0, "elementwise_affine": True, "BLOCK_ROW": 16, "COMPUTE_DW": True}, \
        [("f32_512", "cuda90", F32, {"BLOCK_SIZE": 512}, 4), ("bf16_256", "cuda90", BF16, {"BLOCK_SIZE": 256}, 8),
         ("bf16_256", "cuda80", BF16, {"BLOCK_SIZE": 256}, 4)]
    yield "layer_norm_fwd", "layer_norm", "_layer_norm_forward_kernel", {}, {}, rows
    yield "layer_norm_bwd", "layer_norm", "_layer_norm_backward_kernel", {"DW_ptr": F32, "DB_ptr": F32}, \
        {"rows_per_program": 8, "COMPUTE_DW": True, "COMPUTE_DB": True}, rows
    yield "fused_add_rms_norm_fwd", "fused_add_rms_norm", "_fused_add_rms_norm_forward_kernel", {}, \
        {"casting_mode": 0}, rows
    yield "fused_add_rms_norm_bwd", "fused_add_rms_norm", "_fused_add_rms_norm_backward_kernel", {"dW_ptr": F32}, \
        {"X_dtype": bf16, "rows_per_program": 4, "casting_mode": 0, "has_dS_out": True, "COMPUTE_DW": True}, rows[:2]
    yield "poly_norm_fwd", "poly_norm", "_poly_norm_forward_kernel", {}, {}, rows
    yield "poly_norm_bwd", "poly_norm", "_poly_norm_backward_kernel", {"dW_ptr": F32, "dB_ptr": F32}, \
        {"rows_per_program": 4}, rows[:2]
    yield "group_norm_fwd", "group_norm", "_group_norm_forward_kernel", {}, {}, rows[:2]
    yield "group_norm_bwd", "group_norm", "_group_norm_backward_kernel", {"DW_ptr": F32, "DB_ptr": F32}, \
        {"hidden_size": 4096, "channels_per_group": 8, "dtype": tl.float32}, \
        [("f32_1024", "cuda90", F32, {"BLOCK_SIZE": 1024}, 4), ("f32_4096", "cuda80", F32, {"BLOCK_SIZE": 4096}, 8)]
    yield "modulated_rms_norm_fwd", "modulated_rms_norm", "_modulated_rms_norm_forward_kernel", {}, \
        {"casting_mode": 0, "elementwise_affine": True, "has_shift": True, "rows_per_modulation": 16}, rows[:2]
    yield "softmax_single_fwd", "softmax", "_softmax_single_block_forward_kernel", {}, {}, rows
    yield "softmax_single_bwd", "softmax", "_softmax_single_block_backward_kernel", {}, {}, rows
    ce = {"X_stride": "i64", "Y_ptr": "*i64", "predicted_tokens_ptr": "*i64", "n_non_ignore": "fp32", "sum_non_ignore_weight": "fp32", "weight_sum": "fp32",
          "weight_ptr": F32}
    ce_ce = {"lse_square_scale": 0.0, "label_smoothing": 0.0, "reduction": "mean", "RETURN_Z_LOSS": False,
             "RETURN_TOKEN_ACCURACY": False, "RETURN_PREDICTED_TOKENS": False, "HAS_WEIGHT": False,
             "HAS_SOFTCAPPING": False, "HAS_GRADIENTS": True}
    yield "cross_entropy", "cross_entropy", "liger_cross_entropy_kernel", ce, ce_ce, \
        _rows(block_small=4096, block_big=32768, warps_small=8, warps_big=32)
    yield "cross_entropy_zloss_smooth_softcap", "cross_entropy", "liger_cross_entropy_kernel", ce, \
        dict(ce_ce, lse_square_scale=1e-4, label_smoothing=0.1, RETURN_Z_LOSS=True, HAS_WEIGHT=True,
             HAS_SOFTCAPPING=True, RETURN_TOKEN_ACCURACY=True, RETURN_PREDICTED_TOKENS=True), \
        _rows(block_small=4096, block_big=32768, warps_small=8, warps_big=32)[:2]
    yield "element_mul", "utils", "element_mul_kernel", {"X_stride": "i64", "grad_output_ptr": F32}, {"X_col_stride": 1}, \
        rows[:2]
    yield "kl_div_fwd", "kl_div", "_kldiv_kernel_forward", {}, {"reduction": 3, "log_target": False}, rows
    yield "kl_div_bwd", "kl_div", "_kldiv_kernel_backward", {"target_ptr": None}, {"log_target": False}, rows[:2]
    yield "jsd", "jsd", "_jsd_kernel", {"n_non_ignore": "i32"}, {"beta": 0.5, "ignore_index": -100, "HAS_LABEL": True}, \
        rows
    yield "tvd", "tvd", "_tv_distance_kernel", {"scale": "fp32"}, \
        {"ignore_index": -100, "HAS_LABEL": True, "reduction": 3}, rows[:2]
    yield "fused_linear_kl_div", "fused_linear_kl_div", "_kl_div_kernel", {"scale": "fp32", "temperature": "fp32"}, \
        {"ignore_index": -100, "HAS_LABEL": True}, rows[:2]
    yield "swiglu_fwd", "swiglu", "_swiglu_forward_kernel", {"stride": "i32"}, {"n_cols": 4096}, rows
    yield "swiglu_bwd", "swiglu", "_swiglu_backward_kernel", {"stride": "i32"}, {"n_cols": 4096}, rows
    yield "swiglu_fwd_tiled", "swiglu", "_swiglu_forward_kernel_tiled", {"stride": "i32"}, {}, rows[:2]
    yield "swiglu_fused_gate_up_fwd", "swiglu", "_swiglu_fused_gate_up_forward_kernel", \
        {"in_stride": "i32", "out_stride": "i32", "y_ptr": None, "c_ptr": None}, {"ffn_size": 4096}, rows[:2]
    yield "geglu_fwd", "geglu", "_geglu_tanh_forward_kernel", {"stride": "i32"}, {"n_cols": 4096}, rows
    yield "geglu_bwd", "geglu", "_geglu_tanh_backward_kernel", {"stride": "i32"}, {"n_cols": 4096}, rows
    yield "relu_squared_fwd", "relu_squared", "_relu_squared_forward_kernel", {}, {"n_cols": 4096}, rows[:2]
    yield "relu_squared_bwd", "relu_squared", "_relu_squared_backward_kernel", {}, {"n_cols": 4096}, rows[:2]
    rope = {"bs": 2, "cos_bs": 1, "n_qh": 32, "n_kh": 8, "hd": 128, "pad_n_qh": 32, "pad_n_kh": 8, "pad_hd": 128,
            "pad_rd": 128, "rd": 128, "BACKWARD_PASS": False}
    yield "rope_fwd", "rope", "_triton_rope", {}, rope, \
        [("f32", "cuda90", F32, {"BLOCK_SIZE": 128}, 4), ("bf16", "cuda90", BF16, {"BLOCK_SIZE": 128}, 8),
         ("bf16", "cuda80", BF16, {"BLOCK_SIZE": 128}, 4)]
    yield "rope_bwd_partial", "rope", "_triton_rope", {}, dict(rope, pad_rd=64, rd=64, BACKWARD_PASS=True), \
        [("bf16", "cuda90", BF16, {"BLOCK_SIZE": 128}, 4)]
    mrope = {"bs": 2, "n_qh": 16, "n_kh": 2, "hd": 128, "pad_n_qh": 16, "pad_n_kh": 2, "pad_hd": 128,
             "mrope_section_t": 16, "mrope_section_h": 24, "BACKWARD_PASS": False}
    yield "qwen2vl_mrope", "qwen2vl_mrope", "_triton_qwen2vl_mrope", {"sl": "i32"}, mrope, \
        [("bf16", "cuda90", BF16, {"BLOCK_SIZE": 128}, 4), ("f32", "cuda80", F32, {"BLOCK_SIZE": 128}, 4)]
    yield "llama4_rope", "llama4_rope", "_llama4_rope_kernel", {"imag_sign": "fp32", "freqs_complex_ptr": F32}, \
        {"head_dim_half": 64, "n_q_heads": 32, "n_k_heads": 8}, \
        [("bf16", "cuda90", BF16, {"BLOCK_SIZE": 64}, 4), ("f32", "cuda80", F32, {"BLOCK_SIZE": 64}, 4)]
    yield "sparsemax_fwd", "sparsemax", "_sparsemax_forward_kernel", {}, {}, \
        [("f32_1024", "cuda90", F32, {"BLOCK_SIZE": 1024, "num_warps": 4}, 4),
         ("bf16_4096", "cuda90", BF16, {"BLOCK_SIZE": 4096, "num_warps": 8}, 8)]
    yield "sparsemax_bwd", "sparsemax", "_sparsemax_backward_kernel", {}, {}, \
        [("f32_1024", "cuda90", F32, {"BLOCK_SIZE": 1024, "num_warps": 4}, 4)]
    grpo = {"TEMPERATURE": 1.0, "BETA": 0.04, "EPS_LOW": 0.2, "EPS_HIGH": 0.2, "LOSS_TYPE": 0, "SAPO_TEMP_POS": 1.0,
            "SAPO_TEMP_NEG": 1.0, "DELTA": 0.0, "USE_BIAS_CORRECTION_KL": False, "L": 512, "N": 32000}
    yield "selective_log_softmax", "grpo_loss", "_selective_log_softmax_kernel", {"LOGITS": None, "MASK": "*i32"}, \
        {"TEMPERATURE": 1.0, "L": 512, "N": 32000}, \
        [("bf16_4096", "cuda90", BF16, {"BLOCK_N": 4096}, 8), ("f32_2048", "cuda80", F32, {"BLOCK_N": 2048}, 4)]
    yield "grpo_loss_fwd", "grpo_loss", "_grpo_loss_fwd_kernel", {"LOGITS": None, "VLLM_IS_RATIO_STRIDE": "i32"}, \
        grpo, [("bf16_4096", "cuda90", BF16, {"BLOCK_N": 4096}, 8), ("f32_2048", "cuda90", F32, {"BLOCK_N": 2048}, 4)]
    yield "grpo_loss_bwd", "grpo_loss", "_grpo_loss_bwd_kernel", {"LOGITS": None, "DLOGITS": None,
                                                                   "VLLM_IS_RATIO_STRIDE": "i32"}, \
        grpo, [("bf16_4096", "cuda90", BF16, {"BLOCK_N": 4096}, 8)]
    yield "vocab_parallel_ce_fwd", "vocab_parallel_cross_entropy", "liger_vocab_parallel_ce_forward_kernel", \
        {"EXP_ptr": F32, "Y_ptr": "*i64", "pred_ptr": F32, "ignore_index": "i32"}, {}, \
        [("f32_4096", "cuda90", F32, {"BLOCK_SIZE": 4096}, 8), ("bf16_8192", "cuda90", BF16, {"BLOCK_SIZE": 8192}, 16)]
    yield "vocab_parallel_ce_bwd", "vocab_parallel_cross_entropy", "liger_vocab_parallel_ce_backward_kernel", \
        {"EXP_ptr": F32, "Y_ptr": "*i64", "alpha_eff": "fp32", "eps_eff": "fp32"}, {"HAS_LABEL_SMOOTHING": True}, \
        [("f32_4096", "cuda90", F32, {"BLOCK_SIZE": 4096}, 8)]
    yield "fused_ce_tvd_fwd", "fused_ce_tvd", "_fused_ce_tvd_forward_kernel", {}, {"ignore_index": -100}, \
        [("f32_4096", "cuda90", F32, {"BLOCK_SIZE": 4096}, 8), ("bf16_8192", "cuda90", BF16, {"BLOCK_SIZE": 8192}, 16)]
    yield "mask_fwd", "multi_token_attention", "_mask_fwd_kernel", {"L": "i32"}, {"mask_val": -1e9}, \
        [("f32_64", "cuda90", F32, {"BLOCK": 64, "num_warps": 4}, 4),
         ("bf16_128", "cuda90", BF16, {"BLOCK": 128, "num_warps": 8}, 8)]
    na = {"batch_size": 2, "num_heads": 8, "seq_len": 256, "head_dim": 64, "scale": 0.125, "kernel_size": 7,
          "dilation": 1, "num_stages": 3}
    yield "neighborhood_attention_qk", "fused_neighborhood_attention", "_fused_neighborhood_attention_qk_kernel", \
        {"mask_ptr": F32, "QK_ptr": None}, na, \
        [("f32_64", "cuda90", F32, {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "num_warps": 4}, 4),
         ("bf16_64", "cuda90", BF16, {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "num_warps": 4}, 4),
         ("bf16_32", "cuda80", BF16, {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "num_warps": 4}, 4)]
    na_av = {k: v for k, v in na.items() if k in ("batch_size", "num_heads", "seq_len", "head_dim", "num_stages")}
    blocks = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "num_warps": 4}
    yield "neighborhood_attention_av", "fused_neighborhood_attention", "_fused_neighborhood_attention_av_kernel", \
        {"Attn_ptr": None}, na_av, [("bf16_64", "cuda90", BF16, blocks, 4), ("f32_64", "cuda80", F32, blocks, 4)]
    yield "neighborhood_attention_grad_v", "fused_neighborhood_attention", \
        "_fused_neighborhood_attention_grad_v_kernel", {"Attn_ptr": None}, na_av, [("bf16_64", "cuda90", BF16, blocks, 4)]
    yield "neighborhood_attention_grad_attn", "fused_neighborhood_attention", \
        "_fused_neighborhood_attention_grad_attn_kernel", {"grad_attn_ptr": None}, na_av, \
        [("bf16_64", "cuda90", BF16, blocks, 4)]
    yield "neighborhood_attention_grad_qk", "fused_neighborhood_attention", \
        "_fused_neighborhood_attention_grad_qk_kernel", {"grad_attn_ptr": None}, dict(na_av, scale=0.125), \
        [("bf16_64", "cuda90", BF16, blocks, 4)]
    yield "neighborhood_attention_grad_k", "fused_neighborhood_attention", \
        "_fused_neighborhood_attention_grad_k_kernel", {"grad_attn_ptr": None}, dict(na_av, scale=0.125), \
        [("bf16_64", "cuda90", BF16, blocks, 4)]
    mhc = {"N": 4096, "K": 1024, "M": 24, "stride_xn": 1024, "stride_xk": 1, "stride_phik": 24, "stride_phim": 1,
           "stride_mn": 24, "stride_mm": 1, "eps": 1e-6, "CAST_FP32": True}
    yield "mhc_mm_norm_fwd", "mhc", "_mhc_mm_norm_fwd_kernel", {"phi_ptr": F32, "mix_ptr": F32}, mhc, \
        [("bf16_32", "cuda90", BF16, {"BLOCK_N": 32, "BLOCK_K": 256, "BLOCK_M": 32}, 4),
         ("f32_64", "cuda80", F32, {"BLOCK_N": 64, "BLOCK_K": 64, "BLOCK_M": 32}, 4)]
    mhc_pre = {"N": 4096, "HC": 4, "C": 1024, "stride_xn": 4096, "stride_xh": 1024, "stride_xc": 1, "stride_hn": 4,
               "stride_hh": 1, "stride_on": 1024, "stride_oc": 1}
    yield "mhc_pre_fwd", "mhc", "_mhc_pre_fwd_kernel", {"hpre_ptr": F32}, mhc_pre, \
        [("bf16_32", "cuda90", BF16, {"BLOCK_N": 32, "BLOCK_C": 128}, 4),
         ("f32_16", "cuda80", F32, {"BLOCK_N": 16, "BLOCK_C": 256}, 4)]
    yield "attn_res_fwd", "attn_res", "_attn_res_fwd_kernel", {"W_query_ptr": F32, "W_norm_ptr": F32,
                                                               "Alpha_ptr": F32}, \
        {"eps": 1e-6, "MAX_BLOCKS": 8}, [("bf16_1024", "cuda90", BF16, {"BLOCK_D": 1024}, 4),
                                         ("f32_512", "cuda80", F32, {"BLOCK_D": 512}, 4)]
    moe = {"E": 64, "TOKENS_PER_TILE": 128, "K_POW2": 8, "K": 8, "E_POW2": 64}
    yield "moe_router_histogram", "fused_moe_kernels", "_moe_router_histogram_kernel", {"T": "i32"}, moe, \
        [("i32", "cuda90", "*i32", {}, 4)]
    yield "moe_router_prefix_sum", "fused_moe_kernels", "_moe_router_prefix_sum_kernel", {"TK": "i32"}, \
        {"E": 64, "BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_M_TOKEN": 128}, [("i32", "cuda90", "*i32", {}, 4)]


def _liger_prepare(fn, data, overrides, constexprs, num_warps):
    """Liger's kernels are plain ``triton.jit`` functions: the signature by argument names."""
    overrides = {k: (data if v is None else v) for k, v in overrides.items()}
    return fn, signature_for(fn, data, overrides, constexprs), dict(constexprs), {"num_warps": num_warps}


def _liger_version() -> str:
    library = importlib.import_module("liger_kernel")
    version = getattr(library, "__version__", None)
    if version is None:
        from importlib.metadata import version as _version
        version = _version("liger-kernel")
    return version


LIGER = Library(
    key="liger_kernel", title="Liger-Kernel", package="liger_kernel", modules="ops", version="0.8.5",
    home="https://github.com/linkedin/Liger-Kernel",
    license="BSD-2-Clause (Copyright 2024 LinkedIn Corporation); see the wheel's LICENSE and NOTICE",
    provenance="`liger-kernel` on PyPI, the wheel liger_kernel-0.8.5-py3-none-any.whl, sha256 "
               "60789cd576af073ab9b192b570d2597fd0cdad489cd62fb44fb16256d43754c9",
    cases=_liger_cases, prepare=_liger_prepare, installed_version=_liger_version, minimum=90)


# --------------------------------------------------------------------------- flash-linear-attention
# Runtime arguments by name: sizes and strides are i32, ``scale``-like ones fp32, index tables
# i32 pointers, gates / states / attention matrices / statistics fp32 pointers (what the
# library's Python wrappers allocate), everything else a pointer of the case's data type.
_FLA_INTS = re.compile(r"^(T|B|N|NT|NS|S|M|L|D|G|C|BH|P|stride\w*|s_\w+|n_\w+|chunk_size|window_size|\w+_len|num_\w+)$")
_FLA_FLOATS = re.compile(r"^(scale|eps|gamma|alpha|temperature|softcap|sm_scale)$")
_FLA_INT_POINTERS = re.compile(r"(cu_seqlens|chunk_indices|chunk_offsets|indices|offsets|block_counts|lens|seq_ids)")
_FLA_FP32_POINTERS = re.compile(r"^(g|gk|gv|gi|ge|g_cumsum|gc|dg|dgk|dgv|h0|ht|dh0|dht|h|dh|A|Aqk|Akk|Aw|Au|dA|dAqk|"
                                r"dAkk|lse|m|delta|z|s|ds|beta|dbeta|g_gamma|w|u)$")
# Constexprs every case starts from (heads, head dims, chunk and block sizes, the gate on); an
# autotune configuration and the case's own constexprs override them; any other all-capitals
# flag is off.
_FLA_CONSTEXPRS = {"H": 4, "HV": 4, "HQ": 4, "G": 1, "B": 2, "K": 128, "V": 128, "D": 128, "BT": 64, "BK": 64,
                   "BV": 64, "BC": 16, "BS": 64, "BD": 128, "NC": 4, "S": 16, "M": 64, "USE_G": True}


def _fla_unwrap(fn):
    """The ``triton.jit`` function beneath ``triton.heuristics`` / ``triton.autotune`` wrappers,
    and the configurations of the outermost autotuner (empty where there is none)."""
    from triton.runtime.jit import JITFunction

    configs = []
    while not isinstance(fn, JITFunction):
        configs = configs or list(getattr(fn, "configs", None) or [])
        fn = fn.fn
    return fn, configs


def _fla_prepare(fn, data, overrides, constexprs, num_warps):
    jit, configs = _fla_unwrap(fn)
    config = next((c for c in configs if c.num_warps == 4), configs[0] if configs else None)
    tuned = dict(config.kwargs) if config else {}
    options = {"num_warps": num_warps or (config.num_warps if config else 4)}
    if config and config.num_stages:
        options["num_stages"] = config.num_stages
    signature, values = {}, {}
    for param in jit.params:
        name = param.name
        if param.is_constexpr:
            if name in constexprs:
                value = constexprs[name]
            elif name in tuned:
                value = tuned[name]
            elif name in _FLA_CONSTEXPRS:
                value = _FLA_CONSTEXPRS[name]
            elif re.fullmatch(r"[A-Z][A-Z_0-9]*", name):
                value = False
            else:
                raise ValueError(f"{jit.__name__}: no value for the constexpr {name}")
            values[name], signature[name] = value, "constexpr"
        elif name in overrides:
            signature[name] = data if overrides[name] is None else overrides[name]
        elif _FLA_INTS.match(name):
            signature[name] = "i32"
        elif _FLA_FLOATS.match(name):
            signature[name] = "fp32"
        elif _FLA_INT_POINTERS.search(name):
            signature[name] = "*i32"
        elif _FLA_FP32_POINTERS.match(name):
            signature[name] = "*fp32"
        else:
            signature[name] = data
    return jit, signature, values, options


def _import_without_package_init(packages: list[str]) -> None:
    """Register each package (outermost first) as an empty module with its ``__path__``, without
    running its ``__init__`` (whose imports of every operator a newer Triton may reject)."""
    import importlib.util

    for name in packages:
        if name in sys.modules:
            continue
        parent, _, leaf = name.rpartition(".")
        locations = (list(importlib.util.find_spec(name).submodule_search_locations) if not parent
                     else [os.path.join(sys.modules[parent].__path__[0], leaf)])
        module = types.ModuleType(name)
        module.__path__ = locations
        sys.modules[name] = module


FLA_COMMIT = "bc3b101dcb713ddc5bd8924b66754eb68b5ccf89"
FLA_VERSION = "0.5.2"


def _fla_version() -> str:
    """The ``__version__`` that ``fla/__init__.py`` declares (read, not run: see
    ``_import_without_package_init``); the registered packages get it, as some modules import it."""
    import importlib.util

    init = importlib.util.find_spec("fla").origin
    match = re.search(r'^__version__ = "([^"]+)"', open(init).read(), re.M)
    _import_without_package_init(["fla", "fla.ops"])
    sys.modules["fla"].__version__ = match.group(1) if match else "?"
    return f"{sys.modules['fla'].__version__} at {FLA_COMMIT[:12]}" if match else "?"


def _fla_cases():
    # (stem, module under fla., kernel, {arg: type} overrides, constexprs, variants); a variant's
    # warps None: the autotune configuration's.
    bf16 = [("bf16", "cuda90", "*bf16", {}, None)]
    bf16_80 = bf16 + [("bf16", "cuda80", "*bf16", {}, None)]
    yield "chunk_o_fwd", "ops.common.chunk_o", "chunk_fwd_kernel_o", {}, {}, \
        [("f32", "cuda90", "*fp32", {}, None)]
    yield "chunk_o_bwd_dv", "ops.common.chunk_o", "chunk_bwd_kernel_dv", {}, {}, bf16
    yield "chunk_o_bwd_dv_local", "ops.common.chunk_o", "chunk_bwd_kernel_dv_local", {}, {}, bf16
    yield "chunk_h_fwd", "ops.common.chunk_h", "chunk_fwd_kernel_h", {}, {}, bf16_80
    yield "chunk_h_bwd_dh", "ops.common.chunk_h", "chunk_bwd_kernel_dh", {}, {}, bf16
    yield "gla_fwd_o", "ops.gla.chunk", "chunk_gla_fwd_kernel_o", {}, {}, bf16_80
    yield "gla_fwd_A_inter", "ops.gla.chunk", "chunk_gla_fwd_A_kernel_intra_sub_inter", {}, {}, bf16
    yield "gla_bwd_dA", "ops.gla.chunk", "chunk_gla_bwd_kernel_dA", {}, {}, bf16
    yield "gla_bwd_dv", "ops.gla.chunk", "chunk_gla_bwd_kernel_dv", {}, {}, bf16
    yield "gla_bwd_inter", "ops.gla.chunk", "chunk_gla_bwd_kernel_inter", {}, {}, bf16
    attention = {"BT": 128, "BS": 64, "BK": 128, "BV": 128}
    yield "attn_fwd", "ops.attn.parallel", "parallel_attn_fwd_kernel", {}, dict(attention, USE_G=False), \
        [("bf16", "cuda90", "*bf16", {"BV": 64}, 4), ("bf16", "cuda80", "*bf16", {"BS": 32, "BV": 64}, 4)]
    yield "attn_bwd_preprocess", "ops.attn.parallel", "parallel_attn_bwd_kernel_preprocess", {}, {}, bf16
    yield "attn_bwd_dq", "ops.attn.parallel", "parallel_attn_bwd_kernel_dq", {}, \
        dict(attention, BT=64, BS=32, USE_G=False), [("bf16", "cuda90", "*bf16", {}, 4)]
    yield "attn_bwd_dkv", "ops.attn.parallel", "parallel_attn_bwd_kernel_dkv", {}, \
        dict(attention, BT=64, BS=32, USE_G=False), [("bf16", "cuda90", "*bf16", {}, 4)]
    yield "simple_gla_parallel_fwd", "ops.simple_gla.parallel", "parallel_simple_gla_fwd_kernel", {}, {}, bf16
    yield "wy_recompute_w_u", "ops.delta_rule.wy_fast", "recompute_w_u_fwd_kernel", {}, {}, bf16
    yield "solve_tril_16x16", "ops.utils.solve_tril", "solve_tril_16x16_kernel", {}, {}, bf16_80
    yield "solve_tril_merge_32x32", "ops.utils.solve_tril", "merge_16x16_to_32x32_inverse_kernel", {}, {}, bf16
    yield "solve_tril_merge_64x64", "ops.utils.solve_tril", "merge_16x16_to_64x64_inverse_kernel", {}, {}, bf16
    yield "cumsum_local_vector", "ops.utils.cumsum", "chunk_local_cumsum_vector_kernel", {}, {}, bf16
    yield "cumsum_global_scalar", "ops.utils.cumsum", "chunk_global_cumsum_scalar_kernel", {}, {}, bf16
    yield "softmax_fwd", "ops.utils.softmax", "softmax_fwd_kernel", {}, {}, bf16
    yield "logsumexp_fwd", "ops.utils.logsumexp", "logsumexp_fwd_kernel", {}, {}, bf16
    yield "hgrn_fwd_h", "ops.hgrn.chunk", "chunk_hgrn_fwd_kernel_h", {}, {}, bf16
    yield "hgrn_fwd_o", "ops.hgrn.chunk", "chunk_hgrn_fwd_kernel_o", {}, {}, bf16
    yield "hgrn_bwd_o", "ops.hgrn.chunk", "chunk_hgrn_bwd_kernel_o", {}, {}, bf16
    yield "rwkv6_fwd_cumsum", "ops.rwkv6.chunk", "chunk_rwkv6_fwd_cumsum_kernel", {}, {}, bf16
    yield "rwkv6_fwd_A_intra_split", "ops.rwkv6.chunk", "chunk_rwkv6_fwd_A_kernel_intra_sub_intra_split", {}, {}, bf16
    yield "rwkv6_bwd_dh", "ops.rwkv6.chunk", "chunk_rwkv6_bwd_kernel_dh", {}, {}, bf16
    yield "l2norm_fwd", "modules.l2norm", "l2norm_fwd_kernel", {}, {}, bf16
    yield "l2norm_bwd", "modules.l2norm", "l2norm_bwd_kernel", {}, {}, bf16
    yield "mean_pooling_fwd", "ops.utils.pooling", "mean_pooling_fwd_kernel", {}, {}, bf16_80
    yield "mean_pooling_bwd", "ops.utils.pooling", "mean_pooling_bwd_kernel", {}, {}, bf16
    yield "rwkv6_fwd_A_inter", "ops.rwkv6.chunk", "chunk_rwkv6_fwd_A_kernel_intra_sub_inter", {}, {}, bf16
    yield "rwkv6_fwd_A_intra", "ops.rwkv6.chunk", "chunk_rwkv6_fwd_A_kernel_intra_sub_intra", {}, {}, bf16
    yield "rwkv6_bwd_inter", "ops.rwkv6.chunk", "chunk_rwkv6_bwd_kernel_inter", {}, {}, bf16
    yield "gsa_bwd_intra_dvg", "ops.gsa.chunk", "chunk_gsa_bwd_k_kernel_intra_dvg", {}, {}, bf16
    yield "abc_fwd_intra_V", "ops.abc.chunk", "chunk_abc_fwd_kernel_intra_V", {}, {}, bf16
    yield "abc_bwd_intra_K", "ops.abc.chunk", "chunk_abc_bwd_kernel_intra_K", {}, {}, bf16
    yield "abc_bwd_rcum_intra", "ops.abc.chunk", "chunk_abc_bwd_kernel_rcum_intra", {}, {}, bf16
    yield "logcumsumexp_fwd", "ops.utils.logcumsumexp", "logcumsumexp_fwd_kernel", {}, {}, bf16
    yield "token_shift_fwd", "modules.token_shift", "token_shift_fwd_kernel_long", {}, {}, bf16


FLA = Library(
    key="fla", title="flash-linear-attention", package="fla", modules="", version=f"{FLA_VERSION} at {FLA_COMMIT[:12]}",
    home="https://github.com/fla-org/flash-linear-attention",
    license="MIT (Copyright (c) 2023-2026 Songlin Yang, Yu Zhang, Zhiyuan Li); see the repository's LICENSE",
    provenance=f"the git repository at commit {FLA_COMMIT} (`git archive {FLA_COMMIT} fla LICENSE`)",
    cases=_fla_cases, prepare=_fla_prepare, installed_version=_fla_version, minimum=30)

LIBRARIES = {library.key: library for library in (LIGER, FLA)}


def compile_case(library: Library, fn, data, overrides, constexprs, num_warps, target_name):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    jit, signature, constexprs, options = library.prepare(fn, data, overrides, constexprs, num_warps)
    capability = {"cuda90": 90, "cuda80": 80}[target_name]
    source = ASTSource(jit, signature, constexprs=constexprs)
    compiled = triton.compile(source, target=GPUTarget("cuda", capability, 32), options=options)
    return compiled.asm["ttgir"], constexprs, options


def strip_locations(text: str) -> str:
    """Drop ``#locN = loc(...)`` lines and `` loc(...)`` suffixes (nested parentheses included)."""
    lines = [line for line in text.splitlines() if not re.match(r"^#loc\d*\s*=\s*loc\(", line)]
    out = []
    for line in lines:
        while True:
            i = line.rfind(" loc(")
            if i < 0:
                break
            depth, j = 0, i + 4
            while j < len(line):
                depth += {"(": 1, ")": -1}.get(line[j], 0)
                j += 1
                if depth == 0:
                    break
            line = line[:i] + line[j:]
        out.append(line)
    return "\n".join(out) + "\n"


PARSERS_MARK = "\n## Which Triton parses them\n"


def record_parsers(out: str, ll_opts: list[str]) -> int:
    """Run every ``ll-opt`` on every file (parse and print, no pass); write the outcome into
    SOURCES.md (replacing an earlier such section).  1 if the first one (the corpus's own
    Triton) fails on any file."""
    import subprocess

    files = sorted(f for f in os.listdir(out) if f.endswith(".ttgir"))
    section = [PARSERS_MARK, "`ll-opt FILE` (parse, print; no pass), by `tools/corpus/gen_corpus_thirdparty.py --parsers`:\n"]
    first_failed = 0
    for index, ll_opt in enumerate(ll_opts):
        version = subprocess.run([os.path.join(os.path.dirname(ll_opt), "python"), "-c",
                                  "import triton; print(triton.__version__)"], capture_output=True, text=True).stdout.strip()
        failed = []
        for name in files:
            result = subprocess.run([ll_opt, os.path.join(out, name)], capture_output=True, text=True)
            if result.returncode != 0:
                why = re.sub(r"^.*?error: ", "", (result.stderr.strip().splitlines() or ["?"])[0])
                failed.append((name, re.sub(r"^\S+\.ttgir:\d+:\d+: ", "", why)[:120]))
        if index == 0:
            first_failed = len(failed)
        section.append(f"- triton {version or '?'} (`{ll_opt}`): {len(files) - len(failed)} of {len(files)} parse")
        for name, why in failed:
            section.append(f"  - `{name}`: {why}")
        print(section[-1 - len(failed)], file=sys.stderr)
    path = os.path.join(out, "SOURCES.md")
    text = open(path).read().split(PARSERS_MARK)[0].rstrip("\n") + "\n"
    with open(path, "w") as f:
        f.write(text + "\n".join(section) + "\n")
    return 1 if first_failed else 0


DATA_TYPES = {"liger_kernel": "statistics such as rstd / mean / loss / lse are fp32, labels and indices integers",
              "fla": "gates, states, attention matrices and statistics are fp32, index tables int32"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", choices=sorted(LIBRARIES), default=LIGER.key,
                        help="which library's kernels (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="list the files without compiling")
    parser.add_argument("--out", default=None, help="default: test/lit/corpus/<library>")
    parser.add_argument("--only", default=None, help="regex over case stems")
    parser.add_argument("--min", type=int, default=None, help="exit 1 if fewer files were written "
                        "(default: 90 for liger_kernel, 30 for fla)")
    parser.add_argument("--parsers", nargs="+", metavar="LL_OPT",
                        help="instead of generating: run each ll-opt (e.g. .venv/bin/ll-opt .venv-compat/bin/ll-opt) "
                             "on every file and record which parse in SOURCES.md")
    args = parser.parse_args(argv)
    library = LIBRARIES[args.library]
    out = args.out or os.path.join(CORPUS, library.key)
    minimum = library.minimum if args.min is None else args.min
    if args.parsers:
        return record_parsers(out, args.parsers)
    from ...passes.drop_in import environment
    environment.set_default("TRITON_DEFAULT_FP_FUSION", "1")
    import triton

    if args.check:
        for stem, _, _, _, _, variants in library.cases():
            if not args.only or re.search(args.only, stem):
                for suffix, target_name, *_ in variants:
                    print(os.path.join(out, f"{stem}_{suffix}.{target_name}.ttgir"))
        return 0
    version = library.installed_version()
    if version != library.version:
        print(f"warning: {library.package} {version} installed, the corpus is of {library.version}", file=sys.stderr)
    os.makedirs(out, exist_ok=True)
    rows, failures = [], []
    for stem, module, kernel, overrides, constexprs, variants in library.cases():
        if args.only and not re.search(args.only, stem):
            continue
        module_path = f"{library.modules}.{module}" if library.modules else module
        fn = getattr(importlib.import_module(f"{library.package}.{module_path}"), kernel)
        for suffix, target_name, data, updates, warps in variants:
            name = f"{stem}_{suffix}.{target_name}.ttgir"
            path = os.path.join(out, name)
            try:
                text, ce, options = compile_case(library, fn, data, overrides, dict(constexprs, **updates), warps,
                                                 target_name)
                text = strip_locations(text)
            except Exception as error:  # a case the library's kernel or this Triton rejects
                failures.append((name, f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"))
                print(f"FAILED {name}: {failures[-1][1]}", file=sys.stderr)
                continue
            with open(path, "w") as f:
                f.write(text)
            shown = {k: (str(v) if not isinstance(v, str) else repr(v)) for k, v in ce.items()}
            stages = f", num_stages={options['num_stages']}" if "num_stages" in options else ""
            rows.append((name, module_path.replace(".", "/") + ".py", kernel, data[1:], options["num_warps"],
                         ", ".join(f"{k}={v}" for k, v in shown.items()) + stages))
            print(f"wrote {name} ({len(text)} chars)", file=sys.stderr)
    if args.only:  # a partial run leaves SOURCES.md (the whole corpus's) alone
        print(f"wrote {len(rows)} files; {len(failures)} failed", file=sys.stderr)
        return 0 if not failures else 1
    with open(os.path.join(out, "SOURCES.md"), "w") as f:
        f.write(f"# {library.title} TTGIR corpus\n\n"
                f"- library: {library.title}, version {version}, {library.home}; {library.provenance}\n"
                f"- license: {library.license}\n"
                f"- compiled by: triton {triton.__version__} (see ../VERSION), `triton.compile(ASTSource(...), "
                f"target=GPUTarget('cuda', 90|80, 32))`, no GPU, `TRITON_DEFAULT_FP_FUSION=1`\n"
                f"- generator: `tools/corpus/gen_corpus_thirdparty.py --library {library.key}` (its docstring says how to "
                f"rerun it); `loc(...)` stripped\n"
                f"- data type: the type of the data pointers ({DATA_TYPES[library.key]})\n\n"
                f"{len(rows)} files.\n\n"
                f"| file | source ({library.package}/) | kernel | data | warps | constexprs |\n"
                "|---|---|---|---|---|---|\n")
        for row in rows:
            f.write("| " + " | ".join(str(x) for x in row) + " |\n")
        if failures:
            f.write("\nCases that did not compile (skipped):\n\n")
            for name, why in failures:
                f.write(f"- `{name}`: {why}\n")
    print(f"wrote {len(rows)} files under {out}; {len(failures)} failed", file=sys.stderr)
    return 0 if len(rows) >= minimum else 1


if __name__ == "__main__":
    sys.exit(main())
