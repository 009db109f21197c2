"""Values of the file protocol: a parsed plan request and the response written for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

RequestForm = Literal["frontmatter", "template_a", "freeform"]
Status = Literal["ok", "error"]
ErrorKind = Literal["request", "setup"]

# The six Template A response sections, in order (seed 001, section 2.1).
STANDARD_SECTIONS: tuple[str, ...] = (
    "Analysis and Justification",
    "Plan",
    "Blocker Solutions",
    "Best Practices",
    "Recommended Tool Calls",
    "Executor Follow-up Checklist",
)


@dataclass(frozen=True)
class Questions:
    """The executor's optional questions to the planner; None means not asked."""

    analysis: str | None = None
    plan: str | None = None
    blocker_solutions: str | None = None
    best_practices: str | None = None
    tools: str | None = None


@dataclass(frozen=True)
class PlanRequest:
    """A plan request, normalised from any of the three forms."""

    path: str
    sha256: str
    form: RequestForm
    goal: str
    cycle: int | None = None
    project: str | None = None
    previous_goal: str | None = None
    previous_outcome: str | None = None
    blockers: tuple[str, ...] = ()
    history_path: str | None = None
    time_box: str | None = None
    artifacts: tuple[str, ...] = ()
    scratchpad_delta: str | None = None
    tools_file: str | None = None
    adr_link: str | None = None
    questions: Questions = field(default_factory=Questions)
    # Section headings the request explicitly asks for, in order (free-form prompts).
    requested_sections: tuple[str, ...] = ()
    # Artifact notes from "Related files" lists: path -> description.
    artifact_notes: tuple[tuple[str, str], ...] = ()
    unknown_fields: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Section:
    """One markdown section of a response body: `## title` then `body`."""

    title: str
    body: str


@dataclass(frozen=True)
class ErrorInfo:
    """Why a request could not be answered: the line or field at fault and the fix."""

    message: str
    fix: str
    line: int | None = None
    field: str | None = None
    # "request": fix the request and save it again; "setup": nexusd's configuration (or
    # another problem on nexusd's side) stopped it, and it answers again once that is fixed.
    kind: ErrorKind = "request"


@dataclass(frozen=True)
class ResponseMeta:
    """The response's front matter; any tool can read it."""

    request_file: str
    request_sha256: str
    revision: int
    status: Status
    planner: str
    created_at: str
    protocol_version: int = 1
    cycle: int | None = None
    timings_ms: tuple[tuple[str, float], ...] = ()
    checkpoint: str | None = None
    checks: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    error: ErrorInfo | None = None
    # Provider, model, tokens in/out, retries: present only when a model wrote the plan.
    model_usage: tuple[tuple[str, str | int | float], ...] = ()
    # Files the code index ranks as what the request is about, most likely first.
    relevant_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanResponse:
    """A response: front matter plus the markdown sections of its body."""

    meta: ResponseMeta
    title: str
    sections: tuple[Section, ...]
