"""plan_with_llm: model plans, repair, fill-ins from the offline plan, fallback, time box."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from nexusd.config import Config, config_from_mapping
from nexusd.models.prompts import ContextItem, prompts_dir
from nexusd.models.reliability import BreakerBoard
from nexusd.models.telemetry import read_events
from nexusd.paths import RepoLayout, find_repo
from nexusd.planner.llm_architect import LlmPlan, plan_with_llm, time_box_seconds
from nexusd.protocol.documents import STANDARD_SECTIONS, PlanRequest, Section
from tests.models.loopback import Loopback, Reply, chat_payload

OFFLINE = tuple(Section(t, f"offline: {t}") for t in STANDARD_SECTIONS)
REQUEST = PlanRequest(
    path=".scratchpad_logs/1_plan_request.md",
    sha256="a" * 64,
    form="frontmatter",
    goal="Fix the flaky login test",
    blockers=("session fixture leaks",),
    time_box="45m",
)
ITEMS = (
    ContextItem("artifact", "tests/test_login.py", "def test_login(client): ...", 5.0),
    ContextItem("memory", "MEMORY.md#fixtures", "Lesson: keep fixtures function-scoped.", 3.0),
    ContextItem("git", "recent commits", "abc123 make session global", 1.0),
)
ANSWER: dict[str, Any] = {
    "analysis": "The session fixture is module-scoped and leaks state.",
    "actions": [
        {
            "title": "Scope the fixture per test",
            "details": "Change the scope.",
            "target_files": ["tests/conftest.py"],
            "verify": "pytest tests/test_login.py",
        }
    ],
    "blocker_solutions": [{"blocker": "session fixture leaks", "solution": "Use scope=function."}],
    "best_practices": ["Keep fixtures function-scoped."],
    "tool_calls": [{"tool": "pytest", "args": "-x tests/test_login.py", "purpose": "verify"}],
    "risks": ["Tests get slower."],
    "checklist": ["Run the login test three times."],
}


def config_for(url: str, **planner: Any):
    return config_from_mapping(
        {
            "planner": {"provider": "api", "max_retries": 1, **planner},
            "providers": {
                "api": {
                    "type": "openai",
                    "base_url": f"{url}/v1",
                    "model": "m",
                    "timeout_ms": 5000,
                    "circuit_failures": 2,
                }
            },
        }
    )


def plan(
    layout: RepoLayout,
    config: Any,
    request: PlanRequest = REQUEST,
    board: BreakerBoard | None = None,
    offline: tuple[Section, ...] = OFFLINE,
) -> LlmPlan:
    return plan_with_llm(
        layout=layout,
        config=config,
        request=request,
        context_items=ITEMS,
        offline_sections=offline,
        breakers=board or BreakerBoard(),
        sleep=lambda s: None,
    )


@pytest.fixture
def layout(repo: Path) -> RepoLayout:
    return find_repo(repo)


def test_offline_default_returns_the_offline_plan_untouched(layout: RepoLayout) -> None:
    result = plan(layout, config_from_mapping({}))
    assert result == LlmPlan(OFFLINE, "offline")
    assert not prompts_dir(layout).exists()
    assert read_events(layout) == ([], 0)


def test_a_valid_answer_becomes_the_plan(layout: RepoLayout) -> None:
    with Loopback([Reply(body=chat_payload(json.dumps(ANSWER), tokens=(900, 120)))]) as server:
        result = plan(layout, config_for(server.url))
    assert result.planner == "api:m" and not result.fallback and result.notes == ()
    body = {s.title: s.body for s in result.sections}
    assert tuple(body) == STANDARD_SECTIONS
    assert "leaks state" in body["Analysis and Justification"]
    assert "Tests get slower." in body["Analysis and Justification"]
    assert "`tests/conftest.py`" in body["Plan"] and "pytest tests/test_login.py" in body["Plan"]
    assert "- [ ] Run the login test three times." in body["Executor Follow-up Checklist"]
    assert "`pytest -x tests/test_login.py`" in body["Recommended Tool Calls"]
    assert result.usage is not None
    assert (result.usage.tokens_in, result.usage.tokens_out, result.usage.calls) == (900, 120, 1)
    sent = server.requests[0][1]
    prompt = sent["messages"][1]["content"]
    assert "Fix the flaky login test" in prompt and "session fixture leaks" in prompt
    assert "Lesson: keep fixtures function-scoped." in prompt
    saved = json.loads(next(prompts_dir(layout).glob("*architect_first.json")).read_text())
    assert saved["messages"] == sent["messages"]
    event = read_events(layout)[0][-1]
    assert (event["event"], event["planner"], event["ok"]) == ("plan", "api:m", True)


def test_missing_parts_get_one_repair_round_then_come_from_offline(layout: RepoLayout) -> None:
    partial = {k: v for k, v in ANSWER.items() if k != "best_practices"}
    still = {k: v for k, v in partial.items() if k != "checklist"}
    replies = [
        Reply(body=chat_payload(json.dumps(partial))),
        Reply(body=chat_payload(json.dumps(still))),
    ]
    with Loopback(replies) as server:
        result = plan(layout, config_for(server.url))
    assert len(server.requests) == 2
    repair = server.requests[1][1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": json.dumps(partial)}
    assert "best_practices: missing" in repair[-1]["content"]
    body = {s.title: s.body for s in result.sections}
    assert body["Best Practices"] == "offline: Best Practices"
    assert body["Executor Follow-up Checklist"].startswith("- [ ] Run the login")
    assert result.notes == (
        "the model's answer lacked best practices; filled from the offline planner",
    )
    assert result.planner == "api:m" and not result.fallback
    assert len(list(prompts_dir(layout).glob("*_repair.json"))) == 1


def test_garbage_repaired_by_the_second_answer(layout: RepoLayout) -> None:
    replies = [
        Reply(body=chat_payload("I think you should fix it.")),
        Reply(body=chat_payload("```json\n" + json.dumps(ANSWER) + "\n```")),
    ]
    with Loopback(replies) as server:
        result = plan(layout, config_for(server.url))
    assert "answer: not valid JSON" in server.requests[1][1]["messages"][-1]["content"]
    assert result.notes == () and result.planner == "api:m"


def test_garbage_twice_falls_back_to_offline(layout: RepoLayout) -> None:
    with Loopback([Reply(body=chat_payload("lorem ipsum"))]) as server:
        result = plan(layout, config_for(server.url))
    assert result.sections == OFFLINE and result.fallback and result.planner == "offline"
    assert "unusable" in result.notes[0] and "not valid JSON" in result.notes[0]
    assert result.usage is not None and result.usage.calls == 2


def test_provider_down_falls_back_and_the_breaker_opens(layout: RepoLayout) -> None:
    board = BreakerBoard()
    with Loopback([Reply(500, "internal error")]) as server:
        first = plan(layout, config_for(server.url), board=board)
        second = plan(layout, config_for(server.url), board=board)
    assert first.sections == OFFLINE and first.fallback
    assert first.notes[0].startswith("provider down: fell back to the offline planner (")
    assert "HTTP 500" in first.notes[0]
    assert first.usage is not None and first.usage.retries == 1
    # Two failures opened the breaker: the next request did not reach the server.
    assert len(server.requests) == 2
    assert "circuit open" in second.notes[0] and second.sections == OFFLINE
    events = read_events(layout)[0]
    assert [e["fallback"] for e in events] == [True, True]


def test_a_hung_provider_costs_at_most_the_time_box(layout: RepoLayout) -> None:
    request = PlanRequest(path="r.md", sha256="b" * 64, form="freeform", goal="g", time_box="1s")
    with Loopback([Reply(hang_s=60, body=chat_payload(json.dumps(ANSWER)))]) as server:
        config = config_from_mapping(
            {
                "planner": {"provider": "api", "max_retries": 5},
                "providers": {
                    "api": {
                        "type": "openai",
                        "base_url": f"{server.url}/v1",
                        "model": "m",
                        "timeout_ms": 600_000,
                    }
                },
            }
        )
        result = plan(layout, config, request=request)
    assert result.fallback and result.sections == OFFLINE
    assert "no answer within" in result.notes[0]


def test_requested_sections_are_filled_by_title(layout: RepoLayout) -> None:
    request = PlanRequest(
        path="r.md",
        sha256="c" * 64,
        form="freeform",
        goal="Summarize",
        requested_sections=("Summary", "Open questions"),
    )
    offline = (Section("Summary", "offline summary"), Section("Open questions", "offline q"))
    answer = {"sections": {"Summary": "Model summary."}}
    with Loopback([Reply(body=chat_payload(json.dumps(answer)))]) as server:
        result = plan(layout, config_for(server.url), request=request, offline=offline)
    assert result.sections == (
        Section("Summary", "Model summary."),
        Section("Open questions", "offline q"),
    )
    assert result.notes == (
        "the model's answer lacked section `Open questions`; filled from the offline planner",
    )


def test_context_is_cut_to_the_budget_lowest_rank_first(layout: RepoLayout) -> None:
    # About 700 tokens each; the fixed part of the prompt is about 500.
    items = [
        ContextItem("git", "recent commits", "LOWEST " + "x" * 2800, 1.0),
        ContextItem("artifact", "tests/test_login.py", "TOP " + "y" * 2800, 5.0),
        ContextItem("memory", "MEMORY.md#fixtures", "MIDDLE " + "z" * 2800, 3.0),
    ]
    with Loopback([Reply(body=chat_payload(json.dumps(ANSWER)))]) as server:
        plan_with_llm(
            layout=layout,
            config=config_for(server.url, max_context_tokens=1700),
            request=REQUEST,
            context_items=items,
            offline_sections=OFFLINE,
            breakers=BreakerBoard(),
        )
    prompt = server.requests[0][1]["messages"][1]["content"]
    assert "TOP " + "y" * 2800 in prompt
    assert "MIDDLE " in prompt and "z" * 2800 not in prompt
    assert "LOWEST" not in prompt
    saved = json.loads(next(prompts_dir(layout).glob("*.json")).read_text())
    assert saved["dropped_context"] == ["MEMORY.md#fixtures (shortened)", "recent commits"]


def test_misconfigured_provider_falls_back_with_the_reason(layout: RepoLayout) -> None:
    # Loading refuses such a configuration; one built in code still falls back, saying why.
    data = copy.deepcopy(dict(config_from_mapping({}).data))
    data["routing"]["architect"]["provider"] = "nowhere"
    config = Config(data=data)
    result = plan(layout, config)
    assert result.fallback and "provider `nowhere` is not defined" in result.notes[0]


def test_command_provider_end_to_end(layout: RepoLayout, tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    broken = copy.deepcopy(ANSWER)
    broken["actions"] = broken["actions"] * 9
    script.write_text(
        "import json, sys\nprompt = sys.stdin.read()\n"
        f"good = {json.dumps(ANSWER)!r}\nbad = {json.dumps(broken)!r}\n"
        "print(good if 'did not validate' in prompt else bad)\n"
    )
    config = config_from_mapping(
        {
            "planner": {"provider": "agent"},
            "providers": {
                "agent": {
                    "type": "command",
                    "command": ["python3", str(script)],
                    "model": "scripted",
                }
            },
        }
    )
    result = plan(layout, config)
    assert result.planner == "agent:scripted" and result.notes == ()
    assert result.sections[1].body.count("**Scope the fixture per test**") == 1


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        (None, None),
        ("", None),
        ("45m", 2700.0),
        ("1h 30m", 5400.0),
        ("2 hours", 7200.0),
        ("90 seconds", 90.0),
        ("soon", None),
    ],
)
def test_time_box_seconds(text: str | None, seconds: float | None) -> None:
    assert time_box_seconds(text) == seconds
