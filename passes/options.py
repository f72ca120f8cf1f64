"""The typed options of ``ll-lower-conversions`` and ``enable()``, and the one place that reads them.

An option's allowed values are the members of one enum (:class:`Mode`, :class:`VerifyLevel`,
``lowering.plan.Method``); every entry point (``enable()``, ``ll-opt -p``, a pipeline string,
``lower_text``) hands what it was given to the functions here, once, and passes the typed value
on.  Nothing downstream compares an option with a string or checks it again.

The enums are ``lowering.words.Word`` enums: a member is also the word it stands for
(``Mode.LEGACY == "legacy"``), so pipeline text, remarks and cache keys read as before.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional, Union

from ..lowering.plan import STOCK, Method
from ..lowering.target import Target, UnknownTarget, target_named
from ..lowering.words import Word
from .framework import PassFailure


class OptionError(PassFailure, ValueError):
    """An option value outside its allowed values; the message names the option and lists them.
    A ``ValueError`` for Python callers, a ``PassFailure`` (of no op) for the pass framework."""

    def __init__(self, message: str):
        super().__init__(None, message)


class Mode(Word):
    """Which planner lowers what we own."""

    LINEAR = "linear"   # our planner (linear layouts)
    LEGACY = "legacy"   # Triton before linear layouts (``lowering.legacy``), for comparisons


class VerifyLevel(Word):
    """How much checking an island gets before it replaces an op."""

    EMITTED = "emitted"   # the emitted-code simulator runs every island (``lowering.sim.island_sim``)
    PLAN = "plan"         # the plan verifier only: cheaper compiles


class RemarkLevel(Word):
    """What a remark says (option ``remarks``).  Given as ``True`` / ``False`` from Python and
    ``true`` / ``false`` in a pipeline (words, or none); ``detail`` in either.  Off is falsy."""

    OFF = "false"       # no remarks
    WORDS = "true"      # what was found and done, in the user's words (``lowering.remark_words``)
    DETAIL = "detail"   # and our internals: the cost model's fields by name, the deciding rule's source file

    def __bool__(self) -> bool:
        return self is not RemarkLevel.OFF


def parse_remarks(value: Union[None, bool, str, RemarkLevel], option: str = "remarks") -> RemarkLevel:
    """``True``, ``False``, ``"detail"`` (or a pipeline's ``true``, ``on``, ``1``, ``false``, ``off``,
    ``0``) -> a :class:`RemarkLevel`; anything else is an :class:`OptionError`."""
    if isinstance(value, RemarkLevel):
        return value
    if isinstance(value, bool) or value is None:
        return RemarkLevel.WORDS if value else RemarkLevel.OFF
    words = {"true": RemarkLevel.WORDS, "on": RemarkLevel.WORDS, "1": RemarkLevel.WORDS,
             "false": RemarkLevel.OFF, "off": RemarkLevel.OFF, "0": RemarkLevel.OFF, "detail": RemarkLevel.DETAIL}
    level = words.get(value.lower()) if isinstance(value, str) else None
    if level is None:
        raise OptionError(f"{option}={value!r}: expected True, False or \"detail\"")
    return level


def parse_word(kind: type[Word], value: Union[str, Word], option: str, what: str) -> Word:
    """``value`` (a member of ``kind`` or its word) as a member of ``kind``; ``option`` and
    ``what`` name it in the error (``option mode='fast': unknown mode 'fast' (known: ...)``)."""
    if isinstance(value, kind):
        return value
    try:
        return kind(value)
    except ValueError:
        known = ", ".join(member.value for member in kind)
        raise OptionError(f"option {option}={value!r}: unknown {what} {value!r} (known: {known})") from None


class Methods(tuple):
    """The plan methods a run owns (option ``only``), in the order given; written back to a
    pipeline string as ``shuffle,shared``."""

    def __str__(self) -> str:
        return ",".join(str(method) for method in self)


def parse_methods(value: Union[None, str, Iterable[Union[str, Method]]], option: str = "only") -> Methods:
    """``"shuffle, shared"`` (or an iterable of methods or their words) -> ``Methods``; ``None``
    or ``""``: no methods named (the pass then owns its defaults).  A name that is no
    :class:`Method` is an :class:`OptionError`."""
    if value is None:
        return Methods()
    if isinstance(value, str):
        names = [name.strip() for name in value.split(",")]
        if not value.strip():
            return Methods()
        if not all(names):
            raise OptionError(f"option {option}={value!r}: expected a comma-separated list of "
                              f"{', '.join(m.value for m in Method)}")
    else:
        try:
            names = list(value)
        except TypeError:
            names = [value]
    methods = []
    for name in names:
        if not isinstance(name, str):
            raise OptionError(f"option {option}={value!r}: expected a comma-separated list of "
                              f"{', '.join(m.value for m in Method)}")
        methods.append(parse_word(Method, name, option, "lowering"))
    return Methods(methods)


def parse_target(value: Union[None, str, Target], option: str = "target") -> Optional[Target]:
    """A target name (ours, ``sm_90``, or Triton's, ``cuda:90``) or a :class:`Target` -> the
    :class:`Target`; ``None`` or ``""``: none given (the module's ``ttg.target`` decides)."""
    if value is None or isinstance(value, Target):
        return value
    if isinstance(value, str) and not value:
        return None
    try:
        return target_named(value)
    except UnknownTarget as error:
        raise OptionError(f"option {option}={value!r}: {error}") from None


# ``candidate_for=KEY:RANK`` with RANK ``stock``: that conversion is left to Triton.
# A conversion's key (``lowering.choosing.measured_choices.conversion_key``): 24 hex digits.
_CONVERSION_KEY = re.compile(r"[0-9a-f]{24}")


class CandidateRanks(tuple):
    """``candidate_for``: ``(key, rank)`` pairs, rank ``lowering.plan.STOCK`` for ``stock``; written
    back to a pipeline string as ``KEY:1,KEY:stock``."""

    def as_dict(self) -> dict[str, int]:
        return dict(self)

    def __str__(self) -> str:
        return ",".join(f"{key}:{rank.value if rank is STOCK else rank}" for key, rank in self)


def parse_candidate_for(value: Union[None, str, CandidateRanks], option: str = "candidate_for") -> CandidateRanks:
    """``"KEY:RANK,KEY:stock"`` -> :class:`CandidateRanks`; a malformed pair is an
    :class:`OptionError` naming it."""
    if isinstance(value, CandidateRanks):
        return value
    ranks = {}
    for pair in filter(None, (p.strip() for p in (value or "").split(","))):
        key, _, rank = pair.partition(":")
        if not _CONVERSION_KEY.fullmatch(key) or not (rank.isdigit() or rank == STOCK.value):
            raise OptionError(f"option {option}: {pair!r} is not KEY:RANK (a 24-digit conversion key "
                              f"from lowering.choosing.measured_choices.conversion_key, and a candidate number or "
                              f"'stock')")
        ranks[key] = STOCK if rank == STOCK.value else int(rank)
    return CandidateRanks(ranks.items())


# What ``ll-opt --list-passes`` shows for a typed option: the values it takes, from its type.
_VALUES_OF_TYPE = {
    "Mode": lambda: "|".join(m.value for m in Mode),
    "VerifyLevel": lambda: "|".join(m.value for m in VerifyLevel),
    "Methods": lambda: "a list of " + ",".join(m.value for m in Method),
    "Optional[Target]": lambda: "a target (sm_90, cuda:90, gfx942, ...)",
    "CandidateRanks": lambda: "KEY:RANK,...",
}


def option_values(option) -> str:
    """A pass option's type as ``ll-opt --list-passes`` writes it: ``bool``, ``int``, or the
    values a typed option takes (``linear|legacy``)."""
    name = option.type if isinstance(option.type, str) else option.type.__name__
    values = _VALUES_OF_TYPE.get(name)
    return values() if values else name


def parse_flag(value, option: str) -> bool:
    """A boolean option given from Python: True or False, nothing else (not 1, not "yes")."""
    if not isinstance(value, bool):
        raise OptionError(f"{option}={value!r}: expected True or False")
    return value
