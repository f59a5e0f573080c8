"""Secrets are masked before indexing; what people search for is left alone."""

from __future__ import annotations

import random
import string

import pytest
from clawback.core.text.masking import mask_secrets
from hypothesis import given, settings
from hypothesis import strategies as st

ANTHROPIC = "sk-ant-api03-" + "Ab3dEf9hIjK1mN0pQrStUvWxYz" * 3 + "-AbCdEf12"
OPENAI = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe" * 3
OPENAI_LEGACY = "sk-" + "T3BlbkFJ" * 6
GITHUB = "ghp_" + "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO2rINUx"
GITHUB_PAT = "github_pat_11ABCDEFG0" + "123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH" * 2
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
SHA1 = "3f786850e387550fdab836ed7e6dc881de23001b"
SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
HEX32 = "0a1b2c3d4e5f60718293a4b5c6d7e8f9"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
UUID = "8b418ea5-895d-4ad5-abe8-4489d36e454f"
TELEGRAM = "123456789:AAHk0-xQ4vZ9_b8TtWq3LmNpRs7uVwXyZ12"  # a bot token's shape
PEM_BODY = (
    "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwVNHUoBqzMrQz\n"
    "Tbl1jO7YfYOqA7eY+hc1kq3Qx3Nw6RWgZ2Zq0uEyUfyW6H3Pvrl9FJgoBrQ/XeZ8\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key {ANTHROPIC} here", "key sk-ant-…[masked] here"),
        (f"export ANTHROPIC_API_KEY={ANTHROPIC}", "export ANTHROPIC_API_KEY=sk-ant-…[masked]"),
        (f"use {OPENAI}.", "use sk-proj-…[masked]."),
        (f'"{OPENAI_LEGACY}"', '"sk-…[masked]"'),
        (f"GH {GITHUB} ok", "GH ghp_…[masked] ok"),
        (f"pat={GITHUB_PAT}", "pat=github_pat_…[masked]"),
        (f"slack: {SLACK}", "slack: xoxb-…[masked]"),
        (f"id {AWS_ID} ok", "id AKIA…[masked] ok"),
        (f"jwt {JWT} end", "jwt eyJ…[masked] end"),
        (f"md5 or key {HEX32}", "md5 or key 0a1b2c3…[masked]"),
        (f"upper {HEX32.upper()}", "upper 0A1B2C3…[masked]"),
        (f"token = {SHA1}", "token = [masked]"),  # a digest's shape given as a secret's value
        (f"bot {TELEGRAM} ok", "bot 123456789:…[masked] ok"),
        (f"{TELEGRAM}/getUpdates", "123456789:…[masked]/getUpdates"),
    ],
)
def test_known_formats_keep_a_prefix_that_says_what_they_were(text: str, expected: str) -> None:
    assert mask_secrets(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'curl -H "Authorization: Bearer abc123def456" https://x',
            'curl -H "Authorization: Bearer [masked]" https://x',
        ),
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [masked]"),
        ('{"Authorization": "token abcdef123456"}', '{"Authorization": "token [masked]"}'),
        ("authorization=Zm9vOmJhcg==", "authorization=[masked]"),
        ("password=hunter22", "password=[masked]"),
        ("DB_PASSWORD: correcthorsebatterystaple", "DB_PASSWORD: [masked]"),
        ('{"api_key": "abc123def456"}', '{"api_key": "[masked]"}'),
        ('apiKey: "abcDEF123456"', 'apiKey: "[masked]"'),
        ("client_secret = 'shh-it-is-0-secret'", "client_secret = '[masked]'"),
        ("GITHUB_TOKEN=gho1234abcd", "GITHUB_TOKEN=[masked]"),
        ("SECRET_KEY: 'django-insecure-x'", "SECRET_KEY: '[masked]'"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG+bPxRfiCY",
            "aws_secret_access_key = [masked]",
        ),
        ('{\\"password\\": \\"p4ss\\"}', '{\\"password\\": \\"[masked]\\"}'),
        ("passphrase: my long passphrase", "passphrase: my long passphrase"),
        ("private_key='abc1'", "private_key='[masked]'"),
    ],
)
def test_credentials_after_a_naming_key_are_masked(text: str, expected: str) -> None:
    assert mask_secrets(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "password = get_password()",
        "password=password",
        "token = None",
        "token: str",
        "api_key: Optional[str] = None",
        "secret := os.Getenv(x)",
        "if token == 'abc123456':",
        "max_tokens=4096 and \"input_tokens\": 123, 'cache_read_input_tokens': 7",
        '"token": "${{ secrets.GITHUB_TOKEN }}"',
        "password: <your password here>",
        "the bearer of bad news; Basic authentication is fine",
        "a bearer CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING_FOR_NOW token reportIncompatibleMethod",
        "Token: the smallest unit of text",
        "primary_key = 12",
        'password=""',
    ],
)
def test_code_and_prose_about_credentials_is_left_alone(text: str) -> None:
    assert mask_secrets(text) == text


def test_url_passwords_keep_the_user_and_host() -> None:
    assert (
        mask_secrets("DATABASE_URL=postgres://admin:s3cr3tP4ss@db.example.com:5432/app")
        == "DATABASE_URL=postgres://admin:[masked]@db.example.com:5432/app"
    )
    assert mask_secrets("git clone https://user@github.com/x/y") == (
        "git clone https://user@github.com/x/y"
    )
    assert mask_secrets("https://u:${PASS}@host") == "https://u:${PASS}@host"


def test_pem_private_keys_are_masked_between_their_markers() -> None:
    text = (
        "key:\n-----BEGIN RSA PRIVATE KEY-----\n"
        + PEM_BODY
        + "-----END RSA PRIVATE KEY-----\nafter"
    )
    assert mask_secrets(text) == (
        "key:\n-----BEGIN RSA PRIVATE KEY-----[masked]-----END RSA PRIVATE KEY-----\nafter"
    )


def test_a_truncated_pem_block_is_masked_to_the_end() -> None:
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + PEM_BODY
    assert mask_secrets(text) == "-----BEGIN OPENSSH PRIVATE KEY-----[masked]"


def test_public_keys_and_certificates_stay() -> None:
    text = "-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----"
    assert mask_secrets(text) == text


def test_a_bare_bearer_token_is_masked_when_long() -> None:
    token = "Xk9mQ2pL7vR4tN8wZ3bY6cF1hJ5dG0sA2eK7"
    assert mask_secrets(f"send Bearer {token} now") == "send Bearer [masked] now"


def test_a_jwt_with_a_short_header_is_masked_whole() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9" + JWT[JWT.index(".") :]
    assert mask_secrets(f"token {jwt}") == "token eyJ…[masked]"


def _random_tokens(alphabet: str, count: int = 300) -> list[str]:
    rng = random.Random(alphabet)
    return ["".join(rng.choices(alphabet, k=rng.randint(40, 90))) for _ in range(count)]


@pytest.mark.parametrize(
    "alphabet",
    [
        string.ascii_letters + string.digits + "+/",
        string.ascii_letters + string.digits + "-_",
        string.ascii_letters + string.digits,
    ],
)
def test_random_tokens_are_masked(alphabet: str) -> None:
    for token in _random_tokens(alphabet):
        if max(len(piece) for piece in token.split("/")) < 32:
            continue  # a known gap: short stretches between slashes look like a path
        masked = mask_secrets(f"value {token} end")
        assert token not in masked, token
        assert masked.startswith("value ") and masked.endswith(" end")


def test_random_lowercase_tokens_are_nearly_all_masked() -> None:
    """One-case tokens look more like identifiers, so a few are let through by design."""
    tokens = _random_tokens(string.ascii_lowercase + string.digits)
    missed = [t for t in tokens if t in mask_secrets(f"value {t} end")]
    assert len(missed) <= len(tokens) * 0.05


def test_standard_base64_with_padding_is_masked_whole() -> None:
    token = "q83vEjRWeJq8/+7a3s0XqIJ3Rw9tHnP1aC5o2LmVbZkVbZk+a9x=="
    assert mask_secrets(f"{token}\n") == "[masked]\n"


@pytest.mark.parametrize(
    "text",
    [
        "fixed in b0ce92f and 3f786850e38, see 3f786850e387",
        f"session {UUID} and agent-{UUID}.jsonl",
        f"/Users/alex/.claude/projects/-Users-alex-work-clawback/{UUID}.jsonl",
        "/Users/soph/Work/entire/devenv/cli/cmd/entire/cli/strategy/hard_reset_test.go",
        "/var/folders/4n/2f7pppjd2_n0fftzg8vrlg040000gn/T/tmp6i8r8cem/out.txt",
        "TestFormatSessionInfo_ShowsMessageAndFilesWhenNoInteractions",
        "TestParseLogLevel/empty_defaults_to_INFO_and_V2_handles_DEBUG_3",
        "reportIncompatibleMethodOverride reportUnnecessaryTypeIgnoreComment",
        "-" * 80,
        "+" * 40,
        "12345678901234567890123456789012345678901234567890",
        "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef is spelled with letters only",
        "The quick brown fox jumps over the lazy dog. Ünïcödé prose, 你好世界, emoji 🎉.",
        "see https://github.com/simonw/sqlite-utils/blob/main/sqlite_utils/db.py#L100",
        "node_modules/@typescript-eslint/eslint-plugin/dist/rules/no-unused-vars.js",
        "sk-learn-is-not-a-key-and-neither-is-this-kebab-case-name",
        "",
        "short",
    ],
)
def test_what_people_search_for_is_left_alone(text: str) -> None:
    assert mask_secrets(text) == text


@pytest.mark.parametrize(
    "text",
    [
        f"commit {SHA1}",
        f"Merge {SHA1.upper()} into main",
        f"{SHA256}  bench/corpus.tar.gz",  # sha256sum's output
        f"sha256:{SHA256}",
        f"docker pull x@sha256-{SHA256}",
        f"https://github.com/o/r/commit/{SHA1}",
        f"git log {SHA1}..{SHA1[::-1]}",
    ],
)
def test_hex_digests_are_not_secrets(text: str) -> None:
    """People ask "which session made commit X": the whole SHA must reach the index."""
    assert mask_secrets(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key = [masked]"),
        (f"the secret is {AWS_SECRET} ok", "the secret is [masked] ok"),
        (f"key {SHA1[:39]}Q{SHA1[:4]}", None),  # not a digest's length: judged as before
    ],
)
def test_next_to_digests_secrets_stay_masked(text: str, expected: str | None) -> None:
    if expected is None:
        assert SHA1[:39] not in mask_secrets(text)
    else:
        assert mask_secrets(text) == expected


def test_offsets_survive_text_that_is_not_ascii() -> None:
    text = f"中文 🎉 password: 密码abc123 结束 {AWS_ID} 再见 {ANTHROPIC} 后 {HEX32} ✓"
    assert mask_secrets(text) == (
        "中文 🎉 password: [masked] 结束 AKIA…[masked] 再见 sk-ant-…[masked] 后 0a1b2c3…[masked] ✓"
    )


def test_masking_is_idempotent_on_known_secrets() -> None:
    text = f"a {ANTHROPIC} b password=hunter22 c {HEX32} d {JWT} e {AWS_ID}"
    once = mask_secrets(text)
    assert mask_secrets(once) == once


_secrets = st.sampled_from(
    [ANTHROPIC, OPENAI, GITHUB, SLACK, AWS_ID, JWT, HEX32, "password=hunter22", "Bearer x"]
)
_pieces = st.one_of(
    st.text(max_size=30),
    _secrets,
    st.sampled_from([" ", "\n", "=", ":", '"', "/", "-", ".", "@", "://", UUID]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_pieces, max_size=12).map("".join))
def test_never_raises_and_is_idempotent(text: str) -> None:
    once = mask_secrets(text)
    assert isinstance(once, str)
    assert mask_secrets(once) == once


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text())
def test_uuids_survive_any_surroundings(before: str, after: str) -> None:
    masked = mask_secrets(f"{before}\n{UUID}\n{after}")
    assert UUID in masked


@settings(max_examples=300, deadline=None)
@given(st.text(), st.text(), st.sampled_from([ANTHROPIC, GITHUB, HEX32, JWT, AWS_ID, SLACK]))
def test_a_secret_never_survives_whatever_surrounds_it(
    before: str, after: str, secret: str
) -> None:
    assert secret not in mask_secrets(f"{before} {secret} {after}")


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text(), st.sampled_from([SHA1, SHA256]))
def test_digests_survive_any_surroundings(before: str, after: str, digest: str) -> None:
    assert digest in mask_secrets(f"{before}\n{digest}\n{after}")
