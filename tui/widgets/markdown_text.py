"""Markdown turned into one styled :class:`Content`, so a message is one widget, not dozens.

Textual's ``Markdown`` widget builds a widget per block (paragraphs, list items, fences), about
twenty for a typical reply, and styling that many nodes is what made long transcripts slow to
open. Transcripts need headings, emphasis, lists, quotes, tables and highlighted code, not an
interactive document, so this renders them into a single ``Content``. Styles name theme
variables only, so every theme colours it.
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token
from textual.content import Content, Span
from textual.highlight import highlight

INLINE_STYLES = {
    "strong_open": "bold",
    "em_open": "italic",
    "s_open": "strike",
    "link_open": "underline $text-accent",
}
CODE_INLINE = "$text-warning on $boost"
HEADING = "bold $text-primary"
MUTED = "$text-muted"


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("gfm-like")


def inline_content(token: Token) -> Content:
    """One inline token (a paragraph's text) with its emphasis, code and links styled."""
    text: list[str] = []
    spans: list[Span] = []
    open_styles: list[tuple[str, int]] = []
    position = 0
    for child in token.children or []:
        kind = child.type
        piece = ""
        if kind == "text":
            piece = child.content
        elif kind == "softbreak":
            piece = " "
        elif kind == "hardbreak":
            piece = "\n"
        elif kind == "code_inline":
            piece = child.content
            spans.append(Span(position, position + len(piece), CODE_INLINE))
        elif kind == "image":
            piece = f"[image: {child.content or child.attrs.get('src', '')}]"
        elif kind in INLINE_STYLES:
            open_styles.append((INLINE_STYLES[kind], position))
        elif kind.endswith("_close") and open_styles:
            style, start = open_styles.pop()
            spans.append(Span(start, position, style))
        text.append(piece)
        position += len(piece)
    return Content("".join(text), spans=spans)


def _code(token: Token) -> Content:
    language = (token.info or "").split()[0] if token.info else None
    code = token.content.rstrip("\n")
    body = highlight(code, language=language or "text")
    return Content("\n").join(Content("  ").append(line) for line in body.split("\n"))


def _table(tokens: list[Token], start: int) -> tuple[Content, int]:
    """Render a table's rows as cells joined by bars; returns it and the index after it."""
    rows: list[tuple[bool, list[Content]]] = []
    index = start
    while tokens[index].type != "table_close":
        token = tokens[index]
        if token.type == "tr_open":
            rows.append((False, []))
        elif token.type == "inline" and rows:
            rows[-1][1].append(inline_content(token))
        elif token.type == "th_open" and rows:
            rows[-1] = (True, rows[-1][1])
        index += 1
    lines = []
    for header, cells in rows:
        line = Content(" │ ").join(cells)
        lines.append(line.stylize_before("bold") if header else line)
    return Content("\n").join(lines), index


def markdown_content(text: str) -> Content:
    """The whole message: blocks separated by blank lines, list items by line breaks."""
    tokens = _parser().parse(text)
    blocks: list[tuple[Content, bool]] = []  # (block, follows the previous one tightly)
    lists: list[list[int]] = []  # per open list: [ordered?, next number]
    quote = 0
    prefix = ""
    in_list = False  # the last block was a list item
    index = 0
    while index < len(tokens):
        token = tokens[index]
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists.append([kind == "ordered_list_open", int(token.attrs.get("start", 1) or 1)])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
            in_list = bool(lists)
        elif kind == "list_item_open" and lists:
            ordered, number = lists[-1]
            prefix = "  " * (len(lists) - 1) + (f"{number}. " if ordered else "• ")
            lists[-1][1] += 1
        elif kind == "blockquote_open":
            quote += 1
        elif kind == "blockquote_close":
            quote -= 1
        elif kind == "table_open":
            table, index = _table(tokens, index)
            blocks.append((table, False))
        elif kind in ("fence", "code_block"):
            blocks.append((_code(token), False))
        elif kind == "hr":
            blocks.append((Content.styled("─" * 24, MUTED), False))
        elif kind == "inline":
            content = inline_content(token)
            if tokens[index - 1].type == "heading_open":
                content = content.stylize_before(HEADING)
            if prefix:
                content, prefix = Content(prefix).append(content), ""
            elif lists:  # a second paragraph inside a list item
                content = Content("  " * len(lists)).append(content)
            if quote:
                content = Content.styled("▌ " * quote, MUTED).append(content.stylize(MUTED))
            # List items follow each other without a gap; a list's first item keeps one.
            follows_item = bool(lists) and bool(blocks) and in_list
            blocks.append((content, follows_item))
            in_list = bool(lists)
            index += 1
            continue
        index += 1
    out = Content("")
    for number, (block, tight) in enumerate(blocks):
        out = out.append("" if not number else "\n" if tight else "\n\n").append(block)
    return out
