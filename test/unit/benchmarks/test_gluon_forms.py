"""gluon_forms_gpu.py and harness/gluon_forms*.py: the three forms' AST rule (exact output), the tests' parametrizations, the
tutorials' blob hashes, and the dry run (compiles for sm_90, no GPU) of our own kernels and -
where ``.peer-tests`` carries them - of the tutorials'."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
import gluon_forms_gpu  # noqa: E402
from harness import carry_gluon_tutorials, gluon_forms  # noqa: E402
from harness.gluon_forms_cases import cases  # noqa: E402

KERNEL = textwrap.dedent('''
    import pytest
    import torch
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl

    @gluon.jit
    def k(x_ptr, L: gl.constexpr):
        layout: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], [2, 2], [1, 0])
        mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 32, 16])
        r = gl.arange(0, 64, gl.SliceLayout(1, layout))
        c = gl.arange(0, 64, layout=L)
        x = gl.load(x_ptr + r[:, None] * 64 + c[None, :])
        y = gl.convert_layout(x, L)
        z = gl.convert_layout(x, mma)

    def host():
        return gl.BlockedLayout([2], [32], [4], [0])

    @pytest.mark.parametrize("a, b", [(1, 2), (3, 4)])
    @pytest.mark.parametrize("c", [5, 6])
    def test_k(a, b, c):
        pass
''')


def _body(text, name):
    return next(part for part in text.split("\n\n") if f"def {name}" in part)


def test_auto_form_replaces_the_authors_layouts_and_keeps_the_hardwares():
    text = gluon_forms.form_source(KERNEL, "auto")
    assert _body(text, "k(") == textwrap.dedent('''\
        @gluon.jit
        def k(x_ptr, L: gl.constexpr):
            layout: gl.constexpr = gl.AutoLayout()
            mma: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 32, 16])
            r = gl.arange(0, 64, gl.CoalescedLayout())
            c = gl.arange(0, 64, layout=gl.CoalescedLayout())
            x = gl.load(x_ptr + r[:, None] * 64 + c[None, :])
            y = x
            z = gl.convert_layout(x, mma)''')
    assert "return gl.AutoLayout()" in _body(text, "host")
    assert "import pytest" not in text and "@pytest" not in text and "import torch" in text


def test_newcomer_form_has_one_element_per_thread_and_keeps_the_warp_count():
    text = gluon_forms.form_source(KERNEL, "newcomer")
    assert "layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [2 * 2, 1], [1, 0])" in text
    assert "return gl.BlockedLayout([1], [32], [4], [0])" in text
    assert "gl.SliceLayout(1, layout)" in text and "y = gl.convert_layout(x, L)" in text
    assert gluon_forms.form_expression("gl.BlockedLayout([1, 1], [1, 32], [1, num_warps], [1, 0])", "newcomer") == \
        "gl.BlockedLayout([1, 1], [1, 32], [1 * num_warps, 1], [1, 0])"


def test_the_rule_says_where_it_cannot_apply():
    with pytest.raises(gluon_forms.FormError, match="DistributedLinearLayout"):
        gluon_forms.form_source("x = gl.DistributedLinearLayout([], [], [], [], [4])", "newcomer")
    with pytest.raises(gluon_forms.FormError, match="list literals"):
        gluon_forms.form_source("x = gl.BlockedLayout(spt, [32], [4], [0])", "newcomer")
    with pytest.raises(gluon_forms.FormError, match="unknown form"):
        gluon_forms.form_source("x = 1", "beginner")


def test_kernels_only_keeps_gluon_definitions_and_no_torch():
    text = gluon_forms.form_source(KERNEL, "expert", kernels_only=True)
    assert "def k(" in text and "def host" not in text and "def test_k" not in text
    assert "torch" not in text and "pytest" not in text


def test_parametrizations_in_pytests_order():
    assert gluon_forms.test_parameters(KERNEL, "test_k") == [
        {"c": 5, "a": 1, "b": 2}, {"c": 5, "a": 3, "b": 4}, {"c": 6, "a": 1, "b": 2}, {"c": 6, "a": 3, "b": 4}]


def test_blob_hash_is_gits(tmp_path):
    path = tmp_path / "f.py"
    path.write_bytes(b"print('hello')\n")
    expected = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout
    assert carry_gluon_tutorials.git_blob_hash(str(path)) == expected.strip()


def test_a_changed_tutorial_is_named(tmp_path):
    for name in carry_gluon_tutorials.MANIFEST:
        (tmp_path / name).write_text("# not Triton's\n")
    why = carry_gluon_tutorials.check_tutorials(str(tmp_path))
    assert why.startswith("carried tutorials differ") and "02-layouts.py" in why
    assert "missing" in carry_gluon_tutorials.check_tutorials(str(tmp_path / "none"))


def _case(name):
    return next(c for c in cases() if c.name == name)


@pytest.fixture(autouse=True)
def _empty_triton_cache(tmp_path, monkeypatch):
    # Whether ours resolved a kernel is seen only when it is compiled, not served from a cache.
    # The knob itself is set (support.triton_cache says why setenv alone is not enough once an
    # earlier test in the same worker pinned it), and every compile runs.
    from support.triton_cache import use_private_triton_cache
    use_private_triton_cache(monkeypatch, tmp_path / "triton-cache")
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")


def test_dry_run_of_our_copy_every_form_compiles():
    gluon_forms_gpu.require_package()
    case = _case("builtin/copy_kernel")
    results = {mode: gluon_forms_gpu.dry_compile(case, mode) for mode in gluon_forms_gpu.MODES}
    assert results["expert"] == "compiles; 16-byte global loads 8, stores 8"
    assert results["auto_ours"] == "compiles; 16-byte global loads 8, stores 8"
    assert results["auto_triton"] == "compiles; 16-byte global loads 8, stores 8"
    assert results["newcomer"] == "compiles; 16-byte global loads 0, stores 0"
    assert results["newcomer_advised"] == "compiles; 16-byte global loads 8, stores 8"


def test_dry_run_of_our_transpose_stock_rejects_the_auto_form_ours_compiles_it():
    gluon_forms_gpu.require_package()
    case = _case("builtin/transpose_kernel")
    assert gluon_forms_gpu.dry_compile(case, "auto_triton") == \
        "fails: 'tt.addptr' op found conflicting encodings for value:"
    # ours resolves the auto form to coalesced accesses; its conversion goes through shared memory
    # in 4-byte words, the advised newcomer's (and the expert's) in 16-byte ones
    assert gluon_forms_gpu.dry_compile(case, "auto_ours") == \
        "compiles; 16-byte global loads 8, stores 8; shared st.shared 32, ld.shared 32"
    assert gluon_forms_gpu.dry_compile(case, "newcomer_advised") == \
        "compiles; 16-byte global loads 8, stores 8; shared st.shared.v4 8, ld.shared.v4 8"
    assert gluon_forms_gpu.dry_compile(case, "expert") == \
        "compiles; 16-byte global loads 8, stores 8; shared st.shared.v4 8, ld.shared.v4 8"


@pytest.mark.skipif(carry_gluon_tutorials.check_tutorials() is not None,
                    reason=f"Triton's Gluon tutorials: {carry_gluon_tutorials.check_tutorials()} "
                           "(python benchmarks/harness/carry_gluon_tutorials.py --from-git <triton .git>)")
def test_dry_run_of_a_tutorial_kernel():
    import triton
    gluon_forms_gpu.require_package()
    case = _case("02-layouts/memcpy_2d_inout_kernel")
    assert gluon_forms_gpu.dry_compile(case, "expert") == \
        "compiles; 16-byte global loads 0, stores 0; shared st.shared.v4 32, ldmatrix 32"
    assert gluon_forms_gpu.dry_compile(case, "auto_ours").startswith("compiles; 16-byte global loads 32, stores 32")
    assert gluon_forms_gpu.dry_compile(case, "auto_triton") == \
        "fails: 'tt.addptr' op found conflicting encodings for value:"
    if triton.__version__.startswith("3.6"):      # the tutorials are 3.6's; 3.9 removed async_copy_global_to_shared
        assert gluon_forms_gpu.dry_compile(_case("03-async-copy/elementwise_add_cpasync_kernel"), "expert") \
            .startswith("compiles")


def test_gpu_table_from_rows():
    row = {"name": "k", "modes": {
        "expert": {"median_ms": 2.0, "bit_exact": True, "tests": {"passed": 4, "total": 4, "first_failure": None}},
        "auto_ours": {"median_ms": 2.1, "bit_exact": True, "tests": {"passed": 4, "total": 4, "first_failure": None}},
        "auto_triton": {"error": "'tt.load' op found conflicting encodings for value:"},
        "newcomer": {"median_ms": 5.0, "bit_exact": False, "tests": {"passed": 3, "total": 4,
                                                                    "first_failure": "{'n': 1}: mismatch"}},
        "newcomer_advised": {"median_ms": 2.2, "bit_exact": True, "advised": 1}}}
    text = gluon_forms_gpu.render_gpu([row], None, 3, "H100", "triton 3.6.0")
    assert "| k | 2.0000 | 1.050 | fails: 'tt.load' op found conflicting encodings for value: | 2.500 (output differs; " \
           "tests 3/4: {'n': 1}: mismatch) | 1.100 | 4/4 |" in text
    # newcomer 2.5, advised 1.1 (x the expert): (2.5 - 1.1) / (2.5 - 1) of the gap
    assert "advice applied / expert geomean **1.100** over 1 kernels; gap recovered **0.93**" in text
    assert "geomean **1.050**, worst **1.050** over 1 of 1 kernels" in text
    assert "Triton's resolution compiles 0 of 1 auto forms" in text
