"""Remarks speak the user's words (``lowering/remark_words.py``): a plain remark
(``remarks=True``, ``ll-opt --remarks``) names no field of our cost model (``store_wavefronts=8``)
and no file of our source tree; the detail level (``remarks="detail"``, ``--remarks=detail``,
``ll-lower-conversions{remarks=detail}``) adds them.  Checked over the remarks of corpus kernels,
whichever rule of the lowering choice the installed release asks (the instruction-count rule
under most releases, the rules fitted to timings under triton 3.6 on sm_90)."""

import io
import re

import pytest

from support import REPO

from linear_layouts.lowering.remark_words import detail, in_words, with_detail
from linear_layouts.passes.framework import PassContext, run_pipeline
from linear_layouts.passes.ir.snapshot import parse_module
from linear_layouts.passes.options import OptionError, RemarkLevel, parse_remarks
from linear_layouts.passes.pipeline import parse_pipeline

CORPUS = REPO / "test" / "lit" / "corpus"
KERNELS = ("cuda90/gather.ttgir", "cuda90/split_interleave.ttgir", "cuda90/transpose_1warp.ttgir",
           "cuda90/transpose_16bit.ttgir", "cuda80/transpose_32bit.ttgir", "gfx942/gather.ttgir",
           "fla/abc_bwd_intra_K_bf16.cuda90.ttgir", "fla/gla_bwd_dA_bf16.cuda90.ttgir")
COST_FIELDS = re.compile(r"\b(shuffles|store_wavefronts|load_wavefronts|cta_barriers|warp_barriers|selects)=")
SOURCE_FILE = re.compile(r"[\w/]+\.(py|json)\b")


def _remarks(kernel: str, pipeline: str, driver_remarks=False) -> list[str]:
    path = CORPUS / kernel
    module = parse_module(path.read_text(), str(path))
    stream = io.StringIO()
    run_pipeline(module, parse_pipeline(pipeline), PassContext(report_stream=stream, remarks=driver_remarks))
    return [line for line in stream.getvalue().splitlines() if "left to Triton" in line or "lowered" in line]


@pytest.fixture(autouse=True)
def _gate_on(monkeypatch):
    """The suite turns the stock gate off (test/unit/conftest.py); the remarks that say why a
    conversion is left to Triton need it on."""
    monkeypatch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)


@pytest.fixture(scope="module")
def remarks_by_level():
    kernels = [k for k in KERNELS if (CORPUS / k).exists()]
    assert len(kernels) >= 5, kernels
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("LINEAR_LAYOUTS_STOCK_GATE", raising=False)
        return {level: [line for k in kernels for line in _remarks(k, f"ll-lower-conversions{{remarks={level}}}")]
                for level in ("true", "detail")}


def test_plain_remarks_name_no_cost_field_and_no_source_file(remarks_by_level):
    plain = [line for line in remarks_by_level["true"] if "left to Triton" in line]
    assert len(plain) >= 5, plain
    for line in remarks_by_level["true"]:
        assert not COST_FIELDS.search(line), line
        assert not SOURCE_FILE.search(line.split(": remark:", 1)[1]), line


def test_the_detail_level_adds_the_internals(remarks_by_level):
    plain, detailed = remarks_by_level["true"], remarks_by_level["detail"]
    assert len(plain) == len(detailed)
    assert any(COST_FIELDS.search(line) or "choice_model.json" in line for line in detailed), detailed
    assert any(SOURCE_FILE.search(line.split(": remark:", 1)[1]) for line in detailed), detailed
    # the detail level says what the plain one says, and more: each plain remark is its
    # detailed one with the parenthesized internals left out
    for words, full in zip(plain, detailed):
        assert len(full) >= len(words) and full.startswith(words.split(" (", 1)[0]), (words, full)


def test_the_driver_s_level_and_the_pass_s_combine():
    """``ll-opt --remarks=detail`` (the driver's context) gives the detail level to a pass run
    without the option; ``--remarks`` with ``{remarks=detail}`` keeps the pass's detail."""
    kernel = "cuda90/gather.ttgir"
    driver = _remarks(kernel, "ll-lower-conversions", driver_remarks="detail")
    option = _remarks(kernel, "ll-lower-conversions{remarks=detail}", driver_remarks=True)
    assert driver == option and any(SOURCE_FILE.search(line.split(": remark:", 1)[1]) for line in driver)
    assert _remarks(kernel, "ll-lower-conversions", driver_remarks=True) == \
        _remarks(kernel, "ll-lower-conversions{remarks=true}")


def test_remark_levels_are_read_in_one_place():
    assert parse_remarks(True) is RemarkLevel.WORDS and parse_remarks(False) is RemarkLevel.OFF
    assert parse_remarks("detail") is RemarkLevel.DETAIL and parse_remarks("on") is RemarkLevel.WORDS
    assert not RemarkLevel.OFF and RemarkLevel.WORDS and RemarkLevel.DETAIL
    with pytest.raises(OptionError, match="expected True, False or \"detail\""):
        parse_remarks("yes")


def test_enable_takes_the_detail_level():
    from linear_layouts.passes.drop_in.plugin_config import config_from
    from linear_layouts.passes.lower_conversions import LowerConversions
    from linear_layouts.passes.options import VerifyLevel
    config = config_from("linear", None, None, VerifyLevel.EMITTED, report=False, remarks="detail",
                         assign_layouts=False, resolve_auto_layouts=True, apply_advice=False)
    assert config.remarks is RemarkLevel.DETAIL
    [lowering] = [p for p in config.passes if isinstance(p, LowerConversions)]
    assert lowering.remarks is RemarkLevel.DETAIL and "remarks=detail" in config.pipeline
    plain = config_from("linear", None, None, VerifyLevel.EMITTED, report=False, remarks=True,
                        assign_layouts=False, resolve_auto_layouts=True, apply_advice=False)
    assert "remarks=true" in plain.pipeline   # the pipeline text reads as it did before levels
    with pytest.raises(OptionError):
        config_from("linear", None, None, VerifyLevel.EMITTED, report=False, remarks="yes",
                    assign_layouts=False, resolve_auto_layouts=True, apply_advice=False)


def test_a_detail_part_is_left_out_of_the_words():
    reason = "stock needs 8 store wavefronts" + detail("store_wavefronts=8; lowering/choosing/stock_bounds.py")
    assert in_words(reason) == "stock needs 8 store wavefronts"
    assert with_detail(reason) == "stock needs 8 store wavefronts (store_wavefronts=8; lowering/choosing/stock_bounds.py)"
