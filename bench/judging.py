"""Which messages, besides a question's labelled answer, also give its answer: judged by two
helpers each, who ran no search and see no rank or mode.

A question of ``bench/questions*.tsv`` is labelled with one message, but another can answer it
as well (the summary stating the skipped items, the batch report of a fix). ``judged.tsv``
holds every verdict: the question, ``yes`` (both judges said the message itself states the
answer), ``no`` (both said it does not) or ``split``, the message (a 16-hex blake2b of its
text, so a copy in another file counts alike and a re-ingest keeps it) and the first judge's
reason. Only ``yes`` counts, in ``bench/questions.py``'s judged table.

    .venv/bin/python bench/judging.py pool --work /tmp/qbench --out /tmp/pool
    .venv/bin/python bench/judging.py merge /tmp/pool

``pool``: for every question and every ranker (hybrid, semantic, keyword and the BM25-OR
baseline, or ``--modes``) whose first 10 hold neither its labelled answer nor a message judged
``yes``, those of the 10 that nobody judged for it yet, each once, in random order, each with
the turn before it, beside the labelled answer; files of about :data:`PART_MESSAGES` messages
(``part-N.md``) and ``key.json``. It prints counts only, so whoever runs it reads none of the
blind questions. Each part goes to two judges, each briefed with ``bench/judging.md`` and
writing ``part-N.first.tsv`` or ``part-N.second.tsv``. ``merge`` adds their verdicts to
``judged.tsv`` and prints how often they agreed. A ranker is shown counting judged answers only
once every one of its first 10 were judged for the questions it missed; a change that brings up
a message nobody judged gets no credit for it until a new pool is judged.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from clawback.core.startup import prepare_process

prepare_process()  # as every clawback process does first: BLAS on one thread

from clawback.core.db import Queryable
from clawback.core.home import Home

HERE = Path(__file__).parent
JUDGED = HERE / "judged.tsv"
PART_MESSAGES = 150  # about what a judge reads in one file
DEPTH = 10
RANKERS = ("hybrid", "semantic", "keyword", "bm25-or")
CONTEXT_CHARS = 400
TEXT_CHARS = 2500
_MESSAGES = "SELECT id, text FROM entries"  # a hit can be any entry (a compaction summary)
_BEFORE = """
SELECT p.role, p.text FROM entries e JOIN entries p ON p.file_id = e.file_id
 AND p.kind = 'text' AND p.role IN ('user', 'assistant') AND p.conversational = 1
 AND (p.line, p.block, p.piece) < (e.line, e.block, e.piece)
WHERE e.id = ? ORDER BY p.line DESC, p.block DESC, p.piece DESC LIMIT 1
"""


def message_hash(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def messages_by_hash(db: Queryable) -> dict[str, set[int]]:
    """Every entry, by the hash of its text."""
    found: dict[str, set[int]] = {}
    for entry_id, text in db.execute(_MESSAGES):
        found.setdefault(message_hash(text), set()).add(entry_id)
    return found


def read_verdicts() -> dict[tuple[str, str], str]:
    """``{(question, message hash): verdict}`` of ``judged.tsv``."""
    verdicts: dict[tuple[str, str], str] = {}
    for line in JUDGED.read_text(encoding="utf-8").splitlines():
        question, verdict, message, _reason = line.split("\t")
        verdicts[question, message] = verdict
    return verdicts


def read_judged(home: Home) -> dict[str, set[int]]:
    """``{question: the messages judged to give its answer}``. A judged message no longer in the
    index (its text changed since it was judged) counts as unjudged, and a line on stderr says
    how many there are: ``pool`` offers them for judging again."""
    by_hash = messages_by_hash(home.db)
    judged: dict[str, set[int]] = {}
    gone: dict[str, int] = {}
    for (question, message), verdict in read_verdicts().items():
        if message not in by_hash:
            gone[verdict] = gone.get(verdict, 0) + 1
        elif verdict == "yes":
            judged.setdefault(question, set()).update(by_hash[message])
    if gone:
        print(
            f"judged.tsv: {sum(gone.values())} judged messages are no longer in the index "
            f"({gone.get('yes', 0)} of them judged to answer); they count as unjudged until "
            "judged again (judging.py pool)",
            file=sys.stderr,
        )
    return judged


def pool(work: Path, out: Path, modes: Sequence[str]) -> None:
    """Writes what is left to judge under ``out`` for the rankers ``modes`` (see the module's
    docstring)."""
    from questions import bm25_or, load_questions, mode_ranker  # they import this module
    from shared_archive import embed_all, open_shared

    home = open_shared(work)
    index, _, _ = embed_all(home, work / "home" / "embeddings.db", 1, quiet=True)
    rankers = [bm25_or(home) if mode == "bm25-or" else mode_ranker(home, index, mode)
               for mode in modes]  # fmt: skip
    verdicts, judged = read_verdicts(), read_judged(home)
    texts = dict(home.db.execute(_MESSAGES).fetchall())
    shuffle = random.Random(9).shuffle
    parts: list[list[str]] = [[]]
    key: dict[str, dict[str, str]] = {}
    in_part = asked = 0
    for cases in load_questions(home).values():
        for case in cases:
            answers = case.answers | judged.get(case.query, set())
            fresh: dict[str, int] = {}  # each message once, whichever ranker brought it
            for rank in rankers:
                ids = rank(case.query)[:DEPTH]
                if not answers & set(ids):
                    for entry in ids:
                        digest = message_hash(texts[entry])
                        if (case.query, digest) not in verdicts:
                            fresh.setdefault(digest, entry)
            if not fresh:
                continue
            if in_part >= PART_MESSAGES:
                parts.append([])
                in_part = 0
            asked += 1
            in_part += len(fresh)
            qid = f"Q{asked}"
            text = [f"\n\n## {qid}: {case.query}\n\n### Known answer\n\n"
                    f"{_turn(home.db, min(case.answers), texts)}\n"]  # fmt: skip
            entries = list(fresh.items())
            shuffle(entries)
            for j, (digest, entry) in enumerate(entries, 1):
                cid = f"{qid}-c{j}"
                key[cid] = {"question": case.query, "message": digest}
                text.append(f"\n### Candidate {cid}\n\n{_turn(home.db, entry, texts)}\n")
            parts[-1].append("".join(text))
    out.mkdir(parents=True, exist_ok=True)
    written = [part for part in parts if part]
    for n, part in enumerate(written, 1):
        (out / f"part-{n}.md").write_text("".join(part), encoding="utf-8")
    (out / "key.json").write_text(json.dumps(key, indent=0), encoding="utf-8")
    print(f"{asked} questions, {len(key)} messages to judge, in {len(written)} parts under "
          f"{out} (brief: {HERE / 'judging.md'})")  # fmt: skip


def _turn(db: Queryable, entry: int, texts: dict[int, str]) -> str:
    """A message as a judge reads it: its role, its text, and the turn before it."""
    role = db.execute("SELECT role FROM entries WHERE id = ?", (entry,)).fetchone()[0]
    text = _cut(texts[entry], TEXT_CHARS)
    shown = f"[{role}]\n{text}"
    before = db.execute(_BEFORE, (entry,)).fetchone()
    if before is not None:
        shown = f"(the turn before it, for context: [{before[0]}] "
        shown += f"{_cut(before[1], CONTEXT_CHARS)})\n[{role}]\n{text}"
    return shown


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]} [... {len(text) - limit} more]"


def merge(out: Path) -> None:
    """Adds the two judges' verdicts on each part under ``out`` to ``judged.tsv``."""
    key = json.loads((out / "key.json").read_text(encoding="utf-8"))
    rows: list[str] = []
    agreed = total = 0
    for first_path in sorted(out.glob("part-*.first.tsv")):
        first = _verdicts(first_path.read_text(encoding="utf-8").splitlines())
        second = _verdicts(
            first_path.with_name(first_path.name.replace(".first.", ".second."))
            .read_text(encoding="utf-8")
            .splitlines()
        )
        if set(first) != set(second):
            sys.exit(f"{first_path}: the two judges judged different messages")
        for cid, (yes, reason) in first.items():
            other = second[cid][0]
            verdict = ("yes" if yes else "no") if yes == other else "split"
            agreed += yes == other
            total += 1
            rows.append(f"{key[cid]['question']}\t{verdict}\t{key[cid]['message']}\t{reason}\n")
    with JUDGED.open("a", encoding="utf-8") as judged:
        judged.writelines(rows)
    print(f"{total} verdicts added to {JUDGED.name}; the judges agreed on {agreed}")


def _verdicts(lines: Iterable[str]) -> dict[str, tuple[bool, str]]:
    found = {}
    for line in lines:
        if line.strip():
            cid, verdict, reason = line.split("\t", 2)
            found[cid] = (verdict.strip() == "yes", " ".join(reason.split()))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("pool", "merge"))
    parser.add_argument("folder", type=Path, nargs="?", help="merge: the pool's folder")
    parser.add_argument("--work", type=Path, default=Path("/tmp/qbench"))
    parser.add_argument("--out", type=Path, help="pool: where to write it")
    parser.add_argument("--modes", default=",".join(RANKERS), help="pool: whose first 10")
    args = parser.parse_args()
    if args.step == "pool":
        pool(args.work, args.out or Path("/tmp/clawback-pool"), args.modes.split(","))
    elif args.folder is None:
        sys.exit("merge needs the pool's folder")
    else:
        merge(args.folder)


if __name__ == "__main__":
    main()
