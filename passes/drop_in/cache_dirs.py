"""The plugin's own cache directories: kernels compiled with it are never served to a run
without it, nor the reverse.

Two caches need it:

* **Triton's** on-disk kernel cache under triton 3.6, which does not ask the stages hook for a
  cache key (3.7+ do, and there the key names our configuration: ``hook.PluginConfig.cache_key``).
  While the plugin is on, ``triton.knobs.cache.dir`` is a sub-directory named after the key.
* **Inductor's** (torch.compile) caches, under every Triton release: its FX-graph cache keeps the
  compiled kernels' binaries and loads them without calling Triton, and its autotuning cache
  keeps the best configuration as measured with the kernels of its day.  Neither key knows about
  stages hooks, so while the plugin is on ``TORCHINDUCTOR_CACHE_DIR`` is a sub-directory too
  (torch reads the variable whenever it looks for its cache; worker processes inherit it).

The sub-directory of a base directory ``B`` is ``B/linear_layouts/<first 16 hex digits of the
key's hash>``.  A worker process inherits the variables its parent set, so its base may be
such a sub-directory already: it is then used as it is, never nested a second time
(``/tmp/c/linear_layouts/0123456789abcdef`` stays itself, where nesting would give workers and
their parent different directories and the parent would compile every kernel again).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Optional

from . import environment

TRITON_VARIABLE = "TRITON_CACHE_DIR"
INDUCTOR_VARIABLE = "TORCHINDUCTOR_CACHE_DIR"

_OURS = re.compile(r"^(?P<base>.*?)[\\/]+linear_layouts[\\/]+[0-9a-f]{16}[\\/]*$")


def stock_directory(directory: str) -> str:
    """``directory`` less our sub-directory, if it is one of ours."""
    match = _OURS.match(directory)
    return match.group("base") if match else directory


def plugin_directory(directory: str, cache_hash: str) -> str:
    """The plugin's sub-directory for a configuration's ``cache_hash`` under ``directory``."""
    return os.path.join(stock_directory(directory), "linear_layouts", cache_hash[:16])


@dataclass
class _Saved:
    """A cache setting before the plugin pointed it at its own directory."""

    directory: Optional[str]         # the directory in use before (None: the variable was unset)
    pinned: bool                     # Triton's knob set in Python (knobs.cache.dir = ...), not from the environment
    environment: Optional[str]       # the variable before (None: unset)


_saved_triton: Optional[_Saved] = None
_saved_inductor: Optional[_Saved] = None


def use_plugin_directories(cache_hash: str, triton_asks_the_hook: bool) -> None:
    """Point the caches that do not know about the plugin at its sub-directories."""
    if not triton_asks_the_hook:
        _use_for_triton(cache_hash)
    _use_for_inductor(cache_hash)


def restore_stock_directories() -> None:
    _restore_triton()
    _restore_inductor()


def _use_for_triton(cache_hash: str) -> None:
    """Setting ``triton.knobs.cache.dir`` pins it (later changes of ``TRITON_CACHE_DIR`` are
    ignored) and writes the environment variable too, so that worker processes share it."""
    global _saved_triton
    import triton

    cache = triton.knobs.cache
    if _saved_triton is None:
        variable = environment.variable(TRITON_VARIABLE)
        _saved_triton = _Saved(stock_directory(cache.dir), "dir" in vars(cache),
                               None if variable is None else stock_directory(variable))
    cache.dir = plugin_directory(_saved_triton.directory, cache_hash)


def _restore_triton() -> None:
    """Where the knob followed the environment, it follows it again, and the variable gets back
    its old value (or none)."""
    global _saved_triton
    if _saved_triton is None:
        return
    import triton

    saved, _saved_triton = _saved_triton, None
    if saved.pinned:
        triton.knobs.cache.dir = saved.directory
        return
    vars(triton.knobs.cache).pop("dir", None)
    _set_variable(TRITON_VARIABLE, saved.environment)


def _use_for_inductor(cache_hash: str) -> None:
    global _saved_inductor
    current = environment.variable(INDUCTOR_VARIABLE)
    if _saved_inductor is None:
        _saved_inductor = _Saved(None if current is None else stock_directory(current), False,
                                 None if current is None else stock_directory(current))
    base = _saved_inductor.directory or _inductor_default_directory()
    environment.set_variable(INDUCTOR_VARIABLE, plugin_directory(base, cache_hash))


def _restore_inductor() -> None:
    global _saved_inductor
    if _saved_inductor is None:
        return
    saved, _saved_inductor = _saved_inductor, None
    _set_variable(INDUCTOR_VARIABLE, saved.environment)


def _inductor_default_directory() -> str:
    """Inductor's own default (``torch._inductor.runtime.cache_dir_utils.default_cache_dir``)
    where the program has imported it; otherwise the same rule, written here (importing torch
    would cost a program that does not use it seconds)."""
    import sys

    utils = sys.modules.get("torch._inductor.runtime.cache_dir_utils")
    if utils is not None and hasattr(utils, "default_cache_dir"):
        return utils.default_cache_dir()
    import getpass
    import tempfile

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid_{os.getuid()}" if hasattr(os, "getuid") else "unknown_user"
    return os.path.join(tempfile.gettempdir(), "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user))


def _set_variable(name: str, value: Optional[str]) -> None:
    environment.set_variable(name, value)
