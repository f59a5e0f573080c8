"""The Telegram gateway with the real ``claude`` CLI (against the Anthropic stand-in) and the real
python-telegram-bot (against the Bot API stand-in): a DM's round trip. Opt-in, as every
integration test: ``CLAWBACK_INTEGRATION=1``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from clawback.core.archive.sessions import list_sessions, session_messages
from clawback.core.claude.runner import ClaudeRunner
from clawback.core.home import Home

from ..gateway.conftest import ALICE, run_gateway
from ..gateway.telegram_standin import TelegramStandin, running_standin
from .anthropic_standin import AnthropicStandin
from .test_real_claude import claude_home, offline_env, real_claude  # noqa: F401  (fixtures)

pytestmark = pytest.mark.integration


@pytest.fixture
def telegram_standin() -> Iterator[TelegramStandin]:
    with running_standin() as running:
        yield running


async def test_a_dm_round_trip_through_the_real_claude(
    real_claude: str,  # noqa: F811
    claude_home: Path,  # noqa: F811
    home: Home,
    telegram_standin: TelegramStandin,
    tmp_path: Path,
) -> None:
    with AnthropicStandin() as api:
        runner = ClaudeRunner(
            real_claude, env=offline_env(api, claude_home), cwd=tmp_path, timeout=120
        )
        # live, as the gateway runs: the process must be gone when the gateway stops
        async with run_gateway(home, telegram_standin, runner=runner, live=True) as running:
            telegram_standin.push("where is the spare key?", chat_id=ALICE, user_id=ALICE)
            texts = await running.settle(1, timeout=120)
        requests = api.state.requests
    assert texts[0].startswith("ECHO: ") and "where is the spare key?" in texts[0]
    assert any("where is the spare key?" in str(r.get("messages")) for r in requests)
    session = next(s for s in list_sessions(home.db) if s.key == "agent:main:main")
    roles = [m.role for m in session_messages(home.db, session.id) if m.role != "system"]
    assert roles == ["user", "assistant"]
