"""peer_gluon_gpu.py and harness/{carry_peer_gluon,peer_gluon_forms,peer_gluon_cases}.py: the automatic form's rule (exact output), the kernels-only source, the carry's blob and tree
hashes against git's own and its check of what is carried, the compile signatures, and the GPU
report's table from fake rows - all without a GPU."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
import peer_gluon_gpu  # noqa: E402
from harness import carry_peer_gluon, peer_gluon_cases, peer_gluon_forms  # noqa: E402

SOURCE = textwrap.dedent('''
    import torch
    import triton
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from fla.ops.utils.cache import fla_cache_autotune
    try:
        from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp
    except ImportError:
        cp = None

    GROUP = 32
    UNUSED = torch.float16

    @gluon.constexpr_function
    def _split(n):
        return [n, 1]

    @fla_cache_autotune(configs=[], key=['D'])
    @gluon.jit
    def k(x_ptr, L: gl.constexpr, D: gl.constexpr):
        blk: gl.constexpr = gl.BlockedLayout([1, 4], [4, 8], _split(4), [1, 0])
        mma: gl.constexpr = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8])
        r = gl.arange(0, 64, gl.SliceLayout(1, blk)) * GROUP
        c = gl.arange(0, 64, layout=L)
        x = gl.load(x_ptr + r[:, None] * 64 + c[None, :])
        y = gl.convert_layout(x, blk)
        z = gl.convert_layout(x, mma)
        w = gl.convert_layout(x, gl.SliceLayout(0, blk))

    def host(x):
        return k[(1,)](x, gl.BlockedLayout([2], [32], [4], [0]), 64)
''')


def test_auto_form_replaces_blocked_and_slice_layouts_and_sets_the_aranges():
    text = peer_gluon_forms.auto_source(SOURCE)
    assert "BlockedLayout" not in text and "SliceLayout" not in text
    assert "gl.arange(0, 64, gl.CoalescedLayout()) * GROUP" in text
    assert "gl.arange(0, 64, layout=gl.CoalescedLayout())" in text
    assert "y = x" in text and "w = x" in text                       # converts to automatic layouts go
    assert "z = gl.convert_layout(x, mma)" in text                   # the hardware's layout stays
    assert "gl.NVMMADistributedLayout(version=[2, 0]" in text
    assert "blk: gl.constexpr = gl.AutoLayout()" in text
    auto = peer_gluon_forms.auto_source(SOURCE, arange="auto")
    assert "gl.arange(0, 64, layout=gl.AutoLayout())" in auto and "CoalescedLayout" not in auto


def test_auto_form_of_a_launch_layout_and_a_wrong_arange_choice():
    assert peer_gluon_forms.auto_expression("gl.BlockedLayout([1], [32], [4], [0])") == "gl.AutoLayout()"
    shared = "gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[1, 0])"
    assert peer_gluon_forms.auto_expression(shared) == shared
    with pytest.raises(ValueError, match="arange"):
        peer_gluon_forms.auto_source(SOURCE, arange="blocked")


def test_arange_rule_tries_auto_aranges_only_where_the_front_end_rejects_coalesced_ones():
    from triton.compiler.errors import CompilationError
    front_end = CompilationError("x = 1", ast.parse("x = 1").body[0], "Layout mismatch")
    later = RuntimeError("PassManager::run failed")
    tried = []

    def failing_with(error):
        def attempt(arange, rejected):
            tried.append((arange, rejected))
            return f"{arange} outcome", (error if arange == "coalesced" else None)
        return attempt
    assert peer_gluon_forms.by_the_arange_rule("auto", failing_with(front_end)) == "auto outcome"
    assert tried == [("coalesced", None), ("auto", front_end)]
    tried.clear()
    assert peer_gluon_forms.by_the_arange_rule("auto", failing_with(later)) == "coalesced outcome"
    assert peer_gluon_forms.by_the_arange_rule("as_written", failing_with(front_end)) == "coalesced outcome"
    assert tried == [("coalesced", None), ("coalesced", None)]
    with pytest.raises(ValueError, match="form"):
        peer_gluon_forms.by_the_arange_rule("automatic", failing_with(None))


def test_kernel_source_keeps_triton_and_the_kernels_only():
    text = peer_gluon_forms.kernel_source(SOURCE)
    assert "import torch" not in text and "fla" not in text and "def host" not in text
    assert "UNUSED" not in text and "GROUP = 32" in text               # only what the kernels read
    assert "async_copy as cp" in text and "cp = None" in text          # a try block of Triton imports
    assert "@gluon.jit\ndef k(" in text and "@gluon.constexpr_function\ndef _split" in text
    auto = peer_gluon_forms.kernel_source(SOURCE, "auto")
    assert "gl.AutoLayout()" in auto and "def host" not in auto


def test_loaded_forms_name_the_carried_files_lines(tmp_path):
    pytest.importorskip("triton.experimental.gluon")
    path = tmp_path / "kernels.py"
    path.write_text(SOURCE)
    module = peer_gluon_forms.load_kernels(str(path), "auto")
    loaded = module.__file__
    line = next(i for i, text in enumerate(open(loaded).read().splitlines(), 1) if "y = x" in text)
    original = next(i for i, text in enumerate(SOURCE.splitlines(), 1) if "y = gl.convert_layout(x, blk)" in text)
    assert peer_gluon_forms.original_location(loaded, line) == f"kernels.py:{original}"
    message = f"{loaded}:{line}:9: ttg.async_copy_global_to_local: cp.async would copy 2 bytes"
    assert peer_gluon_gpu._carried_locations(message).startswith(f"kernels.py:{original}: ttg.async_copy")


def test_api_shims_alias_only_missing_names():
    pytest.importorskip("triton.experimental.gluon")
    from triton.experimental.gluon.language.nvidia.ampere import async_copy
    peer_gluon_forms.install_api_shims()
    assert hasattr(async_copy, "async_copy_global_to_local")
    assert peer_gluon_forms.install_api_shims() == []                 # a second call aliases nothing


def _git(cwd, *args) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A git repository with a file, an executable, a nested folder and a link; a Source pinning
    it; PEER_DIR moved into tmp_path."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    repo = tmp_path / "repo"
    (repo / "pkg" / "sub").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("x = 1\n")
    (repo / "pkg" / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(repo / "pkg" / "run.sh", 0o755)
    (repo / "pkg" / "sub" / "b.py").write_text("y = 2\n")
    os.symlink("a.py", repo / "pkg" / "link.py")
    (repo / "kernel.py").write_text(SOURCE)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "x")
    commit = _git(repo, "rev-parse", "HEAD")
    source = carry_peer_gluon.Source("demo", "someone/demo", commit, "MIT",
                                     files={"kernel.py": _git(repo, "rev-parse", "HEAD:kernel.py")},
                                     trees={"pkg": _git(repo, "rev-parse", "HEAD:pkg")})
    monkeypatch.setattr(carry_peer_gluon, "PEER_DIR", str(tmp_path / "peer"))
    monkeypatch.setattr(carry_peer_gluon, "SOURCES", (source,))
    return repo, source


def test_blob_and_tree_hashes_are_gits(project):
    repo, source = project
    assert carry_peer_gluon.git_blob_hash(str(repo / "kernel.py")) == source.files["kernel.py"]
    assert carry_peer_gluon.git_tree_hash(str(repo / "pkg")) == source.trees["pkg"]
    (repo / "pkg" / "sub" / "__pycache__").mkdir()
    (repo / "pkg" / "sub" / "__pycache__" / "b.cpython-312.pyc").write_bytes(b"\0")
    assert carry_peer_gluon.git_tree_hash(str(repo / "pkg")) == source.trees["pkg"]   # bytecode does not count


def test_carry_writes_the_pinned_files_and_check_names_a_change(project, capsys):
    repo, source = project
    assert carry_peer_gluon.main(["--check"]) == 1
    assert "demo/kernel.py: missing" in capsys.readouterr().err
    assert carry_peer_gluon.main(["--from-git", f"demo={repo}/.git"]) == 0
    assert carry_peer_gluon.main([]) == 0
    assert carry_peer_gluon.why_not_carried("demo") is None
    carried = os.path.join(source.folder, "pkg", "sub", "b.py")
    with open(carried, "a") as f:
        f.write("# changed\n")
    assert carry_peer_gluon.main(["--check"]) == 1
    assert "demo/pkg/: tree" in capsys.readouterr().err
    assert "not carried as pinned" in carry_peer_gluon.why_not_carried("demo")


def test_the_pinned_sources_name_their_commit_and_license():
    for s in carry_peer_gluon.SOURCES:
        assert len(s.commit) == 40 and s.license == "MIT" and "LICENSE" in s.files
    files = {c.project: c.path for c in peer_gluon_cases.cases()}
    assert all(path in carry_peer_gluon.source_named(project).files for project, path in files.items())


def test_compile_spec_of_fla_forward_has_a_tuple_of_pointers():
    pytest.importorskip("triton.experimental.gluon")
    fwd = next(c for c in peer_gluon_cases.cases() if c.kernel == "attnres_fwd_kernel_gluon")
    signature, constexprs, attrs = peer_gluon_cases.compile_spec(fwd, "as_written")
    assert signature["res"] == ("*fp16",) * peer_gluon_cases.L_SOURCES and signature["N"] == "i32"
    assert signature["ow"] == "constexpr" and constexprs["ow"] is None and constexprs["BT"] == 2
    res = list(fwd.args).index("res")
    assert attrs[(res, 7)] == [["tt.divisibility", 16]]
    copy = next(c for c in peer_gluon_cases.cases() if c.kernel == "_masked_2d_memcpy_kernel")
    _, constexprs, _ = peer_gluon_cases.compile_spec(copy, "auto")
    assert constexprs["ystride_in"] == 1 and type(constexprs["layout"]).__name__ == "AutoLayout"


def _row(ms, **extra):
    return {"rounds": [], "median_ms": ms, "kernels": 1, "islands": 0, "conversions": 0, "fallbacks": [], **extra}


def test_gpu_table_and_verdict_from_rows():
    rows = {"fla/attnres_fwd_kernel_gluon": {
        "stock": _row(0.2),
        "enable": _row(0.2, bit_exact=True),
        "advice": _row(0.19, bit_exact=False, within_tolerance=True, differences={"o": "abs 0.001, ratio 0.0002"},
                       advised=1),
        "auto_ours": {"rounds": [], "arange": "auto", "error": "'tt.make_range' op Failed to infer return type",
                      "ours": ["gluon.py:179: cp.async would copy 2 bytes"]}}}
    tests = {"stock": {"counts": {"passed": 15}, "seconds": 60, "failed": [], "stats": {"kernels": 0, "conversions": 0,
                                                                                     "islands": 0, "fallbacks": 0}},
             "plugin": {"counts": {"passed": 14, "failed": 1}, "seconds": 80, "failed": ["t[L3]"], "active": [True, True],
                        "stats": {"kernels": 40, "conversions": 2, "islands": 2, "fallbacks": 0}}}
    text = peer_gluon_gpu.render_gpu(rows, [], tests, "H100", "triton 3.6.0", "python benchmarks/peer_gluon_gpu.py", 3)
    assert "| fla/attnres_fwd_kernel_gluon | 0.2000 | 1.000 (bit-exact;" in text
    assert "0.950 (within the project's tolerance (o abs 0.001, ratio 0.0002)" in text
    assert "fails: 'tt.make_range' op Failed to infer return type (ours gave it back: gluon.py:179" in text
    assert "| plugin (LINEAR_LAYOUTS=1) | failed 1, passed 14 | 80 | 2 of 2 | 40, 2, 2, 0 | t[L3] |" in text
    assert peer_gluon_gpu._bad(rows, tests) == ["FLA test fails with the plugin only: t[L3]"]
    rows["fla/attnres_fwd_kernel_gluon"]["advice"]["within_tolerance"] = False
    assert "fla/attnres_fwd_kernel_gluon: advice outside the tolerance" in peer_gluon_gpu._bad(rows, None)


def test_dry_table_from_rows():
    ok = {"status": "compiles", "access": "16-byte global loads 8, stores 8", "kernels": 1, "islands": 0, "conversions": 0,
          "fallbacks": [], "advised": 0, "resolved": 1, "arange": "coalesced", "ours": []}
    rows = {"triton-viz/_masked_1d_memcpy_kernel": {m: dict(ok) for m in peer_gluon_gpu.DRY_MODES}}
    rows["triton-viz/_masked_1d_memcpy_kernel"]["auto_triton"] = {"status": "fails", "error": "a | b", "ours": []}
    text = peer_gluon_gpu.render_dry(rows, ["fla not carried as pinned (x)"], "3.6.0", "python x --dry")
    assert "the advice changed nothing" in text and "resolved by ours; aranges CoalescedLayout" in text
    assert "compiles; through our pipeline, 0 of 0 conversions as our islands" in text
    assert "fails: a / b |" in text and "- **fla not carried as pinned (x)**: not compiled" in text


def test_dry_compile_of_a_carried_kernel_when_carried():
    pytest.importorskip("triton.experimental.gluon")
    case = next(c for c in peer_gluon_cases.cases() if c.kernel == "_masked_1d_memcpy_kernel")
    if carry_peer_gluon.why_not_carried(case.project):
        pytest.skip(".peer-tests does not carry triton-viz (benchmarks/harness/carry_peer_gluon.py)")
    peer_gluon_gpu.require_package()
    record = peer_gluon_gpu.dry_compile(case, "stock", peer_gluon_gpu.OurResolution())
    assert record["status"] == "compiles", record


def test_rounds_rotate_the_modes_and_keep_what_a_crashed_child_wrote(monkeypatch):
    """The parent's bookkeeping, with children faked: each writes a time per case; stock's first
    round writes the outputs' comparison fields; one child ends before its second case."""
    import json as json_module
    cases = [c for c in peer_gluon_cases.cases() if c.project == "triton-viz"][:2]
    monkeypatch.setattr(peer_gluon_gpu, "selected_cases", lambda names=None: (cases, []))
    order = []

    def fake_run(argv, timeout=None, env=None):
        mode, round_, out = argv[argv.index("--child") + 1], int(argv[argv.index("--child") + 2]), \
            argv[argv.index("--child") + 3]
        order.append((round_, mode))
        assert env["TRITON_CACHE_DIR"].endswith(f"cache-{mode}") and "LINEAR_LAYOUTS" not in env
        rows = {c.name: {"ms": 1.0 + round_ + (0.5 if mode == "advice" else 0), "islands": 0, "conversions": 0,
                         "fallbacks": [], **({"bit_exact": True} if round_ == 0 and mode != "stock" else {})}
                for c in cases}
        if mode == "auto_ours" and round_ == 1:
            rows.pop(cases[1].name)
        with open(out, "w") as f:
            json_module.dump(rows, f)
        return subprocess.CompletedProcess(argv, 1 if mode == "auto_ours" and round_ == 1 else 0)
    monkeypatch.setattr(peer_gluon_gpu.subprocess, "run", fake_run)
    monkeypatch.setenv("LINEAR_LAYOUTS", "1")
    rows, _ = peer_gluon_gpu.run_rounds(3)
    assert [m for r, m in order if r == 0][0] == "stock"            # stock's outputs exist before the others compare
    assert [m for r, m in order if r == 1] == ["enable", "advice", "auto_ours", "stock"]
    first, second = (rows[c.name] for c in cases)
    assert first["stock"]["median_ms"] == 2.0 and first["advice"]["median_ms"] == 2.5
    assert first["enable"]["bit_exact"] is True and "ms" not in first["enable"]
    assert second["auto_ours"]["rounds"][1] == {"error": "not reached: process status 1"}
    assert "median_ms" not in second["auto_ours"]


def test_project_tests_run_stock_and_with_the_plugin_in_every_process(tmp_path, monkeypatch):
    """FLA's test run, with a stand-in test file (FLA's needs torch and a GPU): the backend's switch
    is set, the plugin is on in every process of the plugin run and in none of the stock run, and
    the outcomes come from the records."""
    pytest.importorskip("triton")
    tests = tmp_path / "tests" / "ops"
    tests.mkdir(parents=True)
    (tests / "test_attnres.py").write_text(textwrap.dedent('''
        import os
        import pytest

        @pytest.mark.parametrize("case", ["L3-B1-T1000", "L3-B5-T1000"])
        def test_attnres(case):
            assert os.environ["FLA_ATTNRES_GLUON"] == "1"
            assert case != "L3-B5-T1000"
    '''))
    monkeypatch.setattr(peer_gluon_gpu, "source_named", lambda name: type("S", (), {"folder": str(tmp_path)}))
    peer_gluon_gpu.require_package()
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in sys.path if p))
    results = peer_gluon_gpu.run_project_tests(quick=False, workers=1, timeout=120)
    for mode in ("stock", "plugin"):
        assert results[mode]["counts"] == {"passed": 1, "failed": 1}, results[mode]["tail"]
        assert results[mode]["failed"] == ["tests/ops/test_attnres.py::test_attnres[L3-B5-T1000]"]
    assert results["plugin"]["active"] and all(results["plugin"]["active"])
    assert not any(results["stock"]["active"])
    quick = peer_gluon_gpu.run_project_tests(quick=True, workers=1, timeout=120, modes=("plugin",))
    assert quick["plugin"]["counts"] == {"passed": 1}
