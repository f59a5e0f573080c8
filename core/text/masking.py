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

MASK = "[masked]"
ELLIPSIS = "…"
HEX_KEEP = 7  # hex digits kept in front of a masked hex string: git's short SHA

_RUN_MIN = 32  # shortest token run looked at (hex, vendor keys)
_B64_MIN = 40  # shortest run that may be a bare base64 secret
_PIECE_MIN = 24  # shortest piece of a run (between separators) that may be random
_SAMPLE = 512  # characters of a long run judged for randomness
_WIDEN_MAX = 4096  # how far back a run is widened over "/" to the start of its token

# --- triggers -------------------------------------------------------------------------------------


def _class_table(token_chars: str) -> bytes:
    token = token_chars.encode()
    return bytes(0x78 if b in token else 0x20 for b in range(256))  # token -> x, others -> space


# base64url and "+": everything of standard base64 but "/", which paths are full of
_TO_CLASS = _class_table(string.ascii_letters + string.digits + "_-+")
_TO_WIDE_CLASS = _class_table(string.ascii_letters + string.digits + "_-+/")  # and base64
_RUN_X = b"x" * _RUN_MIN


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
_ENV_HEAD = re.compile(_LINE_NUMBER + r"[ \t]*(?:export[ \t]+)?[A-Z][A-Z0-9_]*=")
_YAML_HEAD = re.compile(_LINE_NUMBER + r"[ \t]*(?:-[ \t]+)?[A-Za-z_][A-Za-z0-9_.-]*:[ \t]+")
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
_JWT = re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*")
_PEM = re.compile(
    r"(-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)"
    # The body runs to the next "-----"; an unterminated (truncated) key is masked to the end.
    r"(?:[^-]|-(?!----)){0,20000}"
    r"(-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?"
)
_TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "_-")
# Vendor tokens too short to be a long run: found by their literal prefix.
_GITLAB_TRIGGER = re.compile(rb"gl(?:pat|ptt|dt|rt|cbt|ft|imt|oas|soat)-")
_GITLAB = re.compile(
    r"(?<![A-Za-z0-9_-])(gl(?:pat|ptt|dt|rt|cbt|ft|imt|oas|soat)-)[A-Za-z0-9_-]{20,}"
)
_SENDGRID = re.compile(r"(?<![A-Za-z0-9_-])(SG\.)[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{20,64}")
# An AWS secret access key: 40 characters of standard base64, alone (no "key =" before it).
_AWS_SECRET_LEN = 40
_RUN_AWS_SECRET = b"x" * _AWS_SECRET_LEN
_BASE64_CHARS = frozenset(string.ascii_letters + string.digits + "/+")
_CLASS_RUNS_SLASH = re.compile(r"[A-Z]+|[a-z]+|[0-9]+|[/+]+")

_VENDOR_PREFIXES = (
    *("sk-ant-", "sk-proj-", "sk-svcacct-", "sk-admin-", "sk-"),
    *("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
    *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    *("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"),
    *("glpat-", "npm_", "hf_", "AIza"),
)
_VENDOR_MIN_BODY = 16  # characters after the prefix; shorter is an example, not a key
_HEX_DIGITS = string.hexdigits
_HEX = re.compile(r"(?<![A-Za-z0-9])[0-9a-fA-F]{32,}(?![A-Za-z0-9])")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_CLASS_RUNS = re.compile(r"[A-Z]+|[a-z]+|[0-9]+")
_DIGITS = re.compile(r"[0-9]")
_SCHEMES = ("bearer", "basic")


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
    classes = raw.translate(_TO_CLASS)
    at = classes.find(_RUN_SHORT)
    # A GitLab or SendGrid token ends in a run of 20 token characters: no run, no token.
    if at >= 0 and (b"SG." in raw or _GITLAB_TRIGGER.search(raw)):
        masked = _SENDGRID.sub(_mask_prefixed, _GITLAB.sub(_mask_prefixed, text))
        if masked != text:
            text, raw = masked, masked.encode()
            classes = raw.translate(_TO_CLASS)
            at = classes.find(_RUN_SHORT)
    # Only "/" tells the two classes apart: without one, one translation serves both, and a
    # run of 40 is a run of 20 first.
    if len(raw) >= _AWS_SECRET_LEN and (at >= 0 or b"/" in raw):
        wide = raw.translate(_TO_WIDE_CLASS) if b"/" in raw else classes
        if wide.find(_RUN_AWS_SECRET) >= 0:
            masked = _mask_aws_secrets(text, raw, wide)
            if masked != text:
                text, raw = masked, masked.encode()
                classes = raw.translate(_TO_CLASS)
                at = classes.find(_RUN_SHORT)
    if at < 0:
        return text
    if _AWS_BYTES.search(raw, at):
        masked = _AWS.sub(_mask_aws, text)
        if masked != text:
            text = masked
            raw = text.encode()
            classes = raw.translate(_TO_CLASS)
            at = 0
    if classes.find(_RUN_X, at) < 0:
        return text
    if b"PRIVATE KEY-----" in raw:  # its base64 lines are long runs
        masked = _PEM.sub(_mask_pem, text)
        if masked != text:
            text = masked
            raw = text.encode()
            classes = raw.translate(_TO_CLASS)
    return _mask_runs(text, raw, classes)


def _reversed(raw: bytes) -> bytearray:
    backwards = bytearray(raw)
    backwards.reverse()  # in place: faster than raw[::-1]
    return backwards


# --- keyword assignments --------------------------------------------------------------------------

_Span = tuple[int, int, str]


def _mask_keywords(text: str) -> str:
    for pattern, handler in _KEYWORD_STAGES:
        low = text.encode("ascii", "replace").lower()
        spans = [span for m in pattern.finditer(low) if (span := handler(m, text)) is not None]
        if spans:
            text = _splice(text, spans)
    return text


def _auth_header(m: re.Match[bytes], text: str) -> _Span | None:
    start, end = m.span(1)
    value = text[start:end]
    if value.startswith(_PLACEHOLDER_START) or MASK in value:
        return None
    return (start, end, _masked_value(value))


def _assignment(m: re.Match[bytes], text: str) -> _Span | None:
    if m.group(2) is not None:
        start, end = m.span(2)
    else:
        start, end = m.span(3)
        # An unquoted value is usually code (``token = get_token()``, ``password=password``);
        # a literal secret is long or has a digit in it.
        if (
            end - start < 16
            and not _DIGITS.search(text, start, end)
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
    if value.startswith(_VENDOR_PREFIXES):
        return next(p for p in _VENDOR_PREFIXES if value.startswith(p)) + ELLIPSIS + MASK
    if value.startswith("eyJ") and _JWT.match(value):
        return "eyJ" + ELLIPSIS + MASK
    return MASK


_KeywordStage = tuple[re.Pattern[bytes], Callable[[re.Match[bytes], str], _Span | None]]
_KEYWORD_STAGES: tuple[_KeywordStage, ...] = ((_AUTH_HEADER, _auth_header), (_ASSIGN, _assignment))


def _splice(text: str, spans: list[_Span]) -> str:
    """Replace non-overlapping ``(start, end, replacement)`` spans, given in order."""
    out: list[str] = []
    pos = 0
    for start, end, replacement in spans:
        if start < pos:
            continue
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


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

    Runs are found on the token classes with ``/`` (``wide``), as :func:`_mask_runs` finds
    them, so a text with no such run costs one ``bytes.find``.
    """
    spans: list[_Span] = []
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
    return _splice(text, spans) if spans else text


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
    return start > 0 and m.string[start - 1] in _TOKEN_CHARS


# --- long token runs ------------------------------------------------------------------------------


def _mask_runs(text: str, raw: bytes, classes: bytes) -> str:
    """Mask the long token runs of ``text``, given its UTF-8 bytes and their classes.

    A run is found without ``/``, so paths (whose pieces are short) cost nothing, and then
    widened over ``/`` to the whole token, for standard base64: such a token is found when one
    stretch of it without ``/`` is long enough, which a 40-character one has about half the
    time and an 80-character one nearly always. Token characters are ASCII, so a run's bytes
    are its characters. When the text has other characters, byte offsets are not character
    offsets, and a run is located by searching from the end of the previous token: any
    occurrence of a run's characters lies inside some run at least as long, all of which are
    visited in order, so the first occurrence is the run itself.
    """
    ascii_only = len(raw) == len(text)
    wide = raw.translate(_TO_WIDE_CLASS)
    spans: list[_Span] = []
    after = after_byte = 0  # the end of the previous token, in characters and in bytes
    at = classes.find(_RUN_X)
    while at >= 0:
        until = classes.find(b" ", at + _RUN_MIN)
        if until < 0:
            until = len(classes)
        start = at if ascii_only else text.find(raw[at:until].decode("ascii"), after)
        # Widen over "/" (all ASCII, so as many characters as bytes), then take the padding.
        floor = max(after_byte, at - _WIDEN_MAX)
        byte_start = max(wide.rfind(b" ", floor, at) + 1, floor)
        byte_end = wide.find(b" ", until)
        if byte_end < 0:
            byte_end = len(wide)
        shift = start - at  # characters minus bytes before this run
        start, end = byte_start + shift, byte_end + shift
        padding = 2 if text.startswith("==", end) else 1 if text.startswith("=", end) else 0
        end += padding
        jwt = _jwt_around(text, at + shift, after)
        if jwt is not None:
            start, end = jwt.span()
            masked: str | None = "eyJ" + ELLIPSIS + MASK
        else:
            masked = _mask_run(text[start:end], text, start)
        if masked is not None:
            spans.append((start, end, masked))
        after, after_byte = end, end - shift
        at = classes.find(_RUN_X, after_byte)
    return _splice(text, spans) if spans else text


def _jwt_around(text: str, start: int, floor: int) -> re.Match[str] | None:
    """The JWT that the run at ``start`` belongs to (as header, payload or signature), if any.

    Only the payload and signature are sure to be long runs, so look back over up to two dots
    for the ``eyJ`` that starts the header.
    """
    if start > 0 and text[start - 1] == ".":
        begin = text.rfind("eyJ", max(floor, start - 2000), start)
        if begin < 0 or text.count(".", begin, start) > 2:
            begin = start
    else:
        begin = start
    if not text.startswith("eyJ", begin):
        return None
    if begin > 0 and text[begin - 1] in _TOKEN_CHARS:
        return None
    m = _JWT.match(text, begin)
    return m if m is not None and m.end() > start else None


def _mask_run(run: str, text: str, start: int) -> str | None:
    """What a run of token characters becomes, or ``None`` when it holds no secret.

    Most runs are identifiers, paths and hashes, so cheap string tests come before any regex.
    """
    if run.startswith(_VENDOR_PREFIXES):
        prefix = next(p for p in _VENDOR_PREFIXES if run.startswith(p))
        body = run[len(prefix) :]
        # A generated body has digits; ``sk-some-long-kebab-name`` has none.
        if len(body) >= _VENDOR_MIN_BODY and _DIGITS.search(body):
            return prefix + ELLIPSIS + MASK
    if not run.strip(_HEX_DIGITS):
        return _mask_hex_string(run)
    if _after_scheme(text, start) and _DIGITS.search(run):
        return MASK  # "Bearer <token>" outside a header: the word says what follows
    if len(run) > _SAMPLE and _looks_random(run):
        return MASK  # a blob (a base64 image, say): judged before a costly hex search in it
    # Inside a run only "_-+/" can bound a hex string (a pure hex run was handled above).
    separated = "-" in run or "_" in run or "+" in run or "/" in run
    if separated and len(run) >= _RUN_MIN and _HEX.search(run):
        masked = _HEX.sub(_mask_hex, run)
        if masked != run:
            # What is left between the hex strings must not be a secret either (and must not
            # look like one the next time round, so masking twice changes nothing).
            rest = masked.split(ELLIPSIS + MASK)
            if any(len(piece) >= _B64_MIN and _looks_random(piece) for piece in rest):
                return MASK
            return masked
    if len(run) < _B64_MIN or not _looks_random(run):
        return None
    if "-" in run and _UUID.search(run):
        return None
    return MASK


def _after_scheme(text: str, start: int) -> bool:
    if start < 6 or text[start - 1] not in " \t":
        return False
    return text[max(0, start - 8) : start].rstrip().lower().endswith(_SCHEMES)


def _mask_hex(m: re.Match[str]) -> str:
    return _mask_hex_string(m.group(0)) or m.group(0)


def _mask_hex_string(digits: str) -> str | None:
    # 32+ decimal digits is a number, 32+ letters a-f a word game: neither is a key.
    if digits.isdigit() or digits.isalpha():
        return None
    return digits[:HEX_KEEP] + ELLIPSIS + MASK


def _looks_random(run: str) -> bool:
    """Tell a generated token from a long identifier, path or words glued with ``_-/+``.

    A path is judged by its longest piece between slashes (a generated token rarely holds a
    ``/``, and then its pieces are long). A random piece switches between character classes
    (upper, lower, digit) far more often than an identifier: in base64 about 64% of neighbours
    differ in class, still 46% in the unluckiest 1% of 40-char tokens, while
    ``TestLoadSessionState_V2`` or ``Users/alex/workspace`` stay under 30%.
    """
    body = run.rstrip("=")[:_SAMPLE]  # a long blob is as random at its start as anywhere
    if "/" in body:
        pieces = body.split("/")
        body = max(pieces, key=len)
        if len(body) < _PIECE_MIN:
            return False
    letters = body.replace("_", "").replace("-", "").replace("+", "")
    if len(letters) < _PIECE_MIN or letters.isdigit():
        return False
    one_case = letters.islower() or letters.isupper()
    if letters.isalpha():
        # Upper and lower case alone switch half the time when random, CamelCase rarely.
        return not one_case and len(_CLASS_RUNS.findall(letters)) >= 0.45 * len(letters)
    if one_case:
        # One case and digits: base32/base36 keys (28% digits, 40% class switches on average,
        # 1-2% of them below the bars here). Identifiers like that are common (``v2_test_3``),
        # so demand length and many digits.
        digits = len(_DIGITS.findall(letters))
        if len(letters) < _B64_MIN or digits * 20 < len(letters) * 3:
            return False
        threshold = 0.25
    else:
        threshold = 0.4
    return len(_CLASS_RUNS.findall(letters)) >= threshold * len(letters)
