# Two commands for a fresh machine:  make demo   (a round on bundled feeds)   make test
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo collect test lint pytest corpus local-resources infra-check security clean

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
	$(BIN)/lint-imports
	$(BIN)/cfn-lint infra/template.yaml

pytest: $(BIN)/.installed .cache/feedparser-corpus/VERSION
	$(BIN)/pytest

# feedparser's own test feeds, from its source distribution (tests/feedparser_corpus.py)
corpus: .cache/feedparser-corpus/VERSION
.cache/feedparser-corpus/VERSION: $(BIN)/.installed
	$(BIN)/python -m tests.feedparser_corpus

test: lint pytest

# The template's facts the local runtime follows, as package data (a test checks it is current).
local-resources: $(BIN)/.installed
	$(BIN)/python -m infra.local_resources > local/newsdesk_local/resources.json

# A tool in an environment of its own (its pins are its own): $(call tool_venv,FOLDER,REQUIREMENT)
define tool_venv
	$(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --upgrade pip
	$(1)/bin/python -m pip install --quiet '$(2)'
	touch $(1)/.installed
endef

# The SAM CLI: validate with lint, and build the layer and zip functions (the cluster image
# needs Docker). SAM needs python3.12 on PATH.
SAM_VENV ?= .venv-sam
SAM_REQUIREMENT := aws-sam-cli>=1.120,<2
$(SAM_VENV)/.installed:
	$(call tool_venv,$(SAM_VENV),$(SAM_REQUIREMENT))

infra-check: $(SAM_VENV)/.installed
	cd infra && SAM_CLI_TELEMETRY=0 ../$(SAM_VENV)/bin/sam validate --config-env nodocker
	cd infra && SAM_CLI_TELEMETRY=0 ../$(SAM_VENV)/bin/sam build --config-env nodocker

# checkov, a scanner for CloudFormation, on the template as written and as SAM expands it (the
# roles and policies it writes). Findings are fixed, or skipped with the reason in the resource's
# Metadata. --skip-download: no call to Prisma Cloud for guidelines.
CHECKOV_VENV ?= .venv-checkov
CHECKOV_REQUIREMENT := checkov>=3.2,<4
$(CHECKOV_VENV)/.installed:
	$(call tool_venv,$(CHECKOV_VENV),$(CHECKOV_REQUIREMENT))

CHECKOV := $(CHECKOV_VENV)/bin/checkov --framework cloudformation --compact --quiet --skip-download
security: $(CHECKOV_VENV)/.installed $(BIN)/.installed
	mkdir -p build
	$(BIN)/python infra/transform.py > build/template.transformed.json
	$(CHECKOV) --file infra/template.yaml
	$(CHECKOV) --file build/template.transformed.json

clean:
	rm -rf $(VENV) $(SAM_VENV) $(CHECKOV_VENV) build .cache .mypy_cache .ruff_cache .pytest_cache infra/.aws-sam
