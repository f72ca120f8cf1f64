"""What the drop-in runs: ``PluginConfig``, made from ``enable()``'s arguments.

A configuration is the pass objects with their typed options (the pipeline text is derived from
them), the Gluon switches, and the cache key that goes with it all: two compiles share a cache
entry only if their configurations' keys are equal (``cache_key``; Triton 3.7+ asks the stages
hook for it, ``passes.drop_in.cache_dirs`` keys the other caches with it).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Sequence

from ...lowering.plan import Method
from ..classify_conversions import ClassifyConversions
from ..framework import ModulePass
from ..lower_conversions import LowerConversions
from ..options import Mode, OptionError, RemarkLevel, VerifyLevel, parse_flag, parse_methods, parse_remarks, parse_word
from ..pipeline import PipelineError, parse_pipeline, pipeline_text
from ..islands.verified_islands import source_fingerprint
from ..version import __version__
from ...lowering import settings


class PluginError(ValueError):
    """enable() was called with an unknown mode, option or pipeline."""


@dataclass(frozen=True)
class PluginConfig:
    """What the plugin runs on every kernel (the pass objects, with their typed options), and
    the cache key that goes with it.  The pipeline text is derived from the passes."""

    mode: Mode
    passes: tuple[ModulePass, ...]
    remarks: RemarkLevel = RemarkLevel.OFF
    # Gluon kernels: our ll-resolve-auto-layouts gives their automatic layouts concrete ones
    # before Triton's resolution (which then finds nothing left), in the ``ttgir`` stage.  On by
    # default: it met its goals on the GPU (docs/gluon-auto-layouts.md); where it fails, Triton's
    # own resolution runs instead (a fallback, never a failure where stock compiles).
    resolve_auto_layouts: bool = True
    # Gluon kernels: the report's layout advice applied to the ``ttgir`` stage's result
    # (``ll-apply-advice``), where the author's layouts are final.
    apply_advice: bool = False
    # With apply_advice: only the findings of these keys (``Finding.key``), as one edit; () for all
    # of them, round by round (passes/advice/apply_advice.py, "named findings").
    advice_findings: tuple = ()
    # enable()'s keyword arguments that differ from their defaults, as JSON-able values: written
    # to the environment (LINEAR_LAYOUTS_OPTIONS) so that processes started later, torch.compile's
    # workers among them, compile as this one does (passes.drop_in.environment).
    enable_options: dict = field(default_factory=dict, compare=False, hash=False)
    # The settings enable() was given (name, typed value), over the environment's while this
    # configuration is in force (passes.drop_in.environment.use_given_settings).
    settings: tuple = ()

    @property
    def pipeline(self) -> str:
        """The passes as an ``ll-opt -p`` pipeline string (non-default options only)."""
        return pipeline_text(list(self.passes))

    @property
    def owns_local_memory_ops(self) -> bool:
        """The pipeline lowers ``ttg.local_load``, ``ttg.local_store`` or ``ttg.local_alloc`` (with a
        source) too (``only=...,local_load``)."""
        return any(isinstance(p, LowerConversions) and p.owns_local_memory_ops for p in self.passes)

    @property
    def reports(self) -> bool:
        """A pass of the pipeline prints a line per conversion (``report=true``)."""
        return any(getattr(p, "report", False) for p in self.passes)

    @property
    def cache_key(self) -> str:
        resolve = "-resolve-auto-layouts" if self.resolve_auto_layouts else ""
        advice = "-apply-advice" if self.apply_advice else ""
        advice += "".join(f"-{key}" for key in self.advice_findings)
        return (f"linear_layouts-{__version__}-{source_fingerprint()}-{self.mode}-{self.pipeline}{resolve}{advice}"
                f"{environment_switches()}")

    @property
    def cache_hash(self) -> str:
        return hashlib.sha256(self.cache_key.encode()).hexdigest()


def environment_switches() -> str:
    """The settings and study switches that change what the plugin emits, as they are now, for
    the cache key: a kernel compiled with ``stock_gate=False`` (every conversion ours),
    ``in_place`` other than the release's default (``passes.drop_in.in_place``) or another
    ``round_scratch`` (the buffer a plan may take for fewer rounds: ``lowering.planner``; the
    settings: ``passes.drop_in.environment``), or under a study that set
    ``emit_nvidia.BYTES_AS_VECTORS``, ``emit_nvidia.SHARED_ACCESS_FORM = "asm"`` (inline-PTX shared
    accesses) or ``fitted_model.SHARED_PICKS_KEPT`` (shared-memory picks in Triton's rounds kept
    ours) must not be taken from Triton's cache by a run without it, nor the reverse.  "" when
    every one has its default."""
    from ...lowering.choosing.fitted_model import gate_turned_off, shared_picks_kept
    from ...lowering.emit.emit_nvidia import bytes_as_vectors, shared_access_form
    from ...lowering.planner import DEFAULT_ROUND_SCRATCH, round_scratch_budget

    shared = shared_access_form()
    budget = round_scratch_budget()
    return (("-stock-gate-off" if gate_turned_off() else "") + ("-byte-vectors" if bytes_as_vectors() else "")
            + ("" if shared == "llvm" else f"-shared-{shared}") + in_place_mark()
            + ("" if budget == DEFAULT_ROUND_SCRATCH else f"-round-scratch-{budget}")
            + ("-shared-picks" if shared_picks_kept() else ""))


IN_PLACE_VARIABLE = "LINEAR_LAYOUTS_IN_PLACE"   # the older spelling of the setting in_place
# The releases where building in place is the default: those it was measured on (compile time and
# the GPU, docs/compile-time.md).  Elsewhere it is opt-in: under triton 3.8 Triton's own lowering
# of a store through our layout was narrower than our island's (test_apply_advice's transpose:
# scalar stores where the island stores 16 bytes).
IN_PLACE_BY_DEFAULT = ((3, 6),)


def in_place_enabled() -> bool:
    """Whether the drop-in builds its one-round shared-memory islands in Triton's module
    (``passes.drop_in.in_place``): the setting ``in_place`` (``enable(in_place=...)``,
    ``LINEAR_LAYOUTS_OPTIONS`` or ``LINEAR_LAYOUTS_IN_PLACE``); unset, on under the releases of
    ``IN_PLACE_BY_DEFAULT``."""
    value = settings.current().in_place
    return in_place_by_default() if value is None else value


def in_place_by_default() -> bool:
    from ..ir.bindings import installed_triton_version
    try:
        return installed_triton_version() in IN_PLACE_BY_DEFAULT
    except Exception:  # no Triton, or a version string without a release: the text route
        return False


def in_place_mark() -> str:
    """The cache key's mark of a route other than the release's default ("" for the default)."""
    enabled, default = in_place_enabled(), in_place_by_default()
    return "" if enabled == default else ("-in-place" if enabled else "-text-islands")


def default_passes(mode: Mode, only: Sequence[Method] = (), report: bool = False,
                   remarks: RemarkLevel = RemarkLevel.OFF,
                   verify: VerifyLevel = VerifyLevel.EMITTED, assign_layouts: bool = False) -> tuple[ModulePass, ...]:
    """The pipeline of a mode.  ``linear``: our lowering of every conversion we own (``only``
    narrows it, e.g. ``(Method.SHUFFLE, Method.SHARED)``).  ``legacy``: our lowering of the plans
    Triton made before linear layouts (padded, unswizzled shared memory for every conversion that
    is not a register renaming).  ``assign_layouts``: first choose the kernel's layouts by cost
    (``ll-assign-layouts``)."""
    if assign_layouts:
        from ..assign.assign_layouts import AssignLayouts
    assign = (AssignLayouts(report=bool(remarks) or report),) if assign_layouts else ()
    classify = (ClassifyConversions(report=True),) if report else ()
    return assign + classify + (LowerConversions(only=only, mode=mode, verify=verify, remarks=remarks),)
def non_default_options(given: dict, defaults: dict) -> dict:
    """The keyword arguments ``given`` that differ from ``defaults``, as JSON values (a sequence
    of methods as ``"shuffle,shared"``, an enum as its word)."""
    options = {}
    for name, value in given.items():
        if isinstance(value, (list, tuple)):
            value = ",".join(getattr(item, "value", str(item)) for item in value)
        value = getattr(value, "value", value)
        if value != getattr(defaults[name], "value", defaults[name]):
            options[name] = value
    return options


def config_from(mode, only, pipeline, verify, advice_findings=None, **flags: bool) -> PluginConfig:
    """``enable()``'s arguments, read into their types, as a configuration.  ``flags``: the
    boolean options, each checked to be True or False."""
    mode = parse_word(Mode, mode, "mode", "mode")
    findings = ()
    if advice_findings is not None:     # (the advice is imported only where it is asked for)
        from ..advice.findings import parse_finding_keys
        findings = parse_finding_keys(advice_findings)
    verify = parse_word(VerifyLevel, verify, "verify", "verify level")
    remarks = parse_remarks(flags.pop("remarks", False), "remarks")
    flags = {name: parse_flag(value, name) for name, value in flags.items()}
    resolve = flags.pop("resolve_auto_layouts", True)
    advice = flags.pop("apply_advice", False)
    if findings and not advice:
        raise OptionError(f"advice_findings={advice_findings!r} names findings for the advice to apply: "
                          "it needs apply_advice=True")
    if only is not None:
        given, only = only, parse_methods(only, "only")
        if not only:   # enable(only="") names nothing; leave out ``only`` for the default methods
            raise OptionError(f"only={given!r}: expected a comma-separated list of "
                              f"{', '.join(m.value for m in Method)}")
    if pipeline is None:
        passes = default_passes(mode, only or (), verify=verify, remarks=remarks, **flags)
    elif not isinstance(pipeline, str):
        raise OptionError(f"pipeline must be a pipeline string such as 'll-lower-conversions', "
                          f"got {type(pipeline).__name__}")
    else:
        try:
            passes = tuple(parse_pipeline(pipeline))
        except PipelineError as e:
            raise PipelineError(f"pipeline '{pipeline}': {e}") from None
    return PluginConfig(mode, passes, remarks, resolve, advice, findings)
