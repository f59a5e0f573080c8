"""Checks a question file as ``bench/questions.py`` reads it, every line, and runs no search:
for whoever writes a blind set (``bench/writing.md``), who must not see how search ranks.

    .venv/bin/python bench/check_questions.py MY_SET.tsv --work /tmp/qcheck

It says, per line, whether the anchor is in a user or assistant message of the file named and
distinctive (:func:`questions.answers`), and nothing about any ranking.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from questions import answers
from shared_archive import SHARED, open_shared


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file", type=Path, help="question<TAB>file key<TAB>anchor, one a line")
    parser.add_argument("--work", type=Path, required=True, help="where the shared home is kept")
    args = parser.parse_args()
    if not SHARED.is_dir():
        sys.exit(f"{SHARED} not found")
    home = open_shared(args.work)
    count = bad = 0
    for number, line in enumerate(args.file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        count += 1
        try:
            answers(home, line)
        except ValueError as exc:
            bad += 1
            print(f"{number}: {exc}")
    home.close()
    print(f"{count} questions, {bad} to fix")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
