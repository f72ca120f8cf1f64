"""benchmarks/harness/skeleton.py: the shared options, and cases -> run -> summary in that order
with the dry run's environment; a GPU the harness cannot use ends it with status 2 and one line."""

import os
import sys

import pytest

from support import REPO

sys.path.insert(0, os.path.join(str(REPO), "benchmarks"))
from harness import skeleton  # noqa: E402

pytest.importorskip("triton")


def test_the_shared_options_have_one_name_and_default_everywhere():
    args = skeleton.parser("A harness.\n\nmore", rounds=3, jobs=True, seed=7).parse_args([])
    assert (args.dry_run, args.rounds, args.seed) == (False, 3, 7) and args.jobs >= 1
    assert args.out == os.path.join(skeleton.BENCHMARKS, "results")
    bare = skeleton.parser("x", dry_run="").parse_args(["--out", "/tmp/o"])
    assert bare.out == "/tmp/o" and not hasattr(bare, "dry_run") and not hasattr(bare, "rounds")


def test_main_runs_cases_then_run_then_summary(capsys):
    calls = []

    def options(parser):
        parser.add_argument("--count", type=int, default=2)

    def cases(args, env):
        calls.append(("cases", env.arch, env.dry_run))
        return list(range(args.count))

    def run(args, env, chosen):
        calls.append(("run", chosen))
        return [c * 10 for c in chosen]

    def summary(args, env, chosen, results):
        calls.append(("summary", results, env.header["gpu"], args.argv))
        return 5

    status = skeleton.main("h", "doc", ["--dry-run", "--count", "3"], options=options, cases=cases, run=run,
                           summary=summary)
    assert status == 5
    assert calls == [("cases", 90, True), ("run", [0, 1, 2]),
                     ("summary", [0, 10, 20], "none (dry run, compiled for sm_90)", ["--dry-run", "--count", "3"])]


def test_no_usable_gpu_exits_2_with_one_line(monkeypatch, capsys):
    def no_gpu(dry_run, arch, gpu_arch):
        raise skeleton.NoGpu("no CUDA GPU visible; use --dry-run to only compile")

    monkeypatch.setattr(skeleton, "environment", no_gpu)
    never = lambda *a: pytest.fail("ran without a GPU")  # noqa: E731
    assert skeleton.main("h", "doc", [], options=lambda p: None, cases=never, run=never, summary=never) == 2
    assert capsys.readouterr().err.strip() == "h: no CUDA GPU visible; use --dry-run to only compile"


def test_a_run_that_needs_no_gpu_gets_the_dry_runs_environment(monkeypatch):
    """``no_gpu(args)`` (``plan_choice.py calibrate --from JSON``): no GPU looked for, the dry run's target."""
    seen = []

    def options(parser):
        parser.add_argument("--from", dest="recorded", default="")

    def summary(args, env, chosen, results):
        seen.append((env.dry_run, args.dry_run, env.arch))
        return 0

    status = skeleton.main("h", "doc", ["--from", "x.json"], options=options, cases=lambda a, e: [],
                           run=lambda a, e, c: None, summary=summary, no_gpu=lambda args: bool(args.recorded))
    assert (status, seen) == (0, [(True, False, 90)])


def test_dry_is_the_older_spelling_of_dry_run_and_out_may_default_to_nowhere():
    args = skeleton.parser("x", out_default="").parse_args(["--dry"])
    assert args.dry_run is True and args.out == ""
    assert "--dry " not in skeleton.parser("x").format_help()


def _dry_run_out(argv) -> str:
    seen = []
    skeleton.main("h", "doc", argv, options=lambda p: None, cases=lambda a, e: [], run=lambda a, e, c: None,
                  summary=lambda args, env, chosen, results: seen.append(args.out) or 0,
                  no_gpu=lambda args: True, dry_run_prints=True)
    return seen[0]


def test_dry_run_prints_writes_a_dry_run_only_where_out_says():
    """``dry_run_prints`` (gluon_forms_gpu, peer_gluon_gpu): a dry run never rewrites a committed
    result unless ``--out`` says so; a GPU run writes into benchmarks/results by default."""
    assert _dry_run_out(["--dry-run"]) == ""
    assert _dry_run_out(["--dry-run", "--out", "/tmp/o"]) == "/tmp/o"
    assert _dry_run_out([]) == os.path.join(skeleton.BENCHMARKS, "results")


def test_rounds_below_one_and_a_usage_error_of_cases_end_with_the_usage(capsys):
    def cases(args, env):
        raise skeleton.UsageError("--only: unknown kernel 'nope'")

    never = lambda *a: pytest.fail("ran past a usage error")  # noqa: E731
    for argv, message, pick in ((["--dry-run", "--rounds", "0"], "--rounds must be at least 1", never),
                                (["--dry-run"], "--only: unknown kernel 'nope'", cases)):
        with pytest.raises(SystemExit) as ended:
            skeleton.main("h", "doc", argv, options=lambda p: None, cases=pick, run=never, summary=never, rounds=3)
        assert ended.value.code == 2
        assert capsys.readouterr().err.strip().splitlines()[-1].endswith(f"error: {message}")
