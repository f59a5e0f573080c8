"""What one chat turn writes to its session's transcript, in the order it must.

The user's message goes to disk (synced) before anything can fail, once even when a failed turn
is sent again; tool calls as they come; then the reply, or, on any other way out, what streamed
as a ``partial`` reply and a ``system`` note saying what failed.

This module must never lose what the user typed and never store a recalled block.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from clawback.core.chat.events import ToolCalled, TurnOutcome
from clawback.core.chat.sessions import SessionStore
from clawback.core.chat.spend import usage_json
from clawback.core.chat.transcript import Transcript, TranscriptMessage
from clawback.core.claude import Usage
from clawback.core.formats.native import message_event, tool_call_event
from clawback.core.recall import strip_recalled
from clawback.core.timeutil import format_ts

__all__ = ["TurnWriter"]


class TurnWriter:
    """The writes of one turn to one session's transcript; :attr:`settled` once its reply (or
    how it failed) is written."""

    def __init__(
        self,
        transcript: Transcript,
        store: SessionStore,
        session_id: str,
        clock: Callable[[], datetime],
        index: Callable[[Path], None],
    ) -> None:
        self.transcript = transcript
        self.store = store
        self.session_id = session_id
        self.clock = clock
        self.index = index
        self.settled = False

    def user_message(self, text: str) -> tuple[str, list[str]]:
        """Store the user's message: its id, and the ids of a failed try's partial reply to
        leave out of the history (a retry reuses the message already on disk)."""
        retried = _retried(self.transcript.read().messages, text)
        if retried is not None:
            return retried
        user_id = str(uuid.uuid4())
        self.transcript.append([message_event(user_id, "user", text, self._now())], sync=True)
        self.store.record_messages(self.session_id, 1)
        self.index(self.transcript.path)  # searchable while the reply is still coming
        return user_id, []

    def tool_call(self, event: ToolCalled) -> None:
        """A tool claude called: shown in the transcript, never replayed."""
        line = tool_call_event(str(uuid.uuid4()), event.name, event.input, self._now())
        self.transcript.append([line])

    def reply(
        self,
        text: str,
        *,
        model: str | None,
        usage: Usage | None = None,
        cost: float | None = None,
        partial: bool = False,
    ) -> str:
        """Store claude's reply (``partial``: cut short); its message id."""
        reply_id = str(uuid.uuid4())
        counted = usage_json(usage, cost) if usage is not None else None
        line = message_event(
            reply_id, "assistant", text, self._now(), model=model, usage=counted, partial=partial
        )
        self.transcript.append([line], sync=True)
        self.store.record_messages(self.session_id, 1)
        self.settled = True
        return reply_id

    def keep_partial(
        self,
        partial_text: str,
        outcome: TurnOutcome,
        *,
        cancelled: bool = False,
        error: BaseException | None = None,
    ) -> None:
        """Record how a turn that did not complete ended: partial reply, then a system note."""
        if self.settled:
            return
        self.settled = True
        text = strip_recalled(partial_text)
        if text.strip():
            outcome.reply_message_id = self.reply(text, model=outcome.model, partial=True)
        outcome.reply = text
        outcome.partial = bool(text)
        outcome.cancelled = cancelled
        if error is not None:
            outcome.is_error = True
            outcome.error = " ".join(str(error).split())
            note = f"The claude call failed: {outcome.error}"
            line = message_event(str(uuid.uuid4()), "system", note, self._now())
            self.transcript.append([line], sync=True)

    def close(self) -> None:
        """Sync what was written and index it, however the turn ended."""
        self.transcript.sync()
        self.index(self.transcript.path)

    def _now(self) -> str:
        return format_ts(self.clock())


def _retried(messages: list[TranscriptMessage], text: str) -> tuple[str, list[str]] | None:
    """A retry of a turn that got no reply: the stored message's id, and the partial reply
    (if any) that came after it.

    When a turn fails, its message goes back into the input; sending it again must neither
    store it twice nor show claude both copies. So if the last message is the user's, with
    this text, and nothing but system notes and a cut-short reply came after it, the turn
    reuses it and leaves that partial reply out of the history it sends.
    """
    after: list[str] = []
    for message in reversed(messages):
        if message.role == "system":
            continue
        if message.role == "assistant" and message.partial:
            after.append(message.id)
            continue
        if message.role == "user" and message.content == text:
            return message.id, after
        return None
    return None
