"""Chat gateways: clawback's memory reached from a chat network (Telegram), through the chat engine.

The gateway itself (:mod:`.gateway`) imports no network client: :mod:`.bot` is the one module
that loads python-telegram-bot (the ``clawback[telegram]`` extra), and only when a gateway runs.
How it works and what it guarantees: ``docs/telegram.md``.
"""

from clawback.core.gateway.access import Access, PairingCodes, PairingRequest
from clawback.core.gateway.api import BotApi, Undeliverable
from clawback.core.gateway.gateway import TelegramGateway, failure_line
from clawback.core.gateway.inbound import BotIdentity, Inbound, read_update
from clawback.core.gateway.status import GatewayStatus, read_status

__all__ = [
    "Access",
    "BotApi",
    "BotIdentity",
    "GatewayStatus",
    "Inbound",
    "PairingCodes",
    "PairingRequest",
    "TelegramGateway",
    "Undeliverable",
    "failure_line",
    "read_status",
    "read_update",
]
