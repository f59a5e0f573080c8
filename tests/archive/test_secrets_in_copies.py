"""Issue 31 item 6: kept copies and restored files hold no secret the index masks.

The planted kinds of the index's secret tests (``tests/ingest/test_secrets_everywhere.py``) go
into a Claude Code session together with what the copies used to keep verbatim: values under
keys ending in ``id``/``uuid``/``hash``/``digest``/``signature``, a secret in a dictionary key,
a password whose key alone says it is one, and private key blocks split over an edit's patch
lines (three lines of an RSA body and an OpenSSH key's last line were left). None may be found
in the index, in ``kept/`` or in the restored transcript; what Claude Code needs to resume (ids,
a thinking block's signature) is there as it was.
"""

from __future__ import annotations

import json
import random
import sqlite3
import string
from pathlib import Path
from typing import Any

from clawback.core.archive.kept import read_frames
from clawback.core.archive.sessions import resolve_session
from clawback.core.home import Home

from tests.helpers import cc_assistant, cc_user, write_lines
from tests.ingest.test_secrets_everywhere import (
    ANTHROPIC,
    AWS_SECRET,
    BODY_SECRETS,
    GITHUB,
    GITLAB,
    RAW,
    SENDGRID,
)

SESSION = "6e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b"
AWS_KEY_ID = "AKIAQX7ZK2MB4NV9RT3W"
HASHED_TOKEN = "sk-ant-api03-Pw7Rk2Xz9Qm4Vt8Nb3Lc6Hy1Jd5Gf0Aa2Ee"
PROJECT_KEY = "sk-proj-Mq3Zr8Wx2Lk7Vn4Tb9Jc6Hd1Fg5Sa0Pe"
KEY_IN_A_KEY = "ghp_Yt5Rk9Lm2Qz7Xw4Vn8Tb3Jc6Hd1Fg5Sa0Pe"
SHORT_PASSWORD = "wombat7"
LONG_PASSWORD = "hunterhunter"
DIFF_PASSWORD = "numbatbilby"
SIGNATURE = "EqQBCkgIARABGAIiQL" + "Zk9/+wAbc1Xy2" * 20


def key_block(kind: str, lines: int, seed: int) -> list[str]:
    """A private key's lines: random base64 rows of 64 (70 for OpenSSH) and a short last one."""
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + "+/"
    width = 70 if kind == "OPENSSH" else 64
    body = ["".join(rng.choice(alphabet) for _ in range(width)) for _ in range(lines - 1)]
    body.append("".join(rng.choice(alphabet) for _ in range(9)) + "=")
    return [f"-----BEGIN {kind} PRIVATE KEY-----", *body, f"-----END {kind} PRIVATE KEY-----"]


RSA = key_block("RSA", 26, 1)
OPENSSH = key_block("OPENSSH", 7, 2)
PLANTED = [*RAW, AWS_KEY_ID, HASHED_TOKEN, PROJECT_KEY, KEY_IN_A_KEY, SHORT_PASSWORD,
           LONG_PASSWORD, DIFF_PASSWORD, *RSA[1:-1], *OPENSSH[1:-1]]  # fmt: skip


def transcript() -> list[dict[str, Any]]:
    tool_input = {
        "command": "aws s3 ls",
        "aws_access_key_id": AWS_KEY_ID,
        "token_hash": HASHED_TOKEN,
        "api_key_id": PROJECT_KEY,
        f"Bearer {KEY_IN_A_KEY}": "header",
        "password": SHORT_PASSWORD,
        "db": {"password": LONG_PASSWORD},
    }
    patch = [{"oldStart": 1, "oldLines": 0, "newStart": 1, "newLines": 40,
              "lines": ["+" + line for line in [*RSA, "", *OPENSSH, f"DB_PASSWORD={DIFF_PASSWORD}"]]}]  # fmt: skip
    result = cc_user(SESSION, "u2", [{"type": "tool_result", "tool_use_id": "toolu_01Planted",
                                      "content": BODY_SECRETS["env"] + BODY_SECRETS["yaml"]}])  # fmt: skip
    result["toolUseResult"] = {"filePath": "/home/u/proj/.ssh/id", "structuredPatch": patch,
                               "originalFile": "\n".join(OPENSSH)}  # fmt: skip
    return [
        cc_user(SESSION, "u1", f"my key is {ANTHROPIC} and {GITHUB}"),
        cc_assistant(SESSION, "a1", [
            {"type": "thinking", "thinking": f"the secret is {AWS_SECRET}", "signature": SIGNATURE},
            {"type": "text", "text": BODY_SECRETS["redis"] + " " + SENDGRID + " " + GITLAB},
            {"type": "tool_use", "id": "toolu_01Planted", "name": "Bash", "input": tool_input},
        ]),
        result,
        {**cc_user(SESSION, "u3", "\n".join(RSA)), "sessionIdHash": HASHED_TOKEN},
    ]  # fmt: skip


def texts_of_the_index(database: Path) -> str:
    conn = sqlite3.connect(database)
    found = []
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        for row in conn.execute(f'SELECT * FROM "{table}"'):
            found += [str(v) for v in row if isinstance(v, str)]
    conn.close()
    return "\n".join(found)


def leaked(text: str) -> list[str]:
    pieces = [p for s in PLANTED for p in (s, s[len(s) // 2 :]) if len(p) >= 6]
    return [piece for piece in pieces if piece in text]


def test_no_planted_secret_is_in_the_index_the_kept_copy_or_the_restored_file(
    home: Home, cc_root: Path
) -> None:
    path = cc_root / "-home-u-proj" / f"{SESSION}.jsonl"
    write_lines(path, transcript())
    home.ingest_all()
    assert leaked(texts_of_the_index(home.paths.database)) == []

    [copy] = home.paths.kept.rglob("*.kept")
    kept = b"\n".join(line for frame in read_frames(copy, None) for line in frame.lines)
    assert leaked(kept.decode()) == []
    assert b"[masked]" in kept

    path.unlink()
    home.ingest_all()
    [restored] = home.restore(resolve_session(home.db, SESSION))
    written = restored.path.read_text()
    assert leaked(written) == []
    lines = [json.loads(line) for line in written.splitlines()]
    # What Claude Code needs to resume is as it was.
    assert [line["uuid"] for line in lines] == ["u1", "a1", "u2", "u3"]
    assert {line["sessionId"] for line in lines} == {SESSION}
    thinking, _, tool = lines[1]["message"]["content"]
    assert thinking["signature"] == SIGNATURE
    assert tool["id"] == "toolu_01Planted" and lines[2]["message"]["content"][0]["tool_use_id"] == (
        "toolu_01Planted"
    )
    # The key block's lines are masked whole; its first and last lines say what it was.
    patched = lines[2]["toolUseResult"]["structuredPatch"][0]["lines"]
    assert patched[0] == "+" + RSA[0] and patched[1 : len(RSA) - 1] == ["[masked]"] * (len(RSA) - 2)
    assert patched[len(RSA) - 1] == "+" + RSA[-1]
    assert patched[-1] == "+DB_PASSWORD=[masked]"
