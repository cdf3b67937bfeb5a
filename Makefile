# The README's two commands: `make plan` (offline plan of the default blueprint) and `make test`.
# Both create .venv when missing and install the project into it, so they work on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PRESET ?= medical-imaging

.PHONY: plan test multihost check bench golden regen mutate fuzz scan install clean FORCE

# .venv is made by $(PYTHON) and remade when its python no longer runs or is not $(PYTHON) (e.g. a first try with
# 3.10, or an interpreter since removed): "X.Y base-prefix" of each, as it reports itself; empty when it does not run.
py_id = $(shell $(1) -c 'import sys; print("%d.%d" % sys.version_info[:2], sys.base_prefix)' 2>/dev/null)
PYTHON_ID := $(call py_id,$(PYTHON))
VENV_ID := $(call py_id,$(BIN)/python)
ifneq ($(PYTHON_ID),)
ifneq ($(PYTHON_ID),$(VENV_ID))
VENV_REMAKE := FORCE
endif
endif
# The oldest Python pyproject.toml admits (requires-python = ">=X.Y"), checked before anything is installed.
NEED_PYTHON := $(shell sed -n 's/^requires-python *= *">= *\([0-9.]*\)".*/\1/p' pyproject.toml)

$(BIN)/python: $(VENV_REMAKE)
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] < tuple(map(int, "$(NEED_PYTHON)".split("."))))' 2>/dev/null || \
	  { echo "make: PYTHON=$(PYTHON) is $(if $(PYTHON_ID),Python $(word 1,$(PYTHON_ID)),not a Python that runs); aitrain needs Python $(NEED_PYTHON) or newer (requires-python in pyproject.toml). Run e.g. 'make PYTHON=python$(NEED_PYTHON) $(MAKECMDGOALS)'." >&2; exit 2; }
	@if [ -e $(VENV) ]; then echo "make: $(VENV) was made by $(if $(VENV_ID),Python $(VENV_ID),a python that no longer runs), not $(PYTHON) (Python $(PYTHON_ID)): recreating it"; fi
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	@$(BIN)/python -c 'import sys; sys.exit(sys.version_info[:2] < tuple(map(int, "$(NEED_PYTHON)".split("."))))' || \
	  { echo "make: $(VENV) runs Python $(word 1,$(VENV_ID)); aitrain needs $(NEED_PYTHON) or newer. Run e.g. 'make PYTHON=python$(NEED_PYTHON) $(MAKECMDGOALS)': $(VENV) is then recreated." >&2; exit 2; }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

plan: $(STAMP)
	$(BIN)/aitrain plan $(PRESET)

test: $(STAMP)
	$(BIN)/python -m pytest

# The real multi-node test (tests/multihost, marker multihost, which `make test` leaves out): the rendered
# aitrain-torchrun on three hosts made as network namespaces, PyTorch's CPU build and gloo; a host is killed and comes
# back, and the health gate's all-reduce runs on the same hosts. Needs root and iproute2 (it skips, saying why,
# without them). torch is no dependency of aitrain: installed here when the venv lacks this version, and a failed
# install fails the target (CI must not pass a run that never happened); plain pytest without torch skips, saying so.
TORCH_VERSION ?= 2.13.0
multihost: $(STAMP)
	@$(BIN)/python -c 'import sys, torch; sys.exit(torch.__version__.split("+")[0] != "$(TORCH_VERSION)")' 2>/dev/null || \
	  $(BIN)/python -m pip install --quiet torch==$(TORCH_VERSION)
	$(BIN)/python -m pytest -m multihost tests/multihost -s -rs

# Static guards (CI runs them before the tests): lint, strict types, the import contracts of the architecture, and
# no dead code (vulture at 80% confidence: unused imports, variables, unreachable code).
check: $(STAMP)
	$(BIN)/ruff format --check blueprints tests bench infra policy scan
	$(BIN)/ruff check blueprints tests bench infra policy scan
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/vulture blueprints tests bench --min-confidence 80

bench: $(STAMP)
	$(BIN)/python bench/bench_recommend.py
	$(BIN)/python bench/bench_plan.py

# Regeneration is a separate, deliberate act: golden plans and the case-study page, written directly
# (`pytest --update-golden` also rewrites golden files but always fails the run). `golden` is an alias.
regen: $(STAMP)
	$(BIN)/python tests/test_golden.py
	$(BIN)/aitrain plan --update examples/stacks --today 2026-12-01
	$(BIN)/python tests/test_readme_figures.py
	$(BIN)/aitrain case-studies --write docs/case-studies.md
	$(BIN)/python -c "from blueprints.review.render.findings import rules_document; open('docs/guardrails.md', 'w', encoding='utf-8').write(rules_document())"
	$(BIN)/python -c "from blueprints.preflight.explain import errors_document; open('docs/capacity-errors.md', 'w', encoding='utf-8').write(errors_document())"

golden: regen

# Delete one statement (or safety keyword) at a time in the safety-critical modules and run focused tests;
# fails when a must-kill mutant (guardrail rule, register_outputs, depends_on, protect, diff risk...) survives.
mutate: $(STAMP)
	$(BIN)/python bench/mutate.py --jobs 2

# Property-based fuzz of every profile path through the functions `aitrain plan` runs (bench/fuzz.py);
# fails on any crash (an exception other than the clean exit-2 error) or unsafe acceptance. DRAWS/SEED override.
DRAWS ?= 20000
SEED ?= 0
fuzz: $(STAMP)
	$(BIN)/python bench/fuzz.py --draws $(DRAWS) --jobs 2 --seed $(SEED)

# Independent scan: export every preset to Terraform JSON (build/scan/<preset>/main.tf.json) and run checkov
# (--framework terraform_json) on each; fails on a failed check not in scan/not-applicable.csv, or when the canary
# (known violations) gets through. checkov has its own virtualenv (.venv-scan): it pins many libraries, which must
# not be resolved against the project's. Not part of `make test`.
SCAN_VENV := .venv-scan
SCAN_STAMP := $(SCAN_VENV)/.installed

$(SCAN_STAMP): scan/requirements.txt
	rm -rf $(SCAN_VENV)
	$(PYTHON) -m venv $(SCAN_VENV)
	$(SCAN_VENV)/bin/python -m pip install --quiet -r scan/requirements.txt
	touch $(SCAN_STAMP)

scan: $(STAMP) $(SCAN_STAMP)
	$(BIN)/python scan/run.py --checkov $(SCAN_VENV)/bin/checkov

clean:
	rm -rf $(VENV) $(SCAN_VENV) .venv-3.* build *.egg-info .pytest_cache

FORCE:
