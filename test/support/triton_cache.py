"""A Triton cache directory of a test's own, undone exactly afterwards.

Why not ``monkeypatch.setattr(triton.knobs.cache, "dir", d)``: the knob is a descriptor that
reads ``TRITON_CACHE_DIR`` until a value is *assigned* to it, and monkeypatch undoes a setattr by
assigning the old value back.  After the first such test the knob was pinned to whatever the
environment said then, so a later test's ``monkeypatch.setenv("TRITON_CACHE_DIR", fresh)`` was
ignored and its compiles were served from an earlier test's cache (no compile ran, so the
plugin's counters stayed at zero).  Here the knob's own entry is set and removed again (the
environment then decides, as before), and the variable is set for subprocesses as well.
"""

import os


def use_private_triton_cache(monkeypatch, directory) -> str:
    """Point Triton's cache (this process and its children) at ``directory`` until the test ends."""
    import triton

    directory = os.fspath(directory)
    monkeypatch.setenv("TRITON_CACHE_DIR", directory)
    monkeypatch.setitem(vars(triton.knobs.cache), "dir", directory)
    return directory
