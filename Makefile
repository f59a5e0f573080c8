# One command checks everything: `make check` (what .ci/run runs on a fresh venv).
PY ?= .venv/bin/python
BIN := $(dir $(PY))

.PHONY: install check format lint types imports test

install:
	python3 -m venv .venv && $(BIN)pip install -q -e '.[dev,embeddings]'

check: format lint types imports test

format:
	$(BIN)ruff format --check .

lint:
	$(BIN)ruff check .

types:
	$(BIN)mypy core cli tui

imports:
	$(BIN)lint-imports

test:
	$(PY) -m pytest -q -p no:cacheprovider -n auto
