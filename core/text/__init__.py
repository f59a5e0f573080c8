"""Text analysis shared by indexing and query time: secret masking, CJK bigrams, splitting, the
tags a prompt is built from, and a transcript's field on one bounded line.

This is the room's door: other rooms import from here, never from the modules behind it (an
import-linter contract holds it). Names load on first use, so importing the door costs nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: a door imports nothing until a name is asked for
if TYPE_CHECKING:
    from clawback.core.text.cjk import cjk_bigrams, has_cjk, query_bigrams, split_scripts
    from clawback.core.text.fields import prompt_field
    from clawback.core.text.json_masking import mask_json
    from clawback.core.text.masking import MASK, mask_secrets, seal
    from clawback.core.text.splitting import markdown_blocks
    from clawback.core.text.stopwords import STOPWORDS
    from clawback.core.text.wrappers import neutralise_wrappers

#: Each public name and the module behind the door that defines it.
_HOMES = {
    "cjk_bigrams": "cjk",
    "has_cjk": "cjk",
    "query_bigrams": "cjk",
    "split_scripts": "cjk",
    "prompt_field": "fields",
    "mask_json": "json_masking",
    "MASK": "masking",
    "mask_secrets": "masking",
    "seal": "masking",
    "markdown_blocks": "splitting",
    "STOPWORDS": "stopwords",
    "neutralise_wrappers": "wrappers",
}

__all__ = [
    "MASK",
    "STOPWORDS",
    "cjk_bigrams",
    "has_cjk",
    "markdown_blocks",
    "mask_json",
    "mask_secrets",
    "neutralise_wrappers",
    "prompt_field",
    "query_bigrams",
    "seal",
    "split_scripts",
]

if not TYPE_CHECKING:  # hidden from mypy, so a name the door does not export is an error there
    from clawback.core.doors import loader

    __getattr__ = loader(__name__, _HOMES)
    del loader  # the door's names are its own
