"""Issue 11, class 1: one bad line, file or name never stops ingest or watch.

Each bad thing sits beside good files; the test asserts the good ones are indexed, the bad one
is cleaned, skipped and counted with its reason, or named in ``health`` with why, and that no
file is left mid-ingest. A hypothesis fuzzer throws line shapes and values at the ingestor.
"""

from __future__ import annotations

import json
import os
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from clawback.core.formats.lines import LineReader
from clawback.core.ingest.health import health
from clawback.core.ingest.sources import SourceRoot
from clawback.core.records import Source
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import cc_user, write_lines

GOOD = 5


def _good_files(root: Path) -> None:
    for n in range(GOOD):
        write_lines(root / "-proj" / f"good{n}.jsonl", [cc_user(f"good{n}", f"g{n}", f"fine {n}")])


def _ingest(home: Any, root: Path) -> Any:
    return home.ingestor().ingest([SourceRoot(Source.CLAUDE_CODE, root, "test")], full_scan=True)


def _stuck(home: Any) -> list[str]:
    return [r[0] for r in home.db.execute("SELECT path FROM files WHERE status = 'ingesting'")]


def _texts(home: Any) -> list[str]:
    return [r[0] for r in home.db.execute("SELECT text FROM entries ORDER BY id")]


def _skips(home: Any) -> list[str]:
    return [r[0] for r in home.db.execute("SELECT reason FROM skipped_lines")]


BAD_LINES = {
    "lone surrogate": '{"type":"user","sessionId":"s","uuid":"b1","message":{"role":"user",'
    '"content":"cut \\ud83d here"}}',
    "deep nesting": '{"type":"user","sessionId":"s","message":'
    + "[" * 100_000
    + "]" * 100_000
    + "}",
    "year 1 east of UTC": json.dumps(cc_user("s", "b2", "early", ts="0001-01-01T00:00:00+14:00")),
    "year 9999 west of UTC": json.dumps(cc_user("s", "b3", "late", ts="9999-12-31T23:59:59-14:00")),
    "absurd numbers": json.dumps(
        {**cc_user("s", "b4", "numbers"), "timestamp": 1e300, "usage": {"input_tokens": 1e30}}
    ),
    "huge integer timestamp": json.dumps({**cc_user("s", "b5", "big"), "timestamp": 10**400}),
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_a_bad_line_never_stops_the_file_or_the_others(home: Any, cc_root: Path, case: str) -> None:
    _good_files(cc_root)
    path = cc_root / "-proj" / "bad.jsonl"
    after = json.dumps(cc_user("s", "after", "the line after the bad one"))
    path.write_text(BAD_LINES[case] + "\n" + after + "\n", encoding="utf-8")

    stats = _ingest(home, cc_root)
    again = _ingest(home, cc_root)  # and the next run finds nothing left to do

    assert stats.files == GOOD + 1 and not stats.errors
    assert again.files == 0 and again.unchanged == GOOD + 1
    assert not _stuck(home)
    texts = _texts(home)
    assert "the line after the bad one" in texts
    assert all(f"fine {n}" in texts for n in range(GOOD))
    for text in texts:
        text.encode("utf-8")  # every stored string is encodable


def test_a_lone_surrogate_is_replaced_and_the_text_kept(home: Any, cc_root: Path) -> None:
    (cc_root / "-proj").mkdir()
    (cc_root / "-proj" / "s.jsonl").write_text(BAD_LINES["lone surrogate"] + "\n")
    _ingest(home, cc_root)
    assert _texts(home) == ["cut \ufffd here"]


def test_deep_nesting_is_a_skipped_line_with_its_reason(home: Any, cc_root: Path) -> None:
    (cc_root / "-proj").mkdir()
    (cc_root / "-proj" / "s.jsonl").write_text(BAD_LINES["deep nesting"] + "\n")
    stats = _ingest(home, cc_root)
    assert stats.skipped_lines == 1
    assert _skips(home) == ["JSON nested too deeply"]


def test_timestamps_off_the_calendar_become_null(home: Any, cc_root: Path) -> None:
    lines = [json.loads(BAD_LINES[k]) for k in ("year 1 east of UTC", "year 9999 west of UTC")]
    lines.append(cc_user("s", "ok", "year five", ts="0005-06-01T00:00:00Z"))
    write_lines(cc_root / "-proj" / "s.jsonl", lines)
    _ingest(home, cc_root)
    stamps = [r[0] for r in home.db.execute("SELECT ts FROM entries ORDER BY id")]
    assert stamps == [None, None, "0005-06-01T00:00:00.000Z"]  # four digits: sorts as text


def test_a_byte_order_mark_loses_nothing(home: Any, cc_root: Path, tmp_path: Path) -> None:
    body = json.dumps(cc_user("bom", "u1", "first line behind a BOM")) + "\n"
    (cc_root / "-proj").mkdir()
    (cc_root / "-proj" / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + body.encode())
    _ingest(home, cc_root)
    assert _texts(home) == ["first line behind a BOM"]
    # and format detection sees through it too
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + body.encode())
    stats = home.ingest_paths([loose])
    assert stats.unsupported_files == 0 and stats.entries == 1


def test_detection_reads_a_first_line_over_one_megabyte(home: Any, tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    write_lines(
        loose / "big.jsonl", [cc_user("big", "u1", "x" * 2_000_000), cc_user("big", "u2", "ok")]
    )
    stats = home.ingest_paths([loose])
    assert stats.unsupported_files == 0 and stats.files == 1


def test_an_over_long_line_is_streamed_past_without_holding_it(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    with path.open("wb") as handle:
        handle.write(b'{"a": 1}\n')
        for _ in range(40):
            handle.write(b"x" * (1 << 20))  # one 40 MB line
        handle.write(b'\n{"b": 2}\n')
    tracemalloc.start()
    got = list(LineReader(path, 0, max_line=4 << 20))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [(raw, count) for raw, _, count in got] == [
        (b'{"a": 1}\n', 1),
        (None, 40 * (1 << 20) + 1),
        (b'{"b": 2}\n', 1),
    ]
    assert got[-1][1] == path.stat().st_size
    assert peak < 12 << 20  # the 4 MB limit and a piece, never the 40 MB line


def test_an_over_long_line_is_counted_with_its_size(home: Any, cc_root: Path) -> None:
    home.config.archive.max_line_mb = 1
    path = cc_root / "-proj" / "s.jsonl"
    write_lines(path, [cc_user("s", "u1", "y" * (2 << 20)), cc_user("s", "u2", "after it")])
    stats = _ingest(home, cc_root)
    assert stats.skipped_lines == 1 and _texts(home) == ["after it"]
    assert _skips(home) == ["line of 2 MB over max_line_mb (1)"]


def test_fifty_megabytes_of_blank_lines_are_quick(home: Any, cc_root: Path) -> None:
    path = cc_root / "-proj" / "blank.jsonl"
    path.parent.mkdir()
    with path.open("wb") as handle:
        handle.write(b"\n" * (50 << 20))
        handle.write(json.dumps(cc_user("blank", "u1", "after the blanks")).encode() + b"\n")
    started = time.perf_counter()
    _ingest(home, cc_root)
    assert time.perf_counter() - started < 3.0  # 12 s before
    assert home.db.execute("SELECT line FROM entries").fetchone()[0] == (50 << 20) + 1


def test_a_torn_last_line_that_never_completes_is_reported(home: Any, cc_root: Path) -> None:
    path = cc_root / "-proj" / "torn.jsonl"
    write_lines(path, [cc_user("torn", "u1", "whole")])
    torn = b'{"type":"user","sessionId":"torn","mess'
    with path.open("ab") as handle:
        handle.write(torn)
    _ingest(home, cc_root)
    report = health(home.db, home.paths, "no-such-claude")
    assert report.incomplete_tails == [{"path": str(path), "bytes": len(torn)}]
    with path.open("ab") as handle:  # it completes: reported no more
        handle.write(b'age":{"role":"user","content":"done"}}\n')
    _ingest(home, cc_root)
    assert health(home.db, home.paths, "no-such-claude").incomplete_tails == []
    assert _texts(home) == ["whole", "done"]


# -- files and names ------------------------------------------------------------------------------


def _skipped_files(home: Any) -> dict[str, str]:
    report = health(home.db, home.paths, "no-such-claude")
    return {item["path"]: item["reason"] for item in report.skipped_files}


def test_a_symlink_loop_does_not_stop_the_walk(home: Any, cc_root: Path) -> None:
    _good_files(cc_root)
    os.symlink("loop.jsonl", cc_root / "-proj" / "loop.jsonl")
    os.symlink("..", cc_root / "-proj" / "up")
    stats = _ingest(home, cc_root)
    assert stats.files == GOOD
    assert "loop.jsonl" in next(iter(_skipped_files(home)))


def test_a_name_that_is_not_utf8_is_skipped_and_named(home: Any, cc_root: Path) -> None:
    _good_files(cc_root)
    bad = os.fsencode(cc_root / "-proj") + b"/bad\xff\xfename.jsonl"
    with open(bad, "wb") as handle:
        handle.write(json.dumps(cc_user("x", "u", "hidden")).encode() + b"\n")
    stats = _ingest(home, cc_root)
    assert stats.files == GOOD and not _stuck(home)
    [(path, reason)] = _skipped_files(home).items()
    assert "bad" in path and "UTF-8" in reason
    path.encode("utf-8")


def test_an_unreadable_file_is_skipped_named_and_never_left_ingesting(
    home: Any, cc_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _good_files(cc_root)
    locked = cc_root / "-proj" / "locked.jsonl"
    write_lines(locked, [cc_user("locked", "u", "secret diary")])
    real_open = Path.open

    def refuse(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.name == "locked.jsonl":  # root reads anything: chmod 000 would not do
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    stats = _ingest(home, cc_root)
    assert stats.files == GOOD + 1 or stats.files == GOOD
    assert not _stuck(home)
    assert _skipped_files(home) == {str(locked): "cannot read: Permission denied"}
    assert stats.to_dict()["skipped_files"] == [
        {"path": str(locked), "reason": "cannot read: Permission denied"}
    ]
    monkeypatch.setattr(Path, "open", real_open)
    _ingest(home, cc_root)  # readable again: indexed, and no longer named
    assert "secret diary" in _texts(home) and _skipped_files(home) == {}


def test_an_unreadable_folder_is_named_and_the_rest_indexed(
    home: Any, cc_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _good_files(cc_root)
    locked = cc_root / "-locked"
    write_lines(locked / "z.jsonl", [cc_user("z", "u", "behind a locked door")])
    real_scandir = os.scandir

    def refuse(path: Any = ".") -> Any:
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refuse)
    stats = _ingest(home, cc_root)
    assert stats.files == GOOD and not _stuck(home)
    assert _skipped_files(home) == {str(locked): "cannot read the folder: Permission denied"}


def test_a_folder_named_like_a_transcript_is_not_a_file(home: Any, cc_root: Path) -> None:
    _good_files(cc_root)
    folder = cc_root / "-proj" / "x.jsonl"
    folder.mkdir()
    write_lines(folder / "inner.jsonl", [cc_user("inner", "u", "inside the folder")])
    stats = home.ingest_changed({folder})  # what the watcher hands over
    assert not stats.errors and not _stuck(home)
    stats = _ingest(home, cc_root)
    assert not _stuck(home) and not stats.errors


def test_unknown_formats_are_named_with_why(home: Any, tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "codex.jsonl").write_text('{"type":"session_meta","payload":{}}\n')
    (loose / "prose.jsonl").write_text("not json at all\n")
    (loose / "empty.jsonl").write_text("")
    stats = home.ingest_paths([loose])
    assert (stats.unsupported_files, stats.empty_files, stats.unchanged) == (2, 1, 0)
    assert {item["path"]: item["reason"] for item in stats.to_dict()["skipped_files"]} == {
        str(loose / "codex.jsonl"): "not a transcript format clawback reads",
        str(loose / "prose.jsonl"): "first line is not JSON",
    }  # an empty file is not a problem: Claude Code creates them before writing


# -- the fuzzer -----------------------------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),
    st.sampled_from(
        ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "\ud83d", "2024-13-45", ""]
    ),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
_TYPES = ["user", "assistant", "summary", "system", "custom-title", "ai-title", "progress", "x"]


@st.composite
def _lines(draw: Any) -> bytes:
    obj: dict[str, Any] = {"type": draw(st.sampled_from(_TYPES)), "sessionId": "fuzz"}
    for key in draw(
        st.lists(
            st.sampled_from(
                [
                    "message",
                    "timestamp",
                    "uuid",
                    "cwd",
                    "summary",
                    "leafUuid",
                    "customTitle",
                    "isSidechain",
                    "content",
                    "toolUseResult",
                    "aiTitle",
                ]
            ),
            max_size=5,
        )
    ):
        obj[key] = draw(_values)
    if draw(st.booleans()):
        obj["message"] = {
            "role": draw(st.sampled_from(["user", "assistant"])),
            "content": draw(_values),
        }
    text = json.dumps(obj, ensure_ascii=draw(st.booleans()))
    shape = draw(st.sampled_from(["whole", "cut", "doubled", "bom", "garbage", "blank"]))
    raw = text.encode("utf-8", "surrogatepass")
    if shape == "cut":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif shape == "doubled":
        raw = raw + raw
    elif shape == "bom":
        raw = b"\xef\xbb\xbf" + raw
    elif shape == "garbage":
        raw = draw(st.binary(max_size=40))
    elif shape == "blank":
        raw = b"\n" * draw(st.integers(0, 3))
    return raw.replace(b"\n", b" ") if shape != "blank" else raw


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_lines(), min_size=1, max_size=8))
def test_fuzzed_lines_never_stop_ingest(home: Any, cc_root: Path, lines: list[bytes]) -> None:
    path = cc_root / "-fuzz" / "fuzz.jsonl"
    path.parent.mkdir(exist_ok=True)
    marker = json.dumps(cc_user("fuzz", "m", "marker line after the fuzz")).encode()
    path.write_bytes(b"\n".join(lines) + b"\n" + marker + b"\n")
    stats = home.ingestor().ingest(
        [SourceRoot(Source.CLAUDE_CODE, cc_root, "test")], reimport=True, full_scan=True
    )
    assert not stats.errors and not _stuck(home)
    assert "marker line after the fuzz" in _texts(home)
