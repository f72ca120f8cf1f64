"""Gluon's ``ttgir`` stage with ours: automatic layouts resolved by our cost model first
(``ll-resolve-auto-layouts``, on by default), and the layout advice applied after it
(``ll-apply-advice``, opt-in).

Triton 3.9 gives a Gluon source a ``glir`` stage of its own (the module as the front end built
it) before ``ttgir``; 3.6 goes to ``ttgir`` at once.  Both run Triton's resolution inside
``ttgir``, so that is the stage wrapped.  Never a failure where stock compiles: where ours fails,
the stage runs as Triton wrote it, with a warning and a fallback record (``passes.drop_in.plugin_stats``).
The resolution and the advice are imported on first use: most of the plugin's import time, and
only Gluon kernels need them.
"""

from __future__ import annotations

import sys

from ..ir.snapshot import inline_calls_in_place, snapshot_of
from .plugin_config import PluginConfig
from .plugin_pipeline import cyclic_gc_paused, kernel_name
from .plugin_stats import ADVICE_STAGE, RESOLVE_STAGE, compile_without_islands, first_line, stats


def is_gluon(language) -> bool:
    """Triton's ``Language.GLUON`` (3.6 and 3.9 name it so)."""
    return str(getattr(language, "name", language)).upper().endswith("GLUON")


def resolving_ttgir(stock_ttgir, config: PluginConfig):
    """Gluon's ``ttgir`` stage with ``ll-resolve-auto-layouts`` first (see
    :mod:`.resolve_auto_layouts`): Triton's own resolution then finds no automatic layout left.
    Never a failure where stock compiles: if our pass or the stage after it fails, the stage
    runs on Triton's own module (its resolution), with a warning and a fallback record; where
    that fails too, Triton's error goes to the caller."""
    from ..gluon.resolution_record import METADATA_KEY, Resolution
    from ..gluon.resolve_auto_layouts import has_auto_layouts

    def ttgir(src, metadata):
        # the stage's own first pass, run first (see inline_calls_in_place): one print of src
        inline_calls_in_place(src)
        text = src.str()
        if not has_auto_layouts(text):
            return stock_ttgir(src, metadata)
        name = kernel_name(text)
        try:
            resolved, resolution = _resolve_auto_layouts(src, text, name, config.remarks)
            value = stock_ttgir(resolved, metadata)
        except Exception as error:  # never make a kernel fail that stock Triton compiles
            # what the report says of this kernel (the metadata goes into Triton's cache with it)
            metadata[METADATA_KEY] = Resolution(reason=first_line(error)).record()
            return compile_without_islands(name, text, RESOLVE_STAGE, error, config.remarks,
                                            lambda: stock_ttgir(src, metadata),
                                            "resolved its automatic layouts with Triton's own resolution instead")
        metadata[METADATA_KEY] = resolution.record()
        stats().auto_layouts_resolved += 1
        return value
    return ttgir


def advised_ttgir(ttgir_stage, config: PluginConfig):
    """Gluon's ``ttgir`` stage, then ``ll-apply-advice`` on its result (the author's layouts,
    final).  Never a failure where stock compiles: if the pass fails, the stage's own result is
    used, with a warning and a fallback record."""
    from ..advice.apply_advice import apply_advice
    from ..gluon.resolution_record import METADATA_KEY, Resolution

    def ttgir(src, metadata):
        value = ttgir_stage(src, metadata)
        text = value.str()
        name = kernel_name(text)
        # Layouts our resolution chose (the stage below records how) are final for the advice.
        record = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
        resolution = Resolution.from_record(record) if record else None
        try:
            with cyclic_gc_paused():
                module = snapshot_of(value, text, f"<{name}>")
                applied = apply_advice(module, resolution=resolution, findings=config.advice_findings or None)
                if config.remarks:
                    for line in applied.remarks():
                        print(f"<{name}>: remark: [{ADVICE_STAGE}] {line}", file=sys.stderr)
                if not applied.rounds:
                    return value
                advised = module.handle_for(value.context)
        except Exception as error:  # never make a kernel fail that stock Triton compiles
            return compile_without_islands(name, text, ADVICE_STAGE, error, config.remarks, lambda: value,
                                            "compiled as written, without the advice")
        stats().advice_applied += 1
        return advised
    return ttgir


# Whether the report records compiles (``passes.drop_in.recorder`` says so): our resolution then prices
# Triton's own too, for the report's "Automatic layouts" section.
_report_recording = False


def set_report_recording(on: bool) -> None:
    global _report_recording
    _report_recording = on


def _resolve_auto_layouts(src, text: str, name: str, remarks: bool):
    """Our resolution of the Gluon module ``src`` (given as ``text``, its print), as a new
    Triton module in its context, and the :class:`Resolution`; ``src`` itself is not modified.
    Both resolutions are priced only for the remarks or the report (ours costs a print of the
    resolved module, Triton's a subprocess): elsewhere the record has neither cost.

    Round trips: ``text`` is the stage's one print of ``src``; the resolution starts from a
    read-only snapshot of ``src`` (no parse), parses its edits into ``src``'s context, and the
    last module it parsed is handed to Triton as it is (no print, no parse more): see
    ``resolve_module`` for the count, and ``test_stage_round_trips.py``."""
    from ..gluon.resolve_auto_layouts import resolve_module

    compare = remarks or _report_recording
    with cyclic_gc_paused():
        module = snapshot_of(src, text, f"<{name}>")
        resolution = resolve_module(module, compare=compare, price=compare)
        if not resolution.resolved:
            raise RuntimeError(resolution.reason)
        if remarks:
            for line in resolution.remarks():
                print(f"<{name}>: remark: [ll-resolve-auto-layouts] {line}", file=sys.stderr)
        return module.handle_for(src.context), resolution
