"""The package installs both ways: editable (what `make test` uses) and as a regular wheel."""

import os
import subprocess
import sys
from support import REPO  # noqa: E402

ROOT = str(REPO)


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
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
                    "--target", str(target), ROOT], check=True, capture_output=True)
    for sub in ("dialect", "passes", "lowering", "tools"):
        assert (target / "linear_layouts" / sub / "__init__.py").exists(), sub
    assert (target / "linear_layouts" / "tools" / "report_site" / "sitecustomize.py").exists()
    # The installed copy imports on its own, from outside the source tree.
    code = "import linear_layouts, linear_layouts.dialect as d; print(linear_layouts.__file__); print(d.LinearLayout.empty())"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(target)}).stdout
    assert str(target) in out.splitlines()[0]
    assert "(empty layout)" in out
    # Tests, benchmarks and build files are not part of the package.
    assert not (target / "linear_layouts" / "test").exists()
