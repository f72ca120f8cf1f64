"""Importing this module registers every pass of the project (see ``framework.registered_passes``)."""

from . import attach_layouts, classify_conversions, merge_layouts  # noqa: F401
from . import lower_conversions  # noqa: F401,E402  (ll-lower-conversions, issue 6)
