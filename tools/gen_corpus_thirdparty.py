"""Generate test/lit/corpus/liger_kernel/: the TTGIR of a third-party Triton kernel library.

The library is Liger-Kernel (LinkedIn, BSD-2-Clause), version pinned in ``LIBRARY_VERSION``.
Its kernels are compiled by *us*, with the Triton of the repository's ``.venv`` (the one named in
``test/lit/corpus/VERSION``), for sm_90 (two configurations per kernel: fp32 and bf16 data, two
block sizes / warp counts) and sm_80 (one configuration), without a GPU, through
``triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget(...))``.  Nothing of the
library (nor torch, which it imports at module level) is a dependency of the package: install
both into a scratch folder outside the repository and put it on ``PYTHONPATH``::

    python -m pip download --no-deps liger-kernel==0.8.5 -d /tmp/ll_scratch/dl
    python -m pip install --no-deps --target /tmp/ll_scratch/site torch==2.13.0 \\
        /tmp/ll_scratch/dl/liger_kernel-0.8.5-py3-none-any.whl
    python -m pip install --target /tmp/ll_scratch/site2 typing_extensions sympy networkx jinja2 fsspec filelock
    PYTHONPATH=/tmp/ll_scratch/site:/tmp/ll_scratch/site2 .venv/bin/python tools/gen_corpus_thirdparty.py
    PYTHONPATH=... .venv/bin/python tools/gen_corpus_thirdparty.py --check   # list the files only

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

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "test", "lit", "corpus", "liger_kernel")
LIBRARY = "liger_kernel"
LIBRARY_VERSION = "0.8.5"
LICENSE = "BSD-2-Clause (Copyright 2024 LinkedIn Corporation); see the wheel's LICENSE and NOTICE"
HOME = "https://github.com/linkedin/Liger-Kernel"
WHEEL = f"liger_kernel-{LIBRARY_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "60789cd576af073ab9b192b570d2597fd0cdad489cd62fb44fb16256d43754c9"

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


def _cases():
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


def compile_case(fn, data, overrides, constexprs, num_warps, target_name):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    overrides = {k: (data if v is None else v) for k, v in overrides.items()}
    constexprs = dict(constexprs)
    signature = signature_for(fn, data, overrides, constexprs)
    capability = {"cuda90": 90, "cuda80": 80}[target_name]
    source = ASTSource(fn, signature, constexprs=constexprs)
    options = {"num_warps": num_warps}
    return triton.compile(source, target=GPUTarget("cuda", capability, 32), options=options).asm["ttgir"]


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
    section = [PARSERS_MARK, "`ll-opt FILE` (parse, print; no pass), by `tools/gen_corpus_thirdparty.py --parsers`:\n"]
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list the files without compiling")
    parser.add_argument("--out", default=OUT)
    parser.add_argument("--only", default=None, help="regex over case stems")
    parser.add_argument("--min", type=int, default=90, help="exit 1 if fewer files were written")
    parser.add_argument("--parsers", nargs="+", metavar="LL_OPT",
                        help="instead of generating: run each ll-opt (e.g. .venv/bin/ll-opt .venv-compat/bin/ll-opt) "
                             "on every file and record which parse in SOURCES.md")
    args = parser.parse_args(argv)
    if args.parsers:
        return record_parsers(args.out, args.parsers)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton

    library = importlib.import_module(LIBRARY)
    version = getattr(library, "__version__", None)
    if version is None:
        from importlib.metadata import version as _version
        version = _version("liger-kernel")
    if version != LIBRARY_VERSION:
        print(f"warning: {LIBRARY} {version} installed, the corpus is of {LIBRARY_VERSION}", file=sys.stderr)
    os.makedirs(args.out, exist_ok=True)
    rows, failures = [], []
    for stem, module, kernel, overrides, constexprs, variants in _cases():
        if args.only and not re.search(args.only, stem):
            continue
        fn = getattr(importlib.import_module(f"{LIBRARY}.ops.{module}"), kernel)
        for suffix, target_name, data, updates, warps in variants:
            name = f"{stem}_{suffix}.{target_name}.ttgir"
            path = os.path.join(args.out, name)
            ce = dict(constexprs, **updates)
            if args.check:
                print(path)
                continue
            try:
                text = strip_locations(compile_case(fn, data, overrides, ce, warps, target_name))
            except Exception as error:  # a case the library's kernel or this Triton rejects
                failures.append((name, f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"))
                print(f"FAILED {name}: {failures[-1][1]}", file=sys.stderr)
                continue
            with open(path, "w") as f:
                f.write(text)
            shown = {k: (str(v) if not isinstance(v, str) else repr(v)) for k, v in ce.items()}
            rows.append((name, f"ops/{module}.py", kernel, data[1:], warps,
                         ", ".join(f"{k}={v}" for k, v in shown.items())))
            print(f"wrote {name} ({len(text)} chars)", file=sys.stderr)
    if args.check:
        return 0
    if args.only:  # a partial run leaves SOURCES.md (the whole corpus's) alone
        print(f"wrote {len(rows)} files; {len(failures)} failed", file=sys.stderr)
        return 0 if not failures else 1
    with open(os.path.join(args.out, "SOURCES.md"), "w") as f:
        f.write(f"# Liger-Kernel TTGIR corpus\n\n"
                f"- library: Liger-Kernel (`liger-kernel` on PyPI), version {version}, {HOME}; the wheel {WHEEL}, "
                f"sha256 {WHEEL_SHA256}\n"
                f"- license: {LICENSE}\n"
                f"- compiled by: triton {triton.__version__} (see ../VERSION), `triton.compile(ASTSource(...), "
                f"target=GPUTarget('cuda', 90|80, 32))`, no GPU, `TRITON_DEFAULT_FP_FUSION=1`\n"
                f"- generator: `tools/gen_corpus_thirdparty.py` (its docstring says how to rerun it); "
                f"`loc(...)` stripped\n"
                f"- data type: the type of the data pointers (statistics such as rstd / mean / loss / lse "
                f"are fp32, labels and indices integers)\n\n"
                f"{len(rows)} files.\n\n"
                "| file | source (liger_kernel/) | kernel | data | warps | constexprs |\n"
                "|---|---|---|---|---|---|\n")
        for row in rows:
            f.write("| " + " | ".join(str(x) for x in row) + " |\n")
        if failures:
            f.write("\nCases that did not compile (skipped):\n\n")
            for name, why in failures:
                f.write(f"- `{name}`: {why}\n")
    print(f"wrote {len(rows)} files under {args.out}; {len(failures)} failed", file=sys.stderr)
    return 0 if len(rows) >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())
