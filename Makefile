# The README's two commands: `make plan` (offline plan of the default blueprint) and `make test`.
# Both create .venv when missing and install the project into it, so they work on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PRESET ?= medical-imaging

.PHONY: plan test bench golden install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

plan: $(STAMP)
	$(BIN)/aitrain plan $(PRESET)

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/bench_recommend.py
	$(BIN)/python bench/bench_plan.py

golden: $(STAMP)
	$(BIN)/python -m pytest tests/test_golden.py --update-golden

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
