"""Error responses: what is wrong with a request, where, how to fix it, and a valid example;
and the error responses for requests nexusd could not answer through no fault of theirs."""

from __future__ import annotations

from collections.abc import Mapping

from nexusd.errors import NexusError, ProtocolError
from nexusd.planner.architect import PLANNER_NAME
from nexusd.protocol.documents import ErrorInfo, PlanResponse, ResponseMeta, Section
from nexusd.protocol.render import error_info, error_sections
from nexusd.protocol.request_form import render_request

EXAMPLE_GOAL = "Make the login test pass reliably"


def example_request() -> str:
    """A minimal valid request in the canonical form, for error responses to show."""
    return render_request(
        goal=EXAMPLE_GOAL,
        cycle=1,
        blockers=["test_login fails about 1 run in 10 on CI"],
        artifacts=["src/app/login.py", "tests/test_login.py"],
    )


def _error_meta(
    info: ErrorInfo,
    *,
    request_name: str,
    sha256: str,
    revision: int,
    created_at: str,
    timings: Mapping[str, float],
) -> ResponseMeta:
    return ResponseMeta(
        request_file=request_name,
        request_sha256=sha256,
        revision=revision,
        status="error",
        planner=PLANNER_NAME,
        created_at=created_at,
        timings_ms=tuple(timings.items()),
        error=info,
    )


def error_response(
    exc: ProtocolError,
    *,
    request_name: str,
    sha256: str,
    revision: int,
    created_at: str,
    timings: Mapping[str, float],
) -> PlanResponse:
    """An error response (`status: error`) for a request that cannot be answered as written."""
    info = error_info(exc)
    example = Section(
        "Example",
        "A request that nexusd answers (only `goal` is required; the free-form and Template A "
        "layouts described in PROTOCOL.md work too):\n\n"
        f"````markdown\n{example_request().rstrip()}\n````",
    )
    meta = _error_meta(
        info,
        request_name=request_name,
        sha256=sha256,
        revision=revision,
        created_at=created_at,
        timings=timings,
    )
    return PlanResponse(
        meta=meta,
        title=f"Cannot answer {request_name}",
        sections=(*error_sections(info), example),
    )


def setup_error_response(
    exc: NexusError,
    *,
    request_name: str,
    sha256: str,
    revision: int,
    created_at: str,
    timings: Mapping[str, float],
) -> PlanResponse:
    """An error response (`error.kind: setup`) for a request that nexusd's side stopped.

    Written so that a client waiting for the response gets one; nexusd answers the
    request again on its next pass once the problem (usually the configuration) is fixed.
    """
    info = ErrorInfo(
        message=exc.message,
        fix=exc.hint or "fix nexusd's configuration (`nexusd config show` shows it)",
        kind="setup",
    )
    meta = _error_meta(
        info,
        request_name=request_name,
        sha256=sha256,
        revision=revision,
        created_at=created_at,
        timings=timings,
    )
    return PlanResponse(
        meta=meta, title=f"Cannot answer {request_name} yet", sections=error_sections(info)
    )
