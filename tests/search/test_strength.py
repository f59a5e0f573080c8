"""A hit's strength says how much of what was asked it holds (issue 37: a hit scored 0.28 looked
like any other, and hits holding every word of "fts5 tokenizer" showed 0.00)."""

from __future__ import annotations

from pathlib import Path

import pytest
from clawback.core.home import Home
from clawback.core.search.engine import search
from clawback.core.search.strength import FAIR, STRONG, WEAK, strength

from tests.helpers import cc_user, write_lines
from tests.search_doubles import FixedNearest, small_index

SESSION = "5e551011-0000-4000-8000-000000000037"


@pytest.mark.parametrize(
    ("share", "similarity", "expected"),
    [
        (1.0, None, STRONG),  # every word typed
        (0.8, None, STRONG),
        (0.6, None, FAIR),
        (0.3, None, WEAK),
        (None, 0.7, STRONG),  # close in meaning
        (None, 0.5, FAIR),  # an answer, by the answer floor
        (None, 0.4, WEAK),  # only related
        (0.3, 0.7, STRONG),  # the stronger evidence wins
        (None, None, WEAK),
    ],
)
def test_the_tiers(share: float | None, similarity: float | None, expected: str) -> None:
    assert strength(share, similarity, answer_floor=0.45) == expected


def test_a_long_message_holding_every_word_is_strong_whatever_its_score(
    home: Home, cc_root: Path
) -> None:
    """BM25 shrinks with a message's length, so its score says nothing on its own: a long
    message holding every word scores near 0 (0.00 on a bigger one)."""
    filler = "the ingest reads every line and writes rows to the index " * 800
    lines = [cc_user(SESSION, "u0", f"{filler} which fts5 tokenizer handles japanese {filler}")]
    lines += [cc_user(SESSION, f"u{i}", f"short note {i} about the ingest") for i in range(1, 30)]
    lines += [
        cc_user(SESSION, "u98", "the fts5 tokenizer question again"),
        cc_user(SESSION, "u99", "fts5 once more, and nothing else of the question"),
    ]
    write_lines(cc_root / "proj" / f"{SESSION}.jsonl", lines)
    home.ingest_all()
    by_line = {hit.line: hit for hit in search(home.db, "fts5 tokenizer").hits}
    long_hit, short_hit, partial = by_line[1], by_line[31], by_line[32]
    assert long_hit.score < 0.3 < short_hit.score  # the score ranks; it is no measure
    assert long_hit.strength == short_hit.strength == STRONG
    assert partial.strength != STRONG  # "fts5" alone


def test_hybrid_hits_say_which_evidence_makes_them_strong() -> None:
    db = small_index(
        [
            {"role": "user", "text": "we should drop the cache layer entirely"},
            {"role": "assistant", "text": "removed the caching tier as you asked"},
            {"role": "user", "text": "what about the weather in Lisbon"},
            {"role": "assistant", "text": "the cache is warm again"},
        ]
    )
    nearest = FixedNearest(db, {2: 0.7, 3: 0.3, 4: 0.5})
    by_id = {h.entry_id: h for h in search(db, "cache layer", mode="hybrid", nearest=nearest).hits}
    assert by_id[1].strength == STRONG  # every word typed, though meaning missed it
    assert by_id[2].strength == STRONG  # no word, but close in meaning
    assert by_id[4].strength == FAIR  # half the words and an answer's similarity
    assert by_id[3].strength == WEAK  # neither
    assert by_id[2].to_json()["strength"] == STRONG  # --json and MCP clients read it too
