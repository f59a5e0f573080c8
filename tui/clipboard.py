"""Copy text to the system clipboard, or to the terminal's when there is no system one.

pyperclip talks to xclip / wl-copy / pbcopy, which is what people expect; over SSH or in a bare
console none exists, and Textual's ``copy_to_clipboard`` (an OSC 52 escape the terminal may
honour) is the only way left. pyperclip may spawn a process, so call this from a thread.
"""

from __future__ import annotations

from collections.abc import Callable

import pyperclip


def copy_text(text: str, fallback: Callable[[str], None]) -> str:
    """Copy ``text``; returns where it went, for the notification."""
    try:
        pyperclip.copy(text)
    except pyperclip.PyperclipException:
        fallback(text)
        return "terminal clipboard"
    return "clipboard"
