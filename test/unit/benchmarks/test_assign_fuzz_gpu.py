"""benchmarks/assign_fuzz_gpu.py without a GPU: the --transposes option draws programs with
tt.trans, leaves the default draws as they were, and a dry run's report names the option;
--loop-loads draws loads in loops that memory_ops re-lays out, the inputs cover them and stay
within the programs' bounds, and outputs compare as bits."""

import os
import random
import re
import sys

import pytest

pytest.importorskip("triton")

from support import REPO  # noqa: E402

sys.path.insert(0, os.path.join(str(REPO), "benchmarks"))
import assign_fuzz_gpu  # noqa: E402

from linear_layouts.tools.fuzz.random_programs import random_program  # noqa: E402


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


def test_loop_loads_only_where_asked():
    plain = [assign_fuzz_gpu.case_text(7, i) for i in range(6)]
    with_loads = [assign_fuzz_gpu.case_text(7, i, loop_loads=True) for i in range(6)]
    assert not any("%L" in text for text in plain)
    assert sum(bool(assign_fuzz_gpu.loop_memory_layouts(text)) for text in with_loads) >= 4


def test_input_buffers_cover_the_loops_and_stay_in_the_bound():
    """X, V and L in [-B, B] (B at least 1), L with MAX_TRIPS tiles, S with MAX_TRIPS tiles per
    storing loop, outputs poisoned; the kernel's arguments in the signature's order."""
    import numpy as np

    from linear_layouts.tools.fuzz.random_programs import MAX_TRIPS, M, N
    rng = np.random.default_rng(1)
    buffers = assign_fuzz_gpu.input_buffers({"input_bound": 5, "loop_store_tiles": 2}, True, rng)
    assert list(buffers) == ["X", "V", "OUT", "OUT1", "L", "S"]
    assert [buffers[k].size for k in buffers] == [M * N, M, M * N, M, MAX_TRIPS * M * N, 2 * MAX_TRIPS * M * N]
    for name in ("X", "V", "L"):
        assert buffers[name].dtype == np.int32
        assert int(buffers[name].min()) == -5 and int(buffers[name].max()) == 5   # the whole range is drawn
    assert all(bool((buffers[k] == -1).all()) for k in ("OUT", "OUT1", "S"))
    plain = assign_fuzz_gpu.input_buffers({"input_bound": 0, "loop_store_tiles": 0}, False, rng)
    assert list(plain) == ["X", "V", "OUT", "OUT1"] and int(np.abs(plain["X"]).max()) == 1
    huge = assign_fuzz_gpu.input_buffers({"input_bound": 2**31 - 1, "loop_store_tiles": 0}, False, rng)
    assert int(np.abs(huge["X"].astype(np.int64)).max()) > 2**30


def test_bit_equal_tells_nans_and_signed_zeros_apart():
    import numpy as np
    nan = np.array([np.nan, 1.0], dtype=np.float32)
    assert assign_fuzz_gpu.bit_equal(nan, nan.copy())
    assert not assign_fuzz_gpu.bit_equal(np.array([0.0], np.float32), np.array([-0.0], np.float32))
    assert not assign_fuzz_gpu.bit_equal(np.array([1, 2], np.int32), np.array([1, 3], np.int32))
    assert not assign_fuzz_gpu.bit_equal(np.array([1, 2], np.int32), np.array([1, 2], np.int64))


def test_memory_ops_relays_loads_inside_loops():
    """Seed 83's cases 14, 18 and 26: with memory_ops the assignment gives some in-loop tt.load
    another layout (what the GPU fuzz with --loop-loads exercises); without it, never.  (Cases
    whose integer program solves in well under a second, far inside the time limit: case 1
    ran into it on a loaded machine and the answer changed.)"""
    from linear_layouts.passes.assign.assign_layouts import assign_module
    from linear_layouts.passes.ir.snapshot import parse_module

    def loads(text):
        return [layout for layout in assign_fuzz_gpu.loop_memory_layouts(text) if layout[0] == "tt.load"]
    relaid = {True: 0, False: 0}
    for index in (14, 18, 26):
        text = assign_fuzz_gpu.case_text(83, index, loop_loads=True)
        for memory_ops in (True, False):
            module = parse_module(text)
            assign_module(module, "sm_90", memory_ops=memory_ops)
            relaid[memory_ops] += sum(a != b for a, b in zip(loads(text), loads(module.print())))
    assert relaid[True] >= 1 and relaid[False] == 0


def test_a_dry_run_with_loop_loads_compiles_and_counts(tmp_path):
    status = assign_fuzz_gpu.main(["--cases", "2", "--seed", "83", "--jobs", "1", "--dry-run", "--memory-ops",
                                   "--loop-loads", "--out", str(tmp_path)])
    report = (tmp_path / "assign_fuzz_gpu_seed83_loop_loads.md").read_text()
    assert status == 0 and "--memory-ops --loop-loads`" in report
    assert "ours or assigned failed where stock compiled: **0**" in report
    relaid = re.search(r"the assignment re-laid out (\d+) of them, in \*\*(\d+)\*\* cases", report)
    assert relaid and int(relaid.group(2)) >= 1
    assert "| case | changed | conversions stock -> assigned |" in report


def test_calls_only_where_asked_and_a_dry_run_with_calls_compiles(tmp_path):
    """``--calls``: programs call noinline functions of their own (none without it), and every
    variant of a few such kernels compiles wherever stock does."""
    plain = [assign_fuzz_gpu.case_text(9, i) for i in range(6)]
    with_calls = [assign_fuzz_gpu.case_text(9, i, calls=True) for i in range(6)]
    assert not any("tt.call" in text for text in plain)
    assert sum("tt.call" in text and "noinline = true" in text for text in with_calls) >= 3
    status = assign_fuzz_gpu.main(["--cases", "3", "--seed", "9", "--jobs", "1", "--dry-run", "--calls",
                                   "--out", str(tmp_path)])
    report = (tmp_path / "assign_fuzz_gpu_seed9_calls.md").read_text()
    assert status == 0 and "--calls`" in report
    assert "ours or assigned failed where stock compiled: **0**" in report
