"""One reply's stream-json lines read as events, by the per-turn runner and the live process alike.

What the reply has said so far is kept (every error carries it, so a failed or stopped turn keeps
its partial text), and lines that are not JSON are tolerated up to a budget: a stray warning goes
by, a process printing only garbage is given up on.
"""

from __future__ import annotations

from clawback.core.claude.errors import ClaudeBadOutput
from clawback.core.claude.events import (
    AssistantMessage,
    Event,
    TextDelta,
    UnparseableOutput,
    parse_stream_line,
)
from clawback.core.claude.process import MAX_LINE_BYTES

MAX_GARBAGE_BYTES = 64 * 1024  # non-JSON output tolerated before giving up on the process


class ReplyReader:
    """Reads lines into events; ``streamed`` (the caller's list, if given) collects the text."""

    def __init__(self, streamed: list[str] | None = None) -> None:
        self.streamed = streamed if streamed is not None else []
        self.first_garbage: str | None = None  # the first line that was not JSON
        self._garbage_bytes = 0
        self._saw_delta = False

    @property
    def partial(self) -> str:
        return "".join(self.streamed)

    def read(self, line: str) -> Event | None:
        """The event ``line`` holds, or None (nothing to act on, or tolerated garbage)."""
        try:
            event = parse_stream_line(line)
        except UnparseableOutput as exc:
            if self.first_garbage is None:
                self.first_garbage = line.strip()
            self._garbage_bytes += len(line)
            if self._garbage_bytes > MAX_GARBAGE_BYTES:
                raise ClaudeBadOutput(self.first_garbage, partial_text=self.partial) from exc
            return None
        if isinstance(event, TextDelta):
            self._saw_delta = True
            self.streamed.append(event.text)
        elif (  # without partial messages the whole text comes once, in the assistant message
            isinstance(event, AssistantMessage)
            and not event.is_api_error
            and not self._saw_delta
            and event.text
        ):
            self.streamed.append(event.text)
        return event

    def too_long(self, start: bytes) -> ClaudeBadOutput:
        """The error for a line over ``MAX_LINE_BYTES`` that began with ``start``."""
        shown = start.decode("utf-8", errors="replace")
        return ClaudeBadOutput(
            f"a line of over {MAX_LINE_BYTES // 1048576} MB without a newline: {shown}",
            partial_text=self.partial,
        )
