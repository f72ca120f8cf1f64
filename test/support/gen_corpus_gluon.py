"""Generate the Gluon TTGIR corpus under test/lit/corpus/gluon/<release>/: the printed modules of
Hopper- and Blackwell-class Gluon kernels that the ``ModuleLines`` walk and every pass of ours must
read (``test/unit/passes/ir/test_gluon_corpus_walk.py``).

    .venv/bin/python test/support/gen_corpus_gluon.py            # writes test/lit/corpus/gluon/triton-3.9/
    .venv-compat/bin/python test/support/gen_corpus_gluon.py     # writes test/lit/corpus/gluon/triton-3.6/
    .venv/bin/python test/support/gen_corpus_gluon.py --check    # list the cases without compiling

One folder per Triton release, each written by that release: a module printed by 3.9 does not
always parse under 3.6 (and the kernels of other projects, written for 3.6's Gluon, do not build
under 3.9), so each release's test reads its own folder.

The kernels:

* ours (``test/support/``): every kernel of ``hopper_gluon_kernels.py`` in both forms (TMA,
  mbarrier, ``warpgroup_mma`` and its wait, a pipelined K loop holding an ``scf.if`` without
  results, a persistent loop, ``mma_v2``); the automatic-layout kernels of
  ``gluon_auto_kernels.py`` (shared memory, cp.async, TMA, ``ttg.warp_specialize``);
  ``blackwell_gluon_kernels.py``'s ``tcgen05_matmul`` (sm_100: ``tcgen05_mma`` into tensor memory,
  ``tmem_load``); ``ws_kernels.py``'s warp-specialized kernel (four partitions) and Triton's automatic warp
  specialization of a TMA matmul (``auto_ws_matmul``: a Triton-language kernel, on sm_100
  ``tc_gen5_mma`` and tensor memory);
* Triton's Gluon tutorials (triton v3.6.0, MIT) and the Hopper Gluon kernels of three projects
  (FlagDNN, LMDeploy, gpt-oss-gluon; Apache-2.0), in the form their authors wrote, as
  ``benchmarks/harness/hopper_cases.py`` launches them (written for 3.6's Gluon: under 3.9 they
  do not build, and SOURCES.md lists why); their sources are carried into ``.peer-tests/`` (git-ignored) by
  ``benchmarks/harness/carry_gluon_tutorials.py`` and ``carry_hopper_sources.py``, never
  committed; where they are not carried (or that module is absent) the cases are skipped and
  SOURCES.md says so;
* Triton's own tutorials and examples beyond those (``support/gluon_tutorial_cases.py``): under
  3.6, 01-intro to 08 and the Blackwell attention example of v3.6.0 (sm_90; 06, 08's matmul and
  the example on sm_100); under 3.9, the same launches of the newest Triton tree that can be had
  here (``triton-next``: main at 9d9a2d7a, 2026-04-27; v3.9.0's own tree cannot, see
  ``carry_gluon_tutorials.py``) plus 10-tcgen05-copy: what 3.9 builds of them is in the folder,
  and SOURCES.md gives, per file, why the rest is not (3.9 removed ``async_copy_*``);
* AMD's aiter (MIT): the int8 and fp8 GEMMs of its Gluon backend for CDNA4, on gfx950 (buffer
  loads, swizzled shared memory, MFMA and scaled MFMA), under 3.9 and 3.6; carried into
  ``.peer-tests/aiter/`` by ``--carry-aiter GIT_DIR`` (the pinned commit, blob hashes checked)
  and loaded without their host code (``_aiter_kernels``).

Each case is compiled on the CPU (no GPU) for each of its targets, and one file is kept:

* ``<project>.<kernel>.<target>.ttgir``: for a kernel whose layouts are all written, Triton's TTGIR
  after its own pipeline (pipelined loops, warp specialization, tensor memory);
* ``<project>.<kernel>_auto.<target>.input.ttgir``: for an automatic form, the module Gluon hands
  its ``ttgir`` stage (after Gluon's inliner): what ``ll-resolve-auto-layouts`` reads.  Stock
  Triton's own resolution rejects several of these kernels; the input is kept all the same (and
  where it resolves them, the TTGIR after its pipeline is the written form's, nearly).

``loc(...)`` is stripped (``gen_corpus_thirdparty.strip_locations``): the files stay small and
name no path of this machine.  SOURCES.md beside them lists every file and every case that did
not compile, with Triton's reason.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Callable

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GLUON_CORPUS = os.path.join(REPO, "test", "lit", "corpus", "gluon")
sys.path[:0] = [os.path.join(REPO, "test"), os.path.join(REPO, "benchmarks"), REPO]

from tools.corpus.gen_corpus_thirdparty import strip_locations  # noqa: E402

TARGETS = {"sm80": ("cuda", 80, 32), "sm90": ("cuda", 90, 32), "sm100": ("cuda", 100, 32),
           "gfx942": ("hip", "gfx942", 64), "gfx950": ("hip", "gfx950", 64)}


@dataclass
class Case:
    """One kernel in one form: ``source()`` gives ``(ASTSource or GluonASTSource, options)``."""

    project: str
    kernel: str                  # the file stem: kernel name, "_auto" for an automatic form
    origin: str                  # where the kernel is written, for SOURCES.md
    source: Callable
    targets: tuple
    auto: bool = False


@dataclass
class Written:
    rows: list = field(default_factory=list)       # (file, project, kernel, origin, size)
    failures: list = field(default_factory=list)   # (case file stem, why)


# --------------------------------------------------------------------------- the cases

def _our_cases():
    from support import blackwell_gluon_kernels as B, gluon_auto_kernels as A, hopper_gluon_kernels as H
    from support import ws_kernels as W

    for name in H.KERNELS:
        own = f"sm{H.target(name).arch}"
        for auto in (False, True):
            yield Case("ours", name + ("_auto" if auto else ""), "benchmarks/harness/hopper_kernels.py",
                       lambda name=name, auto=auto: (H.source(name, auto), {}), (own,), auto)
    import triton
    for name in list(A.KERNELS) + list(A.SHAPE_KERNELS):
        if name == "split_auto" and _release(triton.__version__) < (3, 8):
            continue                # 3.6 and 3.7 abort building gl.split of an automatic layout
        yield Case("ours", name if name.endswith("_auto") else name + "_auto", "test/support/gluon_auto_kernels.py",
                   lambda name=name: (A.source(name), {}), ("sm90",), True)
    yield Case("ours", "tcgen05_matmul", "test/support/blackwell_gluon_kernels.py", lambda: (B.source(), {}),
               ("sm100",))
    yield Case("ours", "ws_kernel", "test/support/ws_kernels.py", lambda: (W.source(), {}), ("sm90",))
    # a Triton-language kernel: on sm_100 Triton's pipeline gives tc_gen5_mma and tensor memory
    yield Case("ours", "auto_ws_matmul", "test/support/ws_kernels.py",
               lambda: (W.auto_ws_source(), {"num_warps": 4}), ("sm90", "sm100"))


def _carried_cases():
    """The tutorials' and other projects' cases of ``hopper_cases.py``; (cases, why not) ."""
    try:
        from harness import hopper_cases
    except ImportError as error:
        return [], f"benchmarks/harness/hopper_cases.py not importable ({error})"
    cases, missing = [], set()
    for case in hopper_cases.cases():
        why = case.why_not_available()
        if why is not None:
            missing.add(f"{case.project}: {why}")
            continue
        project = "triton-tutorials" if case.project == "triton" else case.project
        origin = os.path.relpath(case.file, REPO)
        # the form its authors wrote (hopper_cases' automatic forms are of our making)
        def source(case=case):
            src, options, _replaced = hopper_cases.source(case, False)
            return src, options
        cases.append(Case(project, case.kernel, origin, source, ("sm90",)))
    return cases, "; ".join(sorted(missing))


def _tutorial_cases(release: tuple):
    """(cases, why not) of Triton's own tutorials and examples beyond ``hopper_cases``'
    (``support/gluon_tutorial_cases.py``): under 3.6 its release's, under a later release the
    newest Triton tree carried (main at 9d9a2d7a; v3.9.0's own tree cannot be had here)."""
    from support import gluon_tutorial_cases as T
    newer = release >= (3, 7)
    why = T.why_not_carried(newer)
    if why:
        return [], why
    out = []
    for item in (T.next_cases() if newer else T.release_36_cases()):
        project = "triton-next" if newer else "triton-tutorials"
        origin = os.path.relpath(item.case.file, REPO)

        out.append(Case(project, item.case.kernel, origin, lambda case=item.case: T.source(case), item.targets))
    return out, ""


# AMD's aiter (MIT): the int8 and fp8 GEMMs of its Gluon backend for CDNA4 (gfx950): buffer loads,
# swizzled shared memory, MFMA (scaled for fp8).  Carried like the others (never committed):
#   python test/support/gen_corpus_gluon.py --carry-aiter /work/.mirror/ROCm+aiter/repo
AITER_COMMIT = "e4048607a535ace3a2b51ded31b1c8c2d45c0879"
AITER_FILES = {"aiter/ops/triton/gluon/gemm_a8w8.py": "da5d00f7e576e86b72e1366f3e11adb103f8c0e3",
               "aiter/ops/triton/utils/_triton/pid_preprocessing.py": "d1a2a001d5a8cfda959a1a10209dd12eda0b3902",
               "LICENSE": "6311bdec0f330b61adb89cd32f719a43717504ed"}


def _aiter_source():
    from harness.carry_peer_gluon import Source
    return Source("aiter", "ROCm/aiter", AITER_COMMIT, "MIT", files=AITER_FILES)


def _aiter_kernels():
    """The carried file's ``@gluon.jit`` kernels, loaded without its host code (torch, aiter's
    configuration and logging): a module of its triton imports, the kernels (their
    ``triton.heuristics`` left out: the generator gives every constexpr) and aiter's own
    ``pid_grid`` and ``remap_xcd`` (triton-only), written beside the carried file."""
    import ast
    import importlib.util

    folder = _aiter_source().folder
    path = os.path.join(folder, "aiter/ops/triton/gluon/gemm_a8w8.py")
    tree = ast.parse(open(path).read())
    kept = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
            if module.split(".")[0] == "triton":
                kept.append(node)
        elif isinstance(node, ast.FunctionDef) and any("gluon.jit" in ast.unparse(d) for d in node.decorator_list):
            node.decorator_list = [d for d in node.decorator_list if "gluon.jit" in ast.unparse(d)]
            kept.append(node)
    helpers = os.path.join(folder, "aiter/ops/triton/utils/_triton/pid_preprocessing.py")
    text = (f"import importlib.util as _u\n_s = _u.spec_from_file_location('aiter_pid_preprocessing', {helpers!r})\n"
            "_m = _u.module_from_spec(_s)\n_s.loader.exec_module(_m)\npid_grid, remap_xcd = _m.pid_grid, _m.remap_xcd\n"
            + ast.unparse(ast.Module(kept, [])) + "\n")
    loaded = os.path.join(folder, "gemm_a8w8_kernels.py")
    with open(loaded, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location("aiter_gemm_a8w8_kernels", loaded)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _aiter_cases():
    """(cases, why not): aiter's GEMMs at 256x256x128 tiles, 8 warps, on gfx950."""
    from harness.carry_peer_gluon import check_source
    problems = check_source(_aiter_source())
    if problems:
        return [], f"aiter: {problems[0]}"
    origin = ".peer-tests/aiter/aiter/ops/triton/gluon/gemm_a8w8.py"
    pointers = {"a_scale_ptr": "*fp32", "b_scale_ptr": "*fp32", "bias_ptr": "*fp32", "c_ptr": "*bf16"}
    integers = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")

    def source(data: str, fp8_format):
        from triton.experimental.gluon._runtime import GluonASTSource
        kernel = _aiter_kernels()._gemm_a8w8_kernel
        signature = {"a_ptr": data, "b_ptr": data, **pointers, **{name: "i32" for name in integers}}
        constexprs = {"HAS_BIAS": True, "BLOCK_SIZE_M": 256, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 128,
                      "GROUP_SIZE_M": 4, "EVEN_K": True, "GRID_MN": 64, "NUM_XCDS": 8, "NUM_WARPS": 8,
                      "FP8_FORMAT": fp8_format}
        attrs = {(kernel.arg_names.index(name),): [["tt.divisibility", 16]]
                 for name in ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bn", "stride_cm")}
        return GluonASTSource(kernel, signature, constexprs, attrs=attrs), {"num_warps": 8}
    return [Case("aiter", "_gemm_a8w8_kernel_i8", origin, lambda: source("*i8", None), ("gfx950",)),
            Case("aiter", "_gemm_a8w8_kernel_fp8", origin, lambda: source("*fp8e4nv", "e4m3"), ("gfx950",))], ""


# --------------------------------------------------------------------------- compiling

class _TTGIRWritten(Exception):
    """Raised after the ``ttgir`` stage: the corpus needs nothing later (no LLVM, no ptxas; and
    LLVM aborts the process on an op the target lacks, wgmma on sm_100)."""


@contextlib.contextmanager
def ttgir_stage(record: dict):
    """While open, a compile stops after its ``ttgir`` stage, leaving in ``record`` the module that
    stage returned (``"output"``) and, for Gluon, the module it received (``"input"``), after
    Gluon's inliner (the stage's own first pass; running it here first changes nothing for it)."""
    from triton.backends.amd.compiler import HIPBackend
    from triton.backends.nvidia.compiler import CUDABackend
    from linear_layouts.passes.ir.snapshot import inline_calls_in_place

    originals = {cls: cls.add_stages for cls in (CUDABackend, HIPBackend)}

    def patched(original):
        def add_stages(self, stages, options, *rest):
            original(self, stages, options, *rest)
            stage, gluon = stages["ttgir"], "ttir" not in stages

            def recorded(module, metadata):
                if gluon:
                    inline_calls_in_place(module)
                    record["input"] = module.str()
                record["output"] = stage(module, metadata).str()
                raise _TTGIRWritten()
            stages["ttgir"] = recorded
        return add_stages

    for cls, original in originals.items():
        cls.add_stages = patched(original)
    try:
        yield
    finally:
        for cls, original in originals.items():
            cls.add_stages = original


def compile_case(case: Case, target_name: str) -> tuple[dict, str]:
    """{file suffix: module text} of one compile, and why stock Triton failed ("" if it did not)."""
    import triton
    from triton.backends.compiler import GPUTarget

    texts, record, failed = {}, {}, ""
    try:
        src, options = case.source()
    except Exception as error:              # the kernel does not build under this release
        return {}, _reason(error)
    with ttgir_stage(record):
        try:
            triton.compile(src, target=GPUTarget(*TARGETS[target_name]), options=options or None)
        except _TTGIRWritten:
            pass
        except Exception as error:
            failed = _reason(error)
    if case.auto and "input" in record:
        texts["input.ttgir"] = strip_locations(record["input"])
    elif not case.auto and "output" in record:
        texts["ttgir"] = strip_locations(record["output"])
    return texts, failed


def _release(version: str) -> tuple:
    return tuple(int(part) for part in version.split(".")[:2])


def _reason(error: Exception) -> str:
    # a CompilationError raised in a called function wraps the callee's (its last line a caret):
    # the innermost CompilationError names the cause
    while type(error).__name__ == "CompilationError" and type(error.__cause__).__name__ == "CompilationError":
        error = error.__cause__
    lines = [line for line in str(error).splitlines() if line.strip()]
    # a CompilationError ends with its cause, after the source lines it quotes
    detail = lines[-1] if type(error).__name__ == "CompilationError" and lines else \
        next((line for line in lines if "error" in line.lower()), lines[0] if lines else "")
    detail = re.sub(r" \(/[^)]*\)", "", detail)          # no path of this machine
    return f"{type(error).__name__}: {detail.strip()[:160]}"


# --------------------------------------------------------------------------- main

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list the cases without compiling")
    parser.add_argument("--only", default=None, help="regex over '<project>.<kernel>'")
    parser.add_argument("--out", default=None, help="default: test/lit/corpus/gluon/triton-<major.minor>")
    parser.add_argument("--carry-aiter", metavar="GIT_DIR", help="first write aiter's files from a git repository "
                        "of ROCm/aiter that has the pinned commit (e.g. /work/.mirror/ROCm+aiter/repo)")
    args = parser.parse_args(argv)
    if args.carry_aiter:
        from harness.carry_peer_gluon import carry_source
        problems = carry_source(_aiter_source(), args.carry_aiter)
        for problem in problems:
            print(f"not carried: {problem}", file=sys.stderr)
        if problems:
            return 1
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    import triton

    release = ".".join(triton.__version__.split(".")[:2])
    out = args.out or os.path.join(GLUON_CORPUS, f"triton-{release}")
    carried, not_carried = _carried_cases()
    tutorials, tutorials_not_carried = _tutorial_cases(_release(triton.__version__))
    amd, amd_not_carried = _aiter_cases()
    not_carried = "; ".join(why for why in (not_carried, tutorials_not_carried, amd_not_carried) if why)
    cases = [case for case in list(_our_cases()) + carried + tutorials + amd
             if not args.only or re.search(args.only, f"{case.project}.{case.kernel}")]
    if args.check:
        for case in cases:
            print(f"{case.project}.{case.kernel}: {', '.join(case.targets)} ({case.origin})")
        return 0
    os.makedirs(out, exist_ok=True)
    written = Written()
    for case in cases:
        for target_name in case.targets:
            stem = f"{case.project}.{case.kernel}.{target_name}"
            texts, failed = compile_case(case, target_name)
            if failed and not texts:
                written.failures.append((stem, failed))
                print(f"stock failed {stem}: {failed}", file=sys.stderr)
            for suffix, text in texts.items():
                name = f"{stem}.{suffix}"
                with open(os.path.join(out, name), "w") as f:
                    f.write(text)
                written.rows.append((name, case.project, case.kernel, case.origin, len(text)))
                print(f"wrote {name} ({len(text)} chars)", file=sys.stderr)
    if not args.only:
        notes = _tutorial_notes(_release(triton.__version__), written)
        _write_sources(out, written, triton.__version__, not_carried, notes)
    print(f"wrote {len(written.rows)} files under {out} "
          f"({sum(row[4] for row in written.rows)} chars); {len(written.failures)} compiles failed", file=sys.stderr)
    return 0 if written.rows else 1


def _tutorial_notes(release: tuple, written: Written) -> list[str]:
    """SOURCES.md's lines on Triton's tutorials and examples: for a release after 3.6, which
    files of the carried tree no kernel here comes from, and why."""
    from support import gluon_tutorial_cases as T
    if release < (3, 7):
        if T.why_not_carried(False):
            return []
        return ["Triton's Gluon tutorials and example of this release: every file (01-intro to 08, "
                "`python/examples/gluon/01-attention-forward.py`) has its kernels here, each launch as its test or "
                "benchmark writes it (`support/gluon_tutorial_cases.py`, `harness/hopper_cases.py`), but "
                "01's `memcpy_kernel_autotune` (an autotuned call of `memcpy_kernel`, which is here); the "
                "`@gluon.jit` helpers they call are inlined in them."]
    if T.why_not_carried(True):
        return []
    compiled = {os.path.join(REPO, row[3]) for row in written.rows if row[1] == "triton-next"}
    lines = [f"Triton's Gluon tutorials and examples under this release: v{'.'.join(map(str, release))}.0's own tree "
             f"cannot be had here (the carry script, `benchmarks/harness/carry_gluon_tutorials.py`, says why); "
             f"`triton-next` is the newest tree that can, {T.NEXT_ORIGIN} (2026-04-27), its files as written "
             f"(`.peer-tests/triton-next/`).  Its files of which no kernel is in this folder:", ""]
    for path, why in T.next_file_reasons(compiled):
        lines.append(f"- `{path}`: {why}")
    return lines


def _write_sources(out: str, written: Written, version: str, not_carried: str, notes=()) -> None:
    with open(os.path.join(out, "SOURCES.md"), "w") as f:
        f.write(f"# Gluon TTGIR corpus, triton {version}\n\n"
                f"- generator: `test/support/gen_corpus_gluon.py` under triton {version} (its docstring says what each "
                f"file is and how to rerun it); `loc(...)` stripped\n"
                f"- compiled with `triton.compile(...)`, no GPU, `TRITON_DEFAULT_FP_FUSION=1`\n"
                f"- `.ttgir`: Triton's TTGIR after its pipeline; `.input.ttgir`: the module Gluon's `ttgir` stage "
                f"receives (automatic forms)\n")
        if not_carried:
            f.write(f"- skipped, not carried: {not_carried}\n")
        f.write(f"\n{len(written.rows)} files, {sum(row[4] for row in written.rows)} characters.\n\n"
                "| file | project | kernel | source |\n|---|---|---|---|\n")
        for name, project, kernel, origin, _size in written.rows:
            f.write(f"| {name} | {project} | {kernel} | {origin} |\n")
        if notes:
            f.write("\n" + "\n".join(notes) + "\n")
        if written.failures:
            f.write("\nCases that gave no file (the kernel does not build under this release, or stock Triton "
                    "rejects the written form for this target):\n\n")
            for stem, why in written.failures:
                f.write(f"- `{stem}`: {why}\n")


if __name__ == "__main__":
    sys.exit(main())
