# `make run`  — set up .venv if missing, run `harness qualify` into reports/latest and a
#               short swing fit into reports/swing, print both report paths.
# `make test` — set up .venv if missing, check the import contracts (lint-imports), the
#               style (ruff) and the static types (mypy, strict on the packages
#               pyproject.toml's [tool.mypy] lists), then run the whole test suite on
#               two workers (TEST_WORKERS=1 for one).
# Only python3 and make are needed; everything else is installed with pinned versions
# (pyproject.toml + constraints.txt).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# pytest-xdist workers for `make test` (tests/conftest.py keeps each test file, and the
# files sharing the quick swing, on one worker)
TEST_WORKERS ?= 2
# OpenMP code (Crocoddyl, Pinocchio) swings 10-100x when the other core is busy unless
# it waits passively (docs/engines.md).
export OMP_WAIT_POLICY := PASSIVE
export OMP_NUM_THREADS := 1

.PHONY: run test bench bench-fit bench-opensim clean-venv

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check pip==26.3
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[test]"
	touch $(STAMP)

# make run: qualification of the built-in fixtures, then a short swing fit of the bundled
# capture (its checks are in its report; a check not met does not stop make run).
run: $(STAMP)
	$(VENV)/bin/harness qualify --out reports/latest
	$(VENV)/bin/harness swing data/swing/driver.c3d --activation --out reports/swing || \
		echo "swing: some checks not met (see reports/swing/index.html)"

test: $(STAMP)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	./scripts/install-chromium.sh
	$(PY) -m pytest -q -n $(TEST_WORKERS) --durations=25

bench: $(STAMP)
	$(PY) bench/adapter_overhead.py

# Our collocation fitter against opty 1.5.0 on the same data (bench/fit_vs_opty.py), then
# the fitter's benchmark tables (bench/fit_benchmarks.py). opty goes in with --no-deps
# after its pinned dependencies (the `bench` extra); it compiles its problems with Cython
# (needs a C compiler) on first use, which is reported as setup time.
bench-fit: $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[bench]"
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps opty==1.5.0
	$(PY) bench/fit_vs_opty.py --pendulum-only --all-starts
	$(PY) bench/fit_benchmarks.py

# Our fitter against OpenSim Moco and our IK against OpenSim's IK on the bundled swing and
# on OpenSim's gait2392 walking trial
# (docs/opensim_comparison.md; about 25 min, mostly Moco).
bench-opensim: $(STAMP)
	$(VENV)/bin/harness swing data/swing/driver.c3d --quick --no-replay --out reports/swing-bench || true
	$(PY) bench/moco_vs_collocation.py --swing-dir reports/swing-bench > bench/moco_vs_collocation.txt
	$(PY) bench/opensim_ik.py --swing-dir reports/swing-bench --repeats 5 > bench/opensim_ik.txt
	$(PY) bench/ik_gait2392.py --repeats 5 --write

clean-venv:
	rm -rf $(VENV)
