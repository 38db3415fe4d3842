"""The README's and docs/'s links between themselves resolve: every relative file exists and every ``#anchor``
names a heading of its file, by GitHub's rule for heading anchors (lower case, punctuation dropped, spaces to
hyphens, ``-N`` for a repeat)."""

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _prose(path: Path) -> str:
    """The file's text without its fenced code blocks (``# …`` there is a comment, ``[a](b)`` no link)."""
    return FENCE.sub("", path.read_text(encoding="utf-8"))


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown file."""
    seen: Counter[str] = Counter()
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", _prose(path), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchors.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return anchors


def _local_links(path: Path) -> list[str]:
    return [target for target in LINK.findall(_prose(path)) if not re.match(r"[a-z]+:", target)]


def test_the_documents_have_links_to_check():
    assert (ROOT / "docs" / "timing.md") in DOCUMENTS
    assert len(_local_links(ROOT / "README.md")) > 10


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_local_links_resolve(document: Path):
    broken = []
    for target in _local_links(document):
        file_part, _, anchor = target.partition("#")
        linked = (document.parent / file_part).resolve() if file_part else document
        if not linked.exists():
            broken.append(f"{target}: no file {linked.relative_to(ROOT)}")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no heading with the anchor #{anchor} in {linked.relative_to(ROOT)}")
    assert not broken, f"{document.name}: " + "; ".join(broken)
