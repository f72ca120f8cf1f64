"""Importing this module registers every pass of the project (see ``framework.registered_passes``)."""

from . import attach_layouts, classify_conversions, merge_layouts  # noqa: F401
