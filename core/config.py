"""``config.toml``: every setting with its default and a one-line doc.

Settings are grouped in sections, each a dataclass whose fields carry a ``doc``. The file is read
with :mod:`tomllib` and written with :mod:`tomli_w` through an atomic replace. A bad file never
produces a traceback: :class:`~clawback.core.errors.ConfigError` names the file, the line and the
key. Unknown keys are errors too, because a misspelt setting that silently does nothing is worse.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

from clawback.core.errors import ConfigError
from clawback.core.paths import PRIVATE_FILE, Paths
from clawback.core.records import KIND_FILTERS, Role, Source
from clawback.core.timeutil import normalize_ts


def setting(default: Any, doc: str) -> Any:
    """A config field: its default and the one line shown in ``clawback config``."""
    if isinstance(default, list | dict):
        return field(default_factory=lambda: type(default)(default), metadata={"doc": doc})
    return field(default=default, metadata={"doc": doc})


@dataclass
class SourcesConfig:
    claude_code: bool = setting(True, "Ingest Claude Code transcripts.")
    claude_code_path: str = setting("~/.claude/projects", "Where Claude Code keeps transcripts.")
    openclaw: bool = setting(True, "Ingest OpenClaw / pi agent transcripts.")
    openclaw_path: str = setting("~/.openclaw/agents", "OpenClaw agents folder (*/sessions).")
    native: bool = setting(True, "Ingest clawback's own chat transcripts.")
    extra: list[str] = setting(
        [], "Extra folders to ingest; 'FORMAT:PATH' picks a format, else it is detected."
    )


@dataclass
class ArchiveConfig:
    conversation_gap_minutes: int = setting(60, "A silence this long splits conversations.")
    min_conversation_messages: int = setting(5, "Shorter conversations are skipped by process.")
    mask_secrets: bool = setting(True, "Mask API keys and tokens before they enter the index.")
    max_line_mb: int = setting(32, "Transcript lines larger than this are skipped and counted.")
    parse_worker: bool = setting(
        True, "A big ingest reads files in a second process (uses a second CPU core)."
    )
    keep_lines: bool = setting(
        True, "Keep a masked, compressed copy of every Claude Code line, to restore it later."
    )


@dataclass
class ChatConfig:
    claude_command: str = setting("claude", "The claude executable ($CLAWBACK_CLAUDE overrides).")
    extra_args: list[str] = setting([], "Extra arguments passed to every claude call.")
    model: str = setting("", "Model for chat turns; empty lets claude choose.")
    timeout_seconds: int = setting(300, "Give up on a claude call after this long.")
    live_idle_minutes: int = setting(
        10,
        "The app and the chat REPL keep each session's claude process this long between turns"
        " (the prompt cache is read, no start per turn); 0: a process per turn.",
    )
    live_sessions: int = setting(3, "Most claude processes the app or the REPL keeps at once.")
    context_window: int = setting(200_000, "Context window used until claude reports one.")
    reserve_tokens: int = setting(16_000, "Room kept free in the window for the reply.")
    recall_hard_cap_tokens: int = setting(4_000, "Most tokens the recalled context may use.")
    system_prompt: str = setting("", "System prompt for chat turns; empty uses the default.")
    session_reset: str = setting("idle", "When a chat session goes stale: idle or daily.")
    idle_minutes: int = setting(240, "Idle policy: stale after this many minutes.")
    at_hour: int = setting(4, "Daily policy: stale once this local hour has passed.")
    keep_messages: int = setting(6, "Messages kept verbatim after a compaction.")
    flush_mode: str = setting("auto", "Pre-compaction memory flush: auto, ask or off.")
    flush_prompt: str = setting("", "System prompt of the memory flush; empty uses the default.")
    compaction_prompt: str = setting("", "System prompt of compaction; empty uses the default.")
    reserve_tokens_floor: int = setting(
        20_000, "Flush threshold: reserve below the window (flush before compaction)."
    )
    soft_threshold_tokens: int = setting(4_000, "Flush threshold: soft margin before it.")
    recall: bool = setting(True, "Add recalled context from the archive to each chat turn.")
    memory_tools: bool = setting(
        True, "Let Claude search and read the archive in chat turns (clawback mcp's tools)."
    )
    model_aliases: list[str] = setting(
        [], "Extra model names for '/new <model>' and --model, as 'ALIAS=MODEL'."
    )
    reset_by_type: list[str] = setting(
        [], "Per session type (dm, group, thread, ...): 'TYPE=idle:MINUTES' or 'TYPE=daily:HOUR'."
    )
    reset_by_channel: list[str] = setting(
        [], "Per channel (local, telegram, ...): 'CHANNEL=idle:MINUTES' or 'CHANNEL=daily:HOUR'."
    )


@dataclass
class MemoryConfig:
    workspace: str = setting(
        "", "Folder of MEMORY.md and memory/*.md (e.g. an agent's); empty: <home>/workspace."
    )


@dataclass
class EmbeddingsConfig:
    model: str = setting(
        "minilm", "Model for semantic search: minilm, none (off), or a path to a .onnx file."
    )
    tools_and_thinking: bool = setting(
        False, "Also embed tool calls, tool output and thinking (many more chunks to embed)."
    )
    background: bool = setting(True, "The app embeds new messages in the background.")
    recency_boost: bool = setting(
        False, "Favour recent hits gently in semantic and hybrid search (old ones never drop)."
    )
    threads: int = setting(1, "CPU threads the embedding model may use.")

    @property
    def enabled(self) -> bool:
        """Semantic search is on unless ``model`` is ``none`` (vectors may still be missing)."""
        return self.model.strip().lower() != "none"


@dataclass
class HooksConfig:
    timeout_s: int = setting(
        5, "Claude Code hooks give up (printing nothing) after this many seconds."
    )
    brief_tokens: int = setting(1_500, "Session start: most tokens of the memory brief.")
    recall_tokens: int = setting(800, "Each prompt: most tokens of the recalled context.")
    exclude: list[str] = setting(
        [],
        "Projects the hooks leave alone: glob patterns on the working folder (e.g. '~/secret/*').",
    )
    warm_minutes: int = setting(
        10,
        "The warm process (model and vectors for recall by meaning, hybrid `clawback search` and"
        " `clawback chat` turns) stays this long when idle; 0: none, each loads its own.",
    )
    warm_for_search: bool = setting(
        False,
        "Let `clawback search` start the warm process where Claude Code's hooks are not"
        " installed (they start it anyway).",
    )


@dataclass
class UsageConfig:
    prices: list[str] = setting(
        [],
        "Prices that replace or add to the shipped table, in dollars per million tokens:"
        " 'MODEL=INPUT,OUTPUT' or 'MODEL=INPUT,OUTPUT,CACHE_WRITE_5M,CACHE_WRITE_1H,CACHE_READ'.",
    )


def parse_price(text: str) -> tuple[str, list[float]]:
    """One ``usage.prices`` entry: the model and its 2 or 5 prices (a :class:`ValueError`
    says what is wrong)."""
    model, sep, numbers = text.partition("=")
    model = model.strip()
    if not sep or not model:
        raise ValueError(
            f"{text!r} is not MODEL=INPUT,OUTPUT[,CACHE_WRITE_5M,CACHE_WRITE_1H,CACHE_READ]"
        )
    try:
        values = [float(part) for part in numbers.split(",")]
    except ValueError:
        raise ValueError(f"{text!r}: prices are numbers (dollars per million tokens)") from None
    if len(values) not in (2, 5) or not all(0 <= value < float("inf") for value in values):
        raise ValueError(f"{text!r}: give 2 or 5 prices, none negative")
    return model, values


@dataclass
class UIConfig:
    theme: str = setting("clawback-dark", "Theme of the terminal app.")
    show_sidechains: bool = setting(False, "Show sub-agent messages in transcripts.")
    search_limit: int = setting(50, "Live search results shown.")
    show_sessions: bool = setting(True, "Show the sessions list beside the transcript.")
    sessions_source: str = setting("", "Sessions list: only this source; empty for all.")
    sessions_project: str = setting(
        "", "Sessions list: only this project (its working directory); empty for all."
    )
    search_source: str = setting("", "Live search: only this source; empty for any.")
    search_role: str = setting("", "Live search: only this role; empty for any.")
    search_kind: str = setting("all", "Live search: only this kind: all, text, thinking or tool.")
    search_since: str = setting("", "Live search: only entries on or after this local YYYY-MM-DD.")
    search_until: str = setting("", "Live search: only entries on or before this local YYYY-MM-DD.")
    search_this_session: bool = setting(False, "Live search: only the open session.")
    usage_period: str = setting("30d", "Usage pane: the period shown: 7d, 30d, 90d, 365d or all.")


@dataclass
class TelegramConfig:
    token: str = setting(
        "", "Bot token from @BotFather ($TELEGRAM_BOT_TOKEN overrides); never printed or logged."
    )
    api_base: str = setting(
        "https://api.telegram.org", "Bot API address (a local Bot API server, or a test stand-in)."
    )
    allow: list[str] = setting(
        [], "Who may talk to the bot: Telegram user ids and/or @usernames; empty: nobody."
    )
    groups: list[str] = setting(
        [], "Group ids the bot answers in, when mentioned or replied to; other groups are ignored."
    )
    group_open: bool = setting(
        False, "In a listed group, answer every member, not only those in telegram.allow."
    )
    group_history: int = setting(
        50,
        "Per group: recent messages not addressed to the bot, given as context when it is; 0 off.",
    )
    dm_scope: str = setting(
        "main", "DMs share the main session ('main') or each sender gets one ('per-peer')."
    )
    agent: str = setting("main", "The agent id in the gateway's session keys (agent:<id>:...).")
    debounce_ms: int = setting(
        1_500, "Messages from one sender in one chat this close together become one turn."
    )
    max_concurrent_turns: int = setting(
        4, "Turns run at once across chats (each chat runs one at a time, in order)."
    )
    unsupported: str = setting(
        "reply", "Stickers, photos without text, edits: 'reply' (one short line) or 'ignore'."
    )
    answer_pending_minutes: int = setting(
        60, "On restart, answer messages left unanswered up to this old; older ones are marked."
    )
    poll_timeout_s: int = setting(30, "Long polling: how long one getUpdates waits for news.")


@dataclass
class Config:
    sources: SourcesConfig = field(default_factory=SourcesConfig)
    archive: ArchiveConfig = field(default_factory=ArchiveConfig)
    chat: ChatConfig = field(default_factory=ChatConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    hooks: HooksConfig = field(default_factory=HooksConfig)
    usage: UsageConfig = field(default_factory=UsageConfig)
    ui: UIConfig = field(default_factory=UIConfig)
    telegram: TelegramConfig = field(default_factory=TelegramConfig)

    def workspace(self, paths: Paths) -> Path:
        """Where the memory files live: the configured folder, else the home's own."""
        configured = self.memory.workspace.strip()
        return Path(configured).expanduser() if configured else paths.workspace

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return dataclasses.asdict(self)


def describe() -> list[tuple[str, Any, str]]:
    """Every setting as ``(section.key, default, doc)``, for ``clawback config``."""
    rows = []
    defaults = Config()
    for section in dataclasses.fields(Config):
        values = getattr(defaults, section.name)
        for f in dataclasses.fields(values):
            default = getattr(values, f.name)
            rows.append((f"{section.name}.{f.name}", default, f.metadata["doc"]))
    return rows


def _line_of(text: str, section: str, key: str | None) -> int | None:
    """Best-effort line number of ``[section]`` / ``key`` in the raw file, for error messages."""
    lines = text.splitlines()
    in_section = key is None
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if re.match(rf"^\[\s*{re.escape(section)}\s*\]", stripped):
            if key is None:
                return number
            in_section = True
            continue
        if stripped.startswith("["):
            in_section = False
        if in_section and key and re.match(rf"^{re.escape(key)}\s*=", stripped):
            return number
    return None


def _check_type(value: Any, hint: Any) -> bool:
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if getattr(hint, "__origin__", None) is list:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return True


def _type_name(hint: Any) -> str:
    return {bool: "true or false", int: "an integer", str: "a string"}.get(
        hint, "a list of strings"
    )


def parse_config(data: dict[str, Any], *, path: Path, text: str = "") -> Config:
    config = Config()

    def fail(message: str, section: str, key: str | None = None) -> ConfigError:
        line = _line_of(text, section, key)
        where = f"{path}, line {line}" if line else str(path)
        name = f"{section}.{key}" if key else section
        return ConfigError(f"{where}: {name}: {message}")

    sections = {f.name: f for f in dataclasses.fields(Config)}
    for section_name, values in data.items():
        if section_name not in sections:
            raise fail(f"unknown section (known: {', '.join(sections)})", section_name)
        if not isinstance(values, dict):
            raise fail("must be a table ([section])", section_name)
        section = getattr(config, section_name)
        hints = get_type_hints(type(section))
        for key, value in values.items():
            if key not in hints:
                raise fail("unknown setting", section_name, key)
            if not _check_type(value, hints[key]):
                raise fail(f"must be {_type_name(hints[key])}", section_name, key)
            setattr(section, key, value)
    _validate(config, fail)
    return config


def _validate(config: Config, fail: Any) -> None:
    if config.chat.session_reset not in ("idle", "daily"):
        raise fail("must be 'idle' or 'daily'", "chat", "session_reset")
    if config.chat.flush_mode not in ("auto", "ask", "off"):
        raise fail("must be 'auto', 'ask' or 'off'", "chat", "flush_mode")
    if not 0 <= config.chat.at_hour <= 23:
        raise fail("must be an hour from 0 to 23", "chat", "at_hour")
    for section, key in (
        ("archive", "conversation_gap_minutes"),
        ("archive", "max_line_mb"),
        ("chat", "timeout_seconds"),
        ("chat", "context_window"),
        ("embeddings", "threads"),
        ("hooks", "timeout_s"),
        ("telegram", "max_concurrent_turns"),
        ("telegram", "poll_timeout_s"),
    ):
        if getattr(getattr(config, section), key) <= 0:
            raise fail("must be positive", section, key)
    if config.telegram.dm_scope not in ("main", "per-peer"):
        raise fail("must be 'main' or 'per-peer'", "telegram", "dm_scope")
    if config.telegram.unsupported not in ("reply", "ignore"):
        raise fail("must be 'reply' or 'ignore'", "telegram", "unsupported")
    for key in ("group_history", "debounce_ms", "answer_pending_minutes"):
        if getattr(config.telegram, key) < 0:
            raise fail("must be 0 or more", "telegram", key)
    # The app writes these as filters change; a hand edit is checked as strictly as any other.
    listed = [s.value for s in Source if s is not Source.MEMORY]
    for key, allowed in (
        ("sessions_source", listed),
        ("search_source", [s.value for s in Source]),
        ("search_role", [r.value for r in Role]),
        ("search_kind", list(KIND_FILTERS)),
    ):
        if getattr(config.ui, key) not in ("", *allowed):
            raise fail(f"must be empty or one of {', '.join(allowed)}", "ui", key)
    for key in ("search_since", "search_until"):
        day = getattr(config.ui, key)
        if day and normalize_ts(day) is None:
            raise fail("must be empty or a date (YYYY-MM-DD)", "ui", key)
    if config.ui.usage_period not in ("7d", "30d", "90d", "365d", "all"):
        raise fail("must be 7d, 30d, 90d, 365d or all", "ui", "usage_period")
    for entry in config.usage.prices:
        try:
            parse_price(entry)
        except ValueError as exc:
            raise fail(str(exc), "usage", "prices") from None


def load_config(path: Path) -> Config:
    """Read ``path``; a missing file means all defaults."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    return parse_config(data, path=path, text=text)


def atomic_write_bytes(path: Path, data: bytes, mode: int = PRIVATE_FILE) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_config(config: Config, path: Path) -> None:
    """Write only the settings that differ from the defaults, so new defaults reach old files."""
    defaults = Config().to_dict()
    changed: dict[str, dict[str, Any]] = {}
    for section, values in config.to_dict().items():
        diff = {k: v for k, v in values.items() if defaults[section][k] != v}
        if diff:
            changed[section] = diff
    import tomli_w  # only writers pay for it: a Claude Code hook reads settings on every prompt

    atomic_write_bytes(path, tomli_w.dumps(changed).encode("utf-8"))


def update_setting(paths: Paths, dotted: str, value: Any) -> Config:
    """Change one setting in ``config.toml`` (used by the app to persist choices)."""
    return update_settings(paths, {dotted: value})


def update_settings(paths: Paths, changes: dict[str, Any]) -> Config:
    """Change several settings in one read and one write, so a pane's filters save together.

    The file is read afresh, so edits made by hand since the app started are kept; a value the
    file could not hold raises :class:`ConfigError` and nothing is written.
    """
    config = load_config(paths.config)
    data = config.to_dict()
    for dotted, value in changes.items():
        section, _, key = dotted.partition(".")
        if section not in data or key not in data[section]:
            raise ConfigError(f"{paths.config}: {dotted}: unknown setting")
        data[section][key] = value
    new = parse_config(data, path=paths.config)
    save_config(new, paths.config)
    return new
