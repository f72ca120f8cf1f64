"""Islands the emitted-code simulator has already accepted, so a kernel compiled again does not
pay for the simulation again.

Every island is executed by ``lowering.sim.island_sim`` before it replaces a convert.  That run is
the largest part of our compile time (about half of it on the bundled kernels), and its verdict
depends on nothing but

* our own code (``source_fingerprint``: the emitter, the simulator and the plans it checks),
* the installed Triton's release (the struct layout the island must produce),
* the island's text, and what it is checked against: the plan's source and destination layouts,
  its element type and the convert's site (placeholders, guard barriers, loop).

So the verdict is remembered under a SHA-256 of exactly those, once in memory and once as an
empty file in a directory beside Triton's cache (``$TRITON_CACHE_DIR`` or ``~/.triton/cache``,
sub-directory ``linear_layouts/verified``).  Only *acceptances* are remembered, and only the
verdict: the plan is still made and the island still emitted on every compile, and the text
must hash to an accepted key before it is used without a run.  A file in the directory
cannot smuggle code in; at worst a stale file names an island that our current code would
never print.

``LINEAR_LAYOUTS_CACHE=off`` turns the memory off (the test suites do, so that every island
they lower is simulated); ``LINEAR_LAYOUTS_CACHE_DIR`` moves the directory (empty: memory only).

For example, ``softmax`` compiled for two block sizes plans the same 1x4 -> 4x1 conversion
twice; the second compile finds the island's key and skips the simulator (what that saves:
docs/compile-time.md, 'What the small savings saved').
"""

from __future__ import annotations

import hashlib
import os
from typing import Optional

from ...lowering import settings

# The older spellings of the settings island_cache and island_cache_dir (lowering.settings).
CACHE_SWITCH = "LINEAR_LAYOUTS_CACHE"
CACHE_DIR_VARIABLE = "LINEAR_LAYOUTS_CACHE_DIR"

_fingerprint: Optional[str] = None
_accepted_in_memory: set[str] = set()


def _shaping_files(root: str) -> list[str]:
    """Every ``.py`` and ``.json`` file under dialect/, lowering/ and passes/, subfolders included,
    in a fixed order."""
    found = []
    for folder in ("dialect", "lowering", "passes"):
        for directory, subfolders, names in os.walk(os.path.join(root, folder)):
            subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
            found += [os.path.join(directory, n) for n in sorted(names) if n.endswith((".py", ".json"))]
    return found


def source_fingerprint() -> str:
    """A hash of our own code and data that shape compiled kernels (dialect/, lowering/, passes/
    and their subpackages: the ``.py`` files and the ``.json`` tables such as the measured
    choices), so a changed lowering never reuses a kernel or a verdict recorded by an older one,
    even at the same version number."""
    global _fingerprint
    if _fingerprint is None:
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # passes/islands/ -> root
        _fingerprint = fingerprint_of(package_root)
    return _fingerprint


def fingerprint_of(root: str) -> str:
    """The hash of ``root``'s shaping files (``_shaping_files``): their paths and contents."""
    digest = hashlib.sha256()
    for path in _shaping_files(root):
        digest.update(os.path.relpath(path, root).encode())
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()[:16]


def caching_enabled() -> bool:
    """The setting ``island_cache``."""
    return settings.current().island_cache


def cache_directory() -> Optional[str]:
    """Where accepted verdicts are kept on disk, or None (memory only): the setting
    ``island_cache_dir``, else under Triton's cache directory."""
    chosen = settings.current().island_cache_dir
    if chosen is not None:
        return chosen or None
    try:  # Triton's own setting (knobs.cache.dir follows $TRITON_CACHE_DIR, or is set by the program)
        from triton import knobs
        triton_cache = knobs.cache.dir
    except (ImportError, AttributeError):   # (triton 3.6 to 3.9 all have the knob)
        triton_cache = None
    if not triton_cache:
        triton_cache = os.path.join(os.path.expanduser("~"), ".triton", "cache")
    return os.path.join(triton_cache, "linear_layouts", "verified")


def verdict_key(island_text: str, plan, site, triton_release: str) -> str:
    """The SHA-256 of everything the simulator's verdict on ``island_text`` depends on."""
    digest = hashlib.sha256()
    for part in (source_fingerprint(), triton_release, island_text, str(plan.src),
                 str(plan.dst), str(plan.element_bits), plan.target.name, repr(site),
                 repr(getattr(plan, "view", None))):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def is_accepted(key: str) -> bool:
    if not caching_enabled():
        return False
    if key in _accepted_in_memory:
        return True
    directory = cache_directory()
    if directory and os.path.exists(os.path.join(directory, key)):
        _accepted_in_memory.add(key)
        return True
    return False


def remember_accepted(key: str) -> None:
    """Record an acceptance; a cache directory that cannot be written is not an error (the
    next compile simulates again)."""
    if not caching_enabled():
        return
    _accepted_in_memory.add(key)
    directory = cache_directory()
    if not directory:
        return
    try:
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, key), "x"):
            pass
    except FileExistsError:
        pass
    except OSError:
        pass


def forget_in_memory() -> None:
    """Drop the in-memory verdicts (tests; the disk directory is left alone)."""
    _accepted_in_memory.clear()
