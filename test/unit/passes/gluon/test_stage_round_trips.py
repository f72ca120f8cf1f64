"""How often the drop-in's Gluon ``ttgir`` stage prints and parses a module: each
print or parse of a large kernel costs milliseconds, and Triton's bindings cannot create ops or
change types, so every edit of ours is a round trip through text.

Counted in a real compile (``triton.compile`` with ``enable()``, sm_90, on the CPU), at
Triton's bindings: every print of a module (``str()``, ``str_nodebug()``) and every parse
(``parse_mlir_module``) made by our part of the stage, not by the stock stage it wraps.  The
default path (``enable()``: remarks and report off, so neither our resolution nor Triton's is
priced):

* 1 print: the stage's input (``src.str()``), whose text the resolution starts from (a
  read-only snapshot of ``src``: no parse); calls are inlined in ``src`` first, the stage's own
  first pass (``gluon-inline``), so the column sum is printed once too;
* 1 parse: the chosen layouts with rematerialization's edits, one text (the seeded and the
  chosen module are built in Python from the snapshot and the edits, not parsed); the backend
  check reads that module with that text, and canonicalizer and CSE then run on that very
  module, which is handed to Triton as it is.

So 1 print and 1 parse for the copy, the transpose (rematerialized) and the column sum
(inlined): a round trip added anywhere on the path shows here.  The modelled cost is priced only
for the remarks or the report (one print more, forced, ``resolve_module``'s docstring says why;
the test after the default path's).  The advice stage
(``enable(apply_advice=True)``), on a kernel it finds nothing to change in, adds one print (its
input) and no parse; where it applies a round, see the last test.
"""

import collections
import re

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")
import linear_layouts  # noqa: E402
from linear_layouts.passes.drop_in import hook# noqa: E402
from support.gluon_auto_kernels import TARGET, source  # noqa: E402

pytestmark = pytest.mark.usefixtures("every_compile_counted")  # conftest.py


class StageCounts:
    """Prints and parses per stage of ours, counted at Triton's bindings; a stage's own call of
    the stage it wraps (the stock ``ttgir``, or for the advice our resolution) is not its own."""

    def __init__(self, monkeypatch):
        from triton._C.libtriton import ir

        self.counts = collections.defaultdict(collections.Counter)
        self._active: list = []
        for name in ("str", "str_nodebug", "__str__"):
            self._count(monkeypatch, ir.module, name, "print")
        self._count(monkeypatch, ir, "parse_mlir_module", "parse")
        monkeypatch.setattr(hook, "resolving_ttgir", self._stage("resolve", hook.resolving_ttgir))
        monkeypatch.setattr(hook, "advised_ttgir", self._stage("advice", hook.advised_ttgir))

    def _count(self, monkeypatch, owner, name, kind):
        real = getattr(owner, name)

        def counted(*args, **kwargs):
            if self._active and self._active[-1] is not None:
                self.counts[self._active[-1]][kind] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)

    def _stage(self, name, make_stage):
        def make(wrapped, config):
            def below(*args, **kwargs):
                self._active.append(None)          # the wrapped stage's work is not ours
                try:
                    return wrapped(*args, **kwargs)
                finally:
                    self._active.pop()

            stage = make_stage(below, config)

            def ours(*args, **kwargs):
                self._active.append(name)
                try:
                    return stage(*args, **kwargs)
                finally:
                    self._active.pop()
            return ours
        return make

    def of(self, stage) -> dict:
        return {"print": self.counts[stage]["print"], "parse": self.counts[stage]["parse"]}


def _compile(name, **options):
    linear_layouts.enable(**options)
    try:
        kernel = triton.compile(source(name), target=TARGET)
    finally:
        linear_layouts.disable()
    assert hook.stats().auto_layouts_resolved == 1 and not hook.stats().fallbacks
    assert "#gluon" not in kernel.asm["ttgir"]
    return kernel


# (kernel, prints, parses): a plain copy; a transpose, whose row and column offsets are
# recomputed in the store's layout (rematerialized); a column sum, whose reduction calls its
# combine function (inlined)
DEFAULT_PATH = [("copy", 1, 1), ("transpose", 1, 1), ("column_sum", 1, 1)]


@pytest.mark.parametrize("name, prints, parses", DEFAULT_PATH)
def test_the_resolving_stage_prints_and_parses_each_module_once(monkeypatch, name, prints, parses):
    counted = StageCounts(monkeypatch)
    _compile(name)
    assert counted.of("resolve") == {"print": prints, "parse": parses}


def test_pricing_the_resolutions_prints_ours_and_parses_and_prints_tritons(monkeypatch, capsys):
    """With the remarks on, our resolved module is printed to be priced (after canonicalizer
    and CSE), and Triton's resolution, run in a subprocess (not counted), is parsed and printed
    here to be priced too: 3 prints and 2 parses, as before; the remark gives both costs.  (A
    copy whose index vectors are coalesced: Triton's resolution accepts it, where it rejects
    the copy without layouts.)"""
    counted = StageCounts(monkeypatch)
    _compile("copy_coalesced", remarks=True)
    assert counted.of("resolve") == {"print": 3, "parse": 2}
    assert re.search(r"modelled cost \(loop-weighted\) ours \d+\.\d, Triton's resolution \d+\.\d$",
                     capsys.readouterr().err, flags=re.M)


def test_the_advice_stage_prints_its_input_once_and_parses_nothing_where_it_changes_nothing(monkeypatch):
    counted = StageCounts(monkeypatch)
    _compile("copy", apply_advice=True)
    assert hook.stats().advice_applied == 0
    assert counted.of("resolve") == {"print": 1, "parse": 1}
    assert counted.of("advice") == {"print": 1, "parse": 0}


def _newcomer(name):
    import os
    import sys

    from support import REPO
    sys.path.insert(0, os.path.join(str(REPO), "benchmarks"))
    from harness.gluon_auto_kernels import cases
    from triton.experimental.gluon._runtime import GluonASTSource

    case = next(c for c in cases() if c.name == name)
    aligned = {(i,): [["tt.divisibility", 16]] for i in range(len(case.signature))}
    return GluonASTSource(case.kernel, case.signature, {**case.constexprs, **case.layouts["newcomer"]}, attrs=aligned)


# (newcomer kernel of ``benchmarks/harness``, prints, parses) where the advice stage applies one
# round: the copy and the row softmax with one finding each (one trial, priced, then kept), the
# transpose with two (three trials: each finding alone, then both at once, kept)
ONE_ROUND = [("copy", 1 + 1, 1), ("row_softmax", 1 + 1, 1), ("transpose", 1 + 3, 3)]


@pytest.mark.parametrize("name, prints, parses", ONE_ROUND)
def test_the_advice_stage_where_it_applies_a_round(monkeypatch, name, prints, parses):
    """The advice is a search: each distinct trial edit is parsed once (its edits and the index
    arithmetic rematerialization recomputes in one text, the module that text stands for built
    in Python: ``advice_edits._Mirror``) and printed once to be priced (forced: the price reads
    the module Triton's canonicalizer and CSE made, see ``advice_edits.Trials``); a trial asked
    for again (one finding: priced alone, then tried as the round) is taken as it was made.
    The kept trial is taken over as it is and handed to Triton: no print and no parse of its
    text again, and the stage's input is printed once."""
    counted = StageCounts(monkeypatch)
    linear_layouts.enable(apply_advice=True)
    try:
        triton.compile(_newcomer(name), target=TARGET)
    finally:
        linear_layouts.disable()
    assert hook.stats().advice_applied == 1 and not hook.stats().fallbacks
    assert counted.of("resolve") == {"print": 1, "parse": 0}      # no automatic layout: its input only
    assert counted.of("advice") == {"print": prints, "parse": parses}
