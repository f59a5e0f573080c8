"""The usage tables kept in step with the lines they come from: the write side of usage.

Claude Code writes one API response as several lines (one per content block) that share the
message id and request id, the earlier ones with partial output counts, and a sub-agent's
side question can replay its parent's messages. Every line's usage is kept (``usage``, in
file order), and :func:`settle` marks the one line of each response that counts: ccusage's
rule, decided the same whichever file is read first (``docs/usage.md``):

- lines of one message id and request id are one response; of a message id that has a
  main-thread line, its sub-agent (sidechain) lines are replays and never count; the
  sidechain lines of a message id with no main-thread line are one response;
- of a response's lines, the one with the most tokens counts (ties: the first by file key,
  then line).

``usage_buckets`` holds each file's counted lines summed per session, UTC quarter hour,
model, fast mode, prompt size and whether the lines priced themselves; reports read only it.
:func:`refresh_buckets` rebuilds a file's from its lines (recounting, never a running sum,
keeps it right after a re-read, a rollback or a dedup that moved a response to another file).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

# A usage row as a part carries it (see ``FileReader``): the line, its object's place on the
# line, the other session it belongs to (None: the file's own), then the columns below.
USAGE_COLUMNS = (
    "ts", "model", "message_key", "request_key", "sidechain", "fast", "input_tokens",
    "output_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens",
    "cost_usd",
)  # fmt: skip
UsageValues = tuple[Any, ...]  # one row as written: file, line, seq, session, then USAGE_COLUMNS

INSERT = (
    f"INSERT INTO usage (file_id, line, seq, session_id, {', '.join(USAGE_COLUMNS)})"
    f" VALUES ({', '.join('?' * (len(USAGE_COLUMNS) + 4))})"
)

# Prompt sizes where a model's price may change (Anthropic's long-prompt rates start above
# 200,000 tokens, Haiku 5.5's above 100,000): a bucket keeps its responses' band.
BANDS = (100_000, 200_000)


def id_key(text: str | None) -> int | None:
    """An API id as a 64-bit number: compact to index, and no id text is kept."""
    if not text:
        return None
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


# Which lines count, for the message ids ``{keys}`` selects; files whose lines changed returned.
_SETTLE = """
WITH g AS (
    SELECT u.file_id, u.line, u.seq, u.counted, u.message_key, u.sidechain, f.file_key,
           CASE WHEN u.sidechain THEN NULL ELSE u.request_key END AS response,
           u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens
               AS total,
           min(u.sidechain) OVER (PARTITION BY u.message_key) AS only_sidechain
    FROM usage u JOIN files f ON f.id = u.file_id
    WHERE u.message_key IN ({keys})
), ranked AS (
    SELECT file_id, line, seq,
           CASE WHEN sidechain AND NOT only_sidechain THEN 0
                ELSE row_number() OVER (
                    PARTITION BY message_key, sidechain, response
                    ORDER BY total DESC, file_key, line, seq) = 1
           END AS wins
    FROM g
)
UPDATE usage SET counted = ranked.wins FROM ranked
WHERE usage.file_id = ranked.file_id AND usage.line = ranked.line AND usage.seq = ranked.seq
  AND usage.counted != ranked.wins
RETURNING usage.file_id
"""
# The message ids of a file's lines after ``after`` that other lines share.
_SHARED_KEYS = """
SELECT DISTINCT n.message_key FROM usage n
WHERE n.file_id = :file AND n.line > :after AND n.message_key IS NOT NULL
  AND EXISTS (SELECT 1 FROM usage o WHERE o.message_key = n.message_key
              AND NOT (o.file_id = n.file_id AND o.line = n.line AND o.seq = n.seq))
"""


def write(conn: Any, file_id: int, rows: Iterable[UsageValues], after: int) -> set[int]:
    """Add a file's usage lines past line ``after`` (``rows``: file, line, seq, session and
    :data:`USAGE_COLUMNS`) and decide which lines of their responses count; returns the files
    whose counted lines changed (to refresh: :func:`refresh_buckets`)."""
    conn.executemany(INSERT, rows)
    changed = conn.execute(
        _SETTLE.format(keys=_SHARED_KEYS), {"file": file_id, "after": after}
    ).fetchall()
    return {row[0] for row in changed}


def forget(conn: Any, file_id: int, after: int) -> set[int]:
    """Delete a file's usage past line ``after``; the lines left of the same responses are
    settled again. Returns the files whose sums must be refreshed (this one among them)."""
    keys = sorted(
        key
        for (key,) in conn.execute(
            """SELECT DISTINCT message_key FROM usage
               WHERE file_id = ? AND line > ? AND message_key IS NOT NULL""",
            (file_id, after),
        )
    )
    if not conn.execute(
        "DELETE FROM usage WHERE file_id = ? AND line > ?", (file_id, after)
    ).rowcount:
        return set()
    changed = {file_id}
    if keys:
        changed.update(
            row[0]
            for row in conn.execute(
                _SETTLE.format(keys="SELECT value FROM json_each(:keys)"),
                {"keys": json.dumps(keys)},
            )
        )
    return changed


_REFRESH = f"""
INSERT INTO usage_buckets (file_id, session_id, bucket, model, fast, band, priced, responses,
    input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cache_write_1h_tokens,
    cost_usd)
SELECT :file, session_id,
       CASE WHEN ts IS NULL THEN ''
            ELSE substr(ts, 1, 14) || printf('%02d', CAST(substr(ts, 15, 2) AS INTEGER) / 15 * 15)
       END AS quarter,
       coalesce(model, '') AS named,
       fast,
       CASE WHEN prompt <= {BANDS[0]} THEN 0 WHEN prompt <= {BANDS[1]} THEN 1 ELSE 2 END AS band,
       cost_usd IS NOT NULL AS priced,
       count(*), sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),
       sum(cache_write_tokens), sum(cache_write_1h_tokens), sum(cost_usd)
FROM (SELECT *, input_tokens + cache_read_tokens + cache_write_tokens AS prompt
      FROM usage WHERE file_id = :file AND counted = 1)
GROUP BY session_id, quarter, named, fast, band, priced
"""


def refresh_buckets(conn: Any, file_id: int) -> None:
    """Rebuild a file's sums from its counted lines."""
    conn.execute("DELETE FROM usage_buckets WHERE file_id = ?", (file_id,))
    conn.execute(_REFRESH, {"file": file_id})
