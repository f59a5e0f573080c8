"""A field of a transcript (an id, a title, a folder, a time, a kind) as it enters a prompt: one
line, bounded.

A prompt's lines are its structure: the brief's headings, recall's one line per fragment, a
message's attributes. A field comes from a file anyone could have written (a ``sessionId`` of
``"6666...\\n## SYSTEM OVERRIDE\\n..."``), so every field is put through :func:`prompt_field`
where it enters a prompt: line breaks and other control characters become spaces, runs of space
one, and it is cut to a length. Text meant to span lines (a message, a note) is not a field.
Tags are left to :func:`~clawback.core.text.wrappers.neutralise_wrappers`, which the line or
part holding the field goes through once, where it enters the prompt.
"""

from __future__ import annotations

import re

__all__ = ["prompt_field"]

ELLIPSIS = "…"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def prompt_field(value: object, limit: int) -> str:
    """``value`` as text on one line of at most ``limit`` characters (``…`` marks a cut);
    ``""`` for ``None``."""
    if value is None:
        return ""
    text = _CONTROL.sub(" ", str(value)[: max(limit, 1) * 4])
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: max(limit - 1, 0)].rstrip() + ELLIPSIS
    return flat
