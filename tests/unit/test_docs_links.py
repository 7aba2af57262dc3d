"""Every relative link in the README and docs/ leads somewhere: the file exists and, for a
link with `#anchor`, the page has a heading (or `<a id>`) that GitHub gives that anchor.
Pages move between the README and docs/ as they grow; a link left behind is caught here."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [
    REPO / "README.md",
    REPO / "benchmarks" / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"(#{1,6}) (.*)")
EXPLICIT_ANCHOR = re.compile(r'<a (?:name|id)="([^"]+)"')


def outside_fences(text: str) -> list[tuple[int, str]]:
    """The lines that are not in a fenced code block (a `# comment` there is no heading)."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def github_slug(heading: str) -> str:
    """The anchor GitHub makes of a heading: lower case, punctuation dropped, spaces as '-'."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@cache
def anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    found, seen = set(EXPLICIT_ANCHOR.findall(text)), dict[str, int]()
    for _, line in outside_fences(text):
        match = HEADING.match(line)
        if match:
            slug = github_slug(match.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(page: Path, root: Path = REPO) -> list[str]:
    broken = []
    for number, line in outside_fences(page.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(root)}:{number}: {target}"
            if not linked.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{where} (no such heading in {linked.relative_to(root)})")
    return broken


def test_github_slug_of_headings_with_code_and_punctuation() -> None:
    assert github_slug("One-shot runs: `gpuherd run`") == "one-shot-runs-gpuherd-run"
    assert github_slug("When a job ends: the on-end hook") == "when-a-job-ends-the-on-end-hook"
    assert github_slug("A job's result") == "a-jobs-result"


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "jobs.md").write_text("# Jobs\n\n```sh\n# not a heading\n```\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Probe\n\n[a](jobs.md#jobs) [b](jobs.md#not-a-heading) [c](nowhere.md) [d](#probe)\n"
    )
    assert [line.split(": ", 1)[1] for line in broken_links(page, tmp_path)] == [
        "jobs.md#not-a-heading (no such heading in jobs.md)",
        "nowhere.md (no such file)",
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_leads_somewhere(page: Path) -> None:
    assert broken_links(page) == []
