# linear-layouts: two commands on a fresh machine.
#
#   make demo         the main job: compile the bundled kernels (examples/) for sm_90 and gfx942
#                     with our layout engine and report every conversion (ll-demo --tour: the algebra)
#   make test         pytest + lit in .venv with the newest triton (3.9)
#   make test-compat  the same in .venv-compat with triton 3.6.0 (what torch 2.11 pins)
#
# Each target creates or refreshes its virtual environment first: the stamp file is rebuilt
# whenever pyproject.toml or this Makefile changes.

PYTHON      ?= python3
VENV        ?= .venv
COMPAT_VENV ?= .venv-compat
PYTEST_ARGS ?=
LIT_ARGS    ?= -q

.PHONY: demo test test-compat test-unit test-lit check-lit venv venv-compat bench-algebra clean

demo: $(VENV)/.installed
	$(VENV)/bin/ll-demo

test: $(VENV)/.installed
	$(MAKE) --no-print-directory test-lit test-unit VENV=$(VENV)

test-compat: $(COMPAT_VENV)/.installed
	$(MAKE) --no-print-directory test-lit test-unit VENV=$(COMPAT_VENV)

# lit first and pytest last, so that a run ends with pytest's summary line.
test-lit:
	$(VENV)/bin/python -c "import triton; print('triton', triton.__version__)"
	$(VENV)/bin/lit $(LIT_ARGS) test/lit

test-unit:
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS) test/unit

venv: $(VENV)/.installed
venv-compat: $(COMPAT_VENV)/.installed

$(VENV)/.installed: pyproject.toml Makefile
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q --upgrade "triton>=3.6,<3.10"
	$(VENV)/bin/python -m pip install -q -e ".[test,viz]"
	touch $@

$(COMPAT_VENV)/.installed: pyproject.toml Makefile
	test -x $(COMPAT_VENV)/bin/python || $(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_VENV)/bin/python -m pip install -q --upgrade pip
	$(COMPAT_VENV)/bin/python -m pip install -q "triton==3.6.0"
	$(COMPAT_VENV)/bin/python -m pip install -q -e ".[test,viz]"
	touch $@

bench-algebra: $(VENV)/.installed
	$(VENV)/bin/python benchmarks/algebra.py

clean:
	rm -rf $(VENV) $(COMPAT_VENV) build *.egg-info test/lit/**/Output
