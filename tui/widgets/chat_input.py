"""The chat's multi-line input: Enter sends, Ctrl+J (or Shift+Enter where the terminal reports
it) inserts a newline, Tab completes a slash command (again: the next one that fits)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clawback.core.chat.policy import CHAT_COMMANDS
from textual import events
from textual.message import Message
from textual.widgets import TextArea

NEWLINE_KEYS = ("ctrl+j", "shift+enter")

# Every slash command the chat understands, with what it does (shown as the completion hint);
# the one list is the core's, so `clawback chat "/help"` shows the same.
COMMANDS = CHAT_COMMANDS


def completions(text: str) -> list[str]:
    """The commands ``text`` may be the start of (only while it is one word after a slash)."""
    if not text.startswith("/") or any(c.isspace() for c in text):
        return []
    return [name for name in COMMANDS if name.startswith(text.lower())]


class ChatInput(TextArea):
    @dataclass
    class Submitted(Message):
        input: ChatInput
        text: str

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, **kwargs)
        self._cycle: list[str] = []  # the completions Tab is cycling through

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            if self.text.strip():
                self.post_message(self.Submitted(self, self.text))
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if event.key == "tab" and (found := self._cycle or completions(self.text)):
            event.stop()
            event.prevent_default()
            if self.text.rstrip() in found:  # Tab again: the next command that fits
                choice = found[(found.index(self.text.rstrip()) + 1) % len(found)]
            else:
                choice = found[0]
            self._cycle = found
            self.text = choice + " "
            self.move_cursor(self.document.end)
            return
        if event.key != "tab":
            self._cycle = []
        await super()._on_key(event)
