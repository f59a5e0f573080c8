"""Message text as one styled :class:`Content`: Markdown for Claude's replies, literal for the rest.

Textual's ``Markdown`` widget builds a widget per block (paragraphs, list items, fences), about
twenty for a typical reply, and styling that many nodes is what made long transcripts slow to
open. Transcripts need headings, emphasis, lists, quotes, tables and highlighted code, not an
interactive document, so this renders them into a single ``Content``.

Transcripts are full of code-like text that Markdown would corrupt: ``pkg/__init__.py``,
``__SLOW__``, ``List<String>``, ``<command-name>``. So raw HTML is never interpreted (a tag is
shown as written), underscore emphasis needs word boundaries and, for a single word, a single
underscore (``__init__`` stays as written), a line break is a line break, and what a person
typed or a tool printed is never parsed as Markdown at all (:func:`literal_content`). Styles name
theme variables only, so every theme colours it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.cells import cell_len
from textual.content import Content, Span
from textual.highlight import highlight

INLINE_STYLES = {
    "strong_open": "bold",
    "em_open": "italic",
    "s_open": "strike",
    "link_open": "underline $text-accent",
}
CLOSERS = {"strong_close", "em_close", "s_close", "link_close"}
CODE_INLINE = "$text-warning on $boost"
HEADING = "bold $text-primary"
MUTED = "$text-muted"
WORDLIKE = "_*/\\"  # beside these, a * or _ is part of a name or path, not emphasis
_FENCE = re.compile(r"^(```+|~~~+)[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # html off: a tag (<div>, List<String>, <command-name>) is text, never swallowed markup.
    return MarkdownIt("gfm-like", {"html": False})


def _piece(child: Token) -> str:
    """The text a child token stands for if it were shown as written."""
    if child.type in ("text", "code_inline"):
        return child.content
    if child.type in ("softbreak", "hardbreak"):
        return "\n"
    return child.markup if child.type in INLINE_STYLES or child.type in CLOSERS else ""


def _is_emphasis(children: list[Token], start: int, end: int) -> bool:
    """Whether the emphasis from ``children[start]`` to ``children[end]`` was meant as such.

    CommonMark reads ``pkg/__init__.py`` and ``__SLOW__`` as bold; people writing about code
    do not. Emphasis must start and end at a word boundary, and underscores must wrap words
    with a space in them or one word in a single pair (``_really_``, not ``__init__``).
    """
    markup = children[start].markup
    if not markup or markup[0] not in "*_":
        return True
    before = "".join(_piece(c) for c in children[:start])[-1:]
    following = "".join(_piece(c) for c in children[end + 1 :])
    after = following[:1]
    if before and (before.isalnum() or before in WORDLIKE + "."):
        return False
    if after and (after.isalnum() or after in WORDLIKE):
        return False
    if after == "." and following[1:2].isalnum():
        return False  # __init__.py
    if markup[0] == "_":
        inner = "".join(_piece(c) for c in children[start + 1 : end])
        return " " in inner.strip() or len(markup) == 1
    return True


def _literal_markers(children: list[Token]) -> set[int]:
    """Indexes of emphasis tokens to show as the characters they were typed as."""
    literal: set[int] = set()
    stack: list[int] = []
    for index, child in enumerate(children):
        if child.type in INLINE_STYLES:
            stack.append(index)
        elif child.type in CLOSERS and stack:
            start = stack.pop()
            if not _is_emphasis(children, start, index):
                literal.update((start, index))
    return literal


def inline_content(token: Token) -> Content:
    """One inline token (a paragraph's text) with its emphasis, code and links styled."""
    children = token.children or []
    literal = _literal_markers(children)
    text: list[str] = []
    spans: list[Span] = []
    open_styles: list[tuple[str, int]] = []
    position = 0
    for index, child in enumerate(children):
        kind = child.type
        piece = ""
        if index in literal:
            piece = child.markup
        elif kind == "text":
            piece = child.content
        elif kind in ("softbreak", "hardbreak"):
            piece = "\n"  # a line break in a chat message is meant
        elif kind == "code_inline":
            piece = child.content
            spans.append(Span(position, position + len(piece), CODE_INLINE))
        elif kind == "image":
            piece = f"[image: {child.content or child.attrs.get('src', '')}]"
        elif kind in INLINE_STYLES:
            open_styles.append((INLINE_STYLES[kind], position))
        elif kind in CLOSERS and open_styles:
            style, start = open_styles.pop()
            spans.append(Span(start, position, style))
        text.append(piece)
        position += len(piece)
    return Content("".join(text), spans=spans)


def code_content(code: str, language: str | None) -> Content:
    """A block of code, highlighted, indented two columns so it stands apart from prose."""
    body = highlight(code.rstrip("\n"), language=language or "text")
    return Content("\n").join(Content("  ").append(line) for line in body.split("\n"))


def _code(token: Token) -> Content:
    language = (token.info or "").split()[0] if token.info else None
    return code_content(token.content, language)


def _table(tokens: list[Token], start: int) -> tuple[Content, int]:
    """A table with its columns aligned, a rule under the header; returns it and the index
    after it."""
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
    columns = max((len(cells) for _, cells in rows), default=0)
    widths = [0] * columns
    for _, cells in rows:
        for column, cell in enumerate(cells):
            cell_text = cell.plain.replace("\n", " ")
            widths[column] = max(widths[column], cell_len(cell_text))
    lines: list[Content] = []
    bar = Content.styled(" │ ", MUTED)
    for header, cells in rows:
        padded = [
            cell.split("\n")[0].pad_right(widths[column] - cell_len(cell.plain.split("\n")[0]))
            for column, cell in enumerate(cells)
        ]
        line = bar.join(padded)
        lines.append(line.stylize_before("bold") if header else line)
        if header:
            rule = "─┼─".join("─" * width for width in widths)
            lines.append(Content.styled(rule, MUTED))
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
                indent = " " * len(prefix)
                content = Content(prefix).append(_indent_lines(content, indent))
                prefix = ""
            elif lists:  # a second paragraph inside a list item
                content = _indent_lines(content, "  " * len(lists), first=True)
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


def _indent_lines(content: Content, indent: str, *, first: bool = False) -> Content:
    """``content`` with its later lines (and the first, if ``first``) indented."""
    lines = content.split("\n")
    return Content("\n").join(
        Content(indent).append(line) if first or number else line
        for number, line in enumerate(lines)
    )


def literal_content(text: str) -> Content:
    """Text exactly as written (what a person typed, what a tool printed): no Markdown, only
    fenced code blocks highlighted, since those are code by the writer's own say-so."""
    out = Content("")
    position = 0
    for fence in _FENCE.finditer(text):
        out = out.append(Content(text[position : fence.start()]))
        out = out.append(code_content(fence.group(3), fence.group(2) or None))
        position = fence.end()
    return out.append(Content(text[position:]))
