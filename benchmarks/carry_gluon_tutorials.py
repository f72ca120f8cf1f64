"""Put Triton's Gluon tutorials of the GPU machine's release where ``gluon_forms_gpu.py`` reads them.

    python benchmarks/carry_gluon_tutorials.py --from-git /path/to/triton/.git   # write them
    python benchmarks/carry_gluon_tutorials.py                                   # check what is there

They are not part of this repository: each file is read from a git repository of Triton that has
the commit ``gluon_forms_gpu.SOURCE_COMMIT`` (``git show <commit>:python/tutorials/gluon/<file>``),
checked against its blob hash in ``gluon_forms_gpu.MANIFEST`` and written to
``.peer-tests/triton/python/tutorials/gluon/`` (which the device tool carries with the checkout,
like the language tests' files).  Exit status 1 when a file is missing or differs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gluon_forms_cases import TUTORIALS_DIR  # noqa: E402
from gluon_forms_gpu import MANIFEST, SOURCE_COMMIT, git_blob_hash  # noqa: E402


def carry(git_dir: str, folder: str = TUTORIALS_DIR) -> list[str]:
    """Write every MANIFEST file from ``git_dir``; the problems found (empty when all is well)."""
    os.makedirs(folder, exist_ok=True)
    problems = []
    for name, blob in MANIFEST.items():
        shown = subprocess.run(["git", "--git-dir", git_dir, "show", f"{SOURCE_COMMIT}:python/tutorials/gluon/{name}"],
                               capture_output=True)
        if shown.returncode != 0:
            problems.append(f"{name}: {shown.stderr.decode(errors='replace').strip()}")
            continue
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(shown.stdout)
        if git_blob_hash(path) != blob:
            problems.append(f"{name}: blob {git_blob_hash(path)} is not {blob}")
    return problems


def check(folder: str = TUTORIALS_DIR) -> list[str]:
    problems = []
    for name, blob in MANIFEST.items():
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            problems.append(f"{name}: missing")
        elif git_blob_hash(path) != blob:
            problems.append(f"{name}: blob {git_blob_hash(path)} is not {blob}")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--from-git", metavar="GIT_DIR", help="a Triton git repository with the commit")
    parser.add_argument("--folder", default=TUTORIALS_DIR)
    args = parser.parse_args(argv)
    if args.from_git and not os.path.isdir(args.from_git):
        print(f"carry_gluon_tutorials: no git directory at {args.from_git}", file=sys.stderr)
        return 1
    problems = carry(args.from_git, args.folder) if args.from_git else check(args.folder)
    for p in problems:
        print(f"carry_gluon_tutorials: {p}", file=sys.stderr)
    if not problems:
        print(f"{len(MANIFEST)} tutorials of triton {SOURCE_COMMIT[:10]} in {os.path.relpath(args.folder)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
