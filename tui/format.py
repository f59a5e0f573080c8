"""How the panes word and colour archive facts: source names, times, highlighted snippets.

One place, so a session's source or a timestamp reads the same in the list, the transcript
and the search results. Styles name theme variables only, never literal colours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from clawback.core.archive import SOURCES as SOURCES  # the archive's wording
from clawback.core.archive import origin_label as origin_label
from clawback.core.archive import project_name
from clawback.core.archive import source_label as source_label
from clawback.core.search import MARK_END, MARK_START
from clawback.core.timeutil import parse_ts
from clawback.core.usage import UsageTotals, cost_text
from textual.content import Content

MATCH_STYLE = "bold $text-accent on $accent 25%"
_MARKED = re.compile(f"{MARK_START}(.*?){MARK_END}", re.S)


def local_time(ts: str | None, *, with_date: bool = True) -> str:
    """An index timestamp (UTC) as local wall-clock time; blank if there is none."""
    moment = parse_ts(ts) if ts else None
    if moment is None:
        return ""
    local = moment.astimezone()
    return local.strftime("%Y-%m-%d %H:%M" if with_date else "%H:%M")


def local_date(ts: str | None) -> str:
    """An index timestamp as its local day: enough to place a session in a narrow list."""
    return local_time(ts)[:10]


def project_labels(paths: Iterable[str]) -> dict[str, str]:
    """Each project by its folder's name, with as much of the parent path as it takes to tell
    two projects of one name apart (``work/api`` and ``home/api``)."""
    parts = {path: [p for p in re.split(r"[\\/]+", path) if p] or [path] for path in paths}
    depth = dict.fromkeys(parts, 1)
    while True:
        labels = {path: "/".join(parts[path][-depth[path] :]) for path in parts}
        seen: dict[str, list[str]] = {}
        for path, label in labels.items():
            seen.setdefault(label, []).append(path)
        clashing = [
            path
            for group in seen.values()
            if len(group) > 1
            for path in group
            if depth[path] < len(parts[path])
        ]
        if not clashing:
            return labels
        for path in clashing:
            depth[path] += 1


def project_label(cwd: str | None) -> str:
    """A session's project as its row names it; blank when it ran in no folder."""
    return project_name(cwd) if cwd else ""


def marked_snippet(snippet: str) -> Content:
    """A search snippet with its MARK_START/MARK_END spans shown as highlights, on one line."""
    plain: list[str] = []
    spans: list[tuple[int, int]] = []
    position = 0
    for part in _MARKED.split(" ".join(snippet.split())):
        # split() alternates: text outside marks, text inside marks, ...
        inside = len(plain) % 2 == 1
        if inside:
            spans.append((position, position + len(part)))
        plain.append(part)
        position += len(part)
    content = Content("".join(plain))
    for start, end in spans:
        content = content.stylize(MATCH_STYLE, start, end)
    return content


def highlight_terms(content: Content, terms: list[str]) -> Content:
    """``content`` with every case-insensitive occurrence of ``terms`` highlighted."""
    words = sorted({t for t in terms if t}, key=len, reverse=True)
    if not words:
        return content
    pattern = re.compile("|".join(re.escape(w) for w in words), re.I)
    return content.highlight_regex(pattern, style=MATCH_STYLE)


def marked_terms(snippet: str) -> list[str]:
    """The distinct words a snippet marks, to highlight the same words elsewhere."""
    return sorted({m.strip() for m in _MARKED.findall(snippet) if m.strip()})


def usage_label(usage: UsageTotals | None) -> str:
    """A session's cost and cache share as its row and its transcript show them; blank for a
    session that recorded no usage."""
    if usage is None:
        return ""
    share = usage.cache_read_share
    cached = f" · {share:.0%} cached" if share is not None else ""
    cost = cost_text(usage)
    return f"{'cost unknown' if cost == 'unknown' else cost}{cached}"


def cost_column(usage: UsageTotals | None) -> str:
    """A session's cost and cache share as the head of its row in a list: right-aligned to
    one width (``unknown 87%`` and ``$123.45 87%`` fit), so a list of sessions reads as a column
    of costs; nothing for a session without usage, whose row keeps its room."""
    if usage is None:
        return ""
    share = usage.cache_read_share
    cached = f"{share:.0%}" if share is not None else "-"
    return f"{cost_text(usage):>7} {cached:>3} "


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 hit``, ``2 hits``; ``many`` for a word whose plural is not the word plus s."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"
