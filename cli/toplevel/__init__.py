"""The ``clawback`` package itself: it holds only ``__main__``, so ``python -m clawback`` runs the
command line. The code lives in ``clawback.core``, ``clawback.cli``, ``clawback.tui`` and
``clawback.themes`` (mapped to the card's folders in ``pyproject.toml``)."""
