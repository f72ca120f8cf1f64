"""benchmarks/assign_fuzz_gpu.py without a GPU: the --transposes option draws programs with
tt.trans, leaves the default draws as they were, and a dry run's report names the option."""

import os
import random
import sys

import pytest

pytest.importorskip("triton")

from support import REPO  # noqa: E402

sys.path.insert(0, os.path.join(str(REPO), "benchmarks"))
import assign_fuzz_gpu  # noqa: E402

from linear_layouts.tools.random_programs import random_program  # noqa: E402


def test_transposes_only_where_asked():
    plain = [assign_fuzz_gpu.case_text(5, i) for i in range(8)]
    with_trans = [assign_fuzz_gpu.case_text(5, i, transposes=True) for i in range(8)]
    assert not any("tt.trans" in text for text in plain)
    assert sum("tt.trans" in text for text in with_trans) >= 3
    rng = random.Random(5 * 1_000_003 + 3)   # the default draw is the one earlier runs made
    assert plain[3] == random_program(rng, steps=rng.randint(4, 12), kernel=True)


@pytest.mark.parametrize("option, seed, cases, stem", [("--transposes", 3, 2, "transposes"),
                                                      ("--shape-ops", 4, 3, "shape_ops")])
def test_a_dry_run_with_an_option_compiles_and_names_it(tmp_path, option, seed, cases, stem):
    status = assign_fuzz_gpu.main(["--cases", str(cases), "--seed", str(seed), "--jobs", "1", "--dry-run", option,
                                   "--out", str(tmp_path)])
    report = (tmp_path / f"assign_fuzz_gpu_seed{seed}_{stem}.md").read_text()
    assert status == 0
    assert f"--seed {seed} {option}`" in report
    assert "ours or assigned failed where stock compiled: **0**" in report


def test_shape_ops_only_where_asked():
    plain = [assign_fuzz_gpu.case_text(5, i) for i in range(8)]
    with_shapes = [assign_fuzz_gpu.case_text(5, i, shape_ops=True) for i in range(8)]
    assert not any(op in text for text in plain for op in ("tt.reshape", "tt.join", "tt.gather"))
    assert sum(any(op in text for op in ("tt.reshape", "tt.join", "tt.gather")) for text in with_shapes) >= 4


def test_a_dry_run_with_whiles_and_shape_ops_compiles(tmp_path):
    texts = [assign_fuzz_gpu.case_text(6, i, whiles=True) for i in range(6)]
    assert sum("scf.while" in text for text in texts) >= 2
    status = assign_fuzz_gpu.main(["--cases", "3", "--seed", "6", "--jobs", "1", "--dry-run", "--shape-ops",
                                   "--whiles", "--out", str(tmp_path)])
    report = (tmp_path / "assign_fuzz_gpu_seed6_shape_ops_whiles.md").read_text()
    assert status == 0 and "--shape-ops --whiles`" in report
    assert "ours or assigned failed where stock compiled: **0**" in report
