"""Editing a JSON file a person wrote while keeping every byte clawback does not change.

``json.loads`` then ``json.dumps`` reshapes a file: it rewrites ``1.50`` as ``1.5`` and
``1e2`` as ``100.0``, re-indents, escapes or unescapes characters, and a value it cannot hold
(a lone ``\\ud800`` escape, a number too large for a float) breaks it. A :class:`JsonDocument`
parses the text into nodes that remember where they are, takes edits (replace a value, drop an
item, append one) and renders the text again: what was not edited comes back as it was,
separators included, and what was added follows the file's own indentation.

Nesting is bounded (:data:`MAX_DEPTH`): a file nested deeper is refused with a
:class:`JsonEditError`, never a ``RecursionError``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

#: deeper than anything a settings file needs, far below Python's recursion limit
MAX_DEPTH = 64
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_DECODER = json.JSONDecoder()


class JsonEditError(ValueError):
    """The text is not JSON clawback can edit (the message says where and why)."""


@dataclass(eq=False)
class Node:
    """One value in the text: ``start:end`` is its span; a container has its items (an
    object's are its members' values, with ``keys`` beside them)."""

    start: int
    end: int
    kind: str  # "object", "array" or "scalar"
    items: list[Node] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    key_starts: list[int] = field(default_factory=list)
    # edits, applied when the document is rendered
    dropped: set[int] = field(default_factory=set)
    added: list[tuple[str | None, Any]] = field(default_factory=list)
    replacement: Any = None
    replaced: bool = False

    def member(self, key: str) -> Node | None:
        """The value of ``key`` in an object (the last one, as JSON readers take it)."""
        for at in range(len(self.keys) - 1, -1, -1):
            if self.keys[at] == key:
                return self.items[at]
        return None


class JsonDocument:
    """A JSON text with its nodes; edits change only what they name."""

    def __init__(self, text: str) -> None:
        self.text = text
        at = _skip(text, 0)
        if at == len(text):
            raise JsonEditError("the file holds no JSON value")
        self.root, at = self._value(at, 1)
        at = _skip(text, at)
        if at != len(text):
            raise JsonEditError(f"extra text after the JSON value ({_where(text, at)})")
        self._unit = _indent_unit(text)

    # ----------------------------------------------------------------------------- parsing

    def _value(self, at: int, depth: int) -> tuple[Node, int]:
        text = self.text
        char = text[at : at + 1]
        if char in ("{", "["):
            if depth > MAX_DEPTH:
                raise JsonEditError(f"nested more than {MAX_DEPTH} levels deep")
            return self._container(at, depth)
        if char == '"':
            _, end = self._string(at)
            return Node(at, end, "scalar"), end
        number = _NUMBER.match(text, at)
        if number and number.end() > at:
            return Node(at, number.end(), "scalar"), number.end()
        for word in _LITERALS:
            if text.startswith(word, at):
                return Node(at, at + len(word), "scalar"), at + len(word)
        raise JsonEditError(f"not valid JSON ({_where(text, at)})")

    def _string(self, at: int) -> tuple[str, int]:
        """The string starting with the quote at ``at``, and where it ends."""
        try:
            value, end = _DECODER.raw_decode(self.text, at)
        except ValueError as exc:
            raise JsonEditError(f"not valid JSON ({exc})") from None
        return str(value), end

    def _container(self, at: int, depth: int) -> tuple[Node, int]:
        text = self.text
        close = "}" if text[at] == "{" else "]"
        node = Node(at, at, "object" if close == "}" else "array")
        at = _skip(text, at + 1)
        if text[at : at + 1] == close:
            node.end = at + 1
            return node, at + 1
        while True:
            if node.kind == "object":
                if text[at : at + 1] != '"':
                    raise JsonEditError(f"not valid JSON: a key was expected ({_where(text, at)})")
                key, after = self._string(at)
                node.keys.append(key)
                node.key_starts.append(at)
                at = _skip(text, after)
                if text[at : at + 1] != ":":
                    raise JsonEditError(f"not valid JSON: ':' was expected ({_where(text, at)})")
                at = _skip(text, at + 1)
            item, at = self._value(at, depth + 1)
            node.items.append(item)
            at = _skip(text, at)
            char = text[at : at + 1]
            if char == close:
                node.end = at + 1
                return node, at + 1
            if char != ",":
                raise JsonEditError(f"not valid JSON ({_where(text, at)})")
            at = _skip(text, at + 1)

    # ------------------------------------------------------------------------------ values

    def value(self, node: Node) -> Any:
        """What ``node`` holds as Python values, as the text has it (edits not applied)."""
        if node.kind == "object":
            return {key: self.value(item) for key, item in zip(node.keys, node.items, strict=True)}
        if node.kind == "array":
            return [self.value(item) for item in node.items]
        raw = self.text[node.start : node.end]
        if raw.startswith('"'):
            return self._string(node.start)[0]
        if raw in _LITERALS:
            return _LITERALS[raw]
        return json.loads(raw)  # a number: Python's int or float (inf for 1e999)

    # ------------------------------------------------------------------------------- edits

    def replace(self, node: Node, value: Any) -> None:
        node.replacement, node.replaced = value, True

    def drop(self, container: Node, index: int) -> None:
        container.dropped.add(index)

    def append(self, container: Node, value: Any, key: str | None = None) -> None:
        """Add ``value`` at the end of an array, or ``key: value`` at the end of an object."""
        if (key is None) != (container.kind == "array"):
            raise ValueError("an object's new member needs a key; an array's item has none")
        container.added.append((key, value))

    # ----------------------------------------------------------------------------- render

    def render(self) -> str:
        return self.text[: self.root.start] + self._render(self.root) + self.text[self.root.end :]

    def _render(self, node: Node) -> str:
        if node.replaced:  # on lines if what it replaces was
            on_lines = "\n" in self.text[node.start : node.end]
            indent = self._line_indent(node.start) if on_lines else None
            return self._new_text(node.replacement, indent)
        if node.kind == "scalar":
            return self.text[node.start : node.end]
        text = self.text
        opening, closing = text[node.start], text[node.end - 1]
        if not node.items and not node.added:
            return text[node.start : node.end]
        starts = node.key_starts if node.kind == "object" else [i.start for i in node.items]
        pieces = [
            (starts[at], text[starts[at] : item.start] + self._render(item))
            for at, item in enumerate(node.items)
            if at not in node.dropped
        ]
        if node.items:
            lead = text[node.start + 1 : starts[0]]
            trail = text[node.items[-1].end : node.end - 1]
        else:
            lead = trail = ""
        # An empty container takes the file's shape: on lines, unless the whole file is one
        # line with something in it already.
        multiline = "\n" in lead or (
            not node.items and ("\n" in text.strip() or not self.root.items)
        )
        outer = self._line_indent(node.start)
        inner = lead.rpartition("\n")[2] if "\n" in lead else outer + self._unit
        if not node.items:
            lead, trail = ("\n" + inner, "\n" + outer) if multiline else ("", "")
        out = []
        kept_index = [at for at in range(len(node.items)) if at not in node.dropped]
        for n, (at, piece) in enumerate(zip(kept_index, pieces, strict=True)):
            if n:
                out.append(text[node.items[at - 1].end : starts[at]])  # the separator before it
            out.append(piece[1])
        separator = self._separator(node, starts, lead, multiline)
        for key, value in node.added:
            if out:
                out.append(separator)
            member = "" if key is None else json.dumps(key, ensure_ascii=False) + ": "
            out.append(member + self._new_text(value, inner if multiline else None))
        if not out:
            return opening + closing
        return opening + lead + "".join(out) + trail + closing

    def _separator(self, node: Node, starts: list[int], lead: str, multiline: bool) -> str:
        if len(node.items) > 1:
            return self.text[node.items[-2].end : starts[-1]]
        return "," + lead if multiline else ", "

    def _new_text(self, value: Any, indent: str | None) -> str:
        """``value`` as new text: indented like the file (``indent`` is the line's) or inline."""
        if indent is None:
            return json.dumps(value, ensure_ascii=False)
        dumped = json.dumps(value, ensure_ascii=False, indent=self._unit)
        return dumped.replace("\n", "\n" + indent)

    def _line_indent(self, at: int) -> str:
        line = self.text[self.text.rfind("\n", 0, at) + 1 : at]
        return line[: len(line) - len(line.lstrip(" \t"))]


def _skip(text: str, at: int) -> int:
    match = _WHITESPACE.match(text, at)
    return match.end() if match else at


def _where(text: str, at: int) -> str:
    line = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    return f"line {line} column {column}"


def _indent_unit(text: str) -> str:
    """The file's indentation step: its shallowest indented line's (two spaces if none)."""
    found = [m.group(1) for m in re.finditer(r"\n([ \t]+)\S", text)]
    if not found:
        return "  "
    return min(found, key=len)
