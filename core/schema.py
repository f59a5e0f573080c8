"""The index's schema: ordered, named migrations, recorded in the database as they apply.

A new migration goes at the end with the next number, and
:data:`clawback.core.db.LATEST_MIGRATION` must name it, so a reader that opens the index
without sqlite-utils (:func:`clawback.core.db.connect_reader`) knows whether the schema is
current.
"""

from __future__ import annotations

import sqlite_utils
from sqlite_utils.migrations import Migrations

migrations = Migrations("clawback")


@migrations(name="0001_archive")
def _archive(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            source TEXT NOT NULL,
            file_key TEXT NOT NULL,          -- path relative to its source root
            path TEXT NOT NULL,              -- where it was last seen
            session_id TEXT,
            status TEXT NOT NULL DEFAULT 'idle',   -- idle | ingesting
            mtime REAL NOT NULL DEFAULT 0,
            size INTEGER NOT NULL DEFAULT 0,
            "offset" INTEGER NOT NULL DEFAULT 0,   -- bytes consumed (whole lines only)
            last_line INTEGER NOT NULL DEFAULT 0,  -- lines consumed
            prefix_hash TEXT,                -- hash of the bytes before the offset (a window)
            last_ts TEXT,
            skipped_lines INTEGER NOT NULL DEFAULT 0,
            missing INTEGER NOT NULL DEFAULT 0,
            UNIQUE (source, file_key)
        );
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            source TEXT NOT NULL,
            key TEXT,
            title TEXT,
            label TEXT,                      -- user-authored: never dropped by reindex
            first_prompt TEXT,
            cwd TEXT,
            parent_id TEXT,
            channel TEXT,
            started_at TEXT,
            updated_at TEXT,
            message_count INTEGER NOT NULL DEFAULT 0,
            entry_count INTEGER NOT NULL DEFAULT 0,
            source_missing INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX sessions_updated ON sessions (updated_at DESC);
        CREATE TABLE entries (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL,
            session_id TEXT,
            line INTEGER NOT NULL,           -- 1-based line in the file
            block INTEGER NOT NULL DEFAULT 0,-- content block within the line
            piece INTEGER NOT NULL DEFAULT 0,-- piece of a long block
            end_line INTEGER,                -- memory chunks span lines
            role TEXT NOT NULL,
            kind TEXT NOT NULL,
            ts TEXT,
            uuid TEXT,
            sidechain INTEGER NOT NULL DEFAULT 0,
            conversational INTEGER NOT NULL DEFAULT 0,
            partial INTEGER NOT NULL DEFAULT 0,
            model TEXT,
            display TEXT,
            text TEXT NOT NULL,
            cjk TEXT,                        -- overlapping CJK bigrams, searchable
            conversation_id INTEGER
        );
        CREATE INDEX entries_file_line ON entries (file_id, line);
        CREATE INDEX entries_session ON entries (session_id, ts);
        CREATE INDEX entries_conversation ON entries (conversation_id);
        CREATE VIRTUAL TABLE entries_fts USING fts5 (
            text, cjk,
            content = 'entries', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        );
        CREATE TABLE skipped_lines (
            file_id INTEGER NOT NULL,
            line INTEGER NOT NULL,
            reason TEXT NOT NULL,
            PRIMARY KEY (file_id, line)
        );
        CREATE TABLE conversations (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL,
            session_id TEXT,
            source TEXT NOT NULL,
            started_at TEXT,
            ended_at TEXT,
            first_line INTEGER,
            last_line INTEGER,
            message_count INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'active', -- active|ready|processing|archived|skipped
            summary TEXT,
            processed_at TEXT
        );
        CREATE INDEX conversations_status ON conversations (status);
        CREATE INDEX conversations_file ON conversations (file_id);
        """
    )


@migrations(name="0002_chat_sessions")
def _chat_sessions(db: sqlite_utils.Database) -> None:
    """The chat engine's session store (native sessions); never touched by reindex."""
    db.executescript(
        """
        CREATE TABLE chat_sessions (
            id TEXT PRIMARY KEY,             -- session uuid, also the transcript's name
            key TEXT NOT NULL,               -- session key, e.g. local:alice
            transcript TEXT NOT NULL,        -- path of the JSONL transcript
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            label TEXT,
            model_override TEXT,
            message_count INTEGER NOT NULL DEFAULT 0,
            compaction_count INTEGER NOT NULL DEFAULT 0,
            memory_flush_at TEXT,
            memory_flush_compaction_count INTEGER,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            total_tokens INTEGER NOT NULL DEFAULT 0,   -- input + cache_read + cache_write
            context_tokens INTEGER,                    -- the model's window, when reported
            last_model TEXT,
            parent_id TEXT,
            current INTEGER NOT NULL DEFAULT 1         -- the live session for its key
        );
        CREATE INDEX chat_sessions_key ON chat_sessions (key, current);
        """
    )


@migrations(name="0003_memory_lifecycle")
def _memory_lifecycle(db: sqlite_utils.Database) -> None:
    """Compaction ledger and knowledge facts; user edits to facts survive reindex."""
    db.executescript(
        """
        CREATE TABLE compactions (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            tokens_before INTEGER NOT NULL,
            tokens_after INTEGER NOT NULL,
            messages_removed INTEGER NOT NULL,
            first_kept_id TEXT,
            summary TEXT NOT NULL,
            model TEXT
        );
        CREATE INDEX compactions_session ON compactions (session_id, created_at);
        CREATE TABLE facts (
            id INTEGER PRIMARY KEY,
            -- decision | implementation | config | issue | task_state | architecture
            type TEXT NOT NULL,
            content TEXT NOT NULL,
            context TEXT,
            session_id TEXT,
            message_id TEXT,
            conversation_id INTEGER,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            superseded_by INTEGER,
            edited INTEGER NOT NULL DEFAULT 0  -- changed by hand
        );
        CREATE INDEX facts_session ON facts (session_id);
        CREATE VIRTUAL TABLE facts_fts USING fts5 (
            content, context, content = 'facts', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        );
        """
    )


@migrations(name="0005_fact_sources")
def _fact_sources(db: sqlite_utils.Database) -> None:
    """When a fact was said (not when it was extracted), and indexes for listing facts."""
    db.execute("ALTER TABLE facts ADD COLUMN source_ts TEXT")
    db.execute("CREATE INDEX facts_type ON facts (type, superseded_by)")
    db.execute("CREATE INDEX facts_conversation ON facts (conversation_id)")


@migrations(name="0006_skipped_files")
def _skipped_files(db: sqlite_utils.Database) -> None:
    """Files ingestion could not read and why, and the unfinished tail of each file: health
    names both (a bad file must never just vanish from the count)."""
    db.executescript(
        """
        CREATE TABLE skipped_files (
            path TEXT PRIMARY KEY,
            reason TEXT NOT NULL,
            seen_at TEXT NOT NULL
        );
        ALTER TABLE files ADD COLUMN tail_bytes INTEGER NOT NULL DEFAULT 0;
        """
    )


@migrations(name="0007_relative_transcripts")
def _relative_transcripts(db: sqlite_utils.Database) -> None:
    """Chat transcripts named relative to the home, so a copied home uses its own files."""
    db.execute(
        """UPDATE chat_sessions SET transcript = 'sessions/' || id || '.jsonl'
           WHERE substr(transcript, -length('/sessions/' || id || '.jsonl'))
                 = '/sessions/' || id || '.jsonl'"""
    )


@migrations(name="0008_session_titles")
def _session_titles(db: sqlite_utils.Database) -> None:
    """Where a session's title comes from, and Claude Code summaries waiting for their session.

    ``title`` becomes derived (custom title, else the source's own title, else a summary); a
    summary names its session by a message uuid that may live in a file not read yet, so
    ``leaf_titles`` keeps it until the uuid turns up (``entries_uuid`` finds it).
    """
    db.executescript(
        """
        ALTER TABLE sessions ADD COLUMN custom_title TEXT;   -- custom-title, /rename: wins
        ALTER TABLE sessions ADD COLUMN source_title TEXT;   -- ai-title, pi/OpenClaw names
        ALTER TABLE sessions ADD COLUMN summary_title TEXT;  -- a Claude Code summary line
        UPDATE sessions SET source_title = title;
        CREATE INDEX entries_uuid ON entries (uuid) WHERE uuid IS NOT NULL;
        CREATE TABLE leaf_titles (
            leaf_uuid TEXT PRIMARY KEY,      -- the message the summary ends at
            title TEXT NOT NULL,
            file_id INTEGER NOT NULL,        -- where the summary line is
            line INTEGER NOT NULL,
            session_id TEXT                  -- NULL until a file holding the leaf is indexed
        );
        CREATE INDEX leaf_titles_file ON leaf_titles (file_id);
        CREATE INDEX leaf_titles_pending ON leaf_titles (session_id) WHERE session_id IS NULL;
        """
    )


@migrations(name="0009_tool_errors")
def _tool_errors(db: sqlite_utils.Database) -> None:
    """A tool's output that reports a failure, as the source marked it (Claude Code
    ``is_error``, pi ``isError``), so the transcript shows it as an error; rows indexed before
    say 0 until a reindex."""
    db.execute("ALTER TABLE entries ADD COLUMN error INTEGER NOT NULL DEFAULT 0")


@migrations(name="0010_entries_file_uuid")
def _entries_file_uuid(db: sqlite_utils.Database) -> None:
    """Message uuids indexed per file: ``entries_uuid`` put every new entry at a random place
    in one index over the whole archive, so each commit rewrote pages all over it (the larger
    the archive, the more); keyed by file first, a file's commit touches a few pages of its own.
    A lookup by uuid alone probes file by file, so a waiting summary is looked for only in
    the files that took entries since the last look (``new_entries``, set in the same
    transaction as the entries, so a crash in between loses nothing)."""
    db.executescript(
        """
        DROP INDEX IF EXISTS entries_uuid;
        CREATE INDEX entries_file_uuid ON entries (file_id, uuid) WHERE uuid IS NOT NULL;
        ALTER TABLE files ADD COLUMN new_entries INTEGER NOT NULL DEFAULT 0;
        """
    )


@migrations(name="0011_files_session")
def _files_session(db: sqlite_utils.Database) -> None:
    """Files indexed by session: refreshing a session asks whether any of its files is still
    there, and without this index every refresh scanned all files, so a first ingest of many
    small files slowed down with each one (10,000 files: 5 of its 11 seconds)."""
    db.execute("CREATE INDEX IF NOT EXISTS files_session ON files (session_id)")


@migrations(name="0012_kept_copies")
def _kept_copies(db: sqlite_utils.Database) -> None:
    """How many bytes of a file's kept copy (``kept/``) are committed with its entries."""
    db.execute("ALTER TABLE files ADD COLUMN kept_bytes INTEGER NOT NULL DEFAULT 0")


@migrations(name="0013_leaf_titles_per_line")
def _leaf_titles_per_line(db: sqlite_utils.Database) -> None:
    """A summary line per row: several files (a session and its continuations) can carry a
    summary of the same leaf, and with the leaf as key the file read last replaced the others,
    so a session's title depended on ingest order. Rows from before are kept; a summary a
    replaced row stood for comes back when its file is read again (``reindex``)."""
    db.executescript(
        """
        CREATE TABLE leaf_titles_new (
            leaf_uuid TEXT NOT NULL,         -- the message the summary ends at
            title TEXT NOT NULL,
            file_id INTEGER NOT NULL,        -- where the summary line is
            line INTEGER NOT NULL,
            session_id TEXT,                 -- NULL until a file holding the leaf is indexed
            PRIMARY KEY (file_id, line)
        );
        INSERT OR IGNORE INTO leaf_titles_new SELECT leaf_uuid, title, file_id, line, session_id
            FROM leaf_titles;
        DROP TABLE leaf_titles;
        ALTER TABLE leaf_titles_new RENAME TO leaf_titles;
        CREATE INDEX leaf_titles_leaf ON leaf_titles (leaf_uuid);
        CREATE INDEX leaf_titles_pending ON leaf_titles (session_id) WHERE session_id IS NULL;
        """
    )


@migrations(name="0014_usage")
def _usage(db: sqlite_utils.Database) -> None:
    """What model responses cost: each usage-carrying line's tokens (``usage``, kept in file
    order), the one line of each API response that counts (``counted``, kept by
    :mod:`clawback.core.usage.index`), and their sums per file, session, quarter hour and model
    (``usage_buckets``), which reports read. Files read before this migration have
    ``usage_read = 0``: the next ingest reads their usage back from the files without reading
    them into entries again."""
    db.executescript(
        """
        CREATE TABLE usage (
            file_id INTEGER NOT NULL,
            line INTEGER NOT NULL,
            seq INTEGER NOT NULL DEFAULT 0,  -- which object of the line (two run together)
            session_id TEXT NOT NULL,
            ts TEXT,                         -- when the response was written (UTC)
            model TEXT,
            message_key INTEGER,             -- hash of the API message id (NULL: none)
            request_key INTEGER,             -- hash of the API request id
            sidechain INTEGER NOT NULL DEFAULT 0,
            fast INTEGER NOT NULL DEFAULT 0, -- ran in fast mode
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL,                   -- what the line itself said it cost
            counted INTEGER NOT NULL DEFAULT 1,  -- the one line of its response that counts
            PRIMARY KEY (file_id, line, seq)
        ) WITHOUT ROWID;
        CREATE INDEX usage_message ON usage (message_key) WHERE message_key IS NOT NULL;
        CREATE TABLE usage_buckets (
            file_id INTEGER NOT NULL,
            session_id TEXT NOT NULL,
            bucket TEXT NOT NULL,            -- UTC quarter hour, YYYY-MM-DDTHH:MM ('' no time)
            model TEXT NOT NULL,             -- '' when the line named none
            fast INTEGER NOT NULL,
            band INTEGER NOT NULL,           -- prompt size: 0 to 100k tokens, 1 to 200k, 2 more
            priced INTEGER NOT NULL,         -- 1: the lines said what they cost (cost_usd)
            responses INTEGER NOT NULL,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            cache_read_tokens INTEGER NOT NULL,
            cache_write_tokens INTEGER NOT NULL,
            cache_write_1h_tokens INTEGER NOT NULL,
            cost_usd REAL,
            PRIMARY KEY (file_id, session_id, bucket, model, fast, band, priced)
        ) WITHOUT ROWID;
        CREATE INDEX usage_buckets_session ON usage_buckets (session_id);
        CREATE INDEX usage_buckets_time ON usage_buckets (bucket);
        ALTER TABLE files ADD COLUMN usage_read INTEGER NOT NULL DEFAULT 1;
        UPDATE files SET usage_read = 0 WHERE "offset" > 0 AND source != 'memory';
        CREATE INDEX files_usage_unread ON files (id) WHERE usage_read = 0;
        """
    )
