"""The seeded and the chosen module ``ll-resolve-auto-layouts`` builds in Python
(``passes.ir.edited_snapshot``) are the modules their texts parse to: the same ops in the same
order, each value with the same type, each operand the same value, the same locations (for the
chosen module, whose locations no one reads before its parse, all but the inserted conversions').  Checked on every module of
``lit/resolve-auto-layouts`` and on every kernel of ``support.gluon_auto_kernels`` compiled
with ``enable()``; a module whose edits the builder cannot follow would fall back to a parse
(counted: none here)."""

import pathlib

import pytest

triton = pytest.importorskip("triton")
pytest.importorskip("triton.experimental.gluon")
import linear_layouts  # noqa: E402
from linear_layouts.passes.gluon import resolve_auto_layouts as resolution  # noqa: E402
from linear_layouts.passes.ir.snapshot import parse_module  # noqa: E402
from support.gluon_auto_kernels import KERNELS, TARGET, source  # noqa: E402

LIT = pathlib.Path(__file__).parents[3] / "lit" / "resolve-auto-layouts"

pytestmark = pytest.mark.usefixtures("every_compile_counted")  # conftest.py


def signature(module, locations: bool = True) -> list:
    """Per op in walk order: name, location (ops with results), result and block argument
    types, and each operand as (walk index of its op or block owner, result or argument)."""
    ops = list(module.walk())
    index = {id(op): i for i, op in enumerate(ops)}
    where = {}
    for i, op in enumerate(ops):
        for r in op.results:
            where[id(r)] = ("result", i, r.index)
        for ri, region in enumerate(op.regions):
            for bi, block in enumerate(region.blocks):
                for a in block.arguments:
                    where[id(a)] = ("argument", i, ri, bi, a.index)
    return [(op.name, op.location if op.results and locations else None, [r.type for r in op.results],
             [a.type for a in op.block_arguments], [where.get(id(v)) for v in op.operands],
             index.get(id(op.parent_op)) if op.parent_op is not None else None) for op in ops]


@pytest.fixture
def seedings(monkeypatch):
    """Every seeding and choice made while the fixture is on: (built module, parsed module,
    whether locations are compared)."""
    made = []
    real_seed, real_choose = resolution._seed, resolution._choose

    def seed(module, original):
        seeded = real_seed(module, original)
        made.append((seeded.module, parse_module(seeded.text, module.filename, safe=False), True))
        return seeded

    def choose(module, seeded, target, result):
        text, chosen = real_choose(module, seeded, target, result)
        made.append((chosen, parse_module(text, module.filename, safe=False), False))
        return text, chosen

    monkeypatch.setattr(resolution, "_seed", seed)
    monkeypatch.setattr(resolution, "_choose", choose)
    return made


@pytest.mark.parametrize("path", sorted(p.name for p in LIT.glob("*.mlir")
                                          if p.name not in ("unsupported-op.mlir", "reshape-reorder.mlir")))
def test_the_built_seeded_module_is_the_parsed_one_on_every_lit_module(seedings, path):
    for number, chunk in enumerate((LIT / path).read_text().split("// -----")):
        if "module" in chunk:
            resolution.resolve_module(parse_module(chunk, path, safe=False), compare=False)
    assert seedings
    for built, parsed, locations in seedings:
        assert built is not None
        assert signature(built, locations) == signature(parsed, locations)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_the_built_seeded_module_is_the_parsed_one_on_every_kernel(seedings, name):
    linear_layouts.enable()
    try:
        triton.compile(source(name), target=TARGET)
    except Exception:   # (a kernel neither resolution compiles: its seeding is still checked)
        pass
    finally:
        linear_layouts.disable()
    for built, parsed, locations in seedings:
        assert built is not None
        assert signature(built, locations) == signature(parsed, locations)
