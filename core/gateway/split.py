"""A reply cut into parts that fit a chat's message limit, never inside a code fence.

Telegram takes at most 4,096 characters a message, counted in UTF-16 code units after its
formatting is read. A long reply is cut at the last paragraph break that fits, else a line
break, else the end of a sentence, else a space, else anywhere; a cut outside a code fence is
preferred to one inside. A code block longer than a message is cut all the same: the part ends
with a closing fence and the next one reopens it with the same language, so every part renders
on its own. Pure text: nothing is dropped, reordered or rewritten besides those fences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["TELEGRAM_LIMIT", "split_reply", "utf16_len"]

TELEGRAM_LIMIT = 4096
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^`\n]*)$")
_SENTENCE_END = re.compile(r"[.!?…。！？][\"')\]]*\s")
# A cut earlier than this share of the room makes a short part; a later, lesser break is better.
_MIN_SHARE = 0.5


def utf16_len(text: str) -> int:
    """The length Telegram counts: UTF-16 code units (an emoji outside the BMP counts two)."""
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class _Fence:
    marker: str  # the fence characters that opened it (``` or ~~~, maybe longer)
    info: str  # the language (and anything else after the marker)

    def opener(self) -> str:
        return f"{self.marker}{self.info}\n"

    def closer(self) -> str:
        return self.marker


def _fence_at(text: str, end: int) -> _Fence | None:
    """The code fence still open at ``end`` (where a cut would fall), if any."""
    open_fence: _Fence | None = None
    position = 0
    while position < end:
        newline = text.find("\n", position)
        line_end = len(text) if newline < 0 else newline
        match = _FENCE.match(text[position : min(line_end, end)])
        if match:
            marker = match.group(1)
            if open_fence is None:
                open_fence = _Fence(marker, match.group(2).strip())
            elif (
                marker[0] == open_fence.marker[0]
                and len(marker) >= len(open_fence.marker)
                and not match.group(2).strip()
            ):
                open_fence = None
        if newline < 0 or newline >= end:
            break
        position = newline + 1
    return open_fence


def _candidates(text: str, room: int, floor: int) -> list[tuple[int, int]]:
    """Cut positions in ``text[floor:room]``, each with its rank (lower is a better break)."""
    window = text[:room]
    found: list[tuple[int, int]] = []
    for match in re.finditer(r"\n\s*\n", window):
        found.append((0, match.end()))
    for match in re.finditer(r"\n", window):
        found.append((1, match.end()))
    for match in _SENTENCE_END.finditer(window):
        found.append((2, match.end()))
    for match in re.finditer(r"[ \t]+", window):
        found.append((3, match.end()))
    return [(rank, at) for rank, at in found if floor < at <= room]


def _best_cut(text: str, room: int, floor: int) -> int:
    """Where to cut ``text`` so the head holds at most ``room`` characters."""
    options = _candidates(text, room, floor)
    if not options:
        return max(room, floor + 1)
    outside = [(rank, at) for rank, at in options if _fence_at(text, at) is None]
    for pool in (outside, options):
        for rank in range(4):
            at = max((at for r, at in pool if r == rank), default=0)
            if at and at - floor >= (room - floor) * _MIN_SHARE:
                return at
    return max(at for _, at in options)


def split_reply(text: str, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """``text`` as parts of at most ``limit`` UTF-16 units each, in order; none is empty."""
    if limit < 64:
        raise ValueError("a message limit below 64 characters leaves no room for a fence")
    parts: list[str] = []
    reopen = ""
    rest = text.strip("\n")
    while rest:
        body = reopen + rest
        if utf16_len(body) <= limit:
            if body.strip():
                parts.append(body.rstrip())
            break
        room = _room(body, limit - 8)  # a closing fence may follow the cut
        cut = _best_cut(body, room, len(reopen))
        head, tail = body[:cut], body[cut:]
        fence = _fence_at(body, cut)
        if fence is not None:
            head = head.rstrip("\n") + "\n" + fence.closer()
            reopen = fence.opener()
            tail = tail.lstrip("\n")
        else:
            reopen = ""
            head = head.rstrip()
            tail = tail.lstrip("\n")
        if head.strip():
            parts.append(head)
        rest = tail
    return parts


def _room(text: str, units: int) -> int:
    """How many characters of ``text`` fit in ``units`` UTF-16 code units."""
    if len(text) * 2 <= units:
        return len(text)
    count = 0
    for index, char in enumerate(text):
        count += 2 if ord(char) > 0xFFFF else 1
        if count > units:
            return index
    return len(text)
