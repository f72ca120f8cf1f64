"""One reader of Triton's version strings (``dialect.conventions.release_of``) and what its three
users make of it: the installed release (``passes.ir.bindings``), the shared-access limit
(``lowering.choosing.island_limits``) and the measured tables' release match
(``lowering.choosing.measured_choices.same_release``, also the fitted model's)."""

from __future__ import annotations

import pytest

from linear_layouts.dialect.conventions import NEWEST, release_of
from linear_layouts.lowering.choosing import fitted_model, island_limits, measured_choices


@pytest.mark.parametrize("version, release", [
    ("3.6.0", (3, 6)),
    ("3.7.1+git0a1b2c3d", (3, 7)),
    ("3.9.0rc1", (3, 9)),
    ("3.9rc1", (3, 9)),
    ("3.8.0.post1", (3, 8)),
    ("3.10.0", (3, 10)),
    (" 3.6.0\n", (3, 6)),
    ("3.6", (3, 6)),
])
def test_a_version_string_reads_as_major_minor(version, release):
    assert release_of(version) == release


@pytest.mark.parametrize("version", ["", "3", "3.", "main", "v3.6.0", "3.x", ".6.0", None, (3, 6)])
def test_a_string_that_names_no_release_reads_as_none(version):
    assert release_of(version) is None


def test_releases_compare_as_numbers_not_as_text():
    assert release_of("3.10.0") > release_of("3.9.0") > release_of("3.7.1+git0a1b2c3d")
    assert "3.10.0" < "3.9.0"       # what a comparison of the strings would say


def test_the_installed_release_of_a_source_build_is_the_newest(monkeypatch):
    from linear_layouts.passes.ir import bindings

    for version, release in (("3.7.1+git0a1b2c3d", (3, 7)), ("main", NEWEST.release)):
        monkeypatch.setattr(bindings, "triton_version", lambda v=version: v)
        bindings.installed_triton_version.cache_clear()
        try:
            assert bindings.installed_triton_version() == release
        finally:
            bindings.installed_triton_version.cache_clear()


def test_a_measurement_holds_for_its_release_only():
    same = measured_choices.same_release
    assert same("3.6.0", "3.6.1+git0a1b2c3d") and same("3.9.0", "3.9.0rc1") and same("3.6", "3.6.0")
    assert not same("3.6.0", "3.7.0") and not same("3.1.0", "3.10.0")
    assert not same("", "3.9.0") and not same("", "") and not same("main", "main")
    model = fitted_model.Model("sm_90", "3.6.0", "GPU", None, {})
    assert model.applies_to("sm_90", "3.6.1") and not model.applies_to("sm_90", "3.9.0")
    assert not model.applies_to("sm_80", "3.6.0")


class _Plan:
    """A plan whose shared-memory part makes ``count`` accesses."""

    def __init__(self, count: int):
        from linear_layouts.lowering.plan import SharedAccess

        access = SharedAccess.__new__(SharedAccess)
        self.shared = type("Shared", (), {"ops": [access] * count})()


@pytest.mark.parametrize("triton, limited", [("3.6.0", False), ("3.8.2", False), ("3.9.0rc1", True),
                                             ("3.10.0", True), ("main", True)])
def test_the_shared_access_limit_reads_the_release(triton, limited):
    from linear_layouts.lowering.target import target_named

    over = _Plan(island_limits.MAX_SHARED_ACCESSES_PER_THREAD + 1)
    problem = island_limits.shared_accesses_problem(over, target_named("sm_90"), triton)
    assert bool(problem) is limited
    assert island_limits.shared_accesses_problem(over, target_named("gfx942"), triton) == ""
