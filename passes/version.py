"""The project's version, the one place it is written (pyproject.toml reads it from here:
``[tool.setuptools.dynamic]``): part of the drop-in's cache key
(``passes.drop_in.hook``), re-exported as ``linear_layouts.__version__``."""

__version__ = "0.1.0"
