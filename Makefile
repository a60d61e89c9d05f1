# The two commands a newcomer needs are `make demo` and `make test`; everything
# else here supports them.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: venv browser test unit integration lint demo bench clean

$(STAMP): pyproject.toml localcluster/pyproject.toml hack/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ./localcluster -e ./hack -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

# Debian's chromium for the browser tests (installed when missing and we are root).
browser:
	hack/ensure-chromium.sh

test: $(STAMP) browser
	$(BIN)/python -m pytest -n auto $(PYTEST_ARGS)

unit: $(STAMP)
	$(BIN)/python -m pytest -n auto test/unit $(PYTEST_ARGS)

integration: $(STAMP) browser
	$(BIN)/python -m pytest -n auto test/integration $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check tf_operator localcluster/src cmd test hack examples
	$(BIN)/ruff format --check tf_operator localcluster/src cmd test hack examples
	$(BIN)/mypy
	$(BIN)/lint-imports

demo: $(STAMP)
	$(BIN)/python hack/demo.py $(ARGS)

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python hack/bench.py $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
