# One command checks everything: `make check` (what .ci/run runs on a fresh venv).
PY ?= .venv/bin/python
BIN := $(dir $(PY))

.PHONY: install check format lint types imports test

# Strict editable mode installs clawback.* as links to core/, cli/, tui/ and themes/: mypy can
# follow them (it cannot see the default mode's import hook). A NEW module or package needs
# `make install` again (and a new package its line in pyproject.toml's `packages`).
install:
	python3 -m venv .venv && $(BIN)pip install -q -e '.[dev,embeddings]' \
		--config-settings editable_mode=strict

check: format lint types imports test

format:
	$(BIN)ruff format --check .

lint:
	$(BIN)ruff check .

types:
	$(BIN)mypy core cli tui tests bench

imports:
	$(BIN)lint-imports

test:
	$(PY) -m pytest -q -p no:cacheprovider -n auto
