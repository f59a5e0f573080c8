"""What a question that only names a time gets: what the person asked then, newest first.

"what did we do last week?" and "what happened on May 3?" hold a date and nothing to look for
(:attr:`~.plan.QueryPlan.when_only`): no word to rank by, and nothing to embed but "what
happened", whose nearest messages are any that say so. Such a question is answered by the
sessions active in that time, the most recent first, each shown by the most substantive thing
the person asked in it within that time: their longest prompt, counted up to
:data:`SUBSTANTIVE` characters so that a pasted log does not win, ties going to the earliest
(which usually sets the task). Only what the person said counts: not sub-agents' prompts
(Claude wrote them), not text Claude Code injects as the user's (a skill's instructions, which
the index marks as not conversational), not the wrappers the CLI writes into a prompt
(``<command-name>``, ``<local-command-stdout>``). The person's filters apply; ``--role`` and
``--kind`` replace "the user's text turns".
"""

from __future__ import annotations

from clawback.core.db import Queryable
from clawback.core.search.dates import DateWindow
from clawback.core.search.filters import NOT_MARKUP, SearchFilters

SUBSTANTIVE = 400  # characters: a prompt this long says what the session was about

# CROSS JOIN keeps SQLite's order: each session's entries of the window through the index on
# (session_id, ts), instead of a scan of every entry. On the 200 MB corpus: a day 4 ms instead
# of 45, a month 53 instead of 69; a whole year (a quarter of the archive) 146 instead of 104.
_ASKED = """
SELECT e.id, e.session_id, e.ts, min(length(e.text), {substantive})
FROM sessions s
CROSS JOIN entries e ON e.session_id = s.id
JOIN files f ON f.id = e.file_id
WHERE {where}
"""


def asked_in(db: Queryable, window: DateWindow, filters: SearchFilters) -> list[int]:
    """One entry per session active in ``window`` (its most substantive prompt there), the
    sessions newest first; the whole list, so every page is a slice of the same one."""
    narrowed = filters.narrowed(window.since, window.until)
    if narrowed is None:
        return []  # the person's --since/--until and the question's date do not meet
    clauses, params = narrowed.where()
    if not filters.role:
        clauses.append("e.role = 'user'")
    if filters.kind == "all":
        clauses.append("e.kind = 'text'")
    clauses += ["e.conversational = 1", "e.sidechain = 0", NOT_MARKUP]
    sql = _ASKED.format(substantive=SUBSTANTIVE, where=" AND ".join(clauses))
    best: dict[str, tuple[int, str, int]] = {}  # session -> (entry, its time, its weight)
    last: dict[str, str] = {}
    for entry, session, ts, weight in db.execute(sql, params):
        last[session] = max(last.get(session, ts), ts)
        kept = best.get(session)
        if kept is None or (-weight, ts, entry) < (-kept[2], kept[1], kept[0]):
            best[session] = (entry, ts, weight)
    newest = sorted(last, key=lambda session: (last[session], session), reverse=True)
    return [best[session][0] for session in newest]
