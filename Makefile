# Two entry points for a fresh machine: `make test` and `make demo`. Each creates .venv if missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# TORCH_INDEX=https://download.pytorch.org/whl/cpu: torch and torchvision from that index (CPU-only: no CUDA libraries)
TORCH_INDEX ?=

.PHONY: install test demo clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) torch torchvision
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HOME=$$(mktemp -d) \
	  $(BIN)/python -m pytest -q -m "not slow" $(PYTEST_ARGS); rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

demo: $(STAMP)
	$(BIN)/hypergvl demo

clean:
	rm -rf $(VENV) build *.egg-info
