"""clawback's core library: the archive (parsers, ingestion, index, search) and the chat engine.

This package is plain Python. It must never import textual or anything under ``clawback.tui``:
the terminal app is one client of the core, the CLI and the tests are others.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("clawback")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"
