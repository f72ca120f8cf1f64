"""The project's version (also in pyproject.toml): part of the drop-in's cache key
(``passes.hook``), re-exported as ``linear_layouts.__version__``."""

__version__ = "0.1.0"
