"""Knowledge extraction: one ``claude -p --json-schema`` call turns messages into facts + a summary.

The librarian calls it once per archived conversation, and knowledge extraction after a
compaction calls it on the compacted messages. Messages are rendered as a transcript with a short
label per message (``[m3] 2026-11-20 10:04 User: ...``); the model cites the label of the message
a fact comes from, and :func:`parse_extraction` maps it back to the source's message id, so the
model never has to copy a UUID. The CLI returns the answer in the result's
``structured_output`` (see ``shared/claude-cli/json_structured.json``).

This module must never store anything (the caller decides what to keep, through
:class:`~clawback.core.memory.facts.FactStore`), never send text that has not been through
:func:`mask_secrets`, and never trust the model's output: facts of unknown types, empty facts
and unknown message labels are dropped or cleared, long fields are cut.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clawback.core.claude import ClaudeError, ClaudeRunner
from clawback.core.memory.facts import FACT_TYPES, NewFact
from clawback.core.text import mask_secrets, prompt_field

__all__ = [
    "EXTRACTION_SCHEMA",
    "SYSTEM_PROMPT",
    "Extraction",
    "ExtractionError",
    "ExtractionMessage",
    "extract",
    "parse_extraction",
    "render_transcript",
]

MAX_MESSAGE_CHARS = 4_000  # one message longer than this keeps its start and end
MAX_TRANSCRIPT_CHARS = 120_000  # ~30k tokens; longer conversations lose messages in the middle
MAX_CONTENT_CHARS = 600
MAX_CONTEXT_CHARS = 400
MAX_SUMMARY_CHARS = 1_200
MAX_FACTS = 40

EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {
            "type": "string",
            "description": "1-3 sentences: what the conversation was about and how it ended.",
        },
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": list(FACT_TYPES)},
                    "content": {
                        "type": "string",
                        "description": "One self-contained sentence stating the fact.",
                    },
                    "context": {
                        "type": "string",
                        "description": "Why or where it applies, briefly; empty if obvious.",
                    },
                    "message_id": {
                        "type": "string",
                        "description": "Label of the message stating it, e.g. m12.",
                    },
                },
                "required": ["type", "content", "context", "message_id"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["summary", "facts"],
    "additionalProperties": False,
}

SYSTEM_PROMPT = """\
You are clawback's librarian. You read one past conversation between a user and an AI \
assistant and record what is worth remembering in later conversations: a short summary and a \
list of durable knowledge facts. Reply only through the structured output.

Fact types:
- decision: a choice that was made, and what it replaced ("We use PostgreSQL 16 for billing, \
not MySQL").
- implementation: how something is built or works (functions, files, libraries, algorithms).
- config: settings, versions, ports, paths, environment variables, commands to run.
- issue: a bug, failure or limitation found, with its cause or workaround if known.
- task_state: what is done, in progress or still to do at the end of the conversation.
- architecture: components, how they connect, data flow, boundaries.

Each fact is one self-contained sentence a reader understands without the conversation: name \
the project, component, file or tool it is about. Keep names, paths, numbers and versions \
exact. "context" says briefly why or where it applies (empty if obvious). "message_id" is the \
label in brackets (such as m12) of the message that states the fact.

Leave out: greetings, thanks and small talk; speculation, brainstorming and options that were \
not adopted; questions nobody answered; raw file contents, code listings, logs and command \
output (state what they showed instead); and secrets of any kind (API keys, tokens, \
passwords, private keys, credentials in URLs), even masked ones. When the conversation changed \
its mind, record only the final state. When nothing durable was said, return an empty list. \
The summary is 1-3 plain sentences: what was worked on and how it ended.
"""

PROMPT_HEADER = (
    "Extract the summary and the knowledge facts of this conversation. Messages are labelled "
    "[m1], [m2], ... in order.\n\n<conversation>\n"
)
PROMPT_FOOTER = "\n</conversation>\n"

_SPEAKERS = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"}


class ExtractionError(ClaudeError):
    """claude answered, but not with the extraction the schema asks for."""


@dataclass(frozen=True)
class ExtractionMessage:
    """One message to extract from. ``message_id`` is the source's id (stored on facts)."""

    role: str
    text: str
    timestamp: str | None = None
    message_id: str | None = None
    session_id: str | None = None


@dataclass
class Extraction:
    summary: str
    facts: list[NewFact] = field(default_factory=list)
    dropped: int = 0  # facts the model returned that were unusable
    model: str | None = None
    cost: float = 0.0


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]} […{len(text) - limit} characters cut…] {text[-tail:]}"


def render_transcript(
    messages: Sequence[ExtractionMessage],
    *,
    max_chars: int = MAX_TRANSCRIPT_CHARS,
    max_message_chars: int = MAX_MESSAGE_CHARS,
) -> tuple[str, dict[str, ExtractionMessage]]:
    """The labelled, masked transcript the model reads, and each label's message.

    Over ``max_chars``, messages are dropped from the middle (a conversation's opening says
    what it is about, its end how it came out), and a marker says how many.
    """
    labelled: list[tuple[str, str, ExtractionMessage]] = []
    for message in messages:
        text = mask_secrets(message.text.strip())
        if not text:
            continue
        label = f"m{len(labelled) + 1}"
        when = prompt_field((message.timestamp or "")[:16].replace("T", " "), 16)
        speaker = _SPEAKERS.get(message.role, message.role.title())
        line = f"[{label}]{' ' + when if when else ''} {speaker}: {_cut(text, max_message_chars)}"
        labelled.append((label, line, message))
    by_label = {label: message for label, _line, message in labelled}
    lines = [line for _label, line, _message in labelled]
    total = sum(len(line) + 2 for line in lines)
    if total <= max_chars:
        return "\n\n".join(lines), by_label
    budget = max_chars // 2
    head: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > budget and head:
            break
        head.append(line)
        used += len(line) + 2
    tail: list[str] = []
    used = 0
    for line in reversed(lines[len(head) :]):
        if used + len(line) > budget and tail:
            break
        tail.append(line)
        used += len(line) + 2
    tail.reverse()
    omitted = len(lines) - len(head) - len(tail)
    kept = [*head, f"[… {omitted} messages omitted …]", *tail] if omitted else [*head, *tail]
    return "\n\n".join(kept), by_label


def build_prompt(messages: Sequence[ExtractionMessage]) -> tuple[str, dict[str, ExtractionMessage]]:
    transcript, by_label = render_transcript(messages)
    return PROMPT_HEADER + transcript + PROMPT_FOOTER, by_label


def _text(value: Any, limit: int) -> str:
    if not isinstance(value, str):
        return ""
    return _cut(" ".join(mask_secrets(value).split()), limit)


def parse_extraction(
    payload: Any,
    by_label: Mapping[str, ExtractionMessage],
    *,
    conversation_id: int | None = None,
    session_id: str | None = None,
) -> Extraction:
    """The model's structured output as facts ready for the store; unusable facts are dropped."""
    if not isinstance(payload, Mapping):
        raise ExtractionError(
            f"claude's extraction was not a JSON object but {type(payload).__name__}"
        )
    extraction = Extraction(summary=_text(payload.get("summary"), MAX_SUMMARY_CHARS))
    raw_facts = payload.get("facts")
    if not isinstance(raw_facts, list):
        raise ExtractionError("claude's extraction has no list of facts")
    for raw in raw_facts:
        if len(extraction.facts) >= MAX_FACTS:
            extraction.dropped += 1
            continue
        if not isinstance(raw, Mapping) or raw.get("type") not in FACT_TYPES:
            extraction.dropped += 1
            continue
        content = _text(raw.get("content"), MAX_CONTENT_CHARS)
        if not content:
            extraction.dropped += 1
            continue
        label = str(raw.get("message_id") or "").strip().strip("[]").lower()
        source = by_label.get(label)
        extraction.facts.append(
            NewFact(
                type=str(raw["type"]),
                content=content,
                context=_text(raw.get("context"), MAX_CONTEXT_CHARS),
                session_id=(source.session_id if source else None) or session_id,
                message_id=source.message_id if source else None,
                conversation_id=conversation_id,
                source_ts=source.timestamp if source else None,
            )
        )
    return extraction


async def extract(
    runner: ClaudeRunner,
    messages: Sequence[ExtractionMessage],
    *,
    conversation_id: int | None = None,
    session_id: str | None = None,
    model: str | None = None,
    system_prompt: str = SYSTEM_PROMPT,
) -> Extraction:
    """One claude call: the summary and the facts of ``messages``. Errors are ClaudeErrors.

    Messages with no text cost nothing: the result is empty and claude is not called.
    """
    prompt, by_label = build_prompt(messages)
    if not by_label:
        return Extraction(summary="")
    result = await runner.run(
        prompt, system_prompt=system_prompt, model=model, json_schema=EXTRACTION_SCHEMA
    )
    payload = result.structured_output
    if payload is None:
        try:  # an older CLI may only put it in the result text
            payload = json.loads(result.reply)
        except ValueError:
            raise ExtractionError(
                "claude did not return the structured extraction (no structured_output)"
            ) from None
    extraction = parse_extraction(
        payload, by_label, conversation_id=conversation_id, session_id=session_id
    )
    extraction.model = result.model
    extraction.cost = result.cost
    return extraction
