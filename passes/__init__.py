"""linear_layouts.passes: the IR layer over Triton's bindings, the pass framework and the passes.

    from linear_layouts.passes.pipeline import parse_pipeline
    from linear_layouts.passes.framework import run_pipeline
    from linear_layouts.passes.ir.snapshot import parse_module
    module = parse_module(open("kernel.ttgir").read(), "kernel.ttgir")
    run_pipeline(module, parse_pipeline("ll-attach-layouts,ll-classify-conversions"))
    print(module.print())

One module per job:

* :mod:`.ir`, the IR layer: ``bindings`` (Triton's bindings, imported lazily; the installed
  release), ``diagnostics`` (``IRError``, Triton's messages pointing at the user's file),
  ``types`` (tensor and memdesc types as printed), ``sandbox`` (a call in a forked child),
  ``parsing`` (text into a Triton module), ``text_edits`` (attribute edits on printed text),
  ``snapshot`` (``Module``, ``Operation``, ``Value``), ``layouts`` (a value's linear layout),
  ``backend`` (Triton's back end for ``ll-opt --emit``);
* passes: :mod:`.framework` (``ModulePass``, ``run_pipeline``), :mod:`.registry` (the passes by
  name), :mod:`.pipeline` (pipeline strings), the passes themselves, :mod:`.hook` (the drop-in);
* :mod:`.assign` (``ll-assign-layouts`` and its parts), :mod:`.barriers` (guard barriers and
  warp-specialized partitions); ``resolve_auto_layouts`` (Gluon's automatic layouts by cost).

Nothing is imported here, so ``import linear_layouts.passes.x`` costs only what ``x`` needs.
"""
