# One command checks everything: `make check` (what .ci/run runs on a fresh venv).
PY ?= .venv/bin/python
BIN := $(dir $(PY))

.PHONY: install check format lint types imports test dist smoke install-routes

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
	$(BIN)mypy core cli tui tests bench .ci/smoke_wheel.py

imports:
	$(BIN)lint-imports

test:
	$(PY) -m pytest -q -p no:cacheprovider -n auto

# The package as people install it: `python -m build` makes the sdist, then the wheel from the
# sdist, each in an isolated environment; `smoke` installs the wheel (not editable, with the
# embeddings extra) into a fresh venv and runs .ci/smoke_wheel.py with that venv's python.
DIST := dist
SMOKE_VENV := $(DIST)/smoke-venv

dist:
	rm -rf $(DIST) && mkdir $(DIST)
	$(PY) -m build --outdir $(DIST) . > $(DIST)/build.log 2>&1 || (cat $(DIST)/build.log; exit 1)
	@ls $(DIST)

smoke: dist
	python3 -m venv $(SMOKE_VENV)
	$(SMOKE_VENV)/bin/pip install -q "$$(ls $(DIST)/clawback-*.whl)[embeddings]"
	cd $(DIST) && smoke-venv/bin/python ../.ci/smoke_wheel.py .

# The README's install section run as written (tests/docs/test_install.py): uv tool and pipx,
# from the clone and from the wheel in dist/, each into a throwaway home, then uninstalled.
install-routes:
	CLAWBACK_INSTALL_TESTS=1 $(PY) -m pytest -q -p no:cacheprovider tests/docs/test_install.py
