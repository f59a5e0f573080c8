"""Issue 11, class 3: secrets are masked in every stored text column, not only entry text.

Secrets are planted in every place a transcript can carry one (message text, tool output,
thinking, titles, the working folder, the project folder and file names, an unknown line type,
OpenClaw's ``sessions.json``); after ingesting and asking for ``health`` none of them may be
found in any column of any table, nor anywhere in the raw database files. The transcripts
themselves stay as they were.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from clawback.core.ingest.health import health
from clawback.core.text.masking import mask_secrets

from tests.helpers import cc_assistant, cc_user, write_lines

ANTHROPIC = "sk-ant-api03-Zq8xR2vL0pWm4Ks9TnB6yHc3Jd7Fg1Aa5Ee"
GITHUB = "ghp_R8kLm2Qz7Xw4Vn9Tb3Jc6Hd1Fg5Sa0Pe2Yu8"
GITLAB = "glpat-Xk3Lp9Qw2Zr7Vm4Tn8Bc"
SENDGRID = "SG.Qw3Er5Ty7Ui9Op1As2Df4.Gh6Jk8Lz0Xc2Vb4Nm6Qw8Er0Ty2Ui4Op6As8Df0Gh2Jk"
REDIS_PASSWORD = "tuskpelican"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
ENV_PASSWORD = "zebraquokka"
YAML_PASSWORD = "marmotlynx"

BODY_SECRETS = {
    "glpat": GITLAB,
    "redis": f"redis://:{REDIS_PASSWORD}@cache.internal:6379/0",
    "sendgrid": SENDGRID,
    "aws in tool output": f"aws configure get\n{AWS_SECRET}\n",
    "env": f"DB_HOST=localhost\nDB_PASSWORD={ENV_PASSWORD}\n",
    "yaml": f"database:\n  user: app\n  password: {YAML_PASSWORD}\n",
}
RAW = [ANTHROPIC, GITHUB, GITLAB, SENDGRID, REDIS_PASSWORD, AWS_SECRET, ENV_PASSWORD,
       YAML_PASSWORD]  # fmt: skip


@pytest.mark.parametrize("kind", sorted(BODY_SECRETS))
def test_new_kinds_are_masked_in_body_text(kind: str) -> None:
    text = BODY_SECRETS[kind]
    masked = mask_secrets(text)
    assert "[masked]" in masked
    assert not any(secret in masked for secret in RAW)
    assert mask_secrets(masked) == masked


def test_short_config_words_in_code_stay() -> None:
    for code in ("password=password", "token: str", "    password = get_password()",
                 "API_KEY=sk-ant-...", "password: ${DB_PASSWORD}"):  # fmt: skip
        assert mask_secrets(code) == code


def _plant(cc_root: Path, openclaw_root: Path) -> list[Path]:
    project = cc_root / f"-home-u-{GITHUB}"
    session = project / f"{GITLAB}.jsonl"
    write_lines(
        session,
        [
            {**cc_user("s-secret", "u1", f"my key is {ANTHROPIC}"), "cwd": f"/home/u/{GITHUB}"},
            cc_assistant(
                "s-secret",
                "a1",
                [
                    {"type": "thinking", "thinking": f"the secret is {AWS_SECRET} here"},
                    {"type": "text", "text": BODY_SECRETS["redis"] + " " + SENDGRID},
                ],
            ),
            cc_user(
                "s-secret",
                "u2",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": BODY_SECRETS["env"]
                        + BODY_SECRETS["yaml"]
                        + BODY_SECRETS["aws in tool output"],
                    }
                ],
            ),
            {"type": "summary", "summary": f"Rotating {ANTHROPIC}", "leafUuid": "a1"},
            {"type": "custom-title", "customTitle": f"key {GITLAB}", "sessionId": "s-secret"},
            {"type": ANTHROPIC, "sessionId": "s-secret"},  # an unknown line type
        ],
    )
    sessions = openclaw_root / "main" / "sessions"
    write_lines(
        sessions / "oc-1.jsonl",
        [
            {"type": "session", "version": 3, "id": "oc-1", "timestamp": "2024-01-01T00:00:00Z",
             "cwd": f"/srv/{SENDGRID}"},
            {"type": "session_info", "name": f"deploy with {GITHUB}"},
            {"type": "message", "id": "m1", "timestamp": "2024-01-01T00:00:01Z",
             "message": {"role": "user", "content": [{"type": "text", "text": "hello"}]}},
        ],
    )  # fmt: skip
    (sessions / "sessions.json").write_text(
        json.dumps({"agent:main:x": {"sessionId": "oc-1", "displayName": f"t {ANTHROPIC}"}})
    )
    return [session, sessions / "oc-1.jsonl", sessions / "sessions.json"]


def _every_text(db_path: Path) -> list[str]:
    conn = sqlite3.connect(db_path)
    found = []
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        for row in conn.execute(f'SELECT * FROM "{table}"'):
            found += [str(v) for v in row if isinstance(v, str | bytes)]
    conn.close()
    return found


def test_planted_secrets_are_in_no_table_and_no_database_file(home: Any, tmp_path: Path) -> None:
    openclaw_root = tmp_path / "openclaw-agents"
    planted = _plant(Path(home.config.sources.claude_code_path), openclaw_root)
    before = {path: path.read_bytes() for path in planted}

    stats = home.ingest_all()
    report = health(home.db, home.paths, "no-such-claude")

    assert stats.entries > 0
    shown = json.dumps(report.to_json())
    texts = _every_text(home.paths.database)
    assert any("[masked]" in text for text in texts)
    for secret in RAW:
        for piece in (secret, secret[len(secret) // 2 :]):  # a cut-off secret leaks too
            assert piece not in shown, piece
            assert not any(piece in text for text in texts), piece
    home.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for suffix in ("", "-wal"):
        file = Path(str(home.paths.database) + suffix)
        if file.exists():
            data = file.read_bytes()
            for secret in RAW:
                assert secret.encode() not in data, (suffix, secret)
    assert {path: path.read_bytes() for path in planted} == before  # transcripts untouched
