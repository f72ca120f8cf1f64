# linear-layouts: two commands on a fresh machine.
#
#   make demo           the main job: compile the bundled kernels (examples/) for sm_90 and gfx942
#                       with our layout engine and report every conversion (ll-demo --tour: the algebra)
#   make test           pytest + lit in .venv with the newest triton (3.9; Python >= 3.11)
#   make test-compat    the same in .venv-compat with triton 3.6.0 (what torch 2.11 pins)
#   make test-releases  lit and the drop-in, Gluon and report tests under triton 3.7 and 3.8
#                       (torch 2.12-2.13 and 2.14 pin them), each in .venv-3.7 / .venv-3.8
#   make smoke          build a wheel, install it (not editable) into a fresh .venv-smoke with
#                       the runtime dependencies only, and run every entry point from it
#                       (SMOKE_TRITON=3.6.0 for triton 3.6; default: the newest)
#   make wheelhouse     download every wheel the targets above install, each once, into
#                       .wheelhouse (CI then installs from there only: .ci/run)
#
# Each target creates or refreshes its virtual environment first: the stamp file is rebuilt
# whenever pyproject.toml or this Makefile changes.  The editable installs get the start-up
# hook that a wheel installs by itself (tools/install/startup_hook.py).
# --no-compile: pip byte-compiles every module of what it installs (numpy, scipy, matplotlib and
# hypothesis from wheels: 22 s CPU with it, 5 without); the suites import a small part of them,
# compiled at first import and reused (bytecode is on: see PYTHONDONTWRITEBYTECODE below).
# The venv's own pip does every install (Python >= 3.11 brings pip >= 22.3, which installs a
# pyproject.toml package editable); upgrading it in every venv cost a download and 13 s each.

# Python writes each module's bytecode once and reuses it.  An environment that turns that off
# (PYTHONDONTWRITEBYTECODE, set on some CI machines to keep checkouts clean) makes every process
# of a run compile the package from source again: each ll-opt a test starts, each compile
# worker, and pytest's assertion rewriting of every test module in every xdist worker (on a
# clean clone, 0.84 s an ll-opt became 1.6 s, and collecting the suite 11 s became 18-23 s).
unexport PYTHONDONTWRITEBYTECODE

PYTHON        ?= python3
VENV          ?= .venv
COMPAT_VENV   ?= .venv-compat
SMOKE_VENV    ?= .venv-smoke
SMOKE_TRITON  ?= 3.9
WHEELHOUSE    ?= .wheelhouse
PYTEST_ARGS   ?=
# pytest-xdist workers: one per core, at most four (each worker holds a Triton of its own in
# memory).  PYTEST_WORKERS=0 runs the tests in one process (docs/development.md).
PYTEST_WORKERS ?= auto
# setuptools warns at every editable install of a package mapped from the repository root
# ("Editable installation ... folders with the same name as your package"); it says nothing here.
QUIET_EDITABLE = PYTHONWARNINGS="ignore:Editable installation"
LIT_ARGS      ?= -q
# The tests run under every release torch pins but the newest and the oldest (those run everything).
RELEASE_TESTS ?= test/unit/passes/test_hook.py test/unit/passes/test_hook_fallback.py \
                 test/unit/passes/test_startup.py test/unit/passes/gluon test/unit/passes/advice \
                 test/unit/tools/test_report.py test/unit/tools/test_report_cli.py \
                 test/unit/tools/test_report_auto_layouts.py test/unit/tools/test_packaging.py \
                 test/unit/passes/port

.PHONY: demo test test-compat test-releases test-release test-unit test-lit check-lit venv venv-compat \
        smoke wheelhouse bench-algebra clean check-python-3.11

demo: $(VENV)/.installed
	$(VENV)/bin/ll-demo

test: $(VENV)/.installed
	$(MAKE) --no-print-directory test-lit test-unit VENV=$(VENV)

# Under 3.6 the commands of the README and the docs are not run a second time (the `commands`
# marker: minutes of CPU): they are checked under the release `make test` installs, as a new user
# runs them; what the docs say of 3.6 is checked by tests of its own, which run here.  Nor are the
# tests whose modules reach nothing of Triton (`release_independent`, marked by conftest.py from
# their imports: the algebra, the planners, the simulator, the house rules): the same code, the
# same answer.
COMPAT_PYTEST_ARGS ?= -m "not commands and not release_independent"
test-compat: $(COMPAT_VENV)/.installed
	$(MAKE) --no-print-directory test-lit test-unit VENV=$(COMPAT_VENV) PYTEST_ARGS='$(COMPAT_PYTEST_ARGS) $(PYTEST_ARGS)'

test-releases:
	$(MAKE) --no-print-directory test-release RELEASE=3.7
	$(MAKE) --no-print-directory test-release RELEASE=3.8

test-release: .venv-$(RELEASE)/.installed
	$(MAKE) --no-print-directory test-lit test-unit VENV=.venv-$(RELEASE) PYTEST_ARGS="$(PYTEST_ARGS)" \
	    UNIT_TESTS="$(RELEASE_TESTS)"

# lit first and pytest last, so that a run ends with pytest's summary line.
test-lit:
	$(VENV)/bin/python -c "import triton; print('triton', triton.__version__)"
	$(VENV)/bin/lit $(LIT_ARGS) test/lit

# --durations: the largest tests of each run in CI's log, where its time goes (docs/development.md).
UNIT_TESTS ?= test/unit
test-unit:
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) --maxprocesses=4 \
	    --durations=15 --durations-min=5 $(PYTEST_ARGS) $(UNIT_TESTS)

venv: $(VENV)/.installed
venv-compat: $(COMPAT_VENV)/.installed

# Triton 3.9 has wheels for Python 3.11 and newer only: say so rather than let pip pick an older
# triton in silence.
check-python-3.11:
	@$(PYTHON) -c "import sys; sys.exit(sys.version_info < (3, 11))" || { \
	  echo "error: triton 3.9 (what 'make test' and 'make demo' install) needs Python >= 3.11;" \
	       "$(PYTHON) is $$($(PYTHON) -V 2>&1)." >&2; \
	  echo "       Run 'make PYTHON=python3.11 test', or 'make test-compat' (triton 3.6, Python >= 3.10)." >&2; \
	  exit 1; }

$(VENV)/.installed: pyproject.toml Makefile | check-python-3.11
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --no-compile --upgrade "triton>=3.9,<3.10"
	$(QUIET_EDITABLE) $(VENV)/bin/python -m pip install -q --no-compile -e ".[test,viz]"
	$(VENV)/bin/python tools/install/startup_hook.py install
	touch $@

$(COMPAT_VENV)/.installed: pyproject.toml Makefile
	test -x $(COMPAT_VENV)/bin/python || $(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_VENV)/bin/python -m pip install -q --no-compile "triton==3.6.0"
	$(QUIET_EDITABLE) $(COMPAT_VENV)/bin/python -m pip install -q --no-compile -e ".[test,viz]"
	$(COMPAT_VENV)/bin/python tools/install/startup_hook.py install
	touch $@

.venv-%/.installed: pyproject.toml Makefile
	test -x .venv-$*/bin/python || $(PYTHON) -m venv .venv-$*
	.venv-$*/bin/python -m pip install -q --no-compile "triton==$*.*"
	$(QUIET_EDITABLE) .venv-$*/bin/python -m pip install -q --no-compile -e ".[test,viz]"
	.venv-$*/bin/python tools/install/startup_hook.py install
	touch $@

# The package as users get it: a wheel, installed with its runtime dependencies only, used from
# outside the source tree.
smoke:
	rm -rf $(SMOKE_VENV) dist
	$(PYTHON) -m venv $(SMOKE_VENV)
	$(SMOKE_VENV)/bin/python -m pip wheel -q --no-deps --wheel-dir dist .
	$(SMOKE_VENV)/bin/python -m pip install -q --no-compile "triton==$(SMOKE_TRITON).*" dist/linear_layouts-*.whl
	cd /tmp && $(CURDIR)/$(SMOKE_VENV)/bin/python $(CURDIR)/test/smoke/installed_package.py
	$(SMOKE_VENV)/bin/python -m pip install -q --no-compile matplotlib
	cd /tmp && $(CURDIR)/$(SMOKE_VENV)/bin/python $(CURDIR)/test/smoke/installed_package.py --pictures

# Every wheel the targets above install, downloaded once: the package's dependencies with its
# test and viz extras (and the newest triton), what builds it, and each older triton of the suites.
# pip takes what is already there (--find-links).  With PIP_FIND_LINKS=$(WHEELHOUSE) and
# PIP_NO_INDEX=1 in the environment (.ci/run) every install, the tests' own builds of the package
# included, is served from it; without them (a developer's `make test`) pip uses the index as ever.
# A triton a rule above asks for and this list lacks fails there at once ("No matching distribution").
wheelhouse: | check-python-3.11
	$(PYTHON) -m pip download -q --dest $(WHEELHOUSE) --find-links $(WHEELHOUSE) \
	    "setuptools>=77" wheel ".[test,viz]"
	for triton in "triton==3.8.*" "triton==3.7.*" "triton==3.6.0"; do \
	  $(PYTHON) -m pip download -q --no-deps --dest $(WHEELHOUSE) --find-links $(WHEELHOUSE) "$$triton" || exit 1; \
	done

bench-algebra: $(VENV)/.installed
	$(VENV)/bin/python benchmarks/algebra.py

clean:
	rm -rf $(VENV) $(COMPAT_VENV) $(SMOKE_VENV) .venv-3.7 .venv-3.8 $(WHEELHOUSE) build dist *.egg-info test/lit/**/Output
