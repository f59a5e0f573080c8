"""Issue 11, class 2 from the command line: any query and any date gets results or one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from clawback.cli.main import main

from ..helpers import cc_user, write_lines
from ..zones import system_zone


@pytest.fixture
def home(tmp_path: Path) -> Path:
    src = tmp_path / "src" / "proj"
    write_lines(src / "s.jsonl", [cc_user("s", "u1", "don't tabulate the table, ta")])
    main(["--home", str(tmp_path / "h"), "ingest", str(tmp_path / "src")])  # exits only on error
    return tmp_path / "h"


@pytest.mark.parametrize(
    "query", ['don"t*', 'ab"c*', '"a\U0010ffff"*', "ab\U0010ffff*", "ta\ud7ff*", '"*"*', "x -y"]
)
def test_odd_queries_answer(home: Path, query: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    main(["--home", str(home), "search", query, "--json"])  # exits only on error
    assert capsys.readouterr().out.startswith("[")


@pytest.mark.parametrize("day", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_edge_of_the_calendar_is_one_line(
    home: Path, day: str, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(["--home", str(home), "search", "table", "--since", day])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: not a date")


@pytest.fixture
def two_days(tmp_path: Path) -> Iterator[Path]:
    """Two messages either side of midnight UTC, read by a person whose days are UTC's."""
    src = tmp_path / "src" / "proj"
    write_lines(
        src / "d.jsonl",
        [cc_user("d", "u1", "walrus on the fourteenth", "2025-07-14T23:30:00.000Z"),
         cc_user("d", "u2", "walrus on the fifteenth", "2025-07-15T00:10:00.000Z")],
    )  # fmt: skip
    main(["--home", str(tmp_path / "h"), "ingest", str(tmp_path / "src")])
    with system_zone("UTC"):
        yield tmp_path / "h"


@pytest.mark.parametrize(
    ("since", "until", "found"),
    [
        ("2025-07-14", "2025-07-14", ["fourteenth"]),  # --until keeps its own day
        ("2025-07-15", "2025-07-15", ["fifteenth"]),
        ("2025-07-14", "2025-07-15", ["fifteenth", "fourteenth"]),
        ("2025-07-15T00:00:00Z", "2025-07-15T00:10:00Z", ["fifteenth"]),  # an instant is kept
    ],
)
def test_a_date_bound_is_inclusive_of_its_day(
    two_days: Path, since: str, until: str, found: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    main(["--home", str(two_days), "search", "walrus", "--json", "--since", since,
          "--until", until])  # fmt: skip
    hits = json.loads(capsys.readouterr().out)
    assert sorted(hit["snippet"].rsplit(" ", 1)[-1] for hit in hits) == found


def test_a_reversed_range_is_one_clear_error(
    two_days: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(["--home", str(two_days), "search", "walrus", "--since", "2025-07-15",
              "--until", "2025-07-14"])  # fmt: skip
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err == "error: since 2025-07-15 is after until 2025-07-14: nothing can match\n"


@pytest.mark.parametrize(
    "args",
    [[""], ["   "], ["\t\n"], ["table", "--session", ""], ["table", "--session", " "]],
    ids=["empty", "spaces", "whitespace", "empty-session", "blank-session"],
)
def test_an_empty_query_or_session_is_one_usage_error(
    home: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Not a silent empty search, nor a --session filter quietly ignored."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(["--home", str(home), "search", *args, "--json"])
    assert done.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "is empty" in captured.err
