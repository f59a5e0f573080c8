"""``clawback chat --dry-run`` prints the prompt exactly as the turn sends it, recall included,
even when the archive holds more relevant fragments than recall reads: the real turn stores and
indexes the person's message before its prompt is assembled, and that message must not take one
of recall's candidates (a dry run stores nothing, so it would show one fragment more)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clawback.core.recall import CANDIDATES, CLOSE_TAG, OPEN_TAG

from tests.helpers import cc_user, write_lines

from .test_chat import KEY, calls, run

SESSION = "0b8c1f9e-1111-4222-8333-944455556666"
#: more fragments about the launch than recall reads (``limit * 2`` candidates)
FRAGMENTS = 3 * CANDIDATES
#: how often the checklist was asked for: more than the block's lines, fewer than the candidates
ASKED = CANDIDATES + CANDIDATES // 2


@pytest.fixture(params=["none", "hash"])
def home(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A home holding :func:`archive`, recalling by words alone (``none``) or by words and
    meaning (the test-only ``hash`` model, its vectors loaded in the turn's own process)."""
    if request.param != "none":
        pytest.importorskip(
            "numpy", reason="embeddings are an extra: pip install -e '.[embeddings]'"
        )
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[embeddings]\nmodel = "{request.param}"\n')
    archive(home, tmp_path)
    if request.param != "none":
        embedded = run("embed", home=home)
        assert embedded.returncode == 0, embedded.stderr
    return home


def archive(home: Path, tmp_path: Path) -> None:
    """Past sessions about the launch: the checklist asked for again and again (those lines
    rank first and recall leaves them out, as the message it is asked in holds them), then more
    distinct fragments than the candidates left after them."""
    lines = []
    for n in range(FRAGMENTS):
        when = f"2026-05-{1 + n // 24:02d}T{n % 24:02d}:00:00.000Z"
        said = f"the tangerine launch checklist item {n}: step {n * 7} of the rollout, signed off"
        asked = "tangerine launch checklist"
        lines.append(cc_user(SESSION, f"u{n}", said, ts=when))
        if n < ASKED:
            lines.append(cc_user(SESSION, f"q{n}", asked, ts=when))
    write_lines(tmp_path / "cc" / "proj" / f"{SESSION}.jsonl", lines)
    done = run("ingest", str(tmp_path / "cc"), "--source", "claude-code", home=home)
    assert done.returncode == 0, done.stderr


def detail_lines(prompt: str) -> list[str]:
    block = prompt[prompt.index(OPEN_TAG) : prompt.index(CLOSE_TAG)]
    return [line for line in block.splitlines() if line.startswith("- [")]


def sent_as_dry_run_said(home: Path, message: str) -> str:
    """The dry run's prompt for ``message``, checked against what the real turn then sent."""
    dry = run("chat", "--session", KEY, "--dry-run", "--json", message, home=home,
              env={"CLAWBACK_WARM": "0"})  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    prompt = str(json.loads(dry.stdout)["prompt"])
    real = run("chat", "--session", KEY, message, home=home, reply="ok", env={"CLAWBACK_WARM": "0"})
    assert real.returncode == 0, real.stderr
    assert calls(home)[-1]["stdin"] == prompt
    return prompt


def test_the_first_turn_in_a_new_session_sends_what_its_dry_run_printed(home: Path) -> None:
    first = sent_as_dry_run_said(home, "what is on the tangerine launch checklist?")
    assert len(detail_lines(first)) > 1


def test_a_later_turn_sends_what_its_dry_run_printed(home: Path) -> None:
    done = run("chat", "--session", KEY, "what is on the tangerine launch checklist?", home=home,
               reply="The tangerine launch checklist has many steps.")  # fmt: skip
    assert done.returncode == 0, done.stderr
    later = sent_as_dry_run_said(home, "which tangerine launch checklist step comes next?")
    assert len(detail_lines(later)) > 1
    # The session's own lines are in the prompt as conversation, never recalled as fragments.
    assert not [line for line in detail_lines(later) if " native " in line]
