"""Who may talk to the gateway: the allow list, listed groups, refusals and pairing codes.

Nobody is allowed by default. ``telegram.allow`` names user ids and/or @usernames; a group is
answered only if ``telegram.groups`` lists its id, and in it only allowed members unless
``telegram.group_open``. A stranger gets at most one short refusal an hour, and a one-time
pairing code printed on the gateway's terminal: ``clawback gateway telegram allow CODE`` adds
them to ``telegram.allow``. Codes live in a private file in the home and expire after an hour.
This module decides and stores; it never sends anything.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from clawback.core.config import TelegramConfig, atomic_write_bytes
from clawback.core.errors import ConfigError, UsageError
from clawback.core.gateway.inbound import Inbound

__all__ = ["Access", "PairingCodes", "PairingRequest"]

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I to misread
CODE_TTL_S = 3600
MAX_OPEN_CODES = 20  # strangers beyond this get no new code until one expires


class Access:
    """The allow list and the listed groups, read once from the settings."""

    def __init__(self, settings: TelegramConfig) -> None:
        self.user_ids: set[int] = set()
        self.usernames: set[str] = set()
        for entry in settings.allow:
            self._add(entry)
        self.group_ids: set[int] = set()
        for entry in settings.groups:
            try:
                self.group_ids.add(int(entry.strip()))
            except ValueError:
                raise ConfigError(
                    f"telegram.groups: {entry!r} is not a group id (a number such as -1001234)"
                ) from None
        self.group_open = settings.group_open

    def _add(self, entry: str) -> None:
        word = entry.strip()
        if word.startswith("@") and len(word) > 1:
            self.usernames.add(word[1:].lower())
            return
        try:
            self.user_ids.add(int(word))
        except ValueError:
            raise ConfigError(
                f"telegram.allow: {entry!r} is neither a user id (a number) nor an @username"
            ) from None

    def admit(self, user_id: int) -> None:
        """Allow ``user_id`` from now on (a pairing code was accepted)."""
        self.user_ids.add(user_id)

    def user_allowed(self, message: Inbound) -> bool:
        if message.sender_id is not None and message.sender_id in self.user_ids:
            return True
        return bool(message.username) and message.username.lower() in self.usernames

    def group_listed(self, message: Inbound) -> bool:
        return message.chat_id in self.group_ids

    def may_address(self, message: Inbound) -> bool:
        """Whether a turn may run for ``message`` (a DM, or a group message to the bot)."""
        if message.is_private:
            return self.user_allowed(message)
        if message.is_group and self.group_listed(message):
            return self.group_open or self.user_allowed(message)
        return False


@dataclass
class PairingRequest:
    code: str
    user_id: int
    username: str
    name: str
    created: float
    expires: float


class PairingCodes:
    """One-time codes a stranger's DM creates; admitting one allows that user."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.clock = clock

    def _load(self) -> dict[str, PairingRequest]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        found: dict[str, PairingRequest] = {}
        now = self.clock()
        for item in raw if isinstance(raw, list) else []:
            try:
                request = PairingRequest(**item)
            except TypeError:
                continue
            if request.expires > now:
                found[request.code] = request
        return found

    def _save(self, requests: dict[str, PairingRequest]) -> None:
        data = json.dumps([asdict(r) for r in requests.values()], ensure_ascii=False)
        atomic_write_bytes(self.path, data.encode("utf-8"))

    def request(self, message: Inbound) -> tuple[PairingRequest, bool] | None:
        """The open code for ``message``'s sender (made now if none: ``True``), or None when
        too many codes are open."""
        if message.sender_id is None:
            return None
        requests = self._load()
        for request in requests.values():
            if request.user_id == message.sender_id:
                return request, False
        if len(requests) >= MAX_OPEN_CODES:
            return None
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(8))
        code = f"{code[:4]}-{code[4:]}"
        now = self.clock()
        request = PairingRequest(
            code, message.sender_id, message.username, message.sender_name, now, now + CODE_TTL_S
        )
        requests[code] = request
        self._save(requests)
        return request, True

    def pending(self) -> list[PairingRequest]:
        return sorted(self._load().values(), key=lambda r: r.created)

    def take(self, code: str) -> PairingRequest:
        """The request ``code`` names, removed (UsageError if unknown or expired)."""
        wanted = code.strip().upper().replace(" ", "")
        if len(wanted) == 8 and "-" not in wanted:
            wanted = f"{wanted[:4]}-{wanted[4:]}"
        requests = self._load()
        request = requests.pop(wanted, None)
        if request is None:
            raise UsageError(
                f"no open pairing code {code.strip()!r}: codes expire after an hour; "
                "ask the person to message the bot again for a new one"
            )
        self._save(requests)
        return request
