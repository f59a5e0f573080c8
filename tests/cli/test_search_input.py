"""Issue 11, class 2 from the command line: any query and any date gets results or one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from clawback.cli.main import main

from ..helpers import cc_user, write_lines


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
