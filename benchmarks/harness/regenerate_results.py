"""How to get back the raw benchmark data, and the study scripts, that are no longer in the repository.

``benchmarks/results`` keeps what a reader needs: the Markdown summaries, the plots, and the
small JSON files (under 12 KB).  The raw JSON of the large runs (every case, every timing: 11 MB
in all) was taken out, and so were the ``*_before*`` snapshots of earlier runs; git history keeps
every one of them.  For each removed file this script knows the command that writes it (most
need a GPU: the machine the summary names, ``- gpu:``), and it can restore the file exactly as
it was from history::

    python benchmarks/harness/regenerate_results.py                     # the table: file, command, GPU
    python benchmarks/harness/regenerate_results.py --restore plan_choice.json kernel_choice.json
    python benchmarks/harness/regenerate_results.py --restore-all       # every removed file, from history
    python benchmarks/harness/regenerate_results.py --command fuzz_gpu.json   # how to run it again

A restored file lands in ``benchmarks/results`` (a study in ``benchmarks/studies``; git status shows it as new: do not commit it).
Example: rebuilding ``lowering/choosing/measured_choices.json`` (``plan_choice.py --write-choices``, see
the README) reads ``plan_choice_measured_pruned.json``, ``kernel_choice.json`` and
``kernel_choice_paper.json``: restore them first.

The files a command writes go to its ``--out`` folder under the names below, except where the
note says the run's files were renamed afterwards (e.g. the fuzz runs per seed).

Summaries no page cites (per-seed GPU runs whose verdict the docs state in prose) were taken out
the same way, and so were the scripts of answered studies (``folder="studies"``: docs/studies.md
keeps each one's question, finding, command and numbers, and names the commit that holds it);
``--restore NAME`` puts a script back in ``benchmarks/studies`` (it ran against the tree of that
commit: ``git worktree add`` it there if today's package has moved on).  A command below that
names an archived study runs once that study is restored.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass

BENCHMARKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(BENCHMARKS, "results")
REPO = os.path.dirname(BENCHMARKS)


@dataclass(frozen=True)
class Removed:
    """A file taken out of benchmarks/results: the command that writes it, and on what."""

    name: str
    command: str
    needs: str = "an H100 GPU"
    note: str = ""
    folder: str = "results"     # under benchmarks/: "results", or "studies" for an archived study

    @property
    def path(self) -> str:
        return f"benchmarks/{self.folder}/{self.name}"


REMOVED_LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "removed_results.jsonl")


def _read_removed() -> tuple[Removed, ...]:
    """The entries of ``removed_results.jsonl``, one JSON object a line (the fields of ``Removed``;
    a field left out has its default).  Grouped as the files went: raw runs whose summary is kept,
    snapshots of earlier runs, summaries no page cites, the scripts of answered studies."""
    with open(REMOVED_LIST, encoding="utf-8") as f:
        return tuple(Removed(**json.loads(line)) for line in f if line.strip())


REMOVED: tuple[Removed, ...] = _read_removed()


def removed_named(name: str) -> Removed:
    for entry in REMOVED:
        if entry.name == name:
            return entry
    raise SystemExit(f"regenerate_results: {name} is not a removed file (the list: run without arguments)")


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", REPO, *args], check=True, capture_output=True, text=True).stdout


def restore(entry: Removed) -> str:
    """Write the file as it was in the last commit that had it; return that commit."""
    path = entry.path
    deleted_in = _git("log", "-1", "--diff-filter=D", "--format=%H", "--", path).strip()
    if not deleted_in:
        raise SystemExit(f"regenerate_results: no commit in this checkout's history removed {path}")
    content = subprocess.run(["git", "-C", REPO, "show", f"{deleted_in}^:{path}"], check=True,
                             capture_output=True).stdout
    with open(os.path.join(REPO, path), "wb") as f:
        f.write(content)
    return f"{deleted_in}^"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restore", nargs="+", metavar="FILE", help="restore these files from git history")
    parser.add_argument("--restore-all", action="store_true", help="restore every removed file from git history")
    parser.add_argument("--command", metavar="FILE", help="print the command that writes FILE")
    args = parser.parse_args(argv)
    if args.command:
        entry = removed_named(args.command)
        print(entry.command or f"{entry.name}: {entry.needs} ({entry.note})")
        return 0
    if args.restore or args.restore_all:
        for entry in REMOVED if args.restore_all else [removed_named(n) for n in args.restore]:
            print(f"{entry.name}: restored from {restore(entry)}")
        return 0
    for entry in REMOVED:
        print(f"{entry.name if entry.folder == 'results' else entry.path}\n    needs: {entry.needs}" + (f"\n    run:   {entry.command}" if entry.command else "")
              + (f"\n    note:  {entry.note}" if entry.note else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
