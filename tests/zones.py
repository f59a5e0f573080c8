"""The system's time zone for a test: a person's days depend on it."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def system_zone(name: str) -> Iterator[None]:
    """``TZ`` is ``name`` (an IANA zone) inside the block, as a person sets it; then as before."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = name
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()
