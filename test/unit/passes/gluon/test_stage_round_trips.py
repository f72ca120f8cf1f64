"""How often the drop-in's Gluon ``ttgir`` stage prints and parses a module (issue 54): each
print or parse of a large kernel costs milliseconds, and Triton's bindings cannot create ops or
change types, so every edit of ours is a round trip through text.

Counted in a real compile (``triton.compile`` with ``enable()``, sm_90, on the CPU), at
Triton's bindings: every print of a module (``str()``, ``str_nodebug()``) and every parse
(``parse_mlir_module``) made by our part of the stage, not by the stock stage it wraps.  The
default path (``enable()``: remarks and report off, so Triton's resolution is not priced):

* 1 print: the stage's input (``src.str()``), whose text the resolution starts from (a
  read-only snapshot of ``src``: no parse);
* 1 parse: the chosen layouts (the edits of choosing, written into one text); canonicalizer
  and CSE run on that very module, which is handed to Triton as it is;
* forced beyond that (``resolve_module``'s docstring says why): 1 parse of the seeded text
  (the solver's graph is built from the seeded module's ops), 1 print of the canonicalized
  module (the backend check and the modelled cost read what Triton's canonicalizer made, in
  C++); 1 parse more where rematerialization rewrote index arithmetic (the canonicalizer must
  see it); 1 print and 1 parse more where calls are inlined (the inliner needs a module of its
  own, and the seeding its text).

Before issue 54 a plain copy took 13 prints and 5 parses.  The advice stage
(``enable(apply_advice=True)``), on a kernel it finds nothing to change in, adds one print
(its input) and no parse.
"""

import collections

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")
import linear_layouts  # noqa: E402
from linear_layouts.passes import hook  # noqa: E402
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
# recomputed in the store's layout (rematerialized: one parse more); a column sum, whose
# reduction calls its combine function (inlined: one print and one parse more)
DEFAULT_PATH = [("copy", 2, 2), ("transpose", 2, 3), ("column_sum", 3, 3)]


@pytest.mark.parametrize("name, prints, parses", DEFAULT_PATH)
def test_the_resolving_stage_prints_and_parses_each_module_once_plus_what_is_forced(monkeypatch, name, prints,
                                                                                      parses):
    counted = StageCounts(monkeypatch)
    _compile(name)
    assert counted.of("resolve") == {"print": prints, "parse": parses}


def test_the_advice_stage_prints_its_input_once_and_parses_nothing_where_it_changes_nothing(monkeypatch):
    counted = StageCounts(monkeypatch)
    _compile("copy", apply_advice=True)
    assert hook.stats().advice_applied == 0
    assert counted.of("resolve") == {"print": 2, "parse": 2}
    assert counted.of("advice") == {"print": 1, "parse": 0}
