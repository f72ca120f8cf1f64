"""Put the Gluon kernels of other projects where ``peer_gluon_gpu.py`` reads them.

    python benchmarks/harness/carry_peer_gluon.py --mirrors /work/.mirror     # write them (from owner+name/repo)
    python benchmarks/harness/carry_peer_gluon.py --from-git fla=/path/to/flash-linear-attention/.git \\
                                                  --from-git triton-viz=/path/to/triton-viz/.git
    python benchmarks/harness/carry_peer_gluon.py                             # check what is there (--check)

They are not part of this repository: like Triton's tutorials (``carry_gluon_tutorials.py``),
each project's files are read from a git repository of it that has the pinned commit
(``git show <commit>:<path>``; a folder through ``git archive``), checked against the blob hash
of each file and the tree hash of each folder in ``SOURCES``, and written to
``.peer-tests/<project>/<path>`` (git-ignored, about 7 MB: name it in the device tool's ``carry``,
``[".peer-tests", ...]``).  Exit status 1 when something is missing or differs.

The projects (chosen by the rule in ``peer_gluon_cases.py``):

* ``fla``: flash-linear-attention (MIT), its Gluon backend of the AttnRes operator
  (``fla/ops/attnres/backends/gluon.py``: three kernels, cp.async, SM80+) and its test
  ``tests/ops/test_attnres.py``; the whole ``fla`` package is carried, because the test imports
  it (it needs torch, einops and transformers, which the GPU machine has);
* ``triton-viz``: triton-viz (MIT), the Gluon kernels its end-to-end tests define
  (``tests/end_to_end/test_gluon.py``); its tests run those kernels in triton-viz's CPU simulator,
  not compiled, so only the kernels are used.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import shutil
import stat
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field

HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HARNESS_DIR))
PEER_DIR = os.path.join(REPO_ROOT, ".peer-tests")


@dataclass(frozen=True)
class Source:
    project: str                   # the folder under .peer-tests/
    repo: str                      # owner/name on GitHub
    commit: str
    license: str
    files: dict = field(default_factory=dict)   # path in the repository -> git blob hash at commit
    trees: dict = field(default_factory=dict)   # folder in the repository -> git tree hash at commit

    @property
    def folder(self) -> str:
        return os.path.join(PEER_DIR, self.project)


SOURCES = (
    Source("fla", "fla-org/flash-linear-attention", "bc3b101dcb713ddc5bd8924b66754eb68b5ccf89", "MIT",
           files={"fla/ops/attnres/backends/gluon.py": "c4575754c8514c809e46d5d945b905c4d5f219ed",
                  "tests/ops/test_attnres.py": "4c0f409b5431698cfd1cb845e2a46d5e34829f51",
                  "tests/conftest.py": "0030bdbd292ce12cb131a162c9e6380a924dfc4f",
                  "pyproject.toml": "d4aa51fe8c2afd61779b490996ff926ea903cb33",
                  "LICENSE": "7ced50191b7f5f0eec4e14114d2bc613922bc3b2"},
           trees={"fla": "b229d3eaa09925afa771345791266a8b19a4865d"}),
    Source("triton-viz", "Deep-Learning-Profiling-Tools/triton-viz", "203b0c7cbb35448d53f3cf5359db55e0d4fb3522", "MIT",
           files={"tests/end_to_end/test_gluon.py": "8869bf6c970fad3d88e9b9f8f38a07390b61027b",
                  "LICENSE": "6bc6a91fbd1fe7939b950ab0484af574e7c58988"}),
)


def source_named(project: str) -> Source:
    return next(s for s in SOURCES if s.project == project)


def carried_path(project: str, path: str) -> str:
    """Where ``path`` of ``project`` lies once carried."""
    return os.path.join(source_named(project).folder, path)


def git_blob_hash(path: str) -> str:
    if os.path.islink(path):
        data = os.readlink(path).encode()
    else:
        with open(path, "rb") as f:
            data = f.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git_tree_hash(folder: str) -> str:
    """The git tree hash of a folder as written (file modes 100644 / 100755, links 120000); empty
    folders do not count, as in git, nor Python's bytecode caches (``__pycache__``: a run that
    imports the carried package writes them)."""
    entries = []
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if name == "__pycache__":
            continue
        if os.path.islink(path):
            mode, digest = b"120000", git_blob_hash(path)
        elif os.path.isdir(path):
            if not any(files for _, _, files in os.walk(path)):
                continue
            mode, digest = b"40000", git_tree_hash(path)
        else:
            mode = b"100755" if os.stat(path).st_mode & stat.S_IXUSR else b"100644"
            digest = git_blob_hash(path)
        key = name.encode() + (b"/" if mode == b"40000" else b"")
        entries.append((key, mode, name.encode(), bytes.fromhex(digest)))
    body = b"".join(mode + b" " + name + b"\0" + digest for _, mode, name, digest in sorted(entries))
    return hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()


def check_source(source: Source) -> list[str]:
    """What is missing or differs of one project (empty when all is well)."""
    problems = []
    for path, blob in source.files.items():
        full = os.path.join(source.folder, path)
        if not os.path.isfile(full):
            problems.append(f"{source.project}/{path}: missing")
        elif git_blob_hash(full) != blob:
            problems.append(f"{source.project}/{path}: blob {git_blob_hash(full)} is not {blob}")
    for path, tree in source.trees.items():
        full = os.path.join(source.folder, path)
        if not os.path.isdir(full):
            problems.append(f"{source.project}/{path}/: missing")
        elif git_tree_hash(full) != tree:
            problems.append(f"{source.project}/{path}/: tree {git_tree_hash(full)} is not {tree}")
    return problems


def check(sources=None) -> list[str]:
    return [p for s in (SOURCES if sources is None else sources) for p in check_source(s)]


def why_not_carried(project: str) -> str | None:
    """None when ``project`` is carried as pinned; else why not (for the harness's report)."""
    problems = check_source(source_named(project))
    return None if not problems else f"{project} not carried as pinned ({problems[0]}{', ...' if len(problems) > 1 else ''})"


def _git(git_dir: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True)


def carry_source(source: Source, git_dir: str) -> list[str]:
    """Write one project's files and folders from ``git_dir``; the problems found."""
    problems = []
    for path in source.files:
        shown = _git(git_dir, "show", f"{source.commit}:{path}")
        if shown.returncode != 0:
            problems.append(f"{source.project}/{path}: {shown.stderr.decode(errors='replace').strip()}")
            continue
        full = os.path.join(source.folder, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(shown.stdout)
    for path in source.trees:
        archived = _git(git_dir, "archive", "--format=tar", source.commit, path)
        if archived.returncode != 0:
            problems.append(f"{source.project}/{path}/: {archived.stderr.decode(errors='replace').strip()}")
            continue
        shutil.rmtree(os.path.join(source.folder, path), ignore_errors=True)
        with tarfile.open(fileobj=io.BytesIO(archived.stdout)) as tar:
            tar.extractall(source.folder, filter="tar")
    return problems + check_source(source)


def mirror_git_dir(mirrors: str, repo: str) -> str:
    """``<mirrors>/<owner>+<name>/repo``: where the workplace's fetch tool puts a repository."""
    return os.path.join(mirrors, repo.replace("/", "+"), "repo")


def carry_command(sources, argv=None, doc: str = __doc__, prog: str = "carry_peer_gluon") -> int:
    """The command line of a carrier: ``--from-git``/``--mirrors`` write ``sources`` and check them,
    nothing (or ``--check``) checks what is there; exit status 1 when something is missing or differs."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0])
    parser.add_argument("--from-git", action="append", default=[], metavar="PROJECT=GIT_DIR",
                        help="a git repository of PROJECT that has its pinned commit (repeatable)")
    parser.add_argument("--mirrors", metavar="DIR", help="a folder of <owner>+<name>/repo git directories")
    parser.add_argument("--check", action="store_true", help="only check what is carried (the default without sources)")
    args = parser.parse_args(argv)
    git_dirs = {}
    for item in args.from_git:
        project, _, git_dir = item.partition("=")
        if project not in {s.project for s in sources} or not git_dir:
            parser.error(f"--from-git {item!r}: expected PROJECT=GIT_DIR, PROJECT one of "
                         f"{', '.join(s.project for s in sources)}")
        git_dirs[project] = git_dir
    if args.mirrors:
        for s in sources:
            git_dirs.setdefault(s.project, mirror_git_dir(args.mirrors, s.repo))
    problems = []
    if git_dirs and not args.check:
        for s in sources:
            if s.project not in git_dirs:
                continue
            if not os.path.isdir(git_dirs[s.project]):
                problems.append(f"{s.project}: no git directory at {git_dirs[s.project]}")
                continue
            problems += carry_source(s, git_dirs[s.project])
        problems += check([s for s in sources if s.project not in git_dirs])
    else:
        problems = check(sources)
    for p in problems:
        print(f"{prog}: {p}", file=sys.stderr)
    if not problems:
        print("carried as pinned: " + ", ".join(f"{s.project} ({s.repo} {s.commit[:10]}, {s.license})" for s in sources)
              + f" in {os.path.relpath(PEER_DIR)}")
    return 1 if problems else 0


def main(argv=None) -> int:
    return carry_command(SOURCES, argv)


if __name__ == "__main__":
    sys.exit(main())
