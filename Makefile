# Quick start: `make run` (set up + solve on the built-in BCD set), `make test` (set up + test suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[test]"
	@echo "compiling the default job's numba functions once (about a minute; cached beside their modules)"
	$(BIN)/minlp-fs solve > /dev/null
	touch $@

.PHONY: setup run test bench
setup: $(BIN)/.installed

run: $(BIN)/.installed
	$(BIN)/minlp-fs solve

test: $(BIN)/.installed
	$(BIN)/python -m pytest -q

bench: $(BIN)/.installed
	$(BIN)/python benchmarks/bench_alpha.py
