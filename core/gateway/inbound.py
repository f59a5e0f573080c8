"""One Telegram update read into a plain record: who wrote, where, what, and to whom.

The update arrives as the Bot API's JSON (a dict); whatever it holds (a sticker, a photo, an
edit, a channel post, control characters, missing fields) becomes an :class:`Inbound` whose
``kind`` says what the gateway may do with it. This module never raises on an update's content,
never talks to the network and never imports the Telegram library.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

from clawback.core.safejson import clean_text

__all__ = ["BotIdentity", "Inbound", "clean_message_text", "read_update"]

Kind = Literal["text", "unsupported", "edited", "channel", "ignored"]

#: the most of one message the gateway keeps (Telegram sends at most 4,096; captions 1,024)
MAX_TEXT = 16_000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# What a message can carry besides text, in the words a reply uses.
_MEDIA = (
    "sticker",
    "photo",
    "animation",
    "video",
    "video_note",
    "voice",
    "audio",
    "document",
    "contact",
    "location",
    "venue",
    "poll",
    "dice",
    "game",
    "story",
)


@dataclass(frozen=True)
class BotIdentity:
    """The bot itself, from ``getMe``: how a group mentions it or replies to it."""

    id: int
    username: str
    name: str = ""


@dataclass(frozen=True)
class Inbound:
    """An update as the gateway sees it. ``text`` is cleaned and stripped of the bot's
    @mention; ``addressed`` says a group message mentions the bot or replies to it."""

    update_id: int
    kind: Kind
    chat_id: int = 0
    chat_type: str = ""  # private, group, supergroup, channel
    chat_title: str = ""
    sender_id: int | None = None
    username: str = ""  # without the @, as Telegram spells it
    sender_name: str = ""
    text: str = ""
    media: str = ""  # what an unsupported message carried ("sticker", "photo", ...)
    addressed: bool = False
    forwarded_from: str = ""
    message_id: int = 0
    date: int = 0

    @property
    def is_private(self) -> bool:
        return self.chat_type == "private"

    @property
    def is_group(self) -> bool:
        return self.chat_type in ("group", "supergroup")


def clean_message_text(text: str) -> str:
    """Text a person sent, safe to store and to prompt with: valid Unicode, no control
    characters or direction overrides (newlines and tabs stay), at most :data:`MAX_TEXT`."""
    text = clean_text(text[: MAX_TEXT * 2])
    text = unicodedata.normalize("NFC", _CONTROL.sub("", text.replace("\r\n", "\n")))
    return text[:MAX_TEXT].strip()


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str:
    return clean_message_text(value) if isinstance(value, str) else ""


def _person(user: dict[str, Any]) -> str:
    name = " ".join(part for part in (_str(user.get("first_name")), _str(user.get("last_name"))))
    return " ".join(name.split()) or _str(user.get("username")) or "someone"


def read_update(update: Any, bot: BotIdentity) -> Inbound:
    """``update`` (the Bot API's JSON object) as an :class:`Inbound`."""
    data = _dict(update)
    update_id = _int(data.get("update_id")) or 0
    if isinstance(data.get("message"), dict):
        kind: Kind = "text"
        message = data["message"]
    elif isinstance(data.get("edited_message"), dict):
        kind, message = "edited", data["edited_message"]
    elif isinstance(data.get("channel_post") or data.get("edited_channel_post"), dict):
        kind, message = "channel", data.get("channel_post") or data["edited_channel_post"]
    else:
        return Inbound(update_id, "ignored")
    chat = _dict(message.get("chat"))
    sender = _dict(message.get("from"))
    chat_type = _str(chat.get("type"))
    text = message.get("text") if isinstance(message.get("text"), str) else None
    entities = message.get("entities")
    if text is None and isinstance(message.get("caption"), str):
        text, entities = message["caption"], message.get("caption_entities")
    media = next((name for name in _MEDIA if name in message), "")
    raw = text or ""
    mentioned = _mentions_bot(raw, entities, bot)
    reply_to = _dict(message.get("reply_to_message"))
    replied = _int(_dict(reply_to.get("from")).get("id")) == bot.id
    cleaned = clean_message_text(_strip_mention(raw, bot) if raw else "")
    if kind == "text" and not cleaned:
        kind = "unsupported"
    if kind == "text" and chat_type == "channel":
        kind = "channel"
    return Inbound(
        update_id=update_id,
        kind=kind,
        chat_id=_int(chat.get("id")) or 0,
        chat_type=chat_type,
        chat_title=_str(chat.get("title")) or _person(chat),
        sender_id=_int(sender.get("id")),
        username=_str(sender.get("username")),
        sender_name=_person(sender),
        text=cleaned,
        media=media or ("message" if not cleaned else ""),
        addressed=mentioned or replied,
        forwarded_from=_forwarded_from(message),
        message_id=_int(message.get("message_id")) or 0,
        date=_int(message.get("date")) or 0,
    )


def _mentions_bot(text: str, entities: Any, bot: BotIdentity) -> bool:
    """Whether ``text`` names the bot: an @mention of its username, or a mention by id."""
    handle = f"@{bot.username}".lower()
    if isinstance(entities, list):
        for entity in entities:
            entity = _dict(entity)
            kind = entity.get("type")
            if kind == "text_mention" and _int(_dict(entity.get("user")).get("id")) == bot.id:
                return True
            if kind in ("mention", "bot_command"):
                start, length = _int(entity.get("offset")), _int(entity.get("length"))
                if start is None or length is None:
                    continue
                word = _utf16_slice(text, start, length).lower()
                if word == handle or word.endswith(handle):
                    return True
    if not bot.username:
        return False
    named = rf"(?:(?<![\w@])|^/\w+){re.escape(handle)}(?!\w)"  # "@bot ..." or "/new@bot"
    return re.search(named, text, re.IGNORECASE) is not None


def _strip_mention(text: str, bot: BotIdentity) -> str:
    """``text`` without the bot's @mentions (``/new@bot`` becomes ``/new``)."""
    if not bot.username:
        return text
    handle = re.escape(bot.username)
    text = re.sub(rf"^(/\w+)@{handle}\b", r"\1", text.strip(), flags=re.IGNORECASE)
    text = re.sub(rf"(?<![\w@])@{handle}(?!\w)[,:]?", "", text, flags=re.IGNORECASE)
    return " ".join(text.split(" ")).strip()


def _utf16_slice(text: str, offset: int, length: int) -> str:
    """Telegram's entity offsets count UTF-16 code units."""
    encoded = text.encode("utf-16-le")
    return encoded[offset * 2 : (offset + length) * 2].decode("utf-16-le", errors="ignore")


def _forwarded_from(message: dict[str, Any]) -> str:
    origin = _dict(message.get("forward_origin"))
    if origin:
        who = (
            _dict(origin.get("sender_user"))
            or _dict(origin.get("sender_chat"))
            or _dict(origin.get("chat"))
        )
        return _person(who) if who else _str(origin.get("sender_user_name")) or "someone"
    if "forward_from" in message or "forward_sender_name" in message:
        return _person(_dict(message.get("forward_from"))) or _str(
            message.get("forward_sender_name")
        )
    return ""
