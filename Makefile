# The two commands a newcomer needs are `make demo` and `make test`; everything
# else here supports them.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.demo-installed
PROJECTS := pyproject.toml localcluster/pyproject.toml hack/pyproject.toml
PYTEST_ARGS ?=

.PHONY: venv browser control-plane test unit integration lint demo bench clean

define new_venv
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
endef

# What `make demo` needs and nothing more (a newcomer's first command stays quick): the
# operator with its dashboard, the local cluster, the demos.
$(DEMO_STAMP): $(PROJECTS)
	$(new_venv)
	$(BIN)/python -m pip install --quiet -e ./localcluster -e ./hack -e '.[dashboard]'
	touch $(DEMO_STAMP)

# Everything: the test extra also holds the lint tools (and includes the dashboard), so this
# venv serves the demo too.
$(STAMP): $(PROJECTS)
	$(new_venv)
	$(BIN)/python -m pip install --quiet -e ./localcluster -e ./hack -e '.[test]'
	touch $(STAMP) $(DEMO_STAMP)

venv: $(STAMP)

# Debian's chromium for the browser tests (installed when missing and we are root).
browser:
	hack/ensure-chromium.sh

# The real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler), built
# from Kubernetes' Go modules on first need into ~/.cache/tf-operator/control-plane; later runs
# find it there at once.
control-plane: $(STAMP)
	$(BIN)/python -m localcluster.controlplane.real

test: $(STAMP) browser control-plane
	$(BIN)/python -m pytest -n auto $(PYTEST_ARGS)

unit: $(STAMP)
	$(BIN)/python -m pytest -n auto test/unit $(PYTEST_ARGS)

integration: $(STAMP) browser control-plane
	$(BIN)/python -m pytest -n auto test/integration $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check tf_operator localcluster/src cmd test hack examples
	$(BIN)/ruff format --check tf_operator localcluster/src cmd test hack examples
	$(BIN)/mypy
	$(BIN)/lint-imports

demo: $(DEMO_STAMP)
	$(BIN)/python hack/demo.py $(ARGS)

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python hack/bench.py $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
