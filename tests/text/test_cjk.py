"""CJK text gets searchable bigrams; everything else costs nothing."""

from __future__ import annotations

from clawback.core.text.cjk import cjk_bigrams, has_cjk, query_bigrams, split_scripts
from hypothesis import given
from hypothesis import strategies as st


def test_text_without_cjk_has_no_bigrams() -> None:
    assert cjk_bigrams("") is None
    assert cjk_bigrams("plain ascii text") is None
    assert cjk_bigrams("café, naïve, Ünïcödé, emoji 🎉, Ελληνικά") is None


def test_chinese_runs_become_overlapping_bigrams_and_their_last_character() -> None:
    assert cjk_bigrams("你好世界") == "你好 好世 世界 界"


def test_punctuation_breaks_runs() -> None:
    assert cjk_bigrams("你好世界，今天。") == "你好 好世 世界 界 今天 天"
    assert cjk_bigrams("「東京」・大阪") == "東京 京 大阪 阪"


def test_a_single_character_run_is_the_character() -> None:
    assert cjk_bigrams("a 的 b") == "的"


def test_japanese_scripts_mix_in_one_run() -> None:
    assert cjk_bigrams("東京タワーへ") == "東京 京タ タワ ワー ーへ へ"
    assert cjk_bigrams("人々") == "人々 々"


def test_korean_words() -> None:
    assert cjk_bigrams("서울에서 만나요") == "서울 울에 에서 서 만나 나요 요"


def test_han_extension_a_and_b() -> None:
    assert cjk_bigrams("㐀㐁") == "㐀㐁 㐁"
    assert cjk_bigrams("𠀀𠀁") == "𠀀𠀁 𠀁"


def test_letters_and_digits_glued_to_cjk_are_kept() -> None:
    """``unicode61`` makes "学习Python编程" one token; "python" must still be findable."""
    assert cjk_bigrams("学习Python编程") == "学习 习 Python 编程 程"
    assert cjk_bigrams("2024年") == "2024 年"
    assert cjk_bigrams("use 中文 here") == "中文 文"


def test_width_variants_are_normalised() -> None:
    assert cjk_bigrams("ｶﾀｶﾅ") == "カタ タカ カナ ナ"
    assert cjk_bigrams("１２月") == "12 月"


def test_query_bigrams_have_no_trailing_character() -> None:
    assert query_bigrams("你好世界") == "你好 好世 世界"
    assert query_bigrams("世") == "世"
    assert query_bigrams("ｶﾀ") == "カタ"


def test_split_scripts() -> None:
    assert split_scripts("Python编程") == [("Python", False), ("编程", True)]
    assert split_scripts("a你b") == [("a", False), ("你", True), ("b", False)]
    assert split_scripts("plain") == [("plain", False)]
    assert split_scripts("") == []


def test_has_cjk() -> None:
    assert has_cjk("x世")
    assert not has_cjk("xé")


@given(st.text())
def test_bigrams_never_raise_and_hold_only_what_the_text_had(text: str) -> None:
    result = cjk_bigrams(text)
    assert (result is None) == (not has_cjk(text))
    if result is not None:
        assert result == result.strip()
        assert "  " not in result
