"""A model's prompt stays within `planner.max_context_tokens`, whatever the request pastes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from nexusd.models.prompts import estimate_tokens, prompts_dir
from nexusd.models.reliability import BreakerBoard
from nexusd.paths import find_repo
from nexusd.planner.clip import clip_middle
from nexusd.planner.llm_architect import plan_with_llm
from nexusd.planner.model_plan import context_items
from nexusd.sandbox.request_checks import CriticReport
from tests.models.loopback import Loopback, Reply, chat_payload
from tests.plan_helpers import bundle_for, kitchen_repo, request
from tests.planner.test_llm_architect import ANSWER, ITEMS, OFFLINE, REQUEST, config_for

# An issue with a whole log pasted in: about 60 000 tokens, the exception at its very end.
LOG = "\n".join(
    f"2025-01-01 INFO worker-{i % 7} placed order {i} on shelf {i % 13}" for i in range(4000)
)
GOAL = f"Orders vanish from the overflow shelf. The log:\n\n```\n{LOG}\nKeyError: 'order-3999'\n```"


def test_a_pasted_log_is_cut_to_fit_the_budget_keeping_its_start_and_end(repo: Path) -> None:
    layout = find_repo(repo)
    req = dataclasses.replace(REQUEST, goal=GOAL)
    with Loopback([Reply(body=chat_payload(json.dumps(ANSWER)))]) as server:
        result = plan_with_llm(
            layout=layout,
            config=config_for(server.url, max_context_tokens=2000),
            request=req,
            context_items=ITEMS,
            offline_sections=OFFLINE,
            breakers=BreakerBoard(),
        )
    messages = server.requests[0][1]["messages"]
    sent = sum(estimate_tokens(m["content"]) for m in messages)
    assert sent <= 2000 + 50, sent  # was the whole log: about 60 000 tokens
    prompt = messages[1]["content"]
    assert "Orders vanish from the overflow shelf." in prompt
    assert "KeyError: 'order-3999'" in prompt  # the end of a log is what went wrong
    assert "characters left out here, to fit the model's context" in prompt
    # The ranked context still gets its share, and the blockers (after the goal) are kept.
    assert "def test_login(client)" in prompt and "session fixture leaks" in prompt
    assert not result.fallback
    assert any("too long for the model's context" in n for n in result.notes)
    saved = json.loads(next(prompts_dir(layout).glob("*.json")).read_text())
    assert saved["dropped_context"][0] == "request (shortened)"


def test_a_short_request_is_sent_whole_and_said_nothing_about(repo: Path) -> None:
    with Loopback([Reply(body=chat_payload(json.dumps(ANSWER)))]) as server:
        result = plan_with_llm(
            layout=find_repo(repo),
            config=config_for(server.url, max_context_tokens=2000),
            request=REQUEST,
            context_items=ITEMS,
            offline_sections=OFFLINE,
            breakers=BreakerBoard(),
        )
    assert "# Goal\n\nFix the flaky login test\n" in server.requests[0][1]["messages"][1]["content"]
    assert result.notes == ()


def test_the_request_item_does_not_repeat_a_pasted_log(repo: Path) -> None:
    kitchen_repo(repo)
    bundle = bundle_for(repo, request(goal=GOAL))
    item = next(i for i in context_items(bundle, (), CriticReport()) if i.kind == "request")
    assert len(item.text) < 2500 and "KeyError: 'order-3999'" in item.text
    assert "Blocker: Order lost on the overflow shelf under contention" in item.text


def test_clip_middle() -> None:
    assert clip_middle("short", 100) == ("short", 0)
    text, cut = clip_middle("a" * 600 + "b" * 600, 400)
    assert text.startswith("a" * 100) and text.endswith("b" * 100)
    assert f"[… {cut} characters" in text and 0 < cut < 1200 - 300
    assert len(text) <= 400 + 10
