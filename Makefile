# One command installs and runs: `make demo` (offline, simulated) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install demo test test-fast bench tui

$(VENV)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c requirements.lock -e '.[dev]'
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/centaur demo

test: install
	$(BIN)/python -m pytest -q

# The edit-test loop: every test but those marked slow (registered in pyproject.toml).
test-fast: install
	$(BIN)/python -m pytest -q -m "not slow"

bench: install
	$(BIN)/python bench/pipeline.py
