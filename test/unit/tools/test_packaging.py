"""The package installs both ways: editable (what `make test` uses) and as a regular wheel."""

import contextlib
import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
from support import REPO  # noqa: E402

ROOT = str(REPO)


@contextlib.contextmanager
def one_build_of_the_tree_at_a_time():
    """pip builds a source tree in place (setuptools writes ``build/`` and the ``.egg-info`` in
    it): two builds of the same tree at once, from two test workers (``make test-unit`` runs
    pytest-xdist), overwrite each other's files, and one wheel came out holding only
    ``__main__.py``.  A lock file beside the system's temporary files serializes them."""
    tree = hashlib.sha256(ROOT.encode()).hexdigest()[:16]      # str's hash() differs between processes
    path = os.path.join(tempfile.gettempdir(), f"linear_layouts_build_{tree}.lock")
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def test_editable_install_maps_the_top_level_folders():
    import linear_layouts
    import linear_layouts.dialect
    import linear_layouts.lowering
    import linear_layouts.passes
    import linear_layouts.tools

    assert os.path.dirname(linear_layouts.dialect.__file__) == os.path.join(ROOT, "dialect")
    assert os.path.dirname(linear_layouts.tools.__file__) == os.path.join(ROOT, "tools")


def test_regular_install_contains_every_subpackage(tmp_path):
    target = tmp_path / "site"
    with one_build_of_the_tree_at_a_time():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
                        "--target", str(target), ROOT], check=True, capture_output=True)
    for sub in ("dialect", "passes", "lowering", "tools"):
        assert (target / "linear_layouts" / sub / "__init__.py").exists(), sub
    assert (target / "linear_layouts" / "tools" / "report" / "site" / "sitecustomize.py").exists()
    # The installed copy imports on its own, from outside the source tree.
    code = "import linear_layouts, linear_layouts.dialect as d; print(linear_layouts.__file__); print(d.LinearLayout.empty())"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(target)}).stdout
    assert str(target) in out.splitlines()[0]
    assert "(empty layout)" in out
    # Tests, benchmarks and build files are not part of the package.
    assert not (target / "linear_layouts" / "test").exists()


def _listed_packages() -> set:
    import tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return set(tomllib.load(f)["tool"]["setuptools"]["packages"])


def test_every_package_folder_is_listed_in_pyproject():
    # The list is written by hand (the import package is the repository root, which setuptools'
    # discovery cannot map): a folder with an __init__.py that is missing from it would be
    # missing from every wheel (it was: passes/gluon and passes/advice).
    folders = set()
    for top in ("dialect", "passes", "lowering", "tools", "examples"):
        for directory, subdirectories, files in os.walk(os.path.join(ROOT, top)):
            subdirectories[:] = [d for d in subdirectories if d != "__pycache__"]
            if "__init__.py" in files:
                relative = os.path.relpath(directory, ROOT).replace(os.sep, ".")
                folders.add(f"linear_layouts.{relative}")
    listed = _listed_packages()
    assert folders - listed == set(), "package folders missing from pyproject.toml's packages"
    assert listed - folders == {"linear_layouts"}, "pyproject.toml lists packages that do not exist"


def test_wheel_installs_the_startup_hook_at_the_top_of_site_packages(tmp_path):
    with one_build_of_the_tree_at_a_time():
        built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--wheel-dir", str(tmp_path),
                                ROOT], check=True, capture_output=True, text=True)
    # setuptools names every folder of .py files it would ship as data rather than as a package
    # (it did so for tools/report/site, about 40 lines at every `make`)
    assert "is absent from the `packages` configuration" not in built.stdout + built.stderr
    import zipfile

    (wheel,) = tmp_path.glob("linear_layouts-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "linear_layouts_startup.pth" in names
    for package in _listed_packages():
        assert package.replace(".", "/") + "/__init__.py" in names, package
    # the build step's own folder is not shipped
    assert not any(name.startswith("linear_layouts/tools/install/") for name in names)
