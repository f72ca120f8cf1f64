"""The target table (``lowering.target``): each target's facts, how Triton spells it,
and per target that plans for it emit islands the simulator passes and never use an instruction
the target lacks (``ldmatrix``/``stmatrix`` on AMD, ``stmatrix`` before sm_90, clusters on
sm_120 and before sm_90)."""

from __future__ import annotations

import random

import pytest

from linear_layouts.dialect import to_linear_layout
from linear_layouts.lowering.cost_weights import CALIBRATED, weights_for
from linear_layouts.lowering.emit.emit_llvm import IslandSite, emit_island
from linear_layouts.lowering.sim.island_sim import check_emitted
from linear_layouts.lowering.planner import plan_conversion
from linear_layouts.lowering.target import ORIGINAL_TARGETS, TARGETS, target_named
from linear_layouts.tools.fuzz.random_layouts import amd_layouts, blocked, layout_of, nvidia_layouts
from linear_layouts.tools.fuzz.testcases import random_linear_encoding

NEW_TARGETS = ("sm_86", "sm_89", "sm_100", "sm_120", "gfx950", "gfx1100", "gfx1201")

# name -> (Triton's name, warp size, ldmatrix, stmatrix, clusters, shared memory KiB): the facts
# of the module docstring of lowering/target.py, where each one's source is given.
FACTS = {
    "sm_80": ("cuda:80", 32, True, False, False, 163),
    "sm_86": ("cuda:86", 32, True, False, False, 99),
    "sm_89": ("cuda:89", 32, True, False, False, 99),
    "sm_90": ("cuda:90", 32, True, True, True, 227),
    "sm_100": ("cuda:100", 32, True, True, True, 227),
    "sm_120": ("cuda:120", 32, True, True, False, 99),
    "gfx90a": ("hip:gfx90a", 64, False, False, False, 64),
    "gfx942": ("hip:gfx942", 64, False, False, False, 64),
    "gfx950": ("hip:gfx950", 64, False, False, False, 160),
    "gfx1100": ("hip:gfx1100", 32, False, False, False, 64),
    "gfx1201": ("hip:gfx1201", 32, False, False, False, 64),
}

ELEMENTS = {"f32": 32, "f16": 16, "bf16": 16, "i8": 8, "i1": 1, "i64": 64}


def test_every_target_has_its_facts():
    assert set(TARGETS) == set(FACTS)
    assert set(ORIGINAL_TARGETS) | set(NEW_TARGETS) == set(TARGETS)
    for name, (triton_name, warp, ldm, stm, dsmem, kib) in FACTS.items():
        t = TARGETS[name]
        assert (t.triton_name, t.warp_size, t.has_ldmatrix, t.has_stmatrix, t.has_distributed_shared_memory,
                t.shared_memory_bytes) == (triton_name, warp, ldm, stm, dsmem, kib * 1024), name
        assert target_named(name) is t and target_named(triton_name) is t
        assert (t.mfma_version > 0) + (t.wmma_version > 0) == (t.vendor == "amd"), name
        assert t.has_lds_transpose_read == (name == "gfx950"), name


def test_gpu_target_matches_triton():
    pytest.importorskip("triton")
    for name, t in TARGETS.items():
        gpu = t.gpu_target()
        assert (gpu.backend, gpu.arch, gpu.warp_size) == (t.triton_backend, t.triton_arch, t.warp_size)
        assert f"{gpu.backend}:{gpu.arch}" == t.triton_name


def _site(element):
    return IslandSite(result="%RESULT", source="%SOURCE", src_type="@SRC_TYPE@", dst_type="@DST_TYPE@",
                       element_type=element, guard_before=True, guard_after=True, unique_struct=False)


def _plans(target_name: str, count: int, seed: int):
    """Random conversions for one target: its MMA / blocked layouts and #ttg.linear ones."""
    t = target_named(target_name)
    rng = random.Random(f"{seed}:{target_name}")
    out, tries = [], 0
    while len(out) < count and tries < 20 * count:
        tries += 1
        element = rng.choice(sorted(ELEMENTS))
        warps = rng.choice([1, 2, 4, 8])
        if rng.random() < 0.5:
            shape = rng.choice([(16, 16), (64, 32), (8, 4), (128,), (32, 64)])
            a = random_linear_encoding(rng, shape, warps, t.warp_size)
            b = random_linear_encoding(rng, shape, warps, t.warp_size)
            src, dst = to_linear_layout(a, list(shape)), to_linear_layout(b, list(shape))
        else:
            shape = rng.choice([(16, 16), (32, 32), (64, 64), (64, 128)])
            pool = (nvidia_layouts(rng, warps, ELEMENTS[element]) if t.vendor == "nvidia"
                    else amd_layouts(rng, warps, target_name)) + [blocked(rng, 2, warps, t.warp_size)]
            src, dst = layout_of(rng.choice(pool), shape), layout_of(rng.choice(pool), shape)
            if src is None or dst is None:
                continue
        plan = plan_conversion(src, dst, ELEMENTS[element], t)
        if plan:
            out.append((plan, element))
    return out


@pytest.mark.parametrize("target", NEW_TARGETS)
def test_plans_for_the_target_emit_and_simulate(target):
    seen = set()
    for plan, element in _plans(target, 60, 29):
        assert plan.target.name == target
        text = emit_island(plan, _site(element)).text
        check = check_emitted(text, plan, _site(element))
        assert check, (target, check.errors[:2])
        t = plan.target
        if not t.has_stmatrix:
            assert "stmatrix" not in text
        if not t.has_ldmatrix:
            assert "ldmatrix" not in text
        if not t.has_distributed_shared_memory:
            assert "shared::cluster" not in text and "mapa" not in text
        if t.vendor == "amd":
            assert "shfl.sync" not in text and "bar.sync" not in text
            assert "_tr_" not in text and "ds.read.tr" not in text   # LDS transpose reads: never ours
        seen.add(plan.method)
    assert {"shuffle", "shared"} <= seen, seen


@pytest.mark.parametrize("target", ["sm_86", "sm_89", "sm_120", "gfx1100"])
def test_cross_cta_conversions_need_clusters(target):
    # A CGA-split blocked layout whose CTAs exchange data: only targets with clusters lower it.
    rng = random.Random(3)
    t = target_named(target)
    for _ in range(200):
        a = layout_of(blocked(rng, 2, 4, t.warp_size, 2), (64, 64))
        b = layout_of(blocked(rng, 2, 4, t.warp_size, 2), (64, 64))
        if a is None or b is None:
            continue
        plan = plan_conversion(a, b, 32, t)
        if not plan and "distributed shared memory" in plan.reason:
            on_hopper = plan_conversion(a, b, 32, target_named("sm_90"))
            if t.warp_size == 32 and t.vendor == "nvidia":
                assert on_hopper, on_hopper.reason
            return
    pytest.fail("no cross-CTA conversion drawn")


@pytest.mark.parametrize("target", ["sm_89", "sm_100", "sm_120"])
def test_ldmatrix_and_stmatrix_are_used_where_they_exist(target):
    # The flags are not dead: on sm_100 and sm_120 some plans store with stmatrix (on sm_90 too,
    # 13 of these 120), on sm_89 some load with ldmatrix and none stores with stmatrix.
    texts = [emit_island(p, _site(e)).text for p, e in _plans(target, 120, 5)]
    assert any("ldmatrix" in text for text in texts)
    assert any("stmatrix" in text for text in texts) == target_named(target).has_stmatrix


def test_cost_weights_per_target():
    # Measured for sm_90 only; every other target names where its estimate comes from.
    assert "sm_90" in CALIBRATED and weights_for("sm_90") is CALIBRATED["sm_90"]
    for name in TARGETS:
        w = weights_for(name)
        if name != "sm_90":
            assert "estimate" in w.source, (name, w.source)
    assert weights_for("sm_100").shuffle == CALIBRATED["sm_90"].shuffle
    assert "sm_90" in weights_for("sm_120").source
