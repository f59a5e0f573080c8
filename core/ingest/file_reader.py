"""A file's new lines made ready to write: decoded, parsed, masked and shaped into rows.

Ingesting a file is two jobs of different kinds. Reading it (decoding each line, parsing it,
masking secrets, building the row tuples) is per-line Python that needs nothing but the file.
Writing the rows, their conversations and the file's new offset is SQLite's work and needs the
index. This module is the first job, and never touches the index: :class:`FileReader` turns a
file's lines from a known :class:`Start` into :class:`FilePart` s, one commit's worth each, made of
plain values only, so a part read in a parse worker (:mod:`clawback.core.ingest.parse_ahead`)
crosses to the writing process cheaply. :class:`clawback.core.ingest.batch.FileBatch` is the
second job.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawback.core.archive import LineKeeper, short_key
from clawback.core.formats import PARSERS
from clawback.core.formats.lines import MB, LineReader, decode_line
from clawback.core.ingest.sources import WorkItem, is_quiet
from clawback.core.records import Entry, Kind, ParsedLine, Role, SessionMeta, Source, TokenUsage
from clawback.core.text import cjk_bigrams
from clawback.core.timeutil import normalize_ts, parse_ts
from clawback.core.usage.index import UsageValues, id_key

PREFIX_WINDOW = 4096  # bytes hashed at each end of what was read (see window_hash)
BATCH_LINES = 4000  # lines per commit: bounds memory and lock hold time on huge files
TALKERS = (Role.USER, Role.ASSISTANT)  # whose lines count toward a conversation's size
# An enum member's ``.value`` is a Python-level property: a dict lookup is cheaper per row.
_VALUE: dict[Role | Kind, str] = {member: member.value for member in (*Role, *Kind)}

# The ``entries`` columns a row carries, in order; the writer appends file, session and
# conversation, which only the index knows.
ROW_COLUMNS = (
    "line", "block", "piece", "role", "kind", "ts", "uuid", "sidechain", "conversational",
    "partial", "model", "display", "text", "cjk", "error",
)  # fmt: skip
Row = tuple[Any, ...]
# (line, timestamp, the same in epoch seconds, other session, counts as a message, rows).
# ``other`` is None for the file's own session, "" for a summary waiting to learn which session
# it titles, else another session's id (a file mixing sessions).
ShapedLine = tuple[int, str | None, float | None, str | None, bool, list[Row]]


@dataclass(frozen=True, slots=True)
class Start:
    """Where reading a file begins: the offset, line and session the index holds for it."""

    offset: int
    last_line: int
    session_id: str | None


@dataclass(slots=True)
class FilePart:
    """A part of a file: its next lines, shaped into rows, committed together with the offset
    after them; ``final`` closes the file.

    ``session_id`` is the session the file's own rows belong to in this commit; ``meta`` and
    ``others`` (the sessions of a file that mixes several) are what the file said about its
    sessions so far, saved with the final part.
    """

    lines: list[ShapedLine]
    skipped: list[tuple[int, str]]  # (line, why), reasons sealed
    leaf_titles: list[tuple[str, str, int]]  # (leaf uuid, sealed summary, line)
    end_line: int
    end_offset: int
    prefix_hash: str | None  # window_hash of the file up to end_offset, taken as it was read
    session_id: str
    owns_entries: bool  # anything besides other sessions' titles: the file is a session
    last_ts: str | None
    final: bool
    meta: SessionMeta = field(default_factory=SessionMeta)
    others: dict[str, SessionMeta] = field(default_factory=dict)
    torn: int = 0  # bytes of an unfinished last line, reported in health
    kept: bytes | None = None  # the part's lines as a kept-copy frame (Claude Code only)
    # (line, seq, other session or None, then ``usage.index.USAGE_COLUMNS``) per usage line
    usage: list[UsageValues] = field(default_factory=list)


def window_hash(path: Path, offset: int) -> str | None:
    """Hash of the first and the last ``PREFIX_WINDOW`` bytes before ``offset``.

    Stored with a file's offset, it tells the next scan whether the bytes already read are
    still the file's (it grew) or not (it was rewritten: read it again).
    """
    if offset <= 0:
        return None
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        digest.update(handle.read(min(offset, PREFIX_WINDOW)))
        if offset > PREFIX_WINDOW:
            handle.seek(max(PREFIX_WINDOW, offset - PREFIX_WINDOW))
            digest.update(handle.read(offset - max(PREFIX_WINDOW, offset - PREFIX_WINDOW)))
    return digest.hexdigest()


def counts_as_message(entries: list[Entry], force_sidechain: bool = False) -> bool:
    """A line counts once toward a conversation's size if it holds a main-thread message."""
    if force_sidechain:
        return False
    for e in entries:  # noqa: SIM110 - a loop, not any(genexpr): this runs for every line
        if e.conversational and not e.sidechain and e.role in TALKERS:
            return True
    return False


def merge_meta(into: SessionMeta, meta: SessionMeta) -> None:
    """Fold one line's facts into a session's: titles take the latest, the rest the first."""
    # Spelled out field by field: this runs once per line, and a getattr/setattr loop over
    # the names cost more than the rest of the line's bookkeeping.
    if meta.label is not None:
        into.label = meta.label  # "" clears
    if meta.title:
        into.title = meta.title
    if meta.custom_title:
        into.custom_title = meta.custom_title
    if meta.key and into.key is None:
        into.key = meta.key
    if meta.cwd and into.cwd is None:
        into.cwd = meta.cwd
    if meta.parent_id and into.parent_id is None:
        into.parent_id = meta.parent_id
    if meta.channel and into.channel is None:
        into.channel = meta.channel
    if meta.created and into.created is None:
        into.created = meta.created


def one_row_per_response(rows: list[UsageValues]) -> list[UsageValues]:
    """Of the lines of one response in ``rows`` (one part: its lines commit together), the one
    the index would count: the most tokens, the first of equals (:mod:`clawback.core.usage.index`
    settles across parts and files). Claude Code writes a response as a line per content block,
    so this keeps about half as many rows on real transcripts."""
    kept: list[UsageValues] = []
    where: dict[tuple[Any, ...], int] = {}
    for row in rows:
        # (line, seq, other, ts, model, message_key, request_key, sidechain, fast, input,
        #  output, cache_read, cache_write, ...)
        if row[5] is None:
            kept.append(row)
            continue
        key = (row[5], row[6], row[7], row[2])
        at = where.get(key)
        if at is None:
            where[key] = len(kept)
            kept.append(row)
        elif sum(row[9:13]) > sum(kept[at][9:13]):
            kept[at] = row
    return kept


def _is_uuid_like(text: str) -> bool:
    return len(text) == 36 and text.count("-") == 4


class FileReader:
    """One file's lines from ``start``, as parts ready to commit. Pure: reads only the file.

    ``mask`` hides secrets in entry bodies (``None`` when the config turns masking off);
    ``seal`` does the same for every other stored text: titles, ids, reasons.
    """

    def __init__(
        self,
        item: WorkItem,
        start: Start,
        *,
        max_line: int,
        mask: Callable[[str], str] | None,
        seal: Callable[[str], str],
        batch_lines: int = BATCH_LINES,
        keep: bool = False,
    ) -> None:
        self.item = item
        self.start = start
        self.max_line = max_line
        self.mask = self._plain_mask = mask
        self.seal = seal
        self.batch_lines = batch_lines
        self._sealed_ids: dict[str, str] = {}
        self.pending: list[ShapedLine] = []
        self.pending_usage: list[UsageValues] = []
        self._models: dict[str, str] = {}
        self.usage_only = False  # see read_usage
        self.leaf_titles: list[tuple[str, str, int]] = []
        self.skipped: list[tuple[int, str]] = []
        # Whether the file is a session of its own: anything besides other sessions' titles.
        self.owns_entries = bool(start.session_id) or item.source is not Source.CLAUDE_CODE
        self.others: dict[str, SessionMeta] = {}
        self.meta = SessionMeta()
        self.lines = 0
        self.end_line = start.last_line
        self.end_offset = start.offset
        self.last_ts: str | None = None
        self.session_id = start.session_id or self._session_from_path()
        self.force_sidechain = item.source is Source.CLAUDE_CODE and (
            "subagents" in item.path.parts[:-1] or item.path.name.startswith("agent-")
        )
        # Only a main Claude Code file is split per sessionId: sub-agent lines carry their
        # parent's id (or ``<parent>#agent-...`` in workflows) and belong to the parent.
        self.split_sessions = item.source is Source.CLAUDE_CODE and not self.force_sidechain
        # ``keep``: each Claude Code line also goes, masked, into the file's kept copy. Its
        # strings are mostly the entries' texts, masked already: a line's masking is shared.
        self.keeper: LineKeeper | None = None
        self._masked: dict[str, str] = {}
        if keep and item.source is Source.CLAUDE_CODE:
            if mask is not None:
                self.mask = mask = self._mask_once
            self.keeper = LineKeeper(start.last_line + 1, start.offset, mask)

    def parts(self) -> Iterator[FilePart]:
        """Read to the end of the file's complete lines, a part per ``batch_lines`` lines."""
        parser = PARSERS[self.item.source]
        keeper = self.keeper
        line_no = self.start.last_line
        reader = LineReader(
            self.item.path, self.start.offset, self.max_line, finished=is_quiet(self.item)
        )
        for raw, end, count in reader:
            if raw is None:  # over max_line_mb: streamed past, never held
                line_no += 1
                limit_mb = self.max_line // MB
                self.skip(line_no, f"line of {count // MB} MB over max_line_mb ({limit_mb})")
                if keeper:
                    keeper.blank()
            elif count > 1:  # a run of blank lines
                line_no += count
                if keeper:
                    keeper.blank(count)
            else:
                line_no += 1
                if raw.strip():
                    values, problem = decode_line(raw)
                    if problem:
                        self.skip(line_no, problem)
                    for value in values:
                        self.add(line_no, parser(value))
                    if keeper:
                        keeper.add(raw, values)
                        if len(self._masked) > 4096:
                            self._masked.clear()
                elif keeper:
                    keeper.blank()
            self.lines += 1
            self.end_line, self.end_offset = line_no, end
            if self.lines >= self.batch_lines:
                yield self._part(final=False)
        yield self._part(final=True, torn=reader.torn)

    def read_usage(
        self, lines: Iterable[tuple[int, bytes]]
    ) -> tuple[str | None, list[UsageValues]]:
        """Only the usage of a file's numbered ``lines`` (a file whose entries the index holds
        already): the file's session and the usage rows, attributed as :meth:`parts` would."""
        parser = PARSERS[self.item.source]
        self.usage_only = True
        for number, raw in lines:
            if b"usage" in raw:
                for value in decode_line(raw)[0]:
                    self.add(number, parser(value))
        return self.session_id, one_row_per_response(self.pending_usage)

    def _mask_once(self, text: str) -> str:
        """``mask``, remembering recent results: the keeper masks what the rows did, and lines
        repeat their folder, branch and version. Emptied as it grows, and at each part."""
        masked = self._masked.get(text)
        if masked is None:
            assert self._plain_mask is not None
            masked = self._masked[text] = self._plain_mask(text)
        return masked

    def _session_from_path(self) -> str | None:
        """A sub-agent's parent session: the folder above ``subagents/`` (workflows included)."""
        folders = self.item.path.parts[:-1]
        if self.item.source is Source.CLAUDE_CODE and "subagents" in folders:
            at = len(folders) - 1 - folders[::-1].index("subagents")
            return self.seal(folders[at - 1]) if at > 0 else None
        return None

    def skip(self, line: int, reason: str) -> None:
        self.skipped.append((line, self.seal(reason)))

    def add(self, line: int, parsed: ParsedLine) -> None:
        if parsed.unknown:
            self.skip(line, parsed.unknown)
        meta = parsed.meta
        if meta and meta.title_for_uuid:
            # A Claude Code summary titles whichever session holds its leaf message, usually
            # another file's, maybe one not ingested yet: the catalog resolves it by uuid.
            self.leaf_titles.append((meta.title_for_uuid, self.seal(meta.title or ""), line))
            if parsed.entries:
                self._shape(line, parsed.entries, "")
            return
        session = None
        if meta and meta.session_id and self.split_sessions:
            sealed = self._seal_id(meta.session_id)
            if self.session_id is None:
                self.session_id = sealed
            elif sealed != self.session_id:
                session = sealed  # a file mixing sessions: each keeps its own
                merge_meta(self.others.setdefault(session, SessionMeta()), meta)
        if parsed.usage is not None:
            self._add_usage(line, parsed.usage, session)
        if parsed.entries and not self.usage_only:
            self._shape(line, parsed.entries, session)
            self.owns_entries = self.owns_entries or session is None
        if meta and session is None:
            if meta.session_id and self.session_id is None:
                self.session_id = self._seal_id(meta.session_id)
            merge_meta(self.meta, meta)
            self.owns_entries = self.owns_entries or bool(meta.title or meta.custom_title)

    def _seal_id(self, session_id: str) -> str:
        """A session id as stored; every line repeats it, so it is sealed once per file."""
        sealed = self._sealed_ids.get(session_id)
        if sealed is None:
            sealed = self._sealed_ids[session_id] = self.seal(session_id)
        return sealed

    def _add_usage(self, line: int, usage: TokenUsage, other: str | None) -> None:
        """A response's usage as a row; its model sealed once per file, its ids hashed."""
        model = usage.model
        if model is not None:
            sealed = self._models.get(model)
            if sealed is None:
                sealed = self._models[model] = self.seal(model)
            model = sealed
        pending = self.pending_usage
        # Two objects run together on one line are told apart by their place on it.
        seq = pending[-1][1] + 1 if pending and pending[-1][0] == line else 0
        pending.append((
            line, seq, other, normalize_ts(usage.timestamp), model, id_key(usage.message_id),
            id_key(usage.request_id), usage.sidechain or self.force_sidechain, usage.fast,
            usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
            usage.cache_write_tokens, usage.cache_write_1h_tokens, usage.cost_usd,
        ))  # fmt: skip

    def _shape(self, line: int, entries: list[Entry], other: str | None) -> None:
        """The line's entries as rows: bodies masked, timestamps normalised, CJK bigrams."""
        mask = self.mask
        force_sidechain = self.force_sidechain
        first_ts = entries[0].timestamp
        ts = normalize_ts(first_ts)
        if ts:
            self.last_ts = ts
        rows: list[Row] = []
        for block, entry in enumerate(entries):
            text, display = entry.text, entry.display
            if mask:
                text = mask(text)
                if display:
                    display = mask(display)
            entry_ts = ts if entry.timestamp == first_ts else normalize_ts(entry.timestamp)
            # One row per entry however long (piece 0): a phrase or an AND query must match
            # the entry as a whole, and snippet() picks the window of it to show.
            rows.append((
                line, block, 0, _VALUE[entry.role], _VALUE[entry.kind], entry_ts, entry.uuid,
                entry.sidechain or force_sidechain, entry.conversational, entry.partial,
                entry.model, display, text, cjk_bigrams(text), entry.error,
            ))  # fmt: skip
        counts = counts_as_message(entries, force_sidechain)
        parsed = parse_ts(ts) if ts else None
        moment = parsed.timestamp() if parsed else None
        self.pending.append((line, ts, moment, other, counts, rows))

    def _part(self, *, final: bool, torn: int = 0) -> FilePart:
        item = self.item
        if final and self.session_id is None:
            self.session_id = (
                self.seal(item.path.stem) if _is_uuid_like(item.path.stem) else short_key(item.key)
            )
        part = FilePart(
            lines=self.pending,
            skipped=self.skipped,
            leaf_titles=self.leaf_titles,
            end_line=self.end_line,
            end_offset=self.end_offset,
            prefix_hash=window_hash(item.path, self.end_offset),
            session_id=self.session_id or self.seal(item.path.stem),
            owns_entries=self.owns_entries,
            last_ts=self.last_ts,
            final=final,
            torn=torn,
            kept=self.keeper.frame(self.end_offset) if self.keeper else None,
            usage=one_row_per_response(self.pending_usage),
        )
        if final:
            part.meta, part.others = self.meta, self.others
        self.pending, self.skipped, self.leaf_titles = [], [], []
        self.pending_usage = []
        self.lines = 0
        self._masked.clear()
        return part
