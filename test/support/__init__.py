"""Helpers shared by the unit tests (``test/unit``), so that no test module imports another.
On the path through ``[tool.pytest.ini_options] pythonpath`` in pyproject.toml."""
