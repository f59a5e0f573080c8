"""Kept copies of Claude Code lines: what is masked, what is kept byte for byte, and that a copy
always holds exactly the lines the index holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clawback.core.archive.kept import (
    KeptCopies,
    KeptCopyError,
    LineKeeper,
    masked_line,
    read_frames,
)
from clawback.core.home import Home
from clawback.core.text.masking import mask_secrets

from tests.helpers import cc_assistant, cc_user, write_lines

SECRET = "sk-ant-api03-" + "Zq8xWm3Kd9Lp2Rt7Vb4Nc6Hy1Js5Gf0" * 2
SESSION = "5d2c8f0e-1b7a-4c3e-9f6d-2a8b0c4e6f1a"


def _line(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_line_without_secrets_is_kept_byte_for_byte() -> None:
    raw = b'{"type":"user",  "message":{"content":"caf\\u00e9 \xe2\x9c\x93"}}\n'
    values = [json.loads(raw)]
    assert masked_line(raw, values, mask_secrets) == raw.rstrip(b"\n")


def test_secrets_are_masked_as_the_index_masks_them_but_ids_and_signatures_are_not() -> None:
    signature = "EqQBCkgIARABGAIiQL" + "x" * 40 + "Zk9/+w=="
    value: dict[str, Any] = {
        "type": "assistant",
        "uuid": "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e",
        "requestId": "req_011CSv9HLvBRqTgZjx7Yq2Wm",
        "message": {
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "content": [
                {"type": "thinking", "thinking": f"the key is {SECRET}", "signature": signature},
                {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "Bash",
                 "input": {"command": f"export ANTHROPIC_API_KEY={SECRET}"}},
            ],
        },
    }  # fmt: skip
    kept = json.loads(masked_line(_line(value), [value], mask_secrets))
    blocks = kept["message"]["content"]
    assert SECRET not in json.dumps(kept)
    assert blocks[0]["thinking"] == mask_secrets(f"the key is {SECRET}")
    assert blocks[1]["input"]["command"] == mask_secrets(f"export ANTHROPIC_API_KEY={SECRET}")
    # What Claude Code needs to resume is untouched.
    assert blocks[0]["signature"] == signature
    assert blocks[1]["id"] == "toolu_01A09q90qw90lq917835lq9"
    assert kept["uuid"] == value["uuid"] and kept["requestId"] == value["requestId"]
    assert kept["message"]["id"] == value["message"]["id"]


def test_a_line_that_is_not_json_is_masked_as_text() -> None:
    raw = f"not json {SECRET}\n".encode()
    assert masked_line(raw, [], mask_secrets) == mask_secrets(f"not json {SECRET}").encode()
    assert masked_line(raw, [], None) == raw.rstrip(b"\n")  # masking off: kept as read


def test_frames_round_trip_with_blank_lines_and_keep_line_numbers(tmp_path: Path) -> None:
    keeper = LineKeeper(1, 0, mask_secrets)
    keeper.add(b'{"a":1}\n', [{"a": 1}])
    keeper.blank(3)
    first = keeper.frame(100)
    keeper.add(b'{"b":2}\n', [{"b": 2}])
    second = keeper.frame(120)
    assert keeper.frame(130) is None  # nothing since
    copies = KeptCopies(tmp_path / "kept")
    length = copies.append("claude-code", "p/s.jsonl", 0, [first])  # type: ignore[list-item]
    length = copies.append("claude-code", "p/s.jsonl", length, [second])  # type: ignore[list-item]
    frames = list(copies.read("claude-code", "p/s.jsonl", length))
    assert [(f.first_line, f.last_line, f.start_offset, f.end_offset) for f in frames] == [
        (1, 4, 0, 100),
        (5, 5, 100, 120),
    ]
    assert [line for f in frames for line in f.lines] == [b'{"a":1}', b"", b"", b"", b'{"b":2}']
    path = copies.path("claude-code", "p/s.jsonl")
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "kept").stat().st_mode & 0o777 == 0o700


def test_an_append_cuts_off_what_a_killed_run_left_past_the_committed_length(
    tmp_path: Path,
) -> None:
    copies = KeptCopies(tmp_path / "kept")
    keeper = LineKeeper(1, 0, None)
    keeper.add(b"{}", [{}])
    committed = copies.append("claude-code", "k.jsonl", 0, [keeper.frame(3)])  # type: ignore[list-item]
    keeper.add(b'{"lost":1}', [{"lost": 1}])
    copies.append("claude-code", "k.jsonl", committed, [keeper.frame(14)])  # type: ignore[list-item]
    # ...killed before the index committed the new length: the next append starts over there.
    retry = LineKeeper(2, 3, None)
    retry.add(b'{"again":1}', [{"again": 1}])
    length = copies.append("claude-code", "k.jsonl", committed, [retry.frame(15)])  # type: ignore[list-item]
    lines = [line for f in copies.read("claude-code", "k.jsonl", length) for line in f.lines]
    assert lines == [b"{}", b'{"again":1}']
    with pytest.raises(KeptCopyError, match="shorter"):
        list(read_frames(copies.path("claude-code", "k.jsonl"), length + 1))


def test_ingest_keeps_every_line_and_a_grown_file_adds_a_frame(home: Home, cc_root: Path) -> None:
    path = cc_root / "-home-u-proj" / f"{SESSION}.jsonl"
    lines = [
        cc_user(SESSION, "u1", "hello"),
        cc_assistant(SESSION, "a1", [{"type": "text", "text": f"your key {SECRET}"}]),
    ]
    write_lines(path, lines)
    home.ingest_all()
    with path.open("a") as handle:
        handle.write("\n" + json.dumps(cc_user(SESSION, "u2", "more")) + "\n")
    home.ingest_all()
    key = f"-home-u-proj/{SESSION}.jsonl"
    (kept_bytes, last_line) = home.db.execute(
        "SELECT kept_bytes, last_line FROM files WHERE file_key = ?", (key,)
    ).fetchone()
    frames = list(KeptCopies(home.paths.kept).read("claude-code", key, kept_bytes))
    assert len(frames) == 2 and frames[-1].last_line == last_line == 4
    kept = [line for frame in frames for line in frame.lines]
    original = path.read_bytes().splitlines()
    assert kept[0] == original[0] and kept[2:] == original[2:]  # byte for byte
    assert SECRET not in kept[1].decode() and json.loads(kept[1])["uuid"] == "a1"


def test_keep_lines_off_keeps_nothing_and_drops_an_old_copy(home: Home, cc_root: Path) -> None:
    path = cc_root / "-home-u-proj" / f"{SESSION}.jsonl"
    write_lines(path, [cc_user(SESSION, "u1", "hello")])
    home.ingest_all()
    copy = KeptCopies(home.paths.kept).path("claude-code", f"-home-u-proj/{SESSION}.jsonl")
    assert copy.exists()
    home.config.archive.keep_lines = False
    with path.open("a") as handle:
        handle.write(json.dumps(cc_user(SESSION, "u2", "more")) + "\n")
    home.ingest_all()
    assert not copy.exists()
    assert home.db.execute("SELECT sum(kept_bytes) FROM files").fetchone()[0] == 0


def test_a_file_indexed_without_a_copy_is_read_again_once_copies_are_on(
    home: Home, cc_root: Path
) -> None:
    path = cc_root / "-home-u-proj" / f"{SESSION}.jsonl"
    write_lines(path, [cc_user(SESSION, "u1", "hello"), cc_user(SESSION, "u2", "again")])
    home.config.archive.keep_lines = False
    home.ingest_all()
    home.config.archive.keep_lines = True
    stats = home.ingest_all()  # the file did not change, but its copy lacks every line
    assert stats.reimported == 1
    key = f"-home-u-proj/{SESSION}.jsonl"
    (kept_bytes,) = home.db.execute(
        "SELECT kept_bytes FROM files WHERE file_key = ?", (key,)
    ).fetchone()
    frames = list(KeptCopies(home.paths.kept).read("claude-code", key, kept_bytes))
    assert [line for f in frames for line in f.lines] == path.read_bytes().splitlines()
    assert home.ingest_all().unchanged == 1  # once
