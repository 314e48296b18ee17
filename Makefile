# Two commands for a fresh machine:  make demo   (a round on bundled feeds)   make test
PYTHON ?= python3
VENV ?= .venv

# pyenv's newest X.Y, as a path: $(call pyenv_python,3.12) (nothing if pyenv has none).
pyenv_python = $(shell \
	v=$$(pyenv versions --bare 2>/dev/null | grep -E '^$(subst .,\.,$(1))(\.[0-9]+)?$$' | sort -V | tail -n 1); \
	if [ -n "$$v" ]; then echo "$$(pyenv root)/versions/$$v/bin/python"; fi)
# PYTHON=python3.12 that does not run here (pyenv's shim fails unless 3.12 is selected) is
# pyenv's newest 3.12, as SAM_PYTHON is found below.
ifneq ($(filter python3.%,$(PYTHON)),)
ifeq ($(shell $(PYTHON) -c '' >/dev/null 2>&1 && echo runs),)
override PYTHON := $(or $(call pyenv_python,$(patsubst python%,%,$(PYTHON))),$(PYTHON))
endif
endif
# A PYTHON given that does not run is refused in one line; a venv of another Python than the
# one it names (make demo PYTHON=python3.12 after a first run with 3.11) is made again, not kept.
python_version = $(shell $(1) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
ifneq ($(filter command line environment override,$(origin PYTHON)),)
PYTHON_IS := $(call python_version,$(PYTHON))
ifeq ($(PYTHON_IS),)
$(error PYTHON=$(PYTHON) does not run here (nor is it a version pyenv has): name a Python 3.11 or newer)
endif
VENV_HAS := $(if $(wildcard $(VENV)/bin/python),$(call python_version,$(VENV)/bin/python))
ifneq ($(and $(VENV_HAS),$(filter-out $(PYTHON_IS),$(VENV_HAS))),)
REMAKE_VENV := $(VENV) is Python $(VENV_HAS) and PYTHON=$(PYTHON) is $(PYTHON_IS): making it again
endif
endif
# The installer: uv (installed into the venv by the pip the venv's Python ships), or pip, that
# pip alone and not upgraded (.ci/run proves both).
INSTALLER ?= uv
BIN := $(VENV)/bin
UV_REQUIREMENT := uv>=0.9,<1
# The locks every deploy unit installs (infra/locks.py; `make locks` refreshes them).
LOCKS := infra/lambda-runtime.txt layers/common/requirements.txt \
	layers/extract/requirements.txt functions/cluster/requirements.txt

.PHONY: FORCE demo collect test test-unit lint pytest corpus locks locks-check local-resources amazon-roots \
	docs infra-check sam-env security clean

ifeq ($(INSTALLER),uv)
INSTALL = $(BIN)/uv pip install --quiet --python $(BIN)/python
else
INSTALL = $(BIN)/python -m pip install --quiet --disable-pip-version-check
endif

# The package with every extra (at the locks' versions, on the functions' Python, 3.12); then
# each deploy unit's packages, from its locks, into $(VENV)/lambda/ for the local runtime's
# containers and the deploy-unit tests (infra/locks.py). Each step says what it does in one line;
# the installers are quiet unless they fail.
$(BIN)/.installed: pyproject.toml $(LOCKS) $(if $(REMAKE_VENV),FORCE)
	@echo "$(or $(REMAKE_VENV),creating $(VENV) with $(PYTHON))"
	@$(PYTHON) -m venv $(if $(REMAKE_VENV),--clear) $(VENV)
	$(if $(filter uv,$(INSTALLER)),@echo "installing the installer (uv) into $(VENV)")
	$(if $(filter uv,$(INSTALLER)),@$(BIN)/python -m pip install --quiet --disable-pip-version-check '$(UV_REQUIREMENT)')
	@if $(BIN)/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))'; then \
		sed -n 's/^\([A-Za-z0-9._-]*==[^ ;\\]*\).*/\1/p' $(LOCKS) | sort -u; fi > $(VENV)/constraints.txt
	@echo "installing the package and its tools into $(VENV) (about a minute the first time)"
	@$(INSTALL) -e '.[dev]' -c $(VENV)/constraints.txt
	@echo "installing each function's packages from its locks into $(VENV)/lambda"
	@$(BIN)/python -m infra.locks install --installer $(INSTALLER)
	@touch $@

demo: $(BIN)/.installed
	@$(BIN)/newsdesk demo

collect: $(BIN)/.installed
	@$(BIN)/newsdesk collect

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/cfn-lint infra/template.yaml

# The tests in parallel processes (pytest-xdist; PYTEST_WORKERS=0 runs them in this one).
PYTEST_WORKERS ?= 3
pytest: $(BIN)/.installed .cache/feedparser-corpus/VERSION
	$(BIN)/pytest -n $(PYTEST_WORKERS)

# feedparser's own test feeds, from its source distribution (tests/feedparser_corpus.py)
corpus: .cache/feedparser-corpus/VERSION
.cache/feedparser-corpus/VERSION: $(BIN)/.installed
	$(BIN)/python -m tests.feedparser_corpus

# make test reports how long it took (lint, then the tests), from its start.
test:
	@start=$$(date +%s); $(MAKE) --no-print-directory lint pytest && \
		echo "make test: passed in $$(( $$(date +%s) - start )) s"

# The unit tests alone: no service, no network, no process (tests/conftest.py's markers).
test-unit: $(BIN)/.installed
	$(BIN)/pytest -n $(PYTEST_WORKERS) -m unit

# The locks, resolved again from their requirements.in (keeping the pins that still hold).
locks: $(BIN)/.installed
	$(BIN)/python -m infra.locks refresh

# Each lock as its inputs give it, and a wheel of every locked package for the functions'
# platform: Python 3.12 on arm64 Amazon Linux 2023 (glibc 2.34).
WHEELS := $(BIN)/python -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
	--no-deps --implementation cp --abi cp312 --python-version 3.12 \
	--platform manylinux2014_aarch64 --platform manylinux_2_28_aarch64 \
	--platform manylinux_2_34_aarch64
locks-check: $(BIN)/.installed
	$(BIN)/python -m infra.locks check
	rm -rf build/wheels
	$(WHEELS) --dest build/wheels $(addprefix -r ,$(LOCKS))
	@echo "every locked package has a wheel for Python 3.12 on arm64: $$(ls build/wheels | wc -l) wheels"

# The template's facts the local runtime follows, as package data (a test checks it is current).
local-resources: $(BIN)/.installed
	$(BIN)/python -m infra.local_resources > local/newsdesk_local/resources.json

# The docs written from what the code and the template declare (tests check they are current):
# docs/configuring.md, docs/operating.md's metrics and alarms, docs/commands.md's --help blocks.
docs: $(BIN)/.installed
	$(BIN)/python -m infra.reference
	$(BIN)/python -m newsdesk_local.command_docs

# The CA roots the functions verify RDS Proxy's certificate against, from certifi's bundle
# (a test checks it is current).
amazon-roots: $(BIN)/.installed
	$(BIN)/python -m infra.amazon_roots > layers/common/newsdesk/storage/amazon-root-cas.pem

# A tool in an environment of its own (its pins are its own), by the installer:
# $(call tool_venv,FOLDER,REQUIREMENT[,PYTHON])
ifeq ($(INSTALLER),uv)
define tool_venv
	$(BIN)/uv venv --quiet --clear --python $(or $(3),$(PYTHON)) $(1)
	$(BIN)/uv pip install --quiet --python $(1)/bin/python '$(2)'
	touch $(1)/.installed
endef
else
define tool_venv
	$(or $(3),$(PYTHON)) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --disable-pip-version-check '$(2)'
	touch $(1)/.installed
endef
endif

# The Lambda runtime's Python, which sam build needs on PATH: pyenv's newest 3.12 where pyenv
# has one (its python3.12 shim fails unless a version is selected), else python3.12 on PATH.
SAM_PYTHON ?= $(or $(call pyenv_python,3.12),$(shell command -v python3.12))

# The SAM CLI: validate with lint, and build the layer and zip functions (the cluster image
# needs Docker).
SAM_VENV ?= .venv-sam
SAM_BUILD_PYTHON ?= .venv-sam-python
SAM_REQUIREMENT := aws-sam-cli>=1.120,<2
SAM := SAM_CLI_TELEMETRY=0 PATH="$(CURDIR)/$(SAM_BUILD_PYTHON)/bin:$$PATH" ../$(SAM_VENV)/bin/sam
$(SAM_VENV)/.installed: $(BIN)/.installed
	@test -n "$(SAM_PYTHON)" || { echo "sam build needs Python 3.12 (pyenv or python3.12)"; exit 2; }
	$(call tool_venv,$(SAM_VENV),$(SAM_REQUIREMENT),$(SAM_PYTHON))

# The python3.12 sam build runs pip with (first on its PATH): SAM_PYTHON in a venv of its own,
# with pip 24 or later. An older pip (pyenv's 3.12.1 has 23.2) does not match jusText's
# lxml[html_clean] to the lock's lxml: it takes the newest lxml for the extra, which
# --require-hashes then refuses, failing the extraction layer's build.
$(SAM_BUILD_PYTHON)/.installed:
	@test -n "$(SAM_PYTHON)" || { echo "sam build needs Python 3.12 (pyenv or python3.12)"; exit 2; }
	$(SAM_PYTHON) -m venv --clear $(SAM_BUILD_PYTHON)
	$(SAM_BUILD_PYTHON)/bin/python -m pip install --quiet --disable-pip-version-check 'pip>=24'
	touch $@

infra-check: $(SAM_VENV)/.installed $(SAM_BUILD_PYTHON)/.installed
	cd infra && $(SAM) validate --config-env nodocker
	cd infra && $(SAM) build --config-env nodocker

# Each function's environment as `sam local invoke` gives it, by SAM CLI's code, from the built
# template and infra/env.example.json: tests/test_deploy_units.py runs the handlers with it.
sam-env: infra-check
	mkdir -p build
	$(SAM_VENV)/bin/python infra/sam_env.py > build/sam-env.json.partial
	mv build/sam-env.json.partial build/sam-env.json

# checkov, a scanner for CloudFormation, on the template as written and as SAM expands it (the
# roles and policies it writes). Findings are fixed, or skipped with the reason in the resource's
# Metadata. --skip-download: no call to Prisma Cloud for guidelines.
CHECKOV_VENV ?= .venv-checkov
CHECKOV_REQUIREMENT := checkov>=3.2,<4
$(CHECKOV_VENV)/.installed: $(BIN)/.installed
	$(call tool_venv,$(CHECKOV_VENV),$(CHECKOV_REQUIREMENT))

CHECKOV := $(CHECKOV_VENV)/bin/checkov --framework cloudformation --compact --quiet --skip-download
security: $(CHECKOV_VENV)/.installed $(BIN)/.installed
	mkdir -p build
	$(BIN)/python infra/transform.py > build/template.transformed.json
	$(CHECKOV) --file infra/template.yaml
	$(CHECKOV) --file build/template.transformed.json

FORCE:

clean:
	rm -rf $(VENV) $(SAM_VENV) $(SAM_BUILD_PYTHON) $(CHECKOV_VENV) build .cache .mypy_cache .ruff_cache .pytest_cache infra/.aws-sam
