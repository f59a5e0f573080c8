"""The parse worker is used only where it helps (issue 19, item 11).

With many small files the worker made an ingest 2.2-2.5x slower (50,000 one-line files: 34 s
with it, 15.8 s without): what a small file costs is its bookkeeping, not its lines, and each
``ParseAhead.take`` scanned every result waiting, so the time grew with the square of the files.
Now only files with enough to read are handed over, and a take drops passed files once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
from clawback.core.home import Home
from clawback.core.ingest import parse_ahead, plan
from clawback.core.ingest.file_reader import Start
from clawback.core.ingest.sources import WorkItem

from tests.helpers import cc_user, write_lines


class Recorded:
    """Stands in for the worker: records the plan it was given, hands nothing over."""

    plans: ClassVar[list[list[str]]] = []

    def __init__(self, planned: list[tuple[WorkItem, Start]], _options: Any) -> None:
        Recorded.plans.append([item.key for item, _ in planned])

    def __enter__(self) -> Recorded:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def take(self, _item: WorkItem, _start: Start) -> None:
        return None


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> type[Recorded]:
    monkeypatch.setattr(parse_ahead, "MIN_BYTES", 0)  # any total: the choice is per file
    monkeypatch.setattr(parse_ahead.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(plan, "ParseAhead", Recorded)
    Recorded.plans = []
    return Recorded


def plant(root: Path, count: int, words: int) -> None:
    for n in range(count):
        session = f"70000000-0000-4000-8000-{n:012d}"
        write_lines(root / "p" / f"{session}.jsonl", [cc_user(session, "u", "word " * words)])


def test_many_small_files_are_read_without_a_worker(
    home: Home, cc_root: Path, recorded: type[Recorded]
) -> None:
    plant(cc_root, 300, 10)
    assert home.ingest_all().files == 300
    assert recorded.plans == []


def test_files_with_enough_to_read_go_to_the_worker(
    home: Home, cc_root: Path, recorded: type[Recorded]
) -> None:
    plant(cc_root, 3, 20_000)  # ~100 KB each
    plant(cc_root / "small", 5, 10)
    assert home.ingest_all().files == 8
    [planned] = recorded.plans
    assert len(planned) == 3 and all(key.startswith("p/") for key in planned)
