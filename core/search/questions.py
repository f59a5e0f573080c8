"""One message, several questions: "what did we decide about the cache layer and when is the
offsite?" asks two things, and the archive may know only one of them.

Search's floor asks a loose hit to hold a share of the query's words, each weighted by its
rarity (:mod:`.coverage`). Asked as one query, the answer to the known half holds too little of
the whole (the unknown half's words are the rarest of all), so nothing is recalled although
half of the question has its answer. Asked apart, each question is measured against its own
words: the one the archive knows finds its answer, the other finds nothing.

Where one question ends: at a sentence's end (``.``, ``?``, ``!``, ``;``, a new line) and where
"and", "also" or "plus" opens a new question ("... and when is ..."). A part needs
:data:`MIN_WORDS` content words to stand alone; a shorter one stays with the question before it
("the cache layer. Thanks!" is one question). English only, as the stop words are.
"""

from __future__ import annotations

import re

from clawback.core.text import STOPWORDS

MIN_WORDS = 2  # content words a part needs to be asked on its own
MAX_QUESTIONS = 4  # a long message is asked as at most this many questions (its last ones)
QUESTION_WORDS = "what|when|where|which|who|whom|whose|why|how|whether"
_BOUNDARY = re.compile(
    rf"(?:[.?!;]+(?=\s|$)|\n+|,?\s+(?:and|also|plus)\s+(?=(?:also\s+)?(?:{QUESTION_WORDS})\b))",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+", re.UNICODE)


def split_questions(text: str) -> list[str]:
    """The questions ``text`` asks, in order: ``[text]`` when it asks one (or none)."""
    parts = [part.strip() for part in _BOUNDARY.split(text) if part and part.strip()]
    questions: list[str] = []
    for part in parts:
        short = min(_content_words(part), _content_words(questions[-1])) if questions else MIN_WORDS
        if short < MIN_WORDS:  # a part too short to stand alone stays with its neighbour
            questions[-1] = f"{questions[-1]} {part}"
        else:
            questions.append(part)
    if len(questions) <= 1:
        return [text]
    return questions[-MAX_QUESTIONS:]


def _content_words(text: str) -> int:
    return sum(
        1
        for word in _WORD.findall(text.lower())
        if word not in STOPWORDS and not word.isdigit() and len(word) > 1
    )
