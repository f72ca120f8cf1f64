"""Put Triton's Gluon tutorials and examples where ``gluon_forms_gpu.py`` and the Gluon corpus
(``test/support/gen_corpus_gluon.py``) read them.

    python benchmarks/harness/carry_gluon_tutorials.py --from-git /path/to/triton/.git   # write them
    python benchmarks/harness/carry_gluon_tutorials.py                                   # check what is there

They are not part of this repository: each file is read from a git repository of Triton that has
the pinned commit (``git show <commit>:<path>``), checked against its blob hash and written under
``.peer-tests/`` (git-ignored, like the language tests' files: name ``.peer-tests`` in the device
tool's ``carry``).  Two sets:

* triton 3.6.0 (``SOURCE_COMMIT``): the tutorials in ``MANIFEST`` into
  ``.peer-tests/triton/python/tutorials/gluon/``, and its one example (``EXAMPLES``, the Blackwell
  attention forward) into ``.peer-tests/triton/python/examples/gluon/``;
* the newest Triton tree this workplace can read (``NEXT``: main at ``NEXT_COMMIT``, 2026-04-27,
  between the 3.7 and 3.8 branch cuts): every file of ``python/tutorials/gluon/`` and
  ``python/examples/gluon/`` and Triton's LICENSE, into ``.peer-tests/triton-next/``, for the 3.9
  corpus.  The v3.9.0 tag's own tree cannot be had here: the store's snapshot of
  triton-lang/triton (842 MB) is over the 500 MB a snapshot may have, and no fork within it has
  a commit of the 3.8 or 3.9 branches (the newest, byoshimi-gmail/triton, holds main to this
  commit).  The Gluon API of 3.9 builds most of these files; the corpus lists the ones it does not.

Exit status 1 when a file is missing or differs.
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
    "06-tcgen05.py": "ac11f3c622029950486816f5491bbbc7b04d467b",
}
# 3.6.0's examples (path in the repository -> blob), under .peer-tests/triton/
EXAMPLES = {"python/examples/gluon/01-attention-forward.py": "1d1abbec7fc7762cf2a2cad3e98c71f495aba877"}
EXAMPLES_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(TUTORIALS_DIR)))     # .peer-tests/triton

# The newest tree this workplace can read (see above): upstream main, "[Gluon][Examples] Update
# MoE BMM1 selector configs (#10124)".
NEXT_COMMIT = "9d9a2d7ac0b8b22d1888cb95056c94a64a4beed4"
NEXT_ROOT = os.path.join(os.path.dirname(EXAMPLES_ROOT), "triton-next")
NEXT = {
    "LICENSE": "1d0238e86b1b43e123c9eb136eb0b2c0e1658d63",
    "python/examples/gluon/01-attention-forward.py": "50d0e024e17d005a57072392f0e98e42297538e4",
    "python/examples/gluon/02-conv-common.py": "004decae5991bdceb45a7890d2f2ace0f056307e",
    "python/examples/gluon/02-conv-dgrad.py": "3bb1eb00e7278162e63cbb4377e41e275c168386",
    "python/examples/gluon/02-conv-fprop.py": "572b409b14b3f085c94385d0719db9d88e2d56ca",
    "python/examples/gluon/02-conv-wgrad.py": "db821624c73aca4b0586e2dc31ea25090e4712b2",
    "python/examples/gluon/03-matmul-multicta.py": "bae3a0737a9538327affbbaf61114f8b595f3e19",
    "python/examples/gluon/04-2cta-block-scale-matmul.py": "85babf241da5048c7d51e94638290638b66a01df",
    "python/examples/gluon/05-moe-bmm1-fused-gather.py": "e1b31f4083014709533654029e7fa8b445e32950",
    "python/tutorials/gluon/01-intro.py": "754208cb17c0c15e1a0ba9ffbe520428012ab777",
    "python/tutorials/gluon/02-layouts.py": "ec0cf11c80c40509b7c9405993bb77f73f5460d9",
    "python/tutorials/gluon/03-async-copy.py": "43a685a012c09c66c7c35f0460bf577deb2dcecd",
    "python/tutorials/gluon/04-tma.py": "c90e2f00bbb215e668978a7798dd6ee0f84e4642",
    "python/tutorials/gluon/05-wgmma.py": "ed31690ddeb1f7315592c34eecf7476abd5a5cb9",
    "python/tutorials/gluon/06-tcgen05.py": "1b4503d463e2dcd2ed8f582a8b32db7979a5cb25",
    "python/tutorials/gluon/07-persistence.py": "d08e76de52fc982197b5b4b25fabd684bbed1575",
    "python/tutorials/gluon/08-warp-specialization.py": "53c446f8388dac2c714b94154b97e36569f50803",
    "python/tutorials/gluon/09-tma-gather-scatter.py": "2479df2ee9f46cb883f23fd46c937747135861fc",
    "python/tutorials/gluon/10-tcgen05-copy.py": "e656af52bef49ee3b4eeac92b960c9877dee5dee",
    "python/tutorials/gluon/11-tcgen05-mma-scaled.py": "e403d6d5bba3112413be6abf2bd3e75998eca648",
    "python/tutorials/gluon/12-cluster-launch-control.py": "c61dd055567b034d117ff968e707318f0cbd11d6",
    "python/tutorials/gluon/13-conv-im2col.py": "de226c041e2361a6284ea677e113e73d8527df89",
    "python/tutorials/gluon/14-multicta.py": "f4002417b4c8e1e8e400efa34684519a17db892c",
}


def _sets(folder: str = TUTORIALS_DIR):
    """(commit, root folder, {path in the repository: blob}) of every set carried."""
    tutorials = {f"python/tutorials/gluon/{name}": blob for name, blob in MANIFEST.items()}
    root = os.path.dirname(os.path.dirname(os.path.dirname(folder)))
    return [(SOURCE_COMMIT, root, {**tutorials, **EXAMPLES}), (NEXT_COMMIT, NEXT_ROOT, NEXT)]


def next_path(path: str) -> str:
    """Where ``path`` (in Triton's repository) of the NEXT set lies once carried."""
    return os.path.join(NEXT_ROOT, path)


def check_next(paths) -> str | None:
    """None when each of ``paths`` (of NEXT) is carried with its blob hash; else why not."""
    for path in paths:
        full = next_path(path)
        if not os.path.exists(full):
            return f"triton {NEXT_COMMIT[:10]}'s {path} not carried (missing in {os.path.relpath(NEXT_ROOT)})"
        if git_blob_hash(full) != NEXT[path]:
            return f"carried {path} differs from triton {NEXT_COMMIT[:10]}"
    return None


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
    """Write every file of every set from ``git_dir``; the problems found (empty when all is well)."""
    problems = []
    for commit, root, files in _sets(folder):
        for name, blob in files.items():
            shown = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{name}"], capture_output=True)
            if shown.returncode != 0:
                problems.append(f"{commit[:10]}:{name}: {shown.stderr.decode(errors='replace').strip()}")
                continue
            path = os.path.join(root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(shown.stdout)
            if git_blob_hash(path) != blob:
                problems.append(f"{commit[:10]}:{name}: blob {git_blob_hash(path)} is not {blob}")
    return problems


def check(folder: str = TUTORIALS_DIR) -> list[str]:
    problems = []
    for commit, root, files in _sets(folder):
        for name, blob in files.items():
            path = os.path.join(root, name)
            if not os.path.exists(path):
                problems.append(f"{commit[:10]}:{name}: missing")
            elif git_blob_hash(path) != blob:
                problems.append(f"{commit[:10]}:{name}: blob {git_blob_hash(path)} is not {blob}")
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
        print(f"{len(MANIFEST)} tutorials and {len(EXAMPLES)} example of triton {SOURCE_COMMIT[:10]} in "
              f"{os.path.relpath(args.folder)}; {len(NEXT)} files of triton {NEXT_COMMIT[:10]} in "
              f"{os.path.relpath(NEXT_ROOT)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
