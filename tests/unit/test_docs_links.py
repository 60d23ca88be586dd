"""The README is a front door to docs/: every relative link in README.md and docs/*.md opens a
file that exists, at a heading that exists (GitHub's anchors), and the README's exit-code table
is the list users script against: exactly `ExitStatus`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kubectl_terminating.errors import ExitStatus

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose(page: Path) -> list[str]:
    """The page's lines outside fenced code blocks (a `# comment` in a shell block is no
    heading, and a `](` in a JSON example no link)."""
    lines, fenced = [], False
    for line in page.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the page's headings: lower case, punctuation but `-` and `_`
    dropped, spaces as `-`, a repeated one suffixed `-1`, `-2`, ... (github-slugger)."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose(page):
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    broken = []
    for line in prose(page):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{target}: no such file")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{target}: no such heading in {linked.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_link_opens_a_page_and_heading_that_exist(page: Path) -> None:
    assert broken_links(page) == []


def test_the_readme_links_every_page_of_docs() -> None:
    """Nothing moved out of the README is out of reach: each docs/ page is linked from it."""
    readme = "\n".join(prose(ROOT / "README.md"))
    unlinked = [p.name for p in PAGES[1:] if f"(docs/{p.name}" not in readme]
    assert unlinked == []


def test_the_readme_exit_codes_are_exit_status() -> None:
    lines = prose(ROOT / "README.md")
    start = lines.index("## Exit codes")
    table = [line for line in lines[start:] if re.match(r"\|\s*\d+\s*\|", line)]
    documented = [int(line.split("|")[1]) for line in table]
    assert documented == sorted(int(status) for status in ExitStatus)
