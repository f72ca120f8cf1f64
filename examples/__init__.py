"""Bundled example kernels (``make demo`` compiles them)."""
