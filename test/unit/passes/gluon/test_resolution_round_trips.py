"""How often ``resolve_module`` prints and parses a module (each costs milliseconds on a large
kernel): the module is printed once before and once after the layouts are chosen, plus the
seeded copy, the rematerialization's and the target's header; parsed for the seeded copy, the
chosen text, and one run of Triton's canonicalizer and CSE together."""

import pytest

pytest.importorskip("triton")
from support import REPO  # noqa: E402

from linear_layouts.passes.gluon import resolve_auto_layouts  # noqa: E402
from linear_layouts.passes.ir import snapshot  # noqa: E402

LIT = REPO / "test" / "lit" / "resolve-auto-layouts"


def test_a_resolution_prints_five_times_and_parses_three(monkeypatch):
    module = snapshot.parse_module(LIT.joinpath("shared-round-trip.mlir").read_text(), "shared-round-trip.mlir")
    counts = {"print": 0, "parse": 0}
    real_print, real_parse = snapshot.Module.print, snapshot.parse_handle

    def counted_print(self, *args, **kwargs):
        counts["print"] += 1
        return real_print(self, *args, **kwargs)

    def counted_parse(*args, **kwargs):
        counts["parse"] += 1
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(snapshot.Module, "print", counted_print)
    monkeypatch.setattr(snapshot, "parse_handle", counted_parse)
    resolution = resolve_auto_layouts.resolve_module(module, compare=False)
    assert resolution.resolved
    assert counts == {"print": 5, "parse": 3}
