"""The app's door to one home's archive, safe to call from many worker threads at once.

The core hands out one SQLite connection, which ingestion writes through. The app runs its
queries, ingests and file saves in thread workers that overlap, so this module gives reads
connections of their own (a slow search never holds up a session list, and never sees an
ingest's half-written transaction) and serialises every write in this process (two ingests on
one connection would nest transactions). A search in flight is interrupted by the next one.

Everything here blocks: call it from a thread worker, never from the event loop.
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import sqlite_utils
from clawback.core import archive
from clawback.core.archive import Restored, ResumePlan, claude_executable, plan_resume
from clawback.core.config import update_settings
from clawback.core.db import connect
from clawback.core.db_guard import CUT, IndexFile
from clawback.core.errors import ConfigError
from clawback.core.faults import set_aside
from clawback.core.home import Home
from clawback.core.ingest.ingestor import IngestStats, Progress
from clawback.core.ingest.sources import SourceRoot, configured_roots
from clawback.core.memory import (
    ProjectMemory,
    Workspace,
    auto_memory_roots,
    auto_memory_title,
    list_auto_memory,
    locate,
    with_working_folders,
)
from clawback.core.records import Source
from clawback.core.search import NearestChunks, SearchFilters, SearchHit, SearchResults, find
from clawback.core.usage import (
    PriceTable,
    UsageReport,
    UsageTotals,
    load_prices,
    session_usage,
    usage_report,
)
from clawback.core.usage import models as usage_models
from clawback.core.usage import projects as usage_projects

ProgressFactory = Callable[[int, int], Progress]


class Superseded(Exception):
    """A newer search started before this one finished; its results must not be shown."""


class _Reader:
    """One lazily opened read connection, used by one thread at a time."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._db: sqlite_utils.Database | None = None
        self.lock = threading.Lock()

    @contextmanager
    def use(self) -> Iterator[sqlite_utils.Database]:
        with self.lock:
            if self._db is None:
                self._db = connect(self._path)
            yield self._db

    def interrupt(self) -> None:
        if self._db is not None:
            self._db.conn.interrupt()

    def close(self) -> None:
        with self.lock:
            if self._db is not None:
                self._db.conn.close()
                self._db = None


class Store:
    def __init__(self, home: Home) -> None:
        self.home = home
        self.paths = home.paths
        self.config = home.config
        self.workspace = Workspace(home.workspace)
        self._write_lock = threading.Lock()
        self._settings_lock = threading.Lock()
        self._settings_problem: str | None = None  # the config error already reported
        self._browse = _Reader(home.paths.database)
        self._search = _Reader(home.paths.database)
        self._index = IndexFile(home.paths.database)
        self._search_ids = itertools.count(1)
        self._latest_search = 0
        self._nearest: NearestChunks | None = None
        self._embedder: Any = None  # the background embedder, once started
        self.embedded: Any = None  # its latest Coverage, shown while it grows
        self._prices: PriceTable | None = None

    # -- reads --------------------------------------------------------------------------------

    def sessions(
        self,
        *,
        source: str | None,
        text: str | None,
        limit: int,
        offset: int = 0,
        project: str | None = None,
    ) -> list[archive.SessionSummary]:
        with self._browse.use() as db:
            return archive.list_sessions(
                db, source=source, project=project, text=text, limit=limit, offset=offset
            )

    @property
    def prices(self) -> PriceTable:
        """The price table with the config's overrides (read once, as the config is)."""
        if self._prices is None:
            self._prices = load_prices(self.config.usage.prices)
        return self._prices

    def usage_report(self, **choice: Any) -> UsageReport:
        """Usage grouped and narrowed as ``choice`` says (:func:`usage_report`'s keywords)."""
        with self._browse.use() as db:
            return usage_report(db, self.prices, **choice)

    def session_usage(self, session_ids: list[str]) -> dict[str, UsageTotals]:
        with self._browse.use() as db:
            return session_usage(db, self.prices, session_ids)

    def usage_models(self) -> list[str]:
        with self._browse.use() as db:
            return usage_models(db)

    def usage_projects(self) -> list[str]:
        with self._browse.use() as db:
            return usage_projects(db)

    def resume_plan(self, session_id: str, here: Path | None = None) -> ResumePlan:
        """How to continue ``session_id`` in Claude Code, or why not (:class:`ResumeRefused`)."""
        with self._browse.use() as db:
            session = archive.resolve_session(db, session_id)
            claude = claude_executable(self.config.chat.claude_command)
            return plan_resume(db, session, claude, here=here)

    def restore(self, session_id: str) -> list[Restored]:
        """Write a deleted session's transcript back where Claude Code looks for it."""
        with self._write_lock:
            return self.home.restore(self.session(session_id))

    def count_sessions(self, source: str | None = None, project: str | None = None) -> int:
        with self._browse.use() as db:
            return archive.count_sessions(db, source, project)

    def projects(self) -> list[archive.Project]:
        with self._browse.use() as db:
            return archive.projects(db)

    def session(self, session_id: str) -> archive.SessionSummary:
        with self._browse.use() as db:
            return archive.resolve_session(db, session_id)

    def messages(self, session_id: str, *, after_entry: int = 0) -> list[archive.Message]:
        with self._browse.use() as db:
            return archive.session_messages(db, session_id, after_entry=after_entry)

    def export_markdown(self, session_id: str) -> str:
        with self._browse.use() as db:
            return archive.export_markdown(db, session_id)

    def search(
        self, query: str, filters: SearchFilters, *, limit: int, typing: bool = False
    ) -> SearchResults:
        """Ranked hits (:func:`~clawback.core.search.front.find`); raises :class:`Superseded` if
        a newer search started meanwhile. ``typing``: keyword results with the last word as a
        prefix; otherwise hybrid when the home has a vector side."""
        nearest = None if typing else self.nearest()
        recency = self.config.embeddings.recency_boost
        ticket = next(self._search_ids)
        self._latest_search = ticket
        self._search.interrupt()  # abort the query a stale worker may still be running
        with self._search.use() as db:
            if ticket != self._latest_search:
                raise Superseded
            try:
                results = find(
                    db,
                    query,
                    filters,
                    limit=limit,
                    count=True,
                    nearest=nearest,
                    recency=recency,
                    typing=typing,
                ).results
            except sqlite3.OperationalError as exc:
                if "interrupted" in str(exc):
                    raise Superseded from None
                raise
            results.hits = self._auto_memory_named(db, results.hits)
        if ticket != self._latest_search:
            raise Superseded
        return results

    def _auto_memory_named(
        self, db: sqlite_utils.Database, hits: list[SearchHit]
    ) -> list[SearchHit]:
        """Hits in Claude Code's auto memory titled as the memory pane names the file: its
        key (``-home-me-proj/memory/MEMORY.md``) means little to a person."""
        roots = self.auto_memory_roots()
        labels: dict[Path, str] = {}
        named = []
        for hit in hits:
            found = locate(roots, Path(hit.path)) if hit.source == Source.MEMORY else None
            if found is None:
                named.append(hit)
                continue
            folder, name = found
            if folder not in labels:
                [project] = with_working_folders(db, [ProjectMemory(folder.parent.name, folder)])
                labels[folder] = project.label
            named.append(replace(hit, session_title=auto_memory_title(labels[folder], name)))
        return named

    def _covered(self, coverage: Any) -> None:
        self.embedded = coverage  # read by the search pane's status; one reference, no lock

    def nearest(self) -> NearestChunks | None:
        """The vector side, kept once it exists (the model loads on the first hybrid search);
        looked for again while it does not, so vectors embedded meanwhile are picked up."""
        if self._nearest is None:
            self._nearest = self.home.nearest()
        return self._nearest

    # -- writes -------------------------------------------------------------------------------

    def follow_index(self) -> str | None:
        """Mend a cut ``-shm``; when the index was removed or replaced under the app, reopen it
        by its path (every connection) and say why, so the caller catches up from the sources."""
        self._index.mend()
        why = self._index.changed()
        if why is None:
            return None
        with self._write_lock:
            if why == CUT:  # nothing left to read back: set it aside, start a new one
                set_aside(self.paths.database)
            self.home.reopen_index()
            self._browse.close()
            self._search.close()
            self._index.opened()
        return (
            f"the index was {why} while the app ran: reopened {self.paths.database} and"
            " reading every source into it"
        )

    def ingest_all(self, progress: ProgressFactory | None = None) -> IngestStats:
        with self._write_lock:
            stats = self.home.ingest_all(progress=progress)
        self._embed_new()
        return stats

    def ingest_changed(self, changed: set[Path], *, deleted: bool = False) -> IngestStats:
        with self._write_lock:
            stats = self.home.ingest_changed(changed, deleted=deleted)
        if stats.entries:
            self._embed_new()
        return stats

    def _embed_new(self) -> None:
        """Let the background embedder (started on first use, when the home has opted in)
        give new messages their vectors; it never blocks an ingest or a search."""
        if self._embedder is None:
            self._embedder = self.home.background_embedder(on_progress=self._covered)
            if self._embedder is not None:
                self._embedder.start()
                return
        if self._embedder is not None:
            self._embedder.nudge()

    def save_settings(self, changes: Callable[[], dict[str, Any]]) -> None:
        """Persist settings the app changed (filters, ...) to ``config.toml``.

        ``changes`` is called once the save's turn comes, so of several saves racing in
        workers the last to run writes the newest choice, whatever order they started in.
        Saves are serialised (two at once would each write the file without the other's
        change), and only values that differ from what the app last saved are written. A broken
        config file is reported once (the worker's failure becomes a notification), not at
        every change.
        """
        with self._settings_lock:
            pending = {k: v for k, v in changes().items() if self._setting(k) != v}
            if not pending:
                return
            try:
                saved = update_settings(self.paths, pending)
            except ConfigError as exc:
                if str(exc) == self._settings_problem:
                    return
                self._settings_problem = str(exc)
                raise
            self._settings_problem = None
            for dotted in pending:  # only these: other in-memory settings may differ on purpose
                section, _, key = dotted.partition(".")
                setattr(getattr(self.config, section), key, getattr(getattr(saved, section), key))

    def _setting(self, dotted: str) -> Any:
        section, _, key = dotted.partition(".")
        return getattr(getattr(self.config, section), key, None)

    def save_memory(self, workspace: Workspace, name: str, text: str) -> Path:
        """Save a memory file of ``workspace`` (clawback's, or a Claude Code project's memory
        folder; atomic, ``.bak`` kept) and re-index it before returning."""
        path = workspace.save(name, text)
        self.ingest_changed({path})
        return path

    def auto_memory_roots(self) -> list[SourceRoot]:
        """Where Claude Code's auto memory is: the ingest's own roots for it."""
        return auto_memory_roots(self.config, self.paths)

    def auto_memory(self) -> list[ProjectMemory]:
        """Claude Code's auto memory per project, labelled by the working folders the index
        knows (a list of a few folders, then one small query per project)."""
        projects = list_auto_memory(self.auto_memory_roots())
        if not projects:
            return projects
        with self._browse.use() as db:
            return with_working_folders(db, projects)

    # -- first run ----------------------------------------------------------------------------

    def source_folders(self, most: int = 10_000) -> list[tuple[str, Path, int]]:
        """Each configured transcript folder with how many transcripts it holds (counting stops
        at ``most``): what an empty archive tells a new user it would read."""
        folders = []
        for root in configured_roots(self.config, self.paths):
            if root.source is None or root.source.value == "memory":
                continue
            count = sum(1 for _ in itertools.islice(root.files(), most))
            folders.append((root.name, root.root, count))
        return folders

    def close(self) -> None:
        if self._embedder is not None:
            self._embedder.stop()
        self._browse.close()
        self._search.close()
