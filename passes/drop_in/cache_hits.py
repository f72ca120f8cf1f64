"""Remarks for kernels Triton takes from its cache.

The plugin's remarks are printed while a kernel is compiled.  A kernel Triton finds in its
on-disk cache is not compiled, so it would get no remark at all and a user would not know
whether the plugin saw it.  With ``enable(remarks=True)`` a compilation listener
(``triton.knobs.compilation.listener``, called by ``triton.compile`` on every cache hit and
every compile) says so, one line per cache hit::

    linear-layouts: kernel softmax_kernel: taken from Triton's cache, not compiled; its remarks
    were printed when it was compiled (TRITON_ALWAYS_COMPILE=1 compiles it again)

Triton has one listener slot: ours calls the listener it found there first, and is taken out
only while it is the one in the slot (as the stages hook is, ``passes.drop_in.hook``).
"""

from __future__ import annotations

import sys

_listener_below = None
_installed = False


def _cache_hit_listener(*, src, metadata, metadata_group, times, cache_hit):
    if _listener_below is not None:
        _listener_below(src=src, metadata=metadata, metadata_group=metadata_group, times=times, cache_hit=cache_hit)
    if cache_hit and _installed:
        name = (metadata or {}).get("name") or getattr(src, "name", "kernel")
        print(f"linear-layouts: kernel {name}: taken from Triton's cache, not compiled; its remarks were printed "
              f"when it was compiled (TRITON_ALWAYS_COMPILE=1 compiles it again)", file=sys.stderr)


def install(on: bool) -> None:
    """Our listener in Triton's slot (``on``), or out of it."""
    global _listener_below, _installed
    import triton

    compilation = getattr(triton.knobs, "compilation", None)
    if compilation is None or not hasattr(compilation, "listener"):
        return
    current = compilation.listener
    if on and not _installed:
        _listener_below, _installed = current, True
        compilation.listener = _cache_hit_listener
    elif not on and _installed:
        _installed = False
        if current is _cache_hit_listener:    # wrapped by a later listener: it keeps calling ours, which passes through
            compilation.listener, _listener_below = _listener_below, None
