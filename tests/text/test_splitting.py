"""Long text is cut for the index without losing, duplicating or renumbering anything."""

from __future__ import annotations

import re

from clawback.core.text.splitting import MarkdownBlock, markdown_blocks, split_for_index
from hypothesis import given, settings
from hypothesis import strategies as st


def test_short_text_is_one_piece() -> None:
    assert split_for_index("hello", size=10) == ["hello"]
    assert split_for_index("x" * 10, size=10) == ["x" * 10]


def test_empty_text_has_no_pieces() -> None:
    assert split_for_index("") == []


def test_cuts_prefer_paragraphs_then_lines_then_words() -> None:
    text = "a" * 60 + "\n\n" + "b" * 30 + "\n" + "c c c"
    assert split_for_index(text, size=80) == ["a" * 60 + "\n\n", "b" * 30 + "\n" + "c c c"]
    assert split_for_index("one two three four five six", size=10) == [
        "one two ",
        "three ",
        "four five ",
        "six",
    ]


def test_cjk_text_is_cut_after_sentence_punctuation() -> None:
    text = "你好世界。" * 30
    pieces = split_for_index(text, size=52)
    assert all(piece.endswith("。") for piece in pieces)
    assert "".join(pieces) == text


def test_text_without_boundaries_is_cut_hard_but_not_before_a_combining_mark() -> None:
    assert split_for_index("x" * 25, size=10) == ["x" * 10, "x" * 10, "x" * 5]
    text = "e\u0301" * 10  # é as e + combining acute
    pieces = split_for_index(text, size=5)
    assert "".join(pieces) == text
    assert all(not piece.startswith("\u0301") for piece in pieces)


@settings(max_examples=300)
@given(
    st.text(alphabet=st.sampled_from("ab \n\t。,\u0301\u200d😀你"), max_size=400)
    | st.text(max_size=400),
    st.integers(min_value=1, max_value=60),
)
def test_pieces_join_back_exactly(text: str, size: int) -> None:
    pieces = split_for_index(text, size=size)
    assert "".join(pieces) == text
    assert all(pieces)
    assert all(len(piece) <= max(size, 2) for piece in pieces)
    if text and len(text) <= max(size, 2):
        assert pieces == [text]


MEMORY = """\
Preamble line.

# Project

Uses SQLite.

## Setup
Run `make`.

```sh
# not a heading

make check
```

## Notes
"""


def test_sections_by_heading_with_line_numbers() -> None:
    assert markdown_blocks(MEMORY) == [
        MarkdownBlock(1, 1, None, "Preamble line."),
        MarkdownBlock(3, 5, "Project", "# Project\n\nUses SQLite."),
        MarkdownBlock(7, 14, "Setup", MEMORY.split("\n", 6)[6].split("\n\n## Notes")[0]),
        MarkdownBlock(16, 16, "Notes", "## Notes"),
    ]


def test_long_sections_are_cut_between_paragraphs() -> None:
    paragraph = "word " * 50  # 250 characters
    text = "# Long\n\n" + "\n\n".join(paragraph.strip() for _ in range(6))
    blocks = markdown_blocks(text, max_chars=600)
    assert [(c.start_line, c.end_line) for c in blocks] == [(1, 5), (7, 9), (11, 13)]
    assert all(c.heading == "Long" for c in blocks)
    assert all(len(c.text) <= 600 for c in blocks)


def test_a_long_paragraph_is_cut_between_lines() -> None:
    text = "\n".join(f"line {i:02d} " + "x" * 40 for i in range(20))
    blocks = markdown_blocks(text, max_chars=200)
    assert all(len(c.text) <= 200 for c in blocks)
    assert [c.start_line for c in blocks] == [1, 5, 9, 13, 17]


def test_crlf_and_hashtags() -> None:
    blocks = markdown_blocks("#tag is not a heading\r\n# Real\r\ntext\r\n")
    assert blocks == [
        MarkdownBlock(1, 1, None, "#tag is not a heading"),
        MarkdownBlock(2, 3, "Real", "# Real\ntext"),
    ]


def test_empty_and_blank_files_have_no_chunks() -> None:
    assert markdown_blocks("") == []
    assert markdown_blocks("\n\n  \n") == []


_md_lines = st.one_of(
    st.sampled_from(["", "   ", "# Title", "## Sub", "###", "#tag", "```", "~~~~", "- item"]),
    st.text(alphabet=st.sampled_from("ab #`~\t-你"), max_size=30),
    st.text(max_size=120),
)


@settings(max_examples=300)
@given(st.lists(_md_lines, max_size=60).map("\n".join), st.integers(min_value=1, max_value=300))
def test_chunks_cover_every_non_blank_line_once(text: str, max_chars: int) -> None:
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    blocks = markdown_blocks(text, max_chars=max_chars)
    covered: list[int] = []
    for block in blocks:
        assert 1 <= block.start_line <= block.end_line <= len(lines)
        assert block.text == "\n".join(lines[block.start_line - 1 : block.end_line])
        assert lines[block.start_line - 1].strip() and lines[block.end_line - 1].strip()
        assert len(block.text) <= max_chars or block.start_line == block.end_line
        covered.extend(range(block.start_line, block.end_line + 1))
    assert covered == sorted(set(covered))  # in order, no overlap
    non_blank = {i + 1 for i, line in enumerate(lines) if line.strip()}
    assert non_blank <= set(covered)
    assert all(lines[i - 1].strip() or _inside(blocks, i) for i in covered)


def _inside(blocks: list[MarkdownBlock], line: int) -> bool:
    return any(c.start_line < line < c.end_line for c in blocks)


def test_headings_name_their_chunks() -> None:
    text = "intro\n# A\na\n## B\nb\n```\n# not\n```\n### C #\nc"
    assert [(c.heading, c.start_line) for c in markdown_blocks(text)] == [
        (None, 1),
        ("A", 2),
        ("B", 4),
        ("C", 9),
    ]
    assert re.match(r"## B", markdown_blocks(text)[2].text)
