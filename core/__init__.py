"""clawback's core library: the archive (parsers, ingestion, index, search) and the chat engine.

This package is plain Python. It must never import textual or anything under ``clawback.tui``:
the terminal app is one client of the core, the CLI and the tests are others.
"""


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed metadata only when asked (it costs ~20 ms)."""
    if name != "__version__":
        raise AttributeError(name)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("clawback")
    except PackageNotFoundError:  # pragma: no cover - a source tree without install
        return "0.0.0"
