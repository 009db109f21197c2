"""Chunking is pure: markdown text in, chunks out."""

from __future__ import annotations

import itertools

import pytest

from nexusd.memory.chunking import (
    chunk_markdown,
    embed_text,
    embed_windows,
    hashtags,
    parse_front_matter,
)
from nexusd.templates import daily_note, template_text

DOC = """\
# Memory

Intro line.

## Lessons

- Pin the CPU wheel of torch. #deps

### Testing

Use real repos in tmp_path.

```
# not a heading
```

## Decisions

We chose LanceDB.
"""


def chunks(text: str, path: str = "MEMORY.md", max_chars: int = 1500):
    return chunk_markdown(path, text, max_chars=max_chars, default_date="2026-01-02")


def test_sections_follow_headings_with_their_path_and_lines() -> None:
    got = chunks(DOC)
    assert [c.heading for c in got] == [
        "Memory",
        "Memory > Lessons",
        "Memory > Lessons > Testing",
        "Memory > Decisions",
    ]
    testing = got[2]
    assert "# not a heading" in testing.body  # fenced code is not a heading
    lines = DOC.splitlines()
    assert lines[testing.line_start - 1] == "Use real repos in tmp_path."
    assert lines[testing.line_end - 1] == "```"
    assert got[1].id == "MEMORY.md#Memory > Lessons#0"


@pytest.mark.parametrize(
    ("index", "category"), [(0, "memory"), (1, "lessons"), (2, "lessons"), (3, "decisions")]
)
def test_category_is_the_level_two_section(index: int, category: str) -> None:
    assert chunks(DOC)[index].category == category


def test_front_matter_category_tags_and_date_win() -> None:
    text = "---\ncategory: ADR\ntags: [db, storage]\ndate: 2025-03-04\n---\n# T\n\nBody #extra\n"
    (only,) = chunks(text, "docs/adr/1.md")
    assert only.category == "adr"
    assert only.tags == ("db", "storage", "extra")
    assert only.date == "2025-03-04"
    assert only.line_start == 8


def test_daily_note_date_comes_from_the_file_name() -> None:
    (only,) = chunks("# day\n\nDid things.\n", "memory/daily/2026-11-20.md")
    assert (only.date, only.category) == ("2026-11-20", "daily")


def test_long_sections_split_on_paragraphs_with_ordinals() -> None:
    paras = [f"Paragraph {i} " + "word " * 40 for i in range(6)]
    text = "## Big\n\n" + "\n\n".join(paras) + "\n"
    got = chunks(text, max_chars=500)
    assert len(got) >= 3
    assert [c.ordinal for c in got] == list(range(len(got)))
    assert all(len(c.body) <= 500 for c in got)
    assert " ".join(c.body for c in got).split() == " ".join(paras).split()
    lines = text.splitlines()
    for c in got:
        assert lines[c.line_start - 1].startswith("Paragraph")


def test_one_huge_paragraph_is_split_on_lines() -> None:
    text = "## X\n\n" + "\n".join("line " * 30 for _ in range(20)) + "\n"
    got = chunks(text, max_chars=400)
    assert len(got) > 1 and all(len(c.body) <= 400 for c in got)


def test_editing_one_section_keeps_other_ids_and_hashes() -> None:
    before = {c.id: c.sha256 for c in chunks(DOC)}
    after = {c.id: c.sha256 for c in chunks(DOC.replace("We chose LanceDB.", "We chose Qdrant."))}
    assert before.keys() == after.keys()
    changed = [i for i in before if before[i] != after[i]]
    assert changed == ["MEMORY.md#Memory > Decisions#0"]


@pytest.mark.parametrize(
    "text",
    [
        "---\ncategory: [unclosed\n---\n# A\n\nbody\n",
        "---\n- a list\n---\n# A\n\nbody\n",
        "---\nno closing fence\n# A\n\nbody\n",
    ],
)
def test_malformed_front_matter_is_reported_and_the_body_still_chunks(text: str) -> None:
    assert parse_front_matter(text.split("\n")).warning
    assert any("body" in c.body for c in chunks(text))


def test_crlf_and_empty_sections() -> None:
    got = chunks("# A\r\n\r\n## Empty\r\n## Full\r\ntext\r\n")
    assert [c.heading for c in got] == ["A > Full"]


def test_hashtags_ignore_headings_code_and_numbers() -> None:
    assert hashtags("fix #ci and #Flaky-tests, not #12 or `#x` or a#b") == ("ci", "flaky-tests")


def test_html_comments_are_not_indexed_and_lines_stay_put() -> None:
    text = (
        "# Memory\n\n## Lessons\n\n<!-- e.g.\n- never hold two shelf locks -->\n\n"
        "- Retry pings with backoff.\n\n## Decisions\n\n<!-- choices -->\n"
    )
    chunks = chunk_markdown("MEMORY.md", text, max_chars=1500, default_date="2026-01-01")
    assert [(c.heading, c.body, c.line_start) for c in chunks] == [
        ("Memory > Lessons", "- Retry pings with backoff.", 8)
    ]


def test_the_prose_init_wrote_is_not_indexed_but_the_users_is() -> None:
    # What MEMORY.md and a daily note are for, as `nexusd init` wrote it: no lesson learned.
    memory = template_text("memory").replace(
        "## Lessons\n", "## Lessons\n\n- 2026-11-26: the shelf lock is not reentrant.\n"
    )
    chunks = chunk_markdown("MEMORY.md", memory, max_chars=1500, default_date="2026-11-26")
    assert [(c.heading, c.body) for c in chunks] == [
        ("Memory > Lessons", "- 2026-11-26: the shelf lock is not reentrant.")
    ]
    note = daily_note("2026-11-26") + "- 10:02 answered cycle 3\n"
    chunks = chunk_markdown("memory/daily/2026-11-26.md", note, max_chars=1500, default_date="")
    assert [c.body for c in chunks] == ["- 10:02 answered cycle 3"]
    # The same words in a paragraph of the user's own are kept.
    mine = "# Notes\n\nCurated long-term memory of this repository, and more.\n"
    assert len(chunk_markdown("MEMORY.md", mine, max_chars=1500, default_date="")) == 1


@pytest.mark.parametrize("sep", [" ", "\n"])  # prose, or a list with no full stops
def test_a_long_body_is_embedded_in_overlapping_headed_windows(sep: str) -> None:
    sentences = [f"Step {i} checks the cache key {i} twice." for i in range(60)]  # 7 words
    if sep == "\n":
        sentences = [f"- step {i} checks the cache key {i} twice" for i in range(60)]
    body = sep.join(sentences)
    windows = embed_windows("Runbook > Cache", body, words=40, stride=20)
    assert all(w.startswith("Runbook > Cache\n\n") for w in windows)
    pieces = [w.removeprefix("Runbook > Cache\n\n") for w in windows]
    assert all(len(p.split()) <= 40 for p in pieces)
    # every sentence is read, whole, and neighbouring windows share about half
    assert all(any(s in p for p in pieces) for s in sentences)
    shared = [[x for x in sentences if x in a and x in b] for a, b in itertools.pairwise(pieces)]
    assert all(shared)
    assert 2 * 60 * 7 // 40 - 2 <= len(windows) <= 2 * 60 * 7 // 40 + 2
    short = "A short lesson."
    assert embed_windows("Runbook", short) == [embed_text("Runbook", short)]


def test_a_byte_order_mark_does_not_hide_the_first_heading_or_front_matter() -> None:
    # Notepad saves UTF-8 with a BOM: the first heading was read as text.
    got = chunks("\ufeff# Memory\n\n## Lessons\n\n- keep it\n")
    assert [(c.heading, c.category, c.line_start) for c in got] == [
        ("Memory > Lessons", "lessons", 5)
    ]
    front = chunks("\ufeff---\ncategory: ops\n---\n# Run\n\nbody\n")
    assert [(c.heading, c.category) for c in front] == [("Run", "ops")]


def test_an_empty_heading_adds_no_empty_step_to_the_heading_path() -> None:
    got = chunks("#   \n## Tabbed\n\nbody\n")
    assert [c.heading for c in got] == ["Tabbed"]
