# Two commands for a fresh machine:  make demo   (a round on bundled feeds)   make test
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo collect test lint pytest clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

demo: $(BIN)/.installed
	$(BIN)/newsdesk demo

collect: $(BIN)/.installed
	$(BIN)/newsdesk collect

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/cfn-lint infra/template.yaml

pytest: $(BIN)/.installed
	$(BIN)/pytest

test: lint pytest

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
