"""A past turn that only restates a question never outranks the turn that answered it.

Asked again, a question finds its first asking: "what did we decide about the cache layer?"
said last week holds every word of "remind me what we decided about the cache layer", and as
the person's own turn about a decision it is lifted above the assistant's answer
(``hybrid.favour_person``). It tells the asker nothing they did not just say, only when and
where it was asked. So a turn whose words are the question's (:func:`restates`) gives its place
to the turn that answered it (:func:`answers_to`: the assistant's longest text turn after it,
before the person spoke again) and stays just below it. The recall block does this; a search
shows the earlier asking as it is (the person may be looking for when they asked).
"""

from __future__ import annotations

import re
from typing import Any

from clawback.core.db import Queryable
from clawback.core.search.filters import passing
from clawback.core.search.plan import light_stem
from clawback.core.search.sentence import QUESTION_STARTS
from clawback.core.text import STOPWORDS

RESTATING_WORDS = 12  # a turn with more content words than this says more than a question
RESTATING_CHARS = 400
STEM_CHARS = 5  # words compared by the head of their stem: "decide" and "decided" are one
LOOKAHEAD_LINES = 400  # how far after a question its answer is looked for
_WORD = re.compile(r"[^\W_]+")
#: how a question or a request to be told begins, when it has no question mark
ASKING_STARTS = QUESTION_STARTS | {"remind", "tell", "recall", "explain"}

# The answer to the turn ``h``: the assistant's longest text turn after it in its file and
# thread, before the person's next text turn (a slash command they ran is not one).
_ANSWERS = """
SELECT h.id, (
    SELECT a.id FROM entries a
    WHERE a.file_id = h.file_id AND a.kind = 'text' AND a.role = 'assistant'
      AND a.conversational = 1 AND a.sidechain = h.sidechain
      AND (a.line > h.line OR (a.line = h.line AND a.id > h.id))
      AND a.line <= h.line + :lookahead
      AND a.line < coalesce((
          SELECT min(u.line) FROM entries u
          WHERE u.file_id = h.file_id AND u.kind = 'text' AND u.role = 'user'
            AND u.conversational = 1 AND u.sidechain = h.sidechain AND u.line > h.line
            AND u.line <= h.line + :lookahead AND u.text NOT LIKE '<%'), h.line + :lookahead + 1)
    ORDER BY length(a.text) DESC, a.line LIMIT 1)
FROM entries h WHERE h.id IN ({ids})
"""


def restates(text: str, question: str) -> bool:
    """Whether ``text`` only restates ``question``: itself a question or a request to be told
    (a statement in the question's words is its answer: "we picked vite for the recorder"
    answers "did we pick vite for the recorder?"), of a few content words, nearly all of them
    the question's (one in five may differ)."""
    if len(text) > RESTATING_CHARS or not _asks(text):
        return False
    said = _keys(text)
    if not said or len(said) > RESTATING_WORDS:
        return False
    return len(said - _keys(question)) <= len(said) // 5


def answers_to(
    db: Queryable, ids: list[int], clauses: list[str], params: list[Any]
) -> dict[int, int]:
    """``{turn: the turn that answered it}`` for the entries ``ids``, each answer passing the
    filters' SQL ``clauses``; a turn with no such answer is left out."""
    if not ids:
        return {}
    sql = _ANSWERS.format(ids=", ".join(f":i{n}" for n in range(len(ids))))
    named: dict[str, Any] = {"lookahead": LOOKAHEAD_LINES}
    named.update({f"i{n}": entry for n, entry in enumerate(ids)})
    found = {turn: answer for turn, answer in db.execute(sql, named) if answer is not None}
    allowed = passing(db, sorted(set(found.values())), clauses, params)
    return {turn: answer for turn, answer in found.items() if answer in allowed}


def _asks(text: str) -> bool:
    words = _WORD.findall(text[:40].lower())
    return text.rstrip().endswith("?") or bool(words and words[0] in ASKING_STARTS)


def _keys(text: str) -> set[str]:
    return {
        light_stem(word)[:STEM_CHARS]
        for word in _WORD.findall(text.lower())
        if word not in STOPWORDS
    }
