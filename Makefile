# One command installs and runs: `make demo` (offline, simulated), `make test` and `make check`.
# Python 3.12 when the machine has it (coverage then measures through sys.monitoring: the suite
# took 7 min 24 s of CPU against 13 min 3 s on 3.11's C tracer, same tests); 3.11 works too.
# (pyenv's shim answers `python3.12` with an error unless 3.12 is its global: each candidate is run.)
PYTHON ?= $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12 /usr/bin/python3.12; do \
	$$p -c 'import sys' >/dev/null 2>&1 && { echo $$p; exit 0; }; done; echo python3)
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install browser demo test test-busy test-fast check format bench bench-serve tui

# Supply chain: every file installed is checked against the sha256 in requirements.lock (pip and
# setuptools, the build backend, included; scripts/lock.py writes it); the project itself is
# installed without fetching anything (no build isolation: the locked setuptools builds it) as a
# plain path (editable_mode=compat: its .pth holds a path, not code). Then the two .pth files of
# dependencies that run code at every interpreter start are removed: coverage's subprocess hook
# (the suite measures in-process only) and setuptools' distutils shim (nothing here imports distutils).
# tests/test_layers.py fails if any .pth in the environment holds code.
PURELIB = $(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
$(VENV)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv --clear $(VENV)
	$(BIN)/pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/pip check
	$(BIN)/pip install --quiet --no-deps --no-build-isolation --config-settings editable_mode=compat -e .
	rm -f "$$($(PURELIB))/a1_coverage.pth" "$$($(PURELIB))/distutils-precedence.pth"
	touch $@

install: $(VENV)/.installed browser

# The browser tests of `centaur serve` (tests/test_serve_browser.py) drive Debian's headless
# Chromium through Playwright (its own browser downloads are not reachable here). Installed when
# missing and apt-get can run (root, or sudo without a password); otherwise the tests say why
# they skip. Quiet, and a no-op once installed.
BROWSER := /usr/lib/chromium/chromium-headless-shell
browser:
	@if [ ! -x $(BROWSER) ] && command -v apt-get >/dev/null 2>&1; then \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO="sudo -n"; \
		echo "installing chromium-headless-shell (browser tests of centaur serve)"; \
		( $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
			--no-install-recommends chromium-headless-shell ) >/dev/null 2>&1 \
			|| echo "chromium-headless-shell could not be installed: the browser tests will be skipped"; \
	fi

demo: install
	$(BIN)/centaur demo

# Line coverage of centaur_tui: 94.7% measured on the full suite (9,898 statements, 524 missed);
# the floor, 0.2 points (about 20 lines) under it, fails a change that drops coverage.
COVERAGE_FLOOR ?= 94.5
# Two pytest workers per core (pytest-xdist), at most 8: a third of the suite's wall time is
# waiting (processes, servers, a browser), so two workers a core keep both cores busy (on 2 cores:
# 4 min 26 s with 4 workers against 5 min 43 s with 2). Whole files to one worker (loadfile): a
# file's module fixtures are built once (27 CPU-s less than worksteal); the costliest files first
# (tests/conftest.py, COSTLIEST_FIRST), in that order. `make test PARALLEL=` runs
# in one process.
WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); w=$$((n * 2)); [ $$w -gt 8 ] && w=8; echo $$w)
PARALLEL ?= -n $(WORKERS) --dist loadfile --no-loadscope-reorder
# sys.monitoring (Python 3.12+; coverage falls back to its C tracer on 3.11, with a warning).
# Bytecode is written even where PYTHONDONTWRITEBYTECODE is set (this machine sets it): otherwise
# each of the 4 workers rewrites every test module's asserts (about 3 CPU-s each) and each
# `centaur` process the tests start compiles the package again, on every run.
test: install
	PYTHONDONTWRITEBYTECODE= COVERAGE_CORE=sysmon $(BIN)/python -m pytest -q $(PARALLEL) --cov=centaur_tui --cov-report=term:skip-covered --cov-fail-under=$(COVERAGE_FLOOR)

# `make test` while two CPU-bound processes run beside it (a busy shared machine): the suite must
# pass so too. The burners are killed at the end whatever happens; the status is the suite's.
# Not run by CI.
test-busy: install
	scripts/test-busy.sh $(MAKE) test

# The edit-test loop: every test but those marked slow (registered in pyproject.toml).
test-fast: install
	$(BIN)/python -m pytest -q $(PARALLEL) -m "not slow"

# The tool gates (configured in pyproject.toml): lint, formatting, types, the layer contracts.
LINTED := centaur_tui tests bench scripts
check: install
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff format $(LINTED)

bench: install
	$(BIN)/python bench/pipeline.py

bench-serve: install
	$(BIN)/python bench/seat.py
