"""The index read back: sessions, messages and projects, the catalog (titles, counts),
conversations, the kept copies of Claude Code lines and what they restore or resume, refs, and
where a session came from in words.

This is the room's door: other rooms import from here, never from the modules behind it (an
import-linter contract holds it). Names load on first use, so importing the door costs nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: a door imports nothing until a name is asked for
if TYPE_CHECKING:
    from clawback.core.archive.catalog import refresh_session, resolve_leaf_titles
    from clawback.core.archive.conversations import ConversationTracker, any_ripe, refresh_ready
    from clawback.core.archive.kept import KeptCopies, KeptCopyError, LineKeeper
    from clawback.core.archive.origins import CHANNELS, SOURCES, origin_label, source_label
    from clawback.core.archive.refs import (
        FACT_PREFIX,
        entry_ref,
        fact_ref,
        key_digest,
        refusal,
        short_key,
    )
    from clawback.core.archive.restore import NotIndexed, Restored, restore_session
    from clawback.core.archive.resume import (
        FolderGone,
        ResumePlan,
        TranscriptGone,
        claude_executable,
        plan_resume,
    )
    from clawback.core.archive.sessions import (
        Message,
        Project,
        SessionSummary,
        count_sessions,
        export_markdown,
        list_conversations,
        list_sessions,
        project_name,
        projects,
        resolve_session,
        session_messages,
        unique_prefixes,
    )

#: Each public name and the module behind the door that defines it.
_HOMES = {
    "refresh_session": "catalog",
    "resolve_leaf_titles": "catalog",
    "ConversationTracker": "conversations",
    "any_ripe": "conversations",
    "refresh_ready": "conversations",
    "KeptCopies": "kept",
    "KeptCopyError": "kept",
    "LineKeeper": "kept",
    "CHANNELS": "origins",
    "SOURCES": "origins",
    "origin_label": "origins",
    "source_label": "origins",
    "FACT_PREFIX": "refs",
    "entry_ref": "refs",
    "fact_ref": "refs",
    "key_digest": "refs",
    "refusal": "refs",
    "short_key": "refs",
    "NotIndexed": "restore",
    "Restored": "restore",
    "restore_session": "restore",
    "FolderGone": "resume",
    "ResumePlan": "resume",
    "TranscriptGone": "resume",
    "claude_executable": "resume",
    "plan_resume": "resume",
    "Message": "sessions",
    "Project": "sessions",
    "SessionSummary": "sessions",
    "count_sessions": "sessions",
    "export_markdown": "sessions",
    "list_conversations": "sessions",
    "list_sessions": "sessions",
    "project_name": "sessions",
    "projects": "sessions",
    "resolve_session": "sessions",
    "session_messages": "sessions",
    "unique_prefixes": "sessions",
}

__all__ = [
    "CHANNELS",
    "FACT_PREFIX",
    "SOURCES",
    "ConversationTracker",
    "FolderGone",
    "KeptCopies",
    "KeptCopyError",
    "LineKeeper",
    "Message",
    "NotIndexed",
    "Project",
    "Restored",
    "ResumePlan",
    "SessionSummary",
    "TranscriptGone",
    "any_ripe",
    "claude_executable",
    "count_sessions",
    "entry_ref",
    "export_markdown",
    "fact_ref",
    "key_digest",
    "list_conversations",
    "list_sessions",
    "origin_label",
    "plan_resume",
    "project_name",
    "projects",
    "refresh_ready",
    "refresh_session",
    "refusal",
    "resolve_leaf_titles",
    "resolve_session",
    "restore_session",
    "session_messages",
    "short_key",
    "source_label",
    "unique_prefixes",
]

if not TYPE_CHECKING:  # hidden from mypy, so a name the door does not export is an error there
    from clawback.core.doors import loader

    __getattr__ = loader(__name__, _HOMES)
    del loader  # the door's names are its own
