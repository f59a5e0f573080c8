"""A clawback home: its paths, config and open index, and the one place that builds services.

The CLI builds it once per invocation and the app receives it from its factory, so no module
reaches for a global home, and tests hand in a temporary one.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlite_utils
from clawback.core.archive import KeptCopies, NotIndexed, Restored, SessionSummary, restore_session
from clawback.core.config import Config, load_config
from clawback.core.db import connect
from clawback.core.embeddings import deferred_nearest
from clawback.core.embeddings.follow import follow_text
from clawback.core.errors import ClawbackError
from clawback.core.faults import explain, find_damage, is_damaged, set_aside
from clawback.core.ingest.from_copies import rebuild_deleted
from clawback.core.ingest.ingestor import Ingestor, IngestStats, ProgressFactory
from clawback.core.ingest.sources import (
    SourceRoot,
    claude_code_projects,
    configured_roots,
    root_for_path,
)
from clawback.core.memory import Workspace
from clawback.core.paths import Paths, ensure_private_dir
from clawback.core.records import Source
from clawback.core.salvage import Salvage, read_salvage, restore, restore_labels

if TYPE_CHECKING:  # the services load when asked for: `clawback ingest` needs none of them
    from clawback.core.chat.engine import ChatEngine
    from clawback.core.chat.host import EngineHost
    from clawback.core.claude import ClaudeRunner
    from clawback.core.memory import Compactor, ConversationOutcome, Librarian, MemoryFlush
    from clawback.core.search import NearestChunks


@dataclass
class Home:
    paths: Paths
    config: Config
    db: sqlite_utils.Database
    listeners: list[Callable[[set[str]], None]] = field(default_factory=list)
    #: what a damaged index gave up before it was set aside (see :meth:`replace_damaged_index`)
    salvaged: Salvage | None = None

    @classmethod
    def open(cls, home: str | Path | None = None, *, set_aside_damaged: bool = False) -> Home:
        """Open (creating if needed) the home; config errors surface before anything is touched.

        An index that cannot be opened is one clear line (damaged, read-only, disk full,
        locked), unless ``set_aside_damaged`` (``reindex``): then a damaged one is replaced.
        """
        paths = Paths.resolve(home)
        config = load_config(paths.config)
        paths.ensure()
        salvaged = None
        try:
            db = connect(paths.database)
        except sqlite3.DatabaseError as exc:
            if not (set_aside_damaged and is_damaged(exc)):
                raise ClawbackError(explain(exc, paths.database)) from None
            db, salvaged = _fresh_index(paths.database, " ".join(str(exc).split()))
        opened = cls(paths, config, db, salvaged=salvaged)
        Workspace(opened.workspace).remove_stale_temp_files()  # left by a save that was killed
        return opened

    @property
    def workspace(self) -> Path:
        """The memory files' folder (``memory.workspace`` in the config, else in the home)."""
        return self.config.workspace(self.paths)

    def ingestor(self) -> Ingestor:
        return Ingestor(self.db, self.config, self.paths, on_indexed=self._notify)

    def _notify(self, session_ids: set[str]) -> None:
        for listener in self.listeners:
            listener(session_ids)

    def ingest_all(
        self, *, reimport: bool = False, progress: ProgressFactory | None = None
    ) -> IngestStats:
        roots = configured_roots(self.config, self.paths)
        stats = self.ingestor().ingest(roots, reimport=reimport, full_scan=True, progress=progress)
        if reimport:
            self.vectors_follow_text()
        return stats

    def ingest_paths(
        self,
        paths: list[Path],
        source: Source | None = None,
        *,
        reimport: bool = False,
        progress: ProgressFactory | None = None,
    ) -> IngestStats:
        ingestor = self.ingestor()
        roots = []
        for path in paths:
            if not path.exists():
                raise ClawbackError(f"{path}: no such file or folder")
            detected = source
            if detected is None and path.is_file():
                detected = ingestor.detect(path)
                if detected is None:
                    raise ClawbackError(f"{path}: not a transcript format clawback reads")
            roots.append(root_for_path(path, detected))
        stats = ingestor.ingest(roots, reimport=reimport, progress=progress)
        if reimport:
            self.vectors_follow_text()
        return stats

    def replace_damaged_index(self) -> bool:
        """Set the index aside if its pages are damaged, keeping what a person made in a fresh
        one (:attr:`salvaged` says what); ``True`` when it did. Reads every page: for rebuilds.
        """
        if self.salvaged is not None:
            return True
        damage = find_damage(self.db.conn)
        if damage is None:
            return False
        self.db.conn.close()
        self.db, self.salvaged = _fresh_index(self.paths.database, damage)
        return True

    def reindex(self, progress: ProgressFactory | None = None) -> IngestStats:
        """Re-read every transcript the index knows, from the configured sources and beyond.

        Claude Code files whose source is gone are read again from their kept copies; other
        files whose source is gone keep their entries (the index is their only copy). The
        vectors of every text read again follow it to its new entry id, so semantic search
        works right after, without re-embedding. A damaged index is set aside first
        (:meth:`replace_damaged_index`), and the files and labels it still holds are read back.
        """
        self.replace_damaged_index()
        roots = configured_roots(self.config, self.paths)
        covered = [root.root.resolve() for root in roots]
        known = (
            self.salvaged.files
            if self.salvaged is not None
            else self.db.execute("SELECT source, file_key, path FROM files WHERE missing = 0")
        )
        for source, key, path in known:
            file = Path(path)
            if any(file.is_relative_to(folder) for folder in covered) or not file.exists():
                continue
            base = file.parents[len(key.split("/")) - 1]
            roots.append(SourceRoot(Source(source), base, str(base), only=(file,)))
        ingestor = self.ingestor()
        stats = ingestor.ingest(roots, reimport=True, full_scan=True, progress=progress)
        rebuilt = rebuild_deleted(ingestor, self.db, self.paths.kept_rebuild, self.claude_projects)
        stats.files += rebuilt.files
        stats.entries += rebuilt.entries
        if self.salvaged is not None:
            restore_labels(self.db, self.salvaged)
        self.vectors_follow_text()
        return stats

    def vectors_follow_text(self) -> int:
        """After a re-read: each vector moves to the entry that now holds its text."""
        tools_and_thinking = self.config.embeddings.tools_and_thinking
        return follow_text(self.db, self.paths.vectors, tools_and_thinking=tools_and_thinking)

    @property
    def claude_projects(self) -> Path:
        """Where Claude Code keeps its transcripts (``sources.claude_code_path``)."""
        return claude_code_projects(self.config)

    def restore(
        self, session: SessionSummary, to: Path | None = None, *, force: bool = False
    ) -> list[Restored]:
        """Write ``session``'s transcript back from its kept copy (see
        :func:`~clawback.core.archive.restore.restore_session`) under ``to``, else where
        Claude Code looks; what lands in a configured source is indexed at once, so the
        session no longer shows as deleted."""
        written = restore_session(
            self.db,
            KeptCopies(self.paths.kept),
            session,
            (to or self.claude_projects).expanduser().absolute(),
            force=force,
            copy=to is not None,
        )
        try:
            self.ingest_changed({done.path for done in written})
        except (OSError, sqlite3.Error) as exc:  # a home it cannot write to: the files are back
            where = Path(exc.filename) if isinstance(exc, OSError) and exc.filename else None
            raise NotIndexed(written, explain(exc, where or self.paths.database)) from None
        return written

    def watch_folders(self) -> list[Path]:
        """Existing folders of the configured sources (the home's own are created)."""
        ensure_private_dir(self.workspace)
        folders = []
        for root in configured_roots(self.config, self.paths):
            if root.root.is_dir() and root.root not in folders:
                folders.append(root.root)
        return folders

    def ingest_changed(self, changed: set[Path], *, deleted: bool = False) -> IngestStats:
        """Ingest the changed files among ``changed`` (a watcher batch)."""
        roots = sorted(
            configured_roots(self.config, self.paths),
            key=lambda r: len(r.root.parts),
            reverse=True,
        )
        picked: dict[SourceRoot, list[Path]] = {}
        rescan: set[SourceRoot] = set()
        for path in changed:
            for root in roots:
                if root.accepts(path):
                    picked.setdefault(root, []).append(path)
                    break
                if path.is_dir() and path.is_relative_to(root.root):
                    # Files written into a brand-new folder can beat the watch on that folder;
                    # a stat-only re-scan of the root finds them.
                    rescan.add(root)
                    break
        selected = [*rescan] + [
            SourceRoot(root.source, root.root, root.name, only=tuple(files))
            for root, files in picked.items()
            if root not in rescan
        ]
        ingestor = self.ingestor()
        stats = ingestor.ingest(selected)
        if deleted:
            stats.missing = ingestor.mark_missing()
        return stats

    def chat_engine(self, **kwargs: Any) -> ChatEngine:
        """The chat engine for this home (``kwargs``: runner, hooks, facts_provider, clock, tz,
        ``live=True`` for a host that runs many turns: see :class:`ChatEngine`).

        Unless given, recall draws on the knowledge facts and the memory lifecycle (flush,
        compaction, fact extraction) runs in every turn.
        """
        from clawback.core.chat.engine import ChatEngine
        from clawback.core.memory import MemoryLifecycleHooks, facts_provider

        kwargs.setdefault("facts_provider", facts_provider(self.db))
        if "nearest" not in kwargs:  # not setdefault: building one imports numpy, given or not
            kwargs["nearest"] = self.nearest()
        engine = ChatEngine(
            self.db, self.paths, self.config.chat, index=self.ingest_changed, **kwargs
        )
        if kwargs.get("hooks") is None:
            engine.hooks = MemoryLifecycleHooks(
                flush=self.memory_flush(engine),
                compactor=self.compactor(engine),
                sessions=engine.store,
                chat=engine.chat,
                db=self.db,
                runner=engine.runner,
            )
        return engine

    def nearest(self, *, one_shot: bool = False) -> NearestChunks | None:
        """The vector side of search and recall, or ``None``: loaded in this process on the
        first query (``deferred_nearest``: the app, the MCP server, which ask many times), or,
        for a process that answers once and ends (``one_shot``: a ``clawback chat`` turn),
        asked of the home's warm process when one runs (``one_shot_nearest``)."""
        if one_shot:
            from clawback.core.warm import one_shot_nearest

            return one_shot_nearest(self.paths, self.config)[0]  # recall is a bonus: no why
        return deferred_nearest(self.paths.vectors, self.config.embeddings)

    def background_embedder(self, **callbacks: Any) -> Any | None:
        """A :class:`~clawback.core.embeddings.background.BackgroundEmbedder` for this
        home (not started), or ``None`` unless the person opted in: ``embeddings.background``
        is on, a model is set, the extra is installed, and ``clawback embed`` has run once (the
        first full embedding can take hours; it is asked for, never sprung on anyone)."""
        settings = self.config.embeddings
        if not settings.background or not settings.enabled:
            return None
        if not self.paths.vectors.exists():
            return None
        try:
            from clawback.core.embeddings.background import BackgroundEmbedder
        except ImportError:
            return None
        return BackgroundEmbedder(
            self.paths.database,
            self.paths.vectors,
            self.paths.embed_lock,
            model=settings.model,
            threads=settings.threads,
            tools_and_thinking=settings.tools_and_thinking,
            **callbacks,
        )

    def memory_flush(self, engine: ChatEngine) -> MemoryFlush:
        """A memory flush for ``engine``'s sessions, writing into this home's workspace."""
        from clawback.core.memory import MemoryFlush

        return MemoryFlush(
            runner=engine.runner,
            sessions=engine.store,
            chat=engine.chat,
            history=engine.history,
            index=engine.index,
            workspace=Workspace(self.workspace),
            live=engine.silent_turn if engine.live is not None else None,
        )

    def compactor(self, engine: ChatEngine) -> Compactor:
        """A compactor for ``engine``'s sessions, masking secrets as the config says."""
        from clawback.core.memory import Compactor

        return Compactor(
            runner=engine.runner,
            sessions=engine.store,
            db=self.db,
            chat=engine.chat,
            history=engine.history,
            index=engine.index,
            mask=self.config.archive.mask_secrets,
        )

    def librarian(
        self,
        runner: ClaudeRunner | None = None,
        *,
        on_outcome: Callable[[ConversationOutcome], None] | None = None,
    ) -> Librarian:
        """The librarian that turns this home's finished conversations into facts."""
        from clawback.core.memory import Librarian

        return Librarian(self.db, self.paths, self.config, runner, on_outcome=on_outcome)

    def reopen_index(self) -> None:
        """Open the index at its path again (it was removed or replaced under this process);
        a removed one is created anew and fills as sources are read."""
        with contextlib.suppress(sqlite3.Error):
            self.db.conn.close()
        try:
            self.db = connect(self.paths.database)
        except sqlite3.DatabaseError as exc:
            raise ClawbackError(explain(exc, self.paths.database)) from None

    def close(self) -> None:
        self.db.conn.close()


def engine_host(
    path: Path,
    runner: ClaudeRunner | None = None,
    *,
    make_engine: Callable[[Home], ChatEngine] | None = None,
) -> EngineHost:
    """The chat engine of the home at ``path`` on a thread of its own, with its own connection
    (the app, the gateway). ``make_engine`` builds it from that home; by default a live engine
    (one ``claude`` process kept per session) with ``runner``."""
    from clawback.core.chat.host import EngineHost

    @contextlib.contextmanager
    def opened() -> Iterator[ChatEngine]:
        home = Home.open(path)
        try:
            if make_engine is not None:
                yield make_engine(home)
            else:
                yield home.chat_engine(runner=runner, live=True)
        finally:
            home.close()

    return EngineHost(opened)


def _fresh_index(database: Path, damage: str) -> tuple[sqlite_utils.Database, Salvage]:
    """Read what a person made out of the damaged index, set it aside, and open a fresh one
    holding that; the salvage's :attr:`~Salvage.notice` is the line that says so."""
    salvaged = read_salvage(database)
    moved = set_aside(database)
    salvaged.notice = (
        f"The index was damaged ({damage}) and was set aside as {moved.name}; rebuilding it"
        f" from the transcripts: {salvaged.summary()}."
    )
    try:
        db = connect(database)
    except sqlite3.DatabaseError as exc:
        raise ClawbackError(explain(exc, database)) from None
    restore(db, salvaged)
    return db, salvaged
