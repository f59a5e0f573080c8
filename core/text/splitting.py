"""Cutting long text into pieces the index can rank and show.

BM25 favours short documents and a snippet can only show so much, so a 50 kB tool output or a
long memory file is indexed as several rows. Two cutters:

* :func:`split_for_index` cuts any text into pieces of about ``size`` characters, at a
  paragraph, line, sentence or word boundary when there is one. The pieces joined give back the
  text exactly, so nothing is lost or duplicated.
* :func:`markdown_blocks` cuts a memory markdown file into sections by heading, and long sections
  by paragraph, keeping 1-based line numbers so a search hit can open the file at the right
  place. Every non-blank line lands in exactly one block.

Neither ever produces an empty piece, and neither raises on any input.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

DEFAULT_SIZE = 2000

# Boundaries to cut after, best first. CJK text has no spaces, but it has sentence punctuation.
_SENTENCE_ENDS = ("。", "！", "？", "；", "…", "，", "、")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def split_for_index(text: str, size: int = DEFAULT_SIZE) -> list[str]:
    """Cut ``text`` into pieces of at most ``size`` characters that join back into ``text``.

    A piece ends after the last paragraph break, else line break, else sentence end, else space
    in the second half of its window, so no piece but the last is shorter than ``size // 2``
    unless the text gives no choice. With no boundary at all it is cut at ``size``, though not
    between a character and the combining marks that follow it. Empty text has no pieces.
    """
    size = max(size, 2)
    if len(text) <= size:
        return [text] if text else []
    pieces: list[str] = []
    start = 0
    n = len(text)
    while n - start > size:
        cut = _cut_point(text, start, start + size)
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces


def _cut_point(text: str, start: int, limit: int) -> int:
    """Where to end the piece that starts at ``start`` and may reach ``limit`` (exclusive)."""
    low = start + (limit - start) // 2
    for boundary in ("\n\n", "\n"):
        at = text.rfind(boundary, low, limit)
        if at >= 0:
            return at + len(boundary)
    best = max(text.rfind(end, low, limit) for end in _SENTENCE_ENDS)
    if best >= 0:
        return best + 1
    best = max(text.rfind(space, low, limit) for space in (" ", "\t", "\u3000"))
    if best >= 0:
        return best + 1
    cut = limit
    while cut > start + 1 and _joins_previous(text[cut]):
        cut -= 1
    return cut if cut > start + 1 or not _joins_previous(text[cut]) else limit


def _joins_previous(char: str) -> bool:
    """Whether ``char`` belongs to the character before it (a combining mark, a ZWJ sequence)."""
    return unicodedata.category(char).startswith("M") or char in "\u200d\ufe0e\ufe0f"


@dataclass(frozen=True, slots=True)
class MarkdownBlock:
    """A run of lines of a markdown file: ``start_line``..``end_line``, 1-based, inclusive.

    ``text`` is exactly those lines joined with ``\\n`` (carriage returns dropped); ``heading``
    is the title of the section it belongs to, ``None`` before the first heading.
    """

    start_line: int
    end_line: int
    heading: str | None
    text: str


def markdown_blocks(text: str, max_chars: int = DEFAULT_SIZE) -> list[MarkdownBlock]:
    """Cut a markdown file into blocks: one per section, long sections by paragraph.

    Sections start at ATX headings (``#`` to ``######``) outside fenced code. A section longer
    than ``max_chars`` is cut between paragraphs (blank lines outside fences), a paragraph
    longer than that between lines; a single line longer than that is a block of its own.
    Blank lines at the edges of a block are left out of it.
    """
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    blocks: list[MarkdownBlock] = []
    for first, last, heading in _sections(lines):
        for block_first, block_last in _pack(lines, _paragraphs(lines, first, last), max_chars):
            blocks.append(
                MarkdownBlock(
                    start_line=block_first + 1,
                    end_line=block_last + 1,
                    heading=heading,
                    text="\n".join(lines[block_first : block_last + 1]),
                )
            )
    return blocks


def _sections(lines: list[str]) -> list[tuple[int, int, str | None]]:
    """``(first, last, heading)`` line indexes of each section, inclusive."""
    sections: list[tuple[int, int, str | None]] = []
    start, heading = 0, None
    for index, is_heading, title in _scan(lines):
        if is_heading and index > start:
            sections.append((start, index - 1, heading))
        if is_heading:
            start, heading = index, title
    sections.append((start, len(lines) - 1, heading))
    return sections


def _scan(lines: list[str]) -> list[tuple[int, bool, str | None]]:
    """For each line: its index, whether it is a heading (outside fences), its title."""
    out: list[tuple[int, bool, str | None]] = []
    fence: str | None = None
    for index, line in enumerate(lines):
        opener = _FENCE.match(line)
        if fence is not None:
            if _closes(opener, line, fence):
                fence = None
            out.append((index, False, None))
            continue
        if opener:
            fence = opener.group(1)
            out.append((index, False, None))
            continue
        heading = _HEADING.match(line)
        if heading:
            out.append((index, True, (heading.group(2) or "").strip() or None))
        else:
            out.append((index, False, None))
    return out


def _closes(opener: re.Match[str] | None, line: str, fence: str) -> bool:
    """Whether ``line`` closes the code fence opened by ``fence`` (same character, as long)."""
    if opener is None:
        return False
    marker = opener.group(1)
    return marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip().strip(fence[0])


def _paragraphs(lines: list[str], first: int, last: int) -> list[tuple[int, int]]:
    """The non-blank stretches of ``lines[first..last]``; blank lines in fences don't split."""
    paragraphs: list[tuple[int, int]] = []
    start: int | None = None
    fence: str | None = None
    for index in range(first, last + 1):
        line = lines[index]
        opener = _FENCE.match(line)
        if fence is not None:
            if _closes(opener, line, fence):
                fence = None
        elif opener:
            fence = opener.group(1)
        if not line.strip() and fence is None:
            if start is not None:
                paragraphs.append((start, _last_non_blank(lines, start, index - 1)))
                start = None
        elif start is None and line.strip():
            start = index
    if start is not None:
        paragraphs.append((start, _last_non_blank(lines, start, last)))
    return paragraphs


def _last_non_blank(lines: list[str], first: int, last: int) -> int:
    while last > first and not lines[last].strip():
        last -= 1
    return last


def _pack(
    lines: list[str], paragraphs: list[tuple[int, int]], max_chars: int
) -> list[tuple[int, int]]:
    """Group consecutive paragraphs into blocks of at most ``max_chars`` characters."""
    if not paragraphs:
        return []
    # ends[i]: characters of lines[:i] joined with newlines, plus one; so lines[a..b] joined
    # is ends[b + 1] - ends[a] - 1 long.
    ends = [0]
    for line in lines[paragraphs[0][0] : paragraphs[-1][1] + 1]:
        ends.append(ends[-1] + len(line) + 1)
    base = paragraphs[0][0]

    def length(first: int, last: int) -> int:
        return ends[last + 1 - base] - ends[first - base] - 1

    units: list[tuple[int, int]] = []
    for first, last in paragraphs:
        if length(first, last) <= max_chars:
            units.append((first, last))
        else:  # one line at a time; its blank lines belong to a fence and stay out
            units.extend((i, i) for i in range(first, last + 1) if lines[i].strip())
    blocks: list[tuple[int, int]] = []
    for first, last in units:
        if blocks and length(blocks[-1][0], last) <= max_chars:
            blocks[-1] = (blocks[-1][0], last)
        else:
            blocks.append((first, last))
    return blocks
