"""Every relative link in the README and docs resolves: the file exists and the #anchor is a
heading of it (GitHub's rule for heading anchors), so moving a section never strands a link."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 250  # a README read in five minutes; the rest lives in docs/

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def markdown_files() -> list[Path]:
    top = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"]
    return [*top, *sorted((ROOT / "docs").glob("*.md"))]


def prose(text: str) -> str:
    """The text outside code: links inside fences or backticks are examples, not links."""
    return _CODE.sub("", _FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its rendered text lowercased, punctuation dropped,
    spaces made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of ``path``; a repeated heading gets -1, -2... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for heading in _HEADING.findall(_FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """The relative links of ``path`` that do not resolve inside ``root``, each with why."""
    broken = []
    for target in _LINK.findall(prose(path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...: not ours to check
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.is_relative_to(root):
            broken.append(f"{target}: outside the repository")
        elif not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    return broken


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path: Path) -> None:
    assert broken_links(path) == []


def test_every_docs_page_is_indexed_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    unlisted = [p.name for p in (ROOT / "docs").glob("*.md") if f"(docs/{p.name})" not in readme]
    assert unlisted == []


def test_the_readme_is_read_in_five_minutes() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move details to docs/"


def test_the_checker_finds_a_missing_file_a_missing_heading_and_a_way_out(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## A `code` heading: yes\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n"
        "[fine](other.md#a-code-heading-yes) [self](#page) [web](https://example.com/x.md)\n"
        "[gone](missing.md) [no anchor](other.md#nowhere) [out](../elsewhere.md)\n"
        "`[in code](missing.md)`\n\n```\n[in a fence](missing.md)\n```\n"
    )
    assert broken_links(page, root=tmp_path) == [
        "missing.md: no such file",
        "other.md#nowhere: no heading #nowhere in other.md",
        "../elsewhere.md: outside the repository",
    ]


def test_repeated_headings_get_numbered_anchors(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n## Setup\n\n## Setup\n\n## Claude Code's 30 days: kept\n")
    assert anchors(page) == {"top", "setup", "setup-1", "claude-codes-30-days-kept"}
