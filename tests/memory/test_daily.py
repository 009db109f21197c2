"""Daily notes: created from the template, appended under a lock, never clobbering an editor."""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path

from nexusd.memory.chunking import chunk_markdown
from nexusd.memory.daily import append_daily_entry
from nexusd.paths import find_repo

WHEN = datetime(2026, 3, 4, 14, 5)


def test_first_entry_creates_the_note_from_the_template(repo: Path) -> None:
    layout = find_repo(repo)
    path = append_daily_entry(
        layout,
        when=WHEN,
        cycle=3,
        goal="Fix the flaky login test",
        status="answered",
        response_path=repo / ".scratchpad_logs/2026-03-04T14_05_00_plan_response.md",
    )
    assert path == repo / "memory/daily/2026-03-04.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\ncategory: daily\ndate: 2026-03-04\n---\n# 2026-03-04\n")
    assert "## 14:05 cycle 3: answered" in text
    assert "- goal: Fix the flaky login test" in text
    assert "`.scratchpad_logs/2026-03-04T14_05_00_plan_response.md`" in text
    (entry,) = [
        c
        for c in chunk_markdown(
            "memory/daily/2026-03-04.md", text, max_chars=1500, default_date="x"
        )
        if "cycle 3" in c.heading
    ]
    assert entry.date == "2026-03-04" and entry.category == "daily"


def test_appends_keep_what_a_person_wrote_in_between(repo: Path) -> None:
    layout = find_repo(repo)
    kw = {"when": WHEN, "status": "answered", "response_path": "r.md"}
    path = append_daily_entry(layout, cycle=1, goal="first", **kw)
    with path.open("a", encoding="utf-8") as fh:
        fh.write("My own note, no trailing newline")  # an editor saved mid-line
    append_daily_entry(layout, cycle=2, goal="second", **kw)
    text = path.read_text(encoding="utf-8")
    assert "My own note, no trailing newline\n\n## 14:05 cycle 2: answered" in text
    assert text.index("goal: first") < text.index("My own note") < text.index("goal: second")


def test_concurrent_writers_lose_nothing(repo: Path) -> None:
    layout = find_repo(repo)

    def write(i: int) -> None:
        append_daily_entry(
            layout, when=WHEN, cycle=i, goal=f"goal {i}", status="ok", response_path=f"r{i}.md"
        )

    threads = [threading.Thread(target=write, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    text = (repo / "memory/daily/2026-03-04.md").read_text(encoding="utf-8")
    assert text.count("# 2026-03-04\n") == 1  # the template was written once
    for i in range(12):
        assert f"- goal: goal {i}\n" in text
