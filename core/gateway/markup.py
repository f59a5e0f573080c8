"""Claude's Markdown as Telegram's HTML: the few tags a chat renders, everything else escaped.

Telegram's HTML knows ``b i u s code pre a blockquote``; anything else in a message makes it
reject the whole message. So every character of the reply is escaped first, and only what this
module recognises becomes a tag: fenced code (with its language), inline code, bold, italic,
strike-through, links to http(s)/mailto/tg addresses, headings (bold) and quotes. A reply this
reads wrongly is still sent: Telegram's refusal makes the sender fall back to plain text.
Pure text; never raises.
"""

from __future__ import annotations

import html
import re

__all__ = ["to_telegram_html"]

_FENCE_BLOCK = re.compile(
    r"^ {0,3}(?P<marker>`{3,}|~{3,})(?P<info>[^`\n]*)\n"
    r"(?P<body>.*?)(?:\n {0,3}(?P=marker)[ \t]*$|\Z)",
    re.M | re.S,
)
_INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_LINK = re.compile(r"\[([^\[\]\n]{1,300})\]\(((?:https?|mailto|tg):[^\s()<>\"]{1,2000})\)")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_ITALIC_UNDERSCORE = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_BULLET = re.compile(r"^( {0,6})[-*+][ \t]+", re.M)
_PLACEHOLDER = "\x00{}\x00"
_LANGUAGE = re.compile(r"^[\w+#.-]{1,40}$")


def to_telegram_html(markdown: str) -> str:
    """``markdown`` as the HTML Telegram's ``parse_mode=HTML`` accepts."""
    kept: list[str] = []

    def keep(fragment: str) -> str:
        kept.append(fragment)
        return _PLACEHOLDER.format(len(kept) - 1)

    def fenced(match: re.Match[str]) -> str:
        language = match.group("info").strip().split(" ")[0]
        body = html.escape(match.group("body"), quote=False)
        if language and _LANGUAGE.match(language):
            return keep(f'<pre><code class="language-{html.escape(language)}">{body}</code></pre>')
        return keep(f"<pre>{body}</pre>")

    text = markdown.replace("\x00", "")
    text = _FENCE_BLOCK.sub(fenced, text)
    text = _INLINE_CODE.sub(
        lambda m: keep(f"<code>{html.escape(m.group(2).strip(), quote=False)}</code>"), text
    )
    text = _LINK.sub(
        lambda m: keep(
            f'<a href="{html.escape(m.group(2))}">{_inline(html.escape(m.group(1), quote=False))}'
            "</a>"
        ),
        text,
    )
    text = html.escape(text, quote=False)
    text = _HEADING.sub(lambda m: f"<b>{m.group(1)}</b>", text)
    text = _BULLET.sub(lambda m: f"{m.group(1)}• ", text)
    text = _inline(text)
    text = _quotes(text)
    return re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], text)


def _inline(text: str) -> str:
    text = _BOLD.sub(lambda m: _tag("b", m.group(2), m), text)
    text = _STRIKE.sub(lambda m: _tag("s", m.group(1), m), text)
    text = _ITALIC_STAR.sub(lambda m: _tag("i", m.group(1), m), text)
    return _ITALIC_UNDERSCORE.sub(lambda m: _tag("i", m.group(1), m), text)


def _tag(name: str, inner: str, found: re.Match[str]) -> str:
    """``inner`` in a ``name`` tag, or the match left as written when ``inner`` holds only
    part of an earlier tag (``******`` read as bold, then italic, would cross them)."""
    return f"<{name}>{inner}</{name}>" if _balanced(inner) else found.group(0)


_TAG = re.compile(r"<(/?)(\w+)[^>]*>")


def _balanced(fragment: str) -> bool:
    """Every tag ``fragment`` opens it closes, in order (text is escaped: ``<`` is a tag)."""
    open_tags: list[str] = []
    for found in _TAG.finditer(fragment):
        closing, name = found.groups()
        if not closing:
            open_tags.append(name)
        elif not open_tags or open_tags.pop() != name:
            return False
    return not open_tags


def _quotes(text: str) -> str:
    """Runs of ``> `` lines (escaped to ``&gt; `` by now) as one ``<blockquote>`` each."""
    out: list[str] = []
    quote: list[str] = []
    for line in text.split("\n"):
        if line.startswith("&gt;"):
            quote.append(line[4:].removeprefix(" "))
            continue
        if quote:
            out.append("<blockquote>" + "\n".join(quote) + "</blockquote>")
            quote = []
        out.append(line)
    if quote:
        out.append("<blockquote>" + "\n".join(quote) + "</blockquote>")
    return "\n".join(out)
