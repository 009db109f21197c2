"""Form 2: the original Template A layout, including translations and label variants."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.errors import ProtocolError
from nexusd.protocol.documents import Questions
from nexusd.protocol.parse import parse_request

FIXTURE = "oppie/2025-05-08T14_02_11_plan_request.md"

CHINESE = """\
## 模板 A3 — 计划与执行周期

---
#### 📈 周期 4 上下文（由执行者填写，提供给规划者）

［🔢 周期编号］ 4
[📂 项目]   kitchen-sim
[🗺 上一目标（周期(n-1)）] 修复溢出货架上的竞态
[✅️ 上一结果（周期(n-1)）] 加了全局锁
[🚧 当前阻碍] 压力测试太慢；CI 超时
[🎯 下一目标（周期(n)）] 让压力测试在 30 秒内完成
  并保持无丢单
[📜 历史路径] .scratchpad_logs/2025-05-08T14_02_11_plan_response.md
[⏳ 时间盒] 1 小时
[📎 相关工件] kitchen/shelves.py，tests/test_concurrency.py
[🗒️ 草稿增量] 无
[🔍 可用 MCP 工具] .cursor/available_mcp_tools.md
[🔖 ADR 链接] 无
---
#### 📞 执行者 ➡️ 规划者 问题 / 请求（可选）
[❓ 分析与论证] 全局锁会不会太慢？
[❓ 计划] 无
[❓ 阻碍解决方案] 如何让测试更快？
[❓ 最佳实践 / 心智模型] 无
[❓ MCP 工具] 无
---
#### 📝 规划者对周期 4 的响应
"""


def test_oppie_fixture(shared_dir: Path) -> None:
    path = shared_dir / "fixtures" / FIXTURE
    req = parse_request(path.read_bytes(), str(path))
    assert req.form == "template_a"
    assert req.cycle == 3
    assert req.project == "kitchen-sim"
    assert req.previous_goal == (
        "Make shelf placement thread-safe and cover it with a concurrency test"
    )
    assert req.previous_outcome is not None
    assert req.previous_outcome.startswith("Added a per-shelf lock in shelves.py;")
    assert req.previous_outcome.endswith("about 1 run in 20")
    assert req.blockers == (
        "Order lost on the overflow shelf under contention",
        "pytest-timeout kills the stress test on CI after 60 s",
    )
    assert req.goal == (
        "Find and fix the lost-order race on the overflow shelf,"
        " and make the stress test finish in under 30 s"
    )
    assert req.history_path == ".scratchpad_logs/2025-05-08T11_40_03_plan_response.md"
    assert req.time_box == "2 hours"
    assert req.artifacts == (
        "kitchen/shelves.py",
        "kitchen/courier.py",
        "tests/test_concurrency.py",
    )
    assert req.scratchpad_delta == 'Added "Lessons: never hold two shelf locks at once"'
    assert req.tools_file == ".cursor/available_mcp_tools.md"
    assert req.adr_link is None
    assert req.questions == Questions(
        analysis=(
            "Is a single global lock for the overflow shelf acceptable,"
            " or will it serialize everything?"
        ),
        plan=None,
        blocker_solutions="How do I reproduce the race deterministically?",
        best_practices=None,
        tools=None,
    )
    assert req.unknown_fields == ()
    assert req.warnings == ()


def test_chinese_translation_matches_by_emoji() -> None:
    req = parse_request(CHINESE, "zh_plan_request.md")
    assert req.form == "template_a"
    assert req.cycle == 4
    assert req.project == "kitchen-sim"
    assert req.previous_goal == "修复溢出货架上的竞态"
    assert req.previous_outcome == "加了全局锁"
    assert req.blockers == ("压力测试太慢", "CI 超时")
    assert req.goal == "让压力测试在 30 秒内完成\n并保持无丢单"
    assert req.history_path == ".scratchpad_logs/2025-05-08T14_02_11_plan_response.md"
    assert req.time_box == "1 小时"
    assert req.artifacts == ("kitchen/shelves.py", "tests/test_concurrency.py")
    assert req.scratchpad_delta is None  # 无 = none
    assert req.tools_file == ".cursor/available_mcp_tools.md"
    assert req.adr_link is None
    assert req.questions.analysis == "全局锁会不会太慢？"
    assert req.questions.blocker_solutions == "如何让测试更快？"
    assert req.questions.plan is None
    assert req.warnings == ()


def _fixture_text(shared_dir: Path) -> str:
    return (shared_dir / "fixtures" / FIXTURE).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("[🎯 NEXT GOAL (Cycle 3)]", "[🎯NEXT GOAL]"),  # no space after the emoji
        ("[🎯 NEXT GOAL (Cycle 3)]", "[ 🎯 Next Goal (Cycle 3) ]:"),  # padding and a colon
        ("[🎯 NEXT GOAL (Cycle 3)]", "［🎯 NEXT GOAL（Cycle 3）］"),  # full-width
        ("[🎯 NEXT GOAL (Cycle 3)]", "[🎯 NÄCHSTES ZIEL (Zyklus 3)]"),  # unknown words
        ("[🎯 NEXT GOAL (Cycle 3)]", "[NEXT GOAL (Cycle 3)]"),  # words only
        ("[🎯 NEXT GOAL (Cycle 3)]", "[NEXT GOAL {n}]"),  # placeholder left in
        ("[🎯 NEXT GOAL (Cycle 3)]", "- [🎯 NEXT GOAL (Cycle 3)]"),  # a list item
        ("[🎯 NEXT GOAL (Cycle 3)]", "**[🎯 NEXT GOAL (Cycle 3)]**"),  # bold
        ("[🗺️ PREVIOUS GOAL", "[🗺 PREVIOUS GOAL"),  # without U+FE0F
        ("[🗺️ PREVIOUS GOAL", "[PREVIOUS GOAL"),
    ],
)
def test_label_variants(shared_dir: Path, old: str, new: str) -> None:
    text = _fixture_text(shared_dir)
    assert old in text
    req = parse_request(text.replace(old, new), "variant")
    assert req.goal.startswith("Find and fix the lost-order race")
    assert req.previous_goal is not None
    assert req.previous_goal.startswith("Make shelf placement")


def test_words_only_template() -> None:
    text = (
        "[CYCLE_NUMBER] 7\n[PROJECT] demo\n[CURRENT BLOCKERS] slow CI; flaky test\n"
        "[NEXT GOAL (Cycle 7)] Ship it\n[RELEVANT ARTIFACTS] a.py, b.py\n"
        "[AVAILABLE MCP TOOLS] tools.md\n"
        "#### EXECUTOR ➡️ PLANNER QUESTIONS\n[PLAN] Which order?\n[MCP TOOLS] Which ones?\n"
    )
    req = parse_request(text, "words")
    assert (req.cycle, req.project, req.goal) == (7, "demo", "Ship it")
    assert req.blockers == ("slow CI", "flaky test")
    assert req.artifacts == ("a.py", "b.py")
    assert req.tools_file == "tools.md"
    assert req.questions.plan == "Which order?"
    assert req.questions.tools == "Which ones?"


def test_multi_line_values_and_list_continuations() -> None:
    text = (
        "[🔢 CYCLE_NUMBER] 2\n"
        "[🚧 CURRENT BLOCKERS]\n- the cache is cold\n- the proxy drops requests\n"
        "[🎯 NEXT GOAL (Cycle 2)] Make the cache warm-up\n    deterministic\n\n"
        "[📎 RELEVANT ARTIFACTS]\n  - `cache.py`\n  - proxy.py\n"
        "---\n"
        "#### 📝 PLANNER RESPONSE FOR CYCLE 2\n[🎯 NEXT GOAL] ignored: the planner's part\n"
    )
    req = parse_request(text, "multi")
    assert req.blockers == ("the cache is cold", "the proxy drops requests")
    assert req.goal == "Make the cache warm-up\ndeterministic"
    assert req.artifacts == ("cache.py", "proxy.py")


def test_cycle_from_heading_when_no_cycle_label() -> None:
    text = "#### 📈 CYCLE 5 CONTEXT\n[🎯 NEXT GOAL (Cycle 5)] Do it\n"
    assert parse_request(text, "h").cycle == 5


@pytest.mark.parametrize("value", ["none", "None", "n/a", "N/A", "-", ""])
def test_none_like_values(value: str) -> None:
    text = f"[🎯 NEXT GOAL] Do it\n[🔖 ADR LINK] {value}\n[🚧 CURRENT BLOCKERS] {value}\n"
    req = parse_request(text, "n")
    assert req.adr_link is None
    assert req.blockers == ()


def test_unknown_label_is_kept_with_a_warning() -> None:
    text = "[🎯 NEXT GOAL] Do it\n[🧪 TEST COMMAND] pytest -q\n"
    req = parse_request(text, "u")
    assert req.unknown_fields == ("🧪 TEST COMMAND",)
    assert any("TEST COMMAND" in w and "line 2" in w for w in req.warnings)


def test_repeated_label_warns_and_last_wins() -> None:
    req = parse_request("[🎯 NEXT GOAL] first\n[🎯 NEXT GOAL] second\n", "r")
    assert req.goal == "second"
    assert any("repeats" in w for w in req.warnings)


def test_questions_by_position_when_words_are_unknown() -> None:
    text = (
        "[🎯 NEXT GOAL] Do it\n#### 📞 QUESTIONS\n"
        "[❓ ANALYSE] one\n[❓ PLAN] two\n[❓ BLOCKIERER] three\n"
        "[❓ PRAKTIKEN] four\n[❓ WERKZEUGE] five\n"
    )
    q = parse_request(text, "q").questions
    assert (q.analysis, q.plan, q.blocker_solutions, q.best_practices, q.tools) == (
        "one",
        "two",
        "three",
        "four",
        "five",
    )


@pytest.mark.parametrize("value", ["{n}", "three", "3.5", "-1"])
def test_cycle_that_is_not_a_number(value: str) -> None:
    text = f"[🎯 NEXT GOAL] Do it\n[🔢 CYCLE_NUMBER] {value}\n"
    with pytest.raises(ProtocolError) as info:
        parse_request(text, "c")
    assert info.value.field == "cycle"
    assert info.value.line == 2
    assert info.value.hint


def test_missing_goal_points_at_its_line(shared_dir: Path) -> None:
    text = _fixture_text(shared_dir)
    start = text.index("[🎯 NEXT GOAL")
    end = text.index("\n", start)
    broken = text[:start] + "[🎯 NEXT GOAL (Cycle 3)] none" + text[end:]
    with pytest.raises(ProtocolError) as info:
        parse_request(broken, "g")
    assert info.value.field == "goal"
    assert info.value.line == text[:start].count("\n") + 1
    assert "NEXT GOAL" in (info.value.hint or "")


@pytest.mark.parametrize(
    "titles",
    [
        (
            "📈 CYCLE 6 CONTEXT",
            "📞 EXECUTOR ➡️ PLANNER QUESTIONS",
            "📝 PLANNER RESPONSE FOR CYCLE 6",
        ),
        ("**CYCLE 6 CONTEXT**", "**EXECUTOR QUESTIONS**", "**PLANNER RESPONSE FOR CYCLE 6**"),
    ],
)
def test_section_titles_without_hashes(titles: tuple[str, str, str]) -> None:
    context, questions, response = titles
    text = (
        f"{context}\n[🎯 NEXT GOAL] Ship it\n**Important**\n[🔖 ADR LINK] none\n"
        f"{questions}\n[PLAN] Which order?\n"
        f"{response}\n[🎯 NEXT GOAL] the planner's own text\nDone.\n"
    )
    req = parse_request(text, "titles")
    assert req.goal == "Ship it\n**Important**"
    assert req.adr_link is None
    assert req.cycle == 6
    assert req.questions.plan == "Which order?"
