"""Put Triton's Gluon tutorials of the GPU machine's release where ``gluon_forms_gpu.py`` reads them.

    python benchmarks/harness/carry_gluon_tutorials.py --from-git /path/to/triton/.git   # write them
    python benchmarks/harness/carry_gluon_tutorials.py                                   # check what is there

They are not part of this repository: each file is read from a git repository of Triton that has
the commit ``SOURCE_COMMIT`` (``git show <commit>:python/tutorials/gluon/<file>``), checked
against its blob hash in ``MANIFEST`` and written to
``.peer-tests/triton/python/tutorials/gluon/`` (git-ignored, like the language tests' files: name
``.peer-tests`` in the device tool's ``carry``).  Exit status 1 when a file is missing or differs.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys

if __package__:                 # imported as harness.carry_gluon_tutorials
    from .gluon_forms_cases import TUTORIALS_DIR, cases
else:                           # run as a command: its own folder, harness/, is first on the path
    from gluon_forms_cases import TUTORIALS_DIR, cases

# The tutorials of the release the GPU machine has (3.6.0): the same commit as
# triton_language_tests.py's SOURCE (see there how it was identified).
SOURCE_COMMIT = "4b184cccbb42c3aa5f24e34c39c5358636b3e2bd"
# carried file (under .peer-tests/triton/python/tutorials/gluon/) -> git blob hash at SOURCE_COMMIT
MANIFEST = {
    "01-intro.py": "754208cb17c0c15e1a0ba9ffbe520428012ab777",
    "02-layouts.py": "537b580e0b3e8fbf78216bc31f220ddaf9b583b2",
    "03-async-copy.py": "0abe84359d0e2dea579635104be9c1a82e9ad999",
    "04-tma.py": "bad046fadc7482041c59e36462ba6b705d930d4b",
    "05-wgmma.py": "bc0f976818724063b35cbaa2f20a766270e8488f",
    "07-persistence.py": "634415723b6c23e4d4c17db1c2dee0a6c397020d",
    "08-warp-specialization.py": "56032b091b55ae4cd524bff63ae556d96a134b38",
}


def git_blob_hash(path: str) -> str:
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def check_tutorials(folder: str = TUTORIALS_DIR) -> str | None:
    """None when every file the cases use is carried with its blob hash; else why not."""
    needed = sorted({os.path.basename(c.file) for c in cases() if not c.builtin})
    missing = [n for n in needed if not os.path.exists(os.path.join(folder, n))]
    if missing:
        return f"tutorials not carried ({', '.join(missing)} missing in {os.path.relpath(folder)})"
    wrong = [n for n in needed if git_blob_hash(os.path.join(folder, n)) != MANIFEST[n]]
    if wrong:
        return f"carried tutorials differ from triton {SOURCE_COMMIT[:10]}: {', '.join(wrong)}"
    return None


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
