"""Every action of the app as a command palette entry (Ctrl+P).

The palette is where people discover what the app can do, so anything reachable by a key is
also here, named as a person would search for it. Commands that need context (an open session,
an open memory file) are only offered when that context exists.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual.app import SystemCommand

from . import background
from .widgets.message_view import MessageView

if TYPE_CHECKING:
    from .app import ClawbackApp


def app_commands(app: ClawbackApp) -> Iterable[SystemCommand]:
    """The palette's entries, in the order it lists them."""
    yield from _panes(app)
    yield from _chat_memory(app)
    yield SystemCommand("Help: keys", "Every key in the app (F1, ?)", app.action_help)
    yield SystemCommand(
        "Ingest sources",
        "Index new and changed transcripts from every source",
        lambda: background.ingest(app),
    )
    yield from _sessions_list(app)
    yield from _open_session(app)
    yield from _memory_files(app)


def _panes(app: ClawbackApp) -> Iterable[SystemCommand]:
    """Going to each pane, the chat, and the sessions list shown or hidden."""
    yield SystemCommand(
        "Search",
        "Live search across every session (Ctrl+F, /)",
        lambda: app.action_show_pane("search"),
    )
    for name, key in (("sessions", "F2"), ("transcript", "F3"), ("memory", "F5"), ("usage", "F8")):
        yield SystemCommand(
            f"Go to {name}", f"Show the {name} pane ({key})", lambda n=name: app.action_show_pane(n)
        )
    yield SystemCommand(
        "What sessions cost",
        "Tokens and cost by day, the costliest sessions (F8)",
        lambda: app.action_show_pane("usage"),
    )
    yield SystemCommand(
        "Go to chat", "The chat input under the open transcript (F7)", app.action_chat
    )
    yield SystemCommand(
        "Show or hide the sessions list",
        "More room for the transcript; remembered (Ctrl+B)",
        app.action_toggle_sessions,
    )
    yield SystemCommand(
        "New chat session", "Start a native chat session (Ctrl+N)", app.action_new_chat
    )


def _chat_memory(app: ClawbackApp) -> Iterable[SystemCommand]:
    """A chat session's memory work, each through the compaction pane (which says when the open
    session has none)."""
    yield SystemCommand(
        "Go to compaction",
        "Token usage, flush, compaction ledger and facts of the chat session (F6)",
        app.action_show_compaction,
    )

    async def lifecycle(action: str) -> None:
        if await app.action_show_compaction():  # else a notification said why not
            getattr(app.panes.compaction, f"action_{action}")()

    yield SystemCommand(
        "Flush memory now", "Propose notes for the memory file (/flush)", lambda: lifecycle("flush")
    )
    yield SystemCommand(
        "Compact now", "Summarize the chat session's older messages (/compact)",
        lambda: lifecycle("compact"),
    )  # fmt: skip
    yield SystemCommand(
        "Edit a knowledge fact", "Correct what clawback learned from the chat session (e)",
        lambda: lifecycle("edit_fact"),
    )  # fmt: skip


def _sessions_list(app: ClawbackApp) -> Iterable[SystemCommand]:
    """The sessions list narrowed to a project or a source."""
    sessions = app.panes.sessions

    async def in_sessions(action: str) -> None:
        await app.action_show_pane("sessions")
        getattr(sessions, f"action_{action}")()

    yield SystemCommand(
        "Sessions of a project", "Pick a project to list (p)", lambda: in_sessions("choose_project")
    )
    yield SystemCommand(
        "Sessions of the next source",
        "All, native, Claude Code, OpenClaw in turn (s)",
        lambda: in_sessions("cycle_source"),
    )


def _open_session(app: ClawbackApp) -> Iterable[SystemCommand]:
    """What can be done with the open session and the focused message, when there are."""
    transcript = app.panes.transcript
    if transcript.session is not None:
        yield SystemCommand(
            "Export session to markdown",
            "Write the open session to a .md file",
            transcript.action_export,
        )
        yield SystemCommand(
            "Chat in this session",
            "Continue it, or fork a native session from it (r)",
            transcript.action_chat,
        )
        yield SystemCommand(
            "Toggle sub-agent messages",
            "Show or hide sidechain messages",
            transcript.action_toggle_sidechains,
        )
    focused = app.screen.focused
    if isinstance(focused, MessageView):
        yield SystemCommand(
            "Copy message", "Copy the focused message to the clipboard", focused.action_copy
        )


def _memory_files(app: ClawbackApp) -> Iterable[SystemCommand]:
    """Today's daily note, and saving or reloading the open memory file."""
    memory = app.panes.memory

    async def new_daily() -> None:
        await app.action_show_pane("memory")
        memory.action_new_daily()

    yield SystemCommand("New daily note", "Open today's memory/YYYY-MM-DD.md (Ctrl+T)", new_daily)
    if memory.current is not None:
        yield SystemCommand(
            f"Save {memory.current.title}", "Save the memory file (Ctrl+S)", memory.action_save
        )
        yield SystemCommand(
            f"Reload {memory.current.title}",
            "Read the memory file from disk again",
            memory.action_reload,
        )
