"""Every date a person gives is one of their own days: ``--since``/``--until`` on the command
line, in the app's filters and in ``memory_search``, and a date in a question, read the same
way in any time zone. Messages a few minutes either side of a local midnight tell them apart."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from clawback.cli.main import main
from clawback.core.home import Home
from clawback.core.mcp.tools import MemoryTools
from clawback.core.search.dates import date_window
from clawback.core.search.engine import SearchFilters, search
from clawback.core.timeutil import date_bounds

from ..helpers import cc_user, write_lines
from ..zones import system_zone

ZONES = ["Pacific/Auckland", "America/Los_Angeles", "UTC"]
# (local time, what was said): the 20th's last half hour and the 21st's first, on that clock
SAID = [("2026-11-20T23:40", "walrus late on the twentieth"),
        ("2026-11-21T00:20", "walrus early on the twenty-first")]  # fmt: skip


@pytest.fixture(params=ZONES)
def zone(request: pytest.FixtureRequest) -> Iterator[str]:
    """The system's time zone is ``request.param`` for this test (TZ, as a person sets it)."""
    with system_zone(request.param):
        yield request.param


@pytest.fixture
def near_midnight(tmp_path: Path, zone: str) -> Path:
    """A home whose one session says :data:`SAID`, stamped in UTC as Claude Code writes."""
    lines = []
    for number, (local, text) in enumerate(SAID):
        moment = datetime.fromisoformat(local).replace(tzinfo=ZoneInfo(zone))
        stamp = moment.astimezone(ZoneInfo("UTC")).isoformat().replace("+00:00", "Z")
        lines.append(cc_user("d", f"u{number}", text, stamp))
    write_lines(tmp_path / "src" / "proj" / "d.jsonl", lines)
    main(["--home", str(tmp_path / "h"), "ingest", str(tmp_path / "src")])  # exits only on error
    return tmp_path / "h"


# (since, until, what is found): each bare date is the whole local day
BOUNDS = [
    ("2026-11-20", "2026-11-20", ["walrus late on the twentieth"]),
    ("2026-11-21", "2026-11-21", ["walrus early on the twenty-first"]),
    ("2026-11-21", None, ["walrus early on the twenty-first"]),
    (None, "2026-11-20", ["walrus late on the twentieth"]),
    ("2026-11-20T23:50", None, ["walrus early on the twenty-first"]),  # a time on the same clock
    (
        "2026-11-20",
        "2026-11-21",
        ["walrus early on the twenty-first", "walrus late on the twentieth"],
    ),
]


@pytest.mark.parametrize(("since", "until", "found"), BOUNDS)
def test_the_command_line_reads_local_days(
    near_midnight: Path,
    since: str | None,
    until: str | None,
    found: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    bounds = [*(["--since", since] if since else []), *(["--until", until] if until else [])]
    capsys.readouterr()
    main(["--home", str(near_midnight), "search", "walrus", "--json", *bounds])
    hits = json.loads(capsys.readouterr().out)
    assert sorted(re.sub(r"</?mark>", "", hit["snippet"]) for hit in hits) == found


@pytest.mark.parametrize(("since", "until", "found"), BOUNDS)
def test_memory_search_and_the_apps_filters_read_local_days(
    near_midnight: Path, since: str | None, until: str | None, found: list[str]
) -> None:
    home = Home.open(near_midnight)
    try:
        tools = MemoryTools(home.db)
        answer = tools.search("walrus", since=since, until=until)
        said = [tools.get(hit["ref"], context=0)["messages"][0]["text"]
                for hit in answer["results"]]  # fmt: skip
        assert sorted(said) == found
        filtered = search(home.db, "walrus", SearchFilters(since=since, until=until))
        ids = [hit.entry_id for hit in filtered.hits]
        texts = [home.db.execute("SELECT text FROM entries WHERE id = ?", [i]).fetchone()[0]
                 for i in ids]  # fmt: skip
        assert sorted(texts) == found
    finally:
        home.close()


def test_a_question_names_the_same_day_as_the_bounds(zone: str) -> None:
    """ "on November 21" in a question and ``--since/--until 2026-11-21`` are one span."""
    window = date_window("what did we say about walrus on November 21?", date(2026, 11, 25))
    assert window is not None
    assert (window.since, window.until) == date_bounds("2026-11-21", "2026-11-21")
