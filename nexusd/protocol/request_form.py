"""The canonical request file that `nexusd request new` writes (front matter form)."""

from __future__ import annotations

from collections.abc import Sequence

from nexusd.protocol.documents import Questions
from nexusd.protocol.yamlio import dump_yaml

# Front matter keys in Template A order, each with the comment that teaches it.
REQUEST_FIELDS: tuple[tuple[str, str], ...] = (
    ("cycle", "🔢 cycle number (a whole number)"),
    ("project", "📂 project name"),
    ("previous_goal", "🗺️ goal of the previous cycle"),
    ("previous_outcome", "✅ what the previous cycle achieved"),
    ("blockers", "🚧 current blockers (a list)"),
    ("goal", "🎯 next goal: REQUIRED, what this cycle must achieve"),
    ("history_path", "📜 previous cycle's response or log, relative to the repository"),
    ("time_box", "⏳ time box, e.g. 2 hours"),
    ("artifacts", "📎 relevant files (a list of repository paths)"),
    ("scratchpad_delta", "🗒️ what changed in the scratchpad"),
    ("tools_file", "🔍 file listing the available (MCP) tools"),
    ("adr_link", "🔖 architecture decision record"),
)

# Question sections: heading, Questions attribute, guidance shown as an HTML comment.
QUESTION_SECTIONS: tuple[tuple[str, str, str], ...] = (
    ("Analysis", "analysis", "❓ What should the planner analyse and justify?"),
    ("Plan", "plan", "❓ Anything specific about the plan of atomic actions?"),
    ("Blocker Solutions", "blocker_solutions", "❓ Which blocker needs a solution, and how?"),
    ("Best Practices", "best_practices", "❓ Which best practices or mental models apply?"),
    ("Tools", "tools", "❓ Which tool calls would help?"),
)


def render_request(
    *,
    goal: str,
    cycle: int | None = None,
    project: str | None = None,
    previous_goal: str | None = None,
    previous_outcome: str | None = None,
    blockers: Sequence[str] = (),
    history_path: str | None = None,
    time_box: str | None = None,
    artifacts: Sequence[str] = (),
    scratchpad_delta: str | None = None,
    tools_file: str | None = None,
    adr_link: str | None = None,
    questions: Questions | None = None,
) -> str:
    """A canonical front-matter request: every Template A field, the questions as headings."""
    values: dict[str, object] = {
        "cycle": cycle,
        "project": project,
        "previous_goal": previous_goal,
        "previous_outcome": previous_outcome,
        "blockers": list(blockers),
        "goal": goal,
        "history_path": history_path,
        "time_box": time_box,
        "artifacts": list(artifacts),
        "scratchpad_delta": scratchpad_delta,
        "tools_file": tools_file,
        "adr_link": adr_link,
    }
    out = [
        "---\n",
        "# nexusd plan request, protocol 1 (see PROTOCOL.md). Only `goal` is required.\n",
        "# Save this file: nexusd answers in the *_plan_response.md file next to it.\n",
    ]
    for key, comment in REQUEST_FIELDS:
        out.append(f"# {comment}\n")
        out.append(_field(key, values[key]))
    out.append("---\n\n# Plan Request\n\n")
    out.append(
        "<!-- Executor ➡️ planner questions, all optional: write below a heading,"
        " or leave it empty. -->\n"
    )
    asked = questions or Questions()
    for heading, attr, guidance in QUESTION_SECTIONS:
        value = getattr(asked, attr)
        out.append(f"\n## {heading}\n\n<!-- {guidance} -->\n")
        if value:
            out.append(f"{value.strip()}\n")
    return "".join(out)


def _field(key: str, value: object) -> str:
    if value is None or value == "":
        return f"{key}:\n"
    if isinstance(value, list) and not value:
        return f"{key}: []\n"
    return dump_yaml({key: value})
