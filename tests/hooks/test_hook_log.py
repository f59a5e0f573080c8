"""The hooks log holds no more than the index would: ids, folders and details masked as the
index masks them, and never a prompt's words (issue 31, item 7)."""

from __future__ import annotations

import json
from pathlib import Path

from clawback.core.hooks.log import log_path, read_runs
from clawback.core.paths import Paths
from clawback.core.text.masking import seal

from ..cli_runner import run_cli
from .conftest import event

ANTHROPIC = "sk-ant-api03-Zq8xR2vL0pWm4Ks9TnB6yHc3Jd7Fg1Aa5Ee"
GITHUB = "ghp_R8kLm2Qz7Xw4Vn9Tb3Jc6Hd1Fg5Sa0Pe2Yu8"
STRIPE = "sk_live_51HxQ2eLkPz9Wm4Ks9TnB6yHc3Jd7Fg1Aa5Ee"
PASSWORD = "hunter2hunter2"


def test_ids_folders_and_details_are_masked_and_prompts_never_logged(hook_home: Path) -> None:
    cwd = f"/home/user/work/{GITHUB}"
    session = f"s-{ANTHROPIC}"
    prompt = f"deploy {STRIPE} password {PASSWORD} to the zeppelin hangar"
    nothing = event("UserPromptSubmit", prompt=prompt, cwd=cwd, session_id=session)
    assert run_cli("hook", "user-prompt", home=hook_home, input=json.dumps(nothing)).stdout == ""
    # an event naming another event: the error's detail quotes what the event said
    wrong = event("UserPromptSubmit", hook_event_name=f"Stop {GITHUB}", cwd=cwd)
    assert run_cli("hook", "user-prompt", home=hook_home, input=json.dumps(wrong)).stdout == ""

    hooks = Paths.resolve(hook_home).hooks
    raw = log_path(hooks).read_text()
    for secret in (ANTHROPIC, GITHUB, STRIPE, PASSWORD, "zeppelin", "deploy"):
        assert secret not in raw
    empty, failed = read_runs(hooks)[-2:]
    assert (empty.outcome, empty.detail) == ("empty", "keyword: nothing above the floor")
    assert (empty.session_id, empty.cwd) == (seal(session), seal(cwd))  # as the index has them
    assert failed.outcome == "error" and "[masked]" in failed.detail


RECORD_MANY = """\
import sys
from pathlib import Path
from clawback.core.hooks.log import HookRun, record
for i in range(int(sys.argv[3])):
    record(Path(sys.argv[1]), HookRun(event="stop", outcome="ok", ms=1.0, detail=f"{sys.argv[2]}-{i}"))
"""


def test_trimming_under_concurrent_writers_loses_no_record(tmp_path: Path) -> None:
    """Processes appending while others trim: every record written last is still there."""
    import subprocess
    import sys

    from clawback.core.hooks import log

    hooks = tmp_path / "hooks"
    hooks.mkdir()
    filler = json.dumps({"event": "stop", "outcome": "ok", "ms": 1.0, "detail": "x" * 600})
    lines = log.KEEP_LINES  # over MAX_BYTES even once trimmed: every record trims
    log_path(hooks).write_text((filler + "\n") * lines)
    writers = [
        subprocess.Popen([sys.executable, "-c", RECORD_MANY, str(hooks), f"w{n}", "10"])
        for n in range(6)
    ]
    for writer in writers:
        assert writer.wait(60) == 0
    details = {run.detail for run in read_runs(hooks)}
    missing = [f"w{n}-{i}" for n in range(6) for i in range(10) if f"w{n}-{i}" not in details]
    assert missing == []
    assert len(log_path(hooks).read_bytes().splitlines()) == log.KEEP_LINES
