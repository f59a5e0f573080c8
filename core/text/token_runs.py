"""Long token runs: which random-looking runs of token characters are secrets.

The second half of :func:`~clawback.core.text.masking.mask_secrets`: the text's long runs of
token characters (vendor keys, hex strings, JWTs, base64 blobs) are found on a translation of
its bytes to two classes and judged one by one (:func:`mask_runs`). Kept apart from the
literal-led patterns and keyword assignments of :mod:`.masking`, which share only the mask's
look and :func:`splice`. A hex digest (a git commit SHA of 40 digits, a sha256 sum of 64) is
not a secret and is never masked: people search for it ("which session made commit X").
"""

from __future__ import annotations

import re
import string

MASK = "[masked]"
ELLIPSIS = "…"
DIGEST_LENGTHS = (40, 64)  # a git commit SHA, a sha256 sum: searched for, never masked
HEX_KEEP = 7  # hex digits kept in front of a masked hex string: git's short SHA
RUN_MIN = 32  # shortest token run looked at (hex, vendor keys)
B64_MIN = 40  # shortest run that may be a bare base64 secret
_PIECE_MIN = 24  # shortest piece of a run (between separators) that may be random
_SAMPLE = 512  # characters of a long run judged for randomness
_WIDEN_MAX = 4096  # how far back a run is widened over "/" to the start of its token


def class_table(token_chars: str) -> bytes:
    token = token_chars.encode()
    return bytes(0x78 if b in token else 0x20 for b in range(256))  # token -> x, others -> space


# base64url and "+": everything of standard base64 but "/", which paths are full of
TO_CLASS = class_table(string.ascii_letters + string.digits + "_-+")
TO_WIDE_CLASS = class_table(string.ascii_letters + string.digits + "_-+/")  # and base64
RUN_X = b"x" * RUN_MIN
JWT = re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*")
TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "_-")
VENDOR_PREFIXES = (
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
DIGITS = re.compile(r"[0-9]")
_SCHEMES = ("bearer", "basic")
Span = tuple[int, int, str]


def splice(text: str, spans: list[Span]) -> str:
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


def mask_runs(text: str, raw: bytes, classes: bytes) -> str:
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
    wide = raw.translate(TO_WIDE_CLASS)
    spans: list[Span] = []
    after = after_byte = 0  # the end of the previous token, in characters and in bytes
    at = classes.find(RUN_X)
    while at >= 0:
        until = classes.find(b" ", at + RUN_MIN)
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
        at = classes.find(RUN_X, after_byte)
    return splice(text, spans) if spans else text


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
    if begin > 0 and text[begin - 1] in TOKEN_CHARS:
        return None
    m = JWT.match(text, begin)
    return m if m is not None and m.end() > start else None


def _mask_run(run: str, text: str, start: int) -> str | None:
    """What a run of token characters becomes, or ``None`` when it holds no secret.

    Most runs are identifiers, paths and hashes, so cheap string tests come before any regex.
    """
    if run.startswith(VENDOR_PREFIXES):
        prefix = next(p for p in VENDOR_PREFIXES if run.startswith(p))
        body = run[len(prefix) :]
        # A generated body has digits; ``sk-some-long-kebab-name`` has none.
        if len(body) >= _VENDOR_MIN_BODY and DIGITS.search(body):
            return prefix + ELLIPSIS + MASK
    if not run.strip(_HEX_DIGITS):
        return _mask_hex_string(run)
    if _after_scheme(text, start) and DIGITS.search(run):
        return MASK  # "Bearer <token>" outside a header: the word says what follows
    if len(run) > _SAMPLE and _looks_random(run):
        return MASK  # a blob (a base64 image, say): judged before a costly hex search in it
    # Inside a run only "_-+/" can bound a hex string (a pure hex run was handled above).
    separated = "-" in run or "_" in run or "+" in run or "/" in run
    if separated and len(run) >= RUN_MIN and _HEX.search(run):
        masked = _HEX.sub(_mask_hex, run)
        if masked == run and all(is_digest(m.group(0)) for m in _HEX.finditer(run)):
            # Digests with words around them (``sha256-<digest>``): the words must not be a
            # secret either.
            rest = _HEX.sub(" ", run).replace("/", " ").split()
            if not any(len(piece) >= B64_MIN and _looks_random(piece) for piece in rest):
                return None
        if masked != run:
            # What is left between the hex strings must not be a secret either (and must not
            # look like one the next time round, so masking twice changes nothing).
            rest = masked.split(ELLIPSIS + MASK)
            if any(len(piece) >= B64_MIN and _looks_random(piece) for piece in rest):
                return MASK
            return masked
    if len(run) < B64_MIN or not _looks_random(run):
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
    if is_digest(digits):
        return None
    return digits[:HEX_KEEP] + ELLIPSIS + MASK


def is_digest(digits: str) -> bool:
    """A git commit SHA (40 hex digits) or a sha256 sum (64), in one case as tools print them.

    Other lengths (32, 48: API keys, md5 sums alike) are still masked, and a digest given as
    a secret's value (``token = <40 hex>``) is masked by its assignment before runs are seen.
    """
    return len(digits) in DIGEST_LENGTHS and (digits.islower() or digits.isupper())


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
        digits = len(DIGITS.findall(letters))
        if len(letters) < B64_MIN or digits * 20 < len(letters) * 3:
            return False
        threshold = 0.25
    else:
        threshold = 0.4
    return len(_CLASS_RUNS.findall(letters)) >= threshold * len(letters)
