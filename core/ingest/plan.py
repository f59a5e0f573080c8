"""Where each file's reading starts, and the parse worker's plan made from that.

The ingestor decides a file's start when its turn comes (:func:`starts_over`); a parse worker
(:mod:`clawback.core.ingest.parse_ahead`) reads files before their turn, so it is given the
start each file will have if nothing changes first (:func:`planned_start`). The ingestor uses
the worker's parts only if that still holds, so a wrong guess costs time, never rows.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager, nullcontext

import sqlite_utils
from clawback.core.ingest.batch import FileState
from clawback.core.ingest.file_reader import Start, window_hash
from clawback.core.ingest.parse_ahead import (
    ParseAhead,
    ReadOptions,
    worth_handing_over,
    worth_it,
)
from clawback.core.ingest.sources import WorkItem
from clawback.core.records import Source


def copy_lacks_start(item: WorkItem, state: FileState, *, keep: bool) -> bool:
    """A Claude Code file indexed while copies were off (or before clawback kept them): with
    ``keep`` on it is read again from its start, once, so that its copy holds every line."""
    return keep and item.source is Source.CLAUDE_CODE and state.offset > 0 and not state.kept_bytes


def starts_over(item: WorkItem, state: FileState, *, reimport: bool, keep: bool = False) -> bool:
    """Whether the file is read again from its start: asked to, shrunk, rewritten, or its kept
    copy would lack its beginning."""
    return (
        reimport
        or copy_lacks_start(item, state, keep=keep)
        or item.size < state.offset
        or (state.offset > 0 and window_hash(item.path, state.offset) != state.prefix_hash)
    )


def planned_start(
    item: WorkItem, state: FileState | None, *, reimport: bool, keep: bool = False
) -> Start:
    """Where reading ``item`` will start when its turn comes, if nothing changes first:
    what the ingestor decides, without the writes."""
    if state is None:
        return Start(0, 0, None)
    if starts_over(item, state, reimport=reimport, keep=keep):
        return Start(0, 0, state.session_id)
    return Start(state.offset, state.last_line, state.session_id)


def read_ahead(
    db: sqlite_utils.Database, work: list[WorkItem], options: ReadOptions, *, reimport: bool
) -> AbstractContextManager[ParseAhead | None]:
    """A worker reading the files ahead of their turn, when there is enough to read."""
    files = [
        item for item in work if item.source is not Source.MEMORY and worth_handing_over(item.size)
    ]
    if not worth_it([i.size for i in files]):
        return nullcontext()  # sizes are an upper bound of what is left to read
    # The rows of these files only: the scan read every row once already.
    wanted = json.dumps([[item.source.value, item.key] for item in files])
    known = {
        (state.source, state.file_key): state
        for state in map(
            FileState.from_row,
            db.query(
                """SELECT f.* FROM json_each(?) AS w CROSS JOIN files AS f
                   ON f.source = json_extract(w.value, '$[0]')
                   AND f.file_key = json_extract(w.value, '$[1]')""",
                [wanted],
            ),
        )
    }
    plan: list[tuple[WorkItem, Start]] = []
    for item in files:
        state = known.get((item.source.value, item.key))
        try:
            start = planned_start(item, state, reimport=reimport, keep=options.keep)
        except OSError:  # gone or unreadable already: its own turn reports it
            continue
        if worth_handing_over(item.size - start.offset):
            plan.append((item, start))
    if not worth_it([item.size - start.offset for item, start in plan]):
        return nullcontext()
    try:
        return ParseAhead(plan, options)
    except (OSError, RuntimeError):  # no process, thread or temp file: read it all here
        return nullcontext()
