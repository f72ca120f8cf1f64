"""Record every kernel Triton compiles, for ``python -m linear_layouts report``.

We install a *compilation listener* (``triton.knobs.compilation.listener``), not a stages hook:
Triton calls the listener after each compile and after each cache hit, with the kernel's
metadata and the paths of every stage it keeps (``<name>.ttgir`` among them).  A listener only
reads; it takes no part in the cache key and changes nothing Triton computes, so recording
cannot change what a program does.  A listener installed before ours keeps being called.

Each process appends one JSON line per kernel to ``DIR/records/kernels-<pid>.jsonl`` (flushed
as it goes), so that the workers of ``pytest -n`` (pytest-xdist), each its own process, all
write into the same report directory; ``tools.report`` merges the files.

Each record carries the *run* it belongs to (``tools.report`` gives one id to a process and
everything it starts: forks, spawned workers, pytest-xdist workers); ``start`` removes the record
files of other runs unless told to append, and ``read_records(directory, run)`` reads one run.

A record holds: the kernel's name, its target (backend, arch, warp size), its specialization
(signature and constants, as Triton prints them), ``num_warps``, whether it was a cache hit,
and Triton's TTGIR with debug locations (``loc(...)``: the user's file:line:col); for a Gluon
kernel whose automatic layouts ``linear_layouts.enable()`` resolved, how (``auto_layouts``: the
record of :class:`~linear_layouts.passes.gluon.resolution_record.Resolution`; the TTGIR
recorded is the one after the resolution).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Optional

RECORDS_SUBDIR = "records"

_directory: Optional[str] = None
_previous_listener = None
_progress = True
_count = 0
_lock = threading.Lock()
_paused = 0
_run: Optional[str] = None


def recording_directory() -> Optional[str]:
    """The report directory we record into, or None when not recording."""
    return _directory


def records_path(directory: str, pid: Optional[int] = None) -> str:
    return os.path.join(directory, RECORDS_SUBDIR, f"kernels-{os.getpid() if pid is None else pid}.jsonl")


def start(directory: str, progress: bool = True, run: Optional[str] = None, append: bool = True) -> None:
    """Record every kernel compiled from now on into ``directory`` (created if needed), each
    record tagged with ``run``; without ``append``, the record files of other runs are removed."""
    global _directory, _previous_listener, _progress, _run
    import triton

    os.makedirs(os.path.join(directory, RECORDS_SUBDIR), exist_ok=True)
    if _directory is not None:
        stop()
    if not append:
        remove_other_runs(directory, run)
    _run = run
    current = triton.knobs.compilation.listener
    _previous_listener = current if current is not _listener else None
    triton.knobs.compilation.listener = _listener
    _directory = os.path.abspath(directory)
    _progress = progress
    _tell_hook(True)


def stop() -> None:
    """Stop recording; the listener that was there before is put back."""
    global _directory, _previous_listener
    import triton

    if triton.knobs.compilation.listener is _listener:
        triton.knobs.compilation.listener = _previous_listener
    _previous_listener = None
    _directory = None
    _tell_hook(False)


def _tell_hook(recording: bool) -> None:
    """While we record, ``ll-resolve-auto-layouts`` prices Triton's own resolution too (a
    subprocess per Gluon kernel with automatic layouts): the report compares the two."""
    from linear_layouts.passes.drop_in import hook

    hook.set_report_recording(recording)


class paused:
    """``with recorder.paused(): ...`` - compiles inside the block are not recorded (the
    report writer's own stock-vs-ours compiles)."""

    def __enter__(self):
        global _paused
        _paused += 1

    def __exit__(self, *exc):
        global _paused
        _paused -= 1


def _listener(*, src, metadata, metadata_group, times, cache_hit):
    previous = _previous_listener
    if previous is not None:
        previous(src=src, metadata=metadata, metadata_group=metadata_group, times=times, cache_hit=cache_hit)
    if _directory is None or _paused:
        return
    try:
        record = kernel_record(src, metadata, metadata_group, cache_hit)
    except Exception as error:  # recording must never break the user's program
        print(f"linear-layouts report: could not record a kernel: {error}", file=sys.stderr)
        return
    _append(record)


def kernel_record(src, metadata: dict, metadata_group: dict, cache_hit: bool) -> dict:
    """The JSON-able record of one compile (see the module docstring)."""
    target = metadata.get("target")
    backend, arch, warp_size = (getattr(target, "backend", None), getattr(target, "arch", None),
                                getattr(target, "warp_size", None))
    if isinstance(target, (list, tuple)):   # metadata read back from a cache's JSON
        backend, arch, warp_size = (list(target) + [None] * 3)[:3]
    ttgir_path = next((path for name, path in metadata_group.items() if name.endswith(".ttgir")), None)
    ttgir = None
    if ttgir_path and os.path.isfile(ttgir_path):
        with open(ttgir_path, encoding="utf-8") as f:
            ttgir = f.read()
    return {
        "name": metadata.get("name") or getattr(src, "name", "kernel"),
        "backend": backend,
        "arch": arch,
        "warp_size": warp_size,
        "num_warps": metadata.get("num_warps"),
        "specialization": _specialization(src),
        "cache_hit": bool(cache_hit),
        "pid": os.getpid(),
        "run": _run,
        "mode": _compile_mode(),
        "ttgir": ttgir,
        "auto_layouts": _auto_layouts(metadata),
    }


def _auto_layouts(metadata: dict) -> Optional[dict]:
    """How ``ll-resolve-auto-layouts`` resolved a Gluon kernel's automatic layouts (the record
    the hook left in the kernel's metadata, which Triton's cache keeps), or None."""
    from linear_layouts.passes.gluon.resolution_record import METADATA_KEY

    record = metadata.get(METADATA_KEY)
    return record if isinstance(record, dict) else None


def _compile_mode() -> str:
    """What this compile ran with: ``stock`` Triton, or the plugin's mode (``linear``/``legacy``)."""
    from linear_layouts.passes.drop_in import hook

    config = hook.active_config()
    return "stock" if config is None else str(config.mode)


def _specialization(src) -> str:
    """``X: *fp32, Y: *fp32, BLOCK=32`` for a Python kernel; the file for a ``.ttgir`` source."""
    signature = getattr(src, "signature", None)
    if not isinstance(signature, dict):
        return str(getattr(src, "path", "") or "")
    names = list(getattr(getattr(src, "fn", None), "arg_names", None) or signature)
    constants = {}
    for key, value in (getattr(src, "constants", None) or {}).items():
        name = key
        if isinstance(key, tuple):   # Triton keys constants by argument index paths
            name = names[key[0]] if len(key) == 1 and key[0] < len(names) else str(key)
        constants[name] = value
    parts = [f"{name}: {kind}" for name, kind in signature.items() if kind != "constexpr"]
    parts += [f"{name}={value}" for name, value in constants.items()]
    return ", ".join(parts)


def _append(record: dict) -> None:
    global _count
    line = json.dumps(record) + "\n"
    with _lock:
        _count += 1
        with open(records_path(_directory), "a", encoding="utf-8") as f:
            f.write(line)
        if _progress:
            arch = record["arch"]
            print(f"linear-layouts report: recorded kernel {_count}: {record['name']} "
                  f"({record['backend']} {arch}{', cached' if record['cache_hit'] else ''})",
                  file=sys.stderr, flush=True)


def _record_files(directory: str) -> list[str]:
    folder = os.path.join(directory, RECORDS_SUBDIR)
    if not os.path.isdir(folder):
        return []
    return [os.path.join(folder, name) for name in sorted(os.listdir(folder)) if name.endswith(".jsonl")]


def remove_other_runs(directory: str, run: Optional[str]) -> None:
    """Remove the record files written by runs other than ``run`` (a file of this run, written
    by another worker of it, stays)."""
    for path in _record_files(directory):
        try:
            with open(path, encoding="utf-8") as f:
                line = f.readline()
            if not line.endswith("\n"):
                continue          # being written right now (another worker of this run, just started)
            first = json.loads(line)
        except (OSError, json.JSONDecodeError):
            first = {}
        if run is None or first.get("run") != run:
            try:
                os.remove(path)
            except FileNotFoundError:
                pass


def read_records(directory: str, run: Optional[str] = None) -> list[dict]:
    """Every record of every process in ``directory`` (files in name order, lines in order), or
    only those of ``run`` when given.  A line that is not JSON (a process killed mid-write) is
    skipped."""
    folder = os.path.join(directory, RECORDS_SUBDIR)
    if not os.path.isdir(folder):
        return []
    records = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if run is None or record.get("run") == run:
                    records.append(record)
    return records
