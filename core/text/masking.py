"""Secret masking: credentials are replaced before any text enters the index.

The JSONL files stay as they are (they are the user's own files), but nothing that looks like a
credential may reach the SQLite index, a search snippet or the screen: every stored text column
goes through :func:`seal` (which calls :func:`mask_secrets`) where rows are built. What a masked
secret looks like, what is never masked, and how ordinary text stays cheap (literal-led
triggers before any precise pattern): ``docs/masking.md``.

It must never mask what people search for (short SHAs, UUIDs, paths, identifiers, prose) and
never raise, whatever the input. It is a safety net, not a guarantee.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable

from clawback.core.safejson import clean_text
from clawback.core.text.token_runs import (
    DIGITS,
    ELLIPSIS,
    HEX_KEEP,
    JWT,
    MASK,
    RUN_X,
    TO_CLASS,
    TO_WIDE_CLASS,
    TOKEN_CHARS,
    VENDOR_PREFIXES,
    Span,
    mask_runs,
    splice,
)

__all__ = ["ELLIPSIS", "HEX_KEEP", "MASK", "mask_secrets", "seal"]


# --- triggers -------------------------------------------------------------------------------------


def _norm_table() -> bytes:
    # Lowercase, ":" -> "=", and what may sit between a key and its separator (blanks, quotes,
    # the backslashes of JSON inside JSON) -> " ", so `"API_KEY" : ` and `api_key=` look alike.
    table = bytearray(bytes(range(256)).lower())
    table[ord(":")] = ord("=")
    for byte in b" \t\r\n\"'`\\":
        table[byte] = ord(" ")
    return bytes(table)


_TO_NORM = _norm_table()
# A secret-naming key right before "=", or the "user:password" of a URL, spelled backwards: on
# the reversed text both start with the literal "=", which ``re`` looks for quickly. Kept in
# step with _ASSIGN, _AUTH_HEADER and _URL_PASSWORD, which find the precise spans.
_TRIGGER = re.compile(
    rb"=(?: {0,4}+(?P<key>nekot|terces|d(?:ro)?wssap|esarhpssap"
    rb"|yek[_-]?(?:ipa|ssecca|terces|etavirp)|noitazirohtua)"
    rb"|(?P<url>[^ /@=]{0,200}//=))"
)
_RUN_SHORT = b"x" * 20  # an AWS key id; any shorter run holds nothing to mask

# --- patterns -------------------------------------------------------------------------------------

# Run on the lowercased ASCII bytes of the text (one byte per character, so spans carry over).
_AUTH_HEADER = re.compile(
    rb"authorization(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?"
    rb"(?:(?:bearer|basic|token|digest|bot)[ \t]+)?"
    rb"([^\s\"'\\,;]{4,2000})"
)
_ASSIGN = re.compile(
    rb"(?:token|secret|passw(?:or)?d|passphrase|(?:api|access|secret|private)[_\-]?key)"
    rb"(?:\\?[\"'`])?[ \t]*[:=](?!=)[ \t]*"
    rb"(?:(\\?[\"'`])(?!\1)(.{1,500}?)\1|([^\s\"'`,;(){}\[\]<>=][^\s\"'`,;(){}\[\]<>]{3,500}))"
)
_PLACEHOLDER_START = ("$", "{", "<", "%", "*", "[", "(")
_LINE_NUMBER = r"(?:[ \t]*\d+(?:\t|→))?"  # what ``cat -n`` and Claude Code's Read put first
_DIFF_MARK = r"[+-]?"  # a line a diff adds or removes (``git diff``, an edit's patch lines)
_ENV_HEAD = re.compile(
    _LINE_NUMBER + r"[ \t]*" + _DIFF_MARK + r"[ \t]*(?:export[ \t]+)?[A-Z][A-Z0-9_]*="
)
# ``key: `` once, or nested on one line as a tool call's arguments are shown (``db: password: x``)
_YAML_HEAD = re.compile(
    _LINE_NUMBER
    + r"[ \t]*"
    + _DIFF_MARK
    + r"[ \t]*(?:-[ \t]+)?(?:[A-Za-z_][A-Za-z0-9_.-]*:[ \t]+){1,8}"
)
# Words that follow ``token:`` as a type or an empty YAML value, not as a secret.
_TYPE_WORDS = frozenset(
    {
        *("str", "string", "string[]", "bytes", "int", "bool", "boolean", "number", "any"),
        *("object", "text", "optional", "none", "null", "nil", "true", "false", "~"),
        *("secret", "secrets", "password", "token"),
    }
)

# The user may be empty: ``redis://:password@host`` is how Redis URLs carry a password.
_URL_PASSWORD = re.compile(r"://([^\s/:@\"'<>]{0,200}):([^\s/@\"'<>]{1,200})@")
_AWS = re.compile(r"A[KS]IA[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_BYTES = re.compile(rb"A[KS]IA[A-Z0-9]{16}")
_PEM = re.compile(
    r"(-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)"
    # The body runs to the next "-----"; an unterminated (truncated) key is masked to the end.
    r"(?:[^-]|-(?!----)){0,20000}"
    r"(-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?"
)
# Vendor tokens too short to be a long run: found by their literal prefix.
_GITLAB_TRIGGER = re.compile(rb"gl(?:pat|ptt|dt|rt|cbt|ft|imt|oas|soat)-")
_GITLAB = re.compile(
    r"(?<![A-Za-z0-9_-])(gl(?:pat|ptt|dt|rt|cbt|ft|imt|oas|soat)-)[A-Za-z0-9_-]{20,}"
)
# A Telegram bot token: the bot's id, a colon, 35 characters. The id stays (it is public); the
# secret after it ends in a run of token characters, which is the trigger.
_TELEGRAM_TRIGGER = re.compile(rb"[0-9]{8,10}:[A-Za-z0-9_-]{20}")
_TELEGRAM = re.compile(r"(?<![A-Za-z0-9_:-])([0-9]{8,10}:)[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])")
_SENDGRID = re.compile(r"(?<![A-Za-z0-9_-])(SG\.)[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{20,64}")
# An AWS secret access key: 40 characters of standard base64, alone (no "key =" before it).
_AWS_SECRET_LEN = 40
_RUN_AWS_SECRET = b"x" * _AWS_SECRET_LEN
_BASE64_CHARS = frozenset(string.ascii_letters + string.digits + "/+")
_CLASS_RUNS_SLASH = re.compile(r"[A-Z]+|[a-z]+|[0-9]+|[/+]+")


def seal(text: str) -> str:
    """What any stored text other than an entry body becomes: a title, a folder, a reason.

    Entry bodies come from :mod:`clawback.core.safejson` already clean and go through
    :func:`mask_secrets` alone; everything else may come from a file name or a side file, so
    lone surrogates are replaced first (masking needs encodable text).
    """
    return mask_secrets(clean_text(text))


def mask_secrets(text: str) -> str:
    """Return ``text`` with every credential-looking part replaced (see the module docstring)."""
    if len(text) < 8:
        return text
    raw = text.encode()
    keys = urls = False
    # Short chat messages mostly have no separator at all: two tiny scans skip the reversal.
    skip = len(text) < 512 and "=" not in text and ":" not in text
    for trigger in () if skip else _TRIGGER.finditer(_reversed(raw).translate(_TO_NORM)):
        keys = keys or trigger.group("key") is not None
        urls = urls or trigger.group("url") is not None
        if keys and urls:
            break
    if keys:
        text = _mask_keywords(text)
    if urls:
        text = _URL_PASSWORD.sub(_mask_url_password, text)
    if keys or urls:
        raw = text.encode()
    if len(raw) < len(_RUN_SHORT):
        return text
    classes = raw.translate(TO_CLASS)
    at = classes.find(_RUN_SHORT)
    # A GitLab or SendGrid token ends in a run of 20 token characters: no run, no token.
    if at >= 0 and (b"SG." in raw or _GITLAB_TRIGGER.search(raw)):
        masked = _SENDGRID.sub(_mask_prefixed, _GITLAB.sub(_mask_prefixed, text))
        if masked != text:
            text, raw = masked, masked.encode()
            classes = raw.translate(TO_CLASS)
            at = classes.find(_RUN_SHORT)
    if at >= 0 and b":" in raw and _TELEGRAM_TRIGGER.search(raw):
        masked = _TELEGRAM.sub(_mask_prefixed, text)
        if masked != text:
            text, raw = masked, masked.encode()
            classes = raw.translate(TO_CLASS)
            at = classes.find(_RUN_SHORT)
    # Only "/" tells the two classes apart: without one, one translation serves both, and a
    # run of 40 is a run of 20 first.
    if len(raw) >= _AWS_SECRET_LEN and (at >= 0 or b"/" in raw):
        wide = raw.translate(TO_WIDE_CLASS) if b"/" in raw else classes
        if wide.find(_RUN_AWS_SECRET) >= 0:
            masked = _mask_aws_secrets(text, raw, wide)
            if masked != text:
                text, raw = masked, masked.encode()
                classes = raw.translate(TO_CLASS)
                at = classes.find(_RUN_SHORT)
    if at < 0:
        return text
    if _AWS_BYTES.search(raw, at):
        masked = _AWS.sub(_mask_aws, text)
        if masked != text:
            text = masked
            raw = text.encode()
            classes = raw.translate(TO_CLASS)
            at = 0
    if classes.find(RUN_X, at) < 0:
        return text
    if b"PRIVATE KEY-----" in raw:  # its base64 lines are long runs
        masked = _PEM.sub(_mask_pem, text)
        if masked != text:
            text = masked
            raw = text.encode()
            classes = raw.translate(TO_CLASS)
    return mask_runs(text, raw, classes)


def _reversed(raw: bytes) -> bytearray:
    backwards = bytearray(raw)
    backwards.reverse()  # in place: faster than raw[::-1]
    return backwards


# --- keyword assignments --------------------------------------------------------------------------


def _mask_keywords(text: str) -> str:
    for pattern, handler in _KEYWORD_STAGES:
        low = text.encode("ascii", "replace").lower()
        spans = [span for m in pattern.finditer(low) if (span := handler(m, text)) is not None]
        if spans:
            text = splice(text, spans)
    return text


def _auth_header(m: re.Match[bytes], text: str) -> Span | None:
    start, end = m.span(1)
    value = text[start:end]
    if value.startswith(_PLACEHOLDER_START) or MASK in value:
        return None
    return (start, end, _masked_value(value))


def _assignment(m: re.Match[bytes], text: str) -> Span | None:
    if m.group(2) is not None:
        start, end = m.span(2)
    else:
        start, end = m.span(3)
        # An unquoted value is usually code (``token = get_token()``, ``password=password``);
        # a literal secret is long or has a digit in it.
        if (
            end - start < 16
            and not DIGITS.search(text, start, end)
            and not _config_line(text, start, end)
        ):
            return None
        if text.startswith(("(", "["), end):
            return None
    value = text[start:end]
    if value.startswith(_PLACEHOLDER_START) or MASK in value or value.isspace():
        return None
    return (start, end, _masked_value(value))


def _config_line(text: str, start: int, end: int) -> bool:
    """Whether the value at ``start:end`` ends a ``.env`` or YAML line that names a secret.

    There a short word is the secret itself (``DB_PASSWORD=hunter``, ``password: hunter``),
    while the same shape in code is a variable (``password=password``) or a type
    (``token: str``): an upper-case ``KEY=`` with no blanks, or a ``key:`` then a blank, must
    start the line (after a ``cat -n`` line number or a list dash), and the value must end it.
    """
    line_end = text.find("\n", end)
    if text[end : len(text) if line_end < 0 else line_end].strip():
        return False
    if text.endswith(("...", ELLIPSIS), start, end):
        return False  # ``API_KEY=sk-ant-...``: an example
    head = text[text.rfind("\n", 0, start) + 1 : start]
    if _ENV_HEAD.fullmatch(head):
        return True
    return bool(_YAML_HEAD.fullmatch(head)) and text[start:end].lower() not in _TYPE_WORDS


def _masked_value(value: str) -> str:
    """The mask for a whole value: it still tells a vendor key or a JWT from a password."""
    if value.startswith(VENDOR_PREFIXES):
        return next(p for p in VENDOR_PREFIXES if value.startswith(p)) + ELLIPSIS + MASK
    if value.startswith("eyJ") and JWT.match(value):
        return "eyJ" + ELLIPSIS + MASK
    return MASK


_KeywordStage = tuple[re.Pattern[bytes], Callable[[re.Match[bytes], str], Span | None]]
_KEYWORD_STAGES: tuple[_KeywordStage, ...] = ((_AUTH_HEADER, _auth_header), (_ASSIGN, _assignment))


# --- literal-led patterns -------------------------------------------------------------------------


def _mask_url_password(m: re.Match[str]) -> str:
    password = m.group(2)
    if password.startswith(_PLACEHOLDER_START) or MASK in password or set(password) == {"*"}:
        return m.group(0)
    return f"://{m.group(1)}:{MASK}@"


def _mask_aws(m: re.Match[str]) -> str:
    if _glued_left(m):
        return m.group(0)
    return m.group(0)[:4] + ELLIPSIS + MASK


def _mask_prefixed(m: re.Match[str]) -> str:
    return m.group(1) + ELLIPSIS + MASK


def _mask_aws_secrets(text: str, raw: bytes, wide: bytes) -> str:
    """Mask every run of exactly 40 base64 characters that looks like an AWS secret key.

    Runs are found on the token classes with ``/`` (``wide``), as :func:`mask_runs` finds
    them, so a text with no such run costs one ``bytes.find``.
    """
    spans: list[Span] = []
    after = 0  # in characters
    at = wide.find(_RUN_AWS_SECRET)
    while at >= 0:
        until = wide.find(b" ", at)
        if until < 0:
            until = len(wide)
        if until - at == _AWS_SECRET_LEN:
            run = raw[at:until].decode("ascii")
            start = at if len(raw) == len(text) else text.find(run, after)
            if start >= 0 and _looks_like_aws_secret(run) and not text.startswith("=", start + 40):
                spans.append((start, start + _AWS_SECRET_LEN, MASK))
                after = start + _AWS_SECRET_LEN
        at = wide.find(_RUN_AWS_SECRET, until)
    return splice(text, spans) if spans else text


def _looks_like_aws_secret(run: str) -> bool:
    """Base64 only, every class present, few slashes, and as mixed as a random key.

    A path of exactly 40 characters has many slashes or few digits; 40 random base64
    characters have about 6 digits, 1 or 2 of ``/+`` and switch class about 25 times.
    """
    if not _BASE64_CHARS.issuperset(run):
        return False
    digits = sum(c.isdigit() for c in run)
    upper = sum(c.isupper() for c in run)
    lower = sum(c.islower() for c in run)
    if digits < 1 or upper < 2 or lower < 2 or run.count("/") + run.count("+") > 4:
        return False
    return len(_CLASS_RUNS_SLASH.findall(run)) >= 14


def _mask_pem(m: re.Match[str]) -> str:
    return m.group(1) + MASK + (m.group(2) or "")


def _glued_left(m: re.Match[str]) -> bool:
    """Whether the match continues a longer token, so it is not the start of a key."""
    start = m.start()
    return start > 0 and m.string[start - 1] in TOKEN_CHARS


# --- long token runs ------------------------------------------------------------------------------
