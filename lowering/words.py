"""Enums whose members are also the words they stand for (``lowering.plan.Method``,
``lowering.target.Vendor``, the pass options of ``passes.options``)."""

from __future__ import annotations

from enum import Enum


class Word(str, Enum):
    """An enum whose members are also the words they stand for: ``Method.SHUFFLE == "shuffle"``,
    ``f"{Method.SHUFFLE}"`` is ``shuffle``, and JSON writes ``"shuffle"``.  So remarks, reports
    and pass options read exactly as they did when these were plain strings."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)
