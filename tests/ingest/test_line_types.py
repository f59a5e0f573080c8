"""Issue 31 item 17: ``health`` knows every line type the current Claude Code writes.

Claude Code 2.1.328's transcript writer keeps a table of the 47 entry types it writes (found in
its bundle beside ``"tools-used":"last-wins"``); ``tools-used`` and the other newer ones were
counted as unknown line types, so every healthy session looked damaged.
"""

from __future__ import annotations

from pathlib import Path

from clawback.core.home import Home
from clawback.core.ingest.health import health

from tests.helpers import cc_assistant, cc_user, write_lines

#: Every entry type Claude Code 2.1.328 writes to a transcript.
WRITTEN_BY_CLAUDE_CODE = [
    "agent-color",
    "agent-name",
    "agent-setting",
    "ai-title",
    "api-request",
    "api-request-blob",
    "api-request-resumed",
    "api-request-shape",
    "artifact-autoreact-ledger",
    "artifact-comment-monitor",
    "assistant",
    "atis-latch",
    "attachment",
    "attribution-snapshot",
    "bridge-session",
    "content-replacement",
    "continued-in",
    "cost-state",
    "custom-title",
    "data-flow-incomplete",
    "data-flow-records",
    "derived-from",
    "dev-mods",
    "ended-by-model",
    "file-history-delta",
    "file-history-snapshot",
    "fork-context-ref",
    "frame-link",
    "history-suppression",
    "isolation-latch",
    "last-prompt",
    "memory-mode",
    "mode",
    "observer-ref",
    "permission-mode",
    "pr-link",
    "progress",
    "queue-operation",
    "relocated",
    "resume-head-vouch",
    "session-owner",
    "summary",
    "system",
    "tag",
    "tools-used",
    "user",
    "worktree-state",
]
SESSION = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"


def test_no_line_type_claude_code_writes_is_unknown_to_health(home: Home, cc_root: Path) -> None:
    assert len(WRITTEN_BY_CLAUDE_CODE) == 47
    lines = [
        cc_user(SESSION, "u1", "hello"),
        cc_assistant(SESSION, "a1", [{"type": "text", "text": "hi"}]),
    ]
    lines += [
        {"type": kind, "sessionId": SESSION, "timestamp": "2026-11-20T10:00:00Z"}
        for kind in WRITTEN_BY_CLAUDE_CODE
        if kind not in ("user", "assistant", "system", "summary", "attachment")
    ]
    lines.append({"type": "tools-used", "tools": ["Bash", "Read"], "sessionId": SESSION})
    write_lines(cc_root / "-home-u-proj" / f"{SESSION}.jsonl", lines)
    home.ingest_all()
    report = health(home.db, home.paths, "no-such-claude")
    unknown = {r: n for r, n in report.skipped_reasons.items() if "unknown" in r}
    assert unknown == {}, unknown
    lines.append({"type": "a-type-from-the-future", "sessionId": SESSION})
    write_lines(cc_root / "-home-u-proj" / f"{SESSION}.jsonl", lines)
    home.ingest_all()
    report = health(home.db, home.paths, "no-such-claude")
    assert any("a-type-from-the-future" in r for r in report.skipped_reasons)  # still told
