"""benchmarks/harness/ is what the scripts share: the scripts and the studies import it, never the
other way round (an arrow up would make a helper depend on a harness that may be merged or moved)."""

import ast
import re

from support import REPO

BENCHMARKS = REPO / "benchmarks"


def _imported_modules(path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_harness_module_imports_a_script_or_a_study():
    scripts = {p.stem for p in BENCHMARKS.glob("*.py")} | {p.stem for p in (BENCHMARKS / "studies").glob("*.py")}
    assert len(scripts) >= 15
    upward = {(p.name, name) for p in (BENCHMARKS / "harness").glob("*.py") for name in _imported_modules(p) & scripts}
    assert upward == set()


def test_no_script_edits_sys_path_links_the_checkout_or_imports_the_tests():
    """The scripts import the installed package and harness/: none adds to ``sys.path``
    (but for the folder of Triton's own Gluon tutorials, which import one another by name), links
    the checkout somewhere importable, or imports test/'s helpers as a module."""
    found = []
    for path in sorted(BENCHMARKS.rglob("*.py")):
        if "results" in path.relative_to(BENCHMARKS).parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#")[0]
            if (re.search(r"sys\.path\s*(\.(insert|append|extend)\b|\[[^]]*\]\s*=|\+?=)", code)
                    and "TUTORIALS_DIR" not in code) or "os.symlink(" in code:
                found.append(f"{path.name}:{number}: {line.strip()}")
        found += [f"{path.name}: imports {name}" for name in _imported_modules(path) & {"support", "test", "on_path"}]
    assert found == []


def test_the_package_says_what_it_holds():
    """Every module of harness/ is named in its __init__.py's docstring."""
    text = (BENCHMARKS / "harness" / "__init__.py").read_text(encoding="utf-8")
    modules = {p.stem for p in (BENCHMARKS / "harness").glob("*.py") if p.stem != "__init__"}
    assert len(modules) >= 10
    assert sorted(m for m in modules if f"``{m}``" not in text and f"harness/{m}.py" not in text) == []


# At most 15 scripts at the top of benchmarks/ (the benchmarks a user runs to see how the
# product does); a study goes to studies/, a measurement that belongs with a script becomes its
# subcommand, its body a module of harness/ (``plan_choice.py calibrate`` runs harness/calibrate.py,
# as ``compile_time.py corpus`` runs harness/compile_time_corpus.py), a helper of a script goes to
# harness/.
TOP_LEVEL_GOAL = 16     # 15, and port_gpu.py: the port's benchmark


def _top_level_scripts() -> list[str]:
    return sorted(p.name for p in BENCHMARKS.glob("*.py"))


def test_the_top_of_benchmarks_holds_at_most_16_scripts():
    assert len(_top_level_scripts()) <= TOP_LEVEL_GOAL, _top_level_scripts()


# The scripts not written in harness/skeleton.py yet, each with why; every other script at the top
# of benchmarks/ must be (its ``main`` returns ``skeleton.main(...)``), and one moved onto it
# leaves this list.
OFF_THE_SKELETON = {
    "kernels": "GPU only: no dry run to check a move against",
    "fla_ops_gpu": "GPU only: whole third-party ops, no dry run",
    "liger_ops_gpu": "GPU only: whole third-party ops, no dry run",
    "algebra": "CPU only: no GPU, no dry run",
    "compile_time": "CPU only, with subcommands (corpus, fuzz)",
    "triton_language_tests": "runs Triton's own test suite, not cases of ours",
    "port_gpu": "third-party kernels ported, each in a child process; its CPU mode is the dry run",
}


def _calls_the_skeleton(path) -> bool:
    """``main`` calls ``skeleton.main``."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and node.name == "main":
            return any(isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                       and call.func.attr == "main" and isinstance(call.func.value, ast.Name)
                       and call.func.value.id == "skeleton" for call in ast.walk(node))
    return False


def skeleton_problems(folder=BENCHMARKS) -> list[str]:
    scripts = {p.stem: _calls_the_skeleton(p) for p in sorted(folder.glob("*.py"))}
    return ([f"{name}.py is not written in harness/skeleton.py" for name, on in scripts.items()
             if not on and name not in OFF_THE_SKELETON]
            + [f"{name}.py is written in the skeleton: take it off OFF_THE_SKELETON" for name, on in scripts.items()
               if on and name in OFF_THE_SKELETON]
            + [f"{name}: no such script" for name in sorted(set(OFF_THE_SKELETON) - set(scripts))])


def test_every_harness_is_written_in_the_skeleton():
    # 9 scripts at the top; calibrate and gluon_matmul, on it too, are harness/ modules
    assert len([p for p in BENCHMARKS.glob("*.py") if _calls_the_skeleton(p)]) >= 9
    assert all(_calls_the_skeleton(BENCHMARKS / "harness" / f"{name}.py") for name in ("calibrate", "gluon_matmul"))
    assert skeleton_problems() == []


def test_the_check_sees_a_harness_off_the_skeleton(tmp_path):
    (tmp_path / "on.py").write_text("def main(argv=None):\n    return skeleton.main('on', __doc__, argv)\n")
    (tmp_path / "off.py").write_text("def main(argv=None):\n    return argparse.ArgumentParser().parse_args(argv)\n")
    (tmp_path / "kernels.py").write_text("def main(argv=None):\n    return skeleton.main('k', __doc__, argv)\n")
    problems = skeleton_problems(tmp_path)
    assert problems[:2] == ["off.py is not written in harness/skeleton.py",
                            "kernels.py is written in the skeleton: take it off OFF_THE_SKELETON"]
    assert "algebra: no such script" in problems
