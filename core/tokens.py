"""The one token estimator every budget in the chat engine uses.

Context assembly, recall budgets, smart trim and the threshold checks all compare sizes measured
here, so they agree with each other: ``ceil(len(text) / 3)``, a deliberate over-estimate for
English and code (about 4 characters a token) that stays safe for denser scripts. After each turn
the real usage that ``claude`` reports replaces the estimate in the session's counters.

This module must never grow a second estimator: if a real tokenizer is ever configured, it goes
behind :func:`estimate_tokens` so every caller switches at once.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 3


def estimate_tokens(text: str) -> int:
    """Tokens ``text`` is assumed to take in a prompt: ``ceil(len(text) / 3)``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)
