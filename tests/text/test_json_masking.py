"""mask_json's shortcuts change nothing: what it leaves unread is what mask_secrets leaves as it
is, so a kept line is masked exactly as if every string and key had been masked one by one."""

from __future__ import annotations

import string
from typing import Any

from clawback.core.text.json_masking import mask_json
from clawback.core.text.masking import mask_secrets
from hypothesis import given, settings
from hypothesis import strategies as st

SECRET = "sk-ant-api03-Zq8xR2vL0pWm4Ks9TnB6yHc3Jd7Fg1Aa5Ee"


@settings(max_examples=300, deadline=None)
@given(st.uuids())
def test_a_uuid_is_never_masked(value: object) -> None:
    assert mask_secrets(str(value)) == str(value)
    assert mask_secrets(str(value).upper()) == str(value).upper()


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=19).filter(lambda t: "=" not in t and ":" not in t))
def test_short_text_without_a_keyword_or_url_is_never_masked(text: str) -> None:
    assert mask_secrets(text) == text


def one_by_one(value: Any) -> Any:
    """Every string and key masked, a secret-named key's value with its key: the slow way."""
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, list):
        return [one_by_one(item) for item in value]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(item, str) and any(w in key.lower() for w in ("password", "token")):
                line = mask_secrets(f"{key}: {item}")
                item = line[len(key) + 2 :] if line != f"{key}: {item}" else item
            else:
                item = one_by_one(item)
            out[mask_secrets(key)] = item
        return out
    return value


token = st.text(string.ascii_letters + string.digits + "_-", min_size=20, max_size=60)
leaf = (
    st.none()
    | st.integers()
    | st.text(max_size=40)
    | st.uuids().map(str)
    | token
    | st.sampled_from([SECRET, f"key {SECRET}", "AKIAQX7ZK2MB4NV9RT3W", "2026-01-01T00:00:00Z"])
)
keys = st.text(max_size=12) | st.sampled_from(["password", "uuid", "sessionId", "token", SECRET])
values = st.recursive(
    leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4)
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_mask_json_is_masking_every_string_and_key(value: Any) -> None:
    masked, changed = mask_json(value, mask_secrets)
    assert masked == one_by_one(value)
    assert changed == (masked != value)
