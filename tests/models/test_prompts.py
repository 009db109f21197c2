"""Prompt assembly within a token budget, and the saved exact prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nexusd.models import prompts as prompting
from nexusd.models.prompts import (
    ContextItem,
    build_prompt,
    estimate_tokens,
    fit_context,
    prompts_dir,
    save_prompt,
)
from nexusd.models.registry import Message
from nexusd.paths import find_repo


def item(title: str, rank: float, words: int = 100) -> ContextItem:
    return ContextItem("memory", title, " ".join([title] * words), rank)


def test_everything_fits_in_rank_order() -> None:
    items = [item("low", 1), item("high", 9), item("mid", 5)]
    kept, dropped, truncated = fit_context(items, 10_000)
    assert [i.title for i in kept] == ["high", "mid", "low"]
    assert (dropped, truncated) == ([], [])


def test_lowest_ranked_are_cut_first() -> None:
    items = [item("a", 1), item("b", 4), item("c", 3), item("d", 2)]
    one = estimate_tokens(f"### [memory] b\n{items[1].text}\n")
    kept, dropped, truncated = fit_context(items, 2 * one + 10)
    assert [i.title for i in kept] == ["b", "c"]
    assert dropped == ["d", "a"]
    assert truncated == []


def test_the_item_at_the_edge_is_shortened_when_enough_room_is_left() -> None:
    items = [item("big", 9, words=2000), item("small", 1)]
    kept, dropped, truncated = fit_context(items, 300)
    assert [i.title for i in kept] == ["big"]
    assert truncated == ["big"] and dropped == ["small"]
    assert kept[0].text.endswith("…") and estimate_tokens(kept[0].text) <= 300


@pytest.mark.parametrize("budget", [0, 50, 400, 5000])
def test_the_prompt_respects_the_budget(budget: int) -> None:
    items = [item(f"i{n}", n, words=60) for n in range(30)]
    prompt = build_prompt(
        system="You plan.",
        task="# Goal\nfix it",
        instructions="Answer JSON.",
        items=items,
        budget_tokens=budget,
    )
    assert len(prompt.included) + len(prompt.dropped) == 30
    fixed = build_prompt(
        system="You plan.",
        task="# Goal\nfix it",
        instructions="Answer JSON.",
        items=[],
        budget_tokens=0,
    ).tokens
    assert prompt.tokens <= max(budget, fixed) + 8
    assert prompt.messages[0] == Message("system", "You plan.")
    assert prompt.messages[1].content.startswith("# Goal\nfix it")
    assert prompt.messages[1].content.rstrip().endswith("Answer JSON.")
    if prompt.included:
        assert prompt.included[0] == "i29"


def test_saved_prompts_are_exact_and_pruned(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = find_repo(repo)
    monkeypatch.setattr(prompting, "KEEP_PROMPTS", 3)
    messages = [Message("system", "sys"), Message("user", "ünïcode goal")]
    paths = [
        save_prompt(layout, role="architect", planner="local:m", messages=messages, attempt=str(i))
        for i in range(5)
    ]
    assert prompts_dir(layout) == layout.git_common_dir / "nexus" / "logs" / "prompts"
    left = sorted(prompts_dir(layout).iterdir())
    assert left == sorted(paths[2:])
    record = json.loads(paths[-1].read_text(encoding="utf-8"))
    assert record["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "ünïcode goal"},
    ]
    assert (record["role"], record["planner"], record["attempt"]) == ("architect", "local:m", "4")
