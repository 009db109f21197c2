"""Responses out, and their front matter back in: plain markdown any editor reads well."""

from __future__ import annotations

import re
from typing import Any

import yaml

from nexusd.errors import ProtocolError
from nexusd.protocol.documents import ErrorInfo, PlanResponse, ResponseMeta, Section
from nexusd.protocol.inline import inline_code
from nexusd.protocol.request_form import render_request
from nexusd.protocol.yamlio import dump_yaml, load_yaml, normalize_text, split_front_matter

PROTOCOL_VERSION = 1
EMPTY_SECTION = "_Nothing to report._"
RESTORE_COMMAND = "nexusd checkpoint restore"


def response_front_matter(meta: ResponseMeta) -> dict[str, Any]:
    """The front matter mapping of a response, keys in the documented order."""
    data: dict[str, Any] = {
        "protocol_version": meta.protocol_version,
        "request_file": meta.request_file,
        "request_sha256": meta.request_sha256,
        "revision": meta.revision,
        "status": meta.status,
        "cycle": meta.cycle,
        "planner": meta.planner,
        "timings_ms": {name: round(float(ms), 3) for name, ms in meta.timings_ms},
        "created_at": meta.created_at,
        "checkpoint": meta.checkpoint,
        "restore": None
        if meta.checkpoint is None
        else f"nexusd checkpoint restore {meta.checkpoint}",
        "checks": dict(meta.checks),
        "warnings": list(meta.warnings),
    }
    if meta.relevant_files:
        data["relevant_files"] = list(meta.relevant_files)
    if meta.model_usage:
        data["model_usage"] = dict(meta.model_usage)
    if meta.error is not None:
        data["error"] = {
            "message": meta.error.message,
            "fix": meta.error.fix,
            "line": meta.error.line,
            "field": meta.error.field,
        }
        if meta.error.kind != "request":
            data["error"]["kind"] = meta.error.kind
    return data


def render_response(resp: PlanResponse) -> str:
    """The whole response file: YAML front matter, `# title`, then one `## Section` per section."""
    parts = ["---\n", dump_yaml(response_front_matter(resp.meta)), "---\n\n"]
    parts.append(f"# {_one_line(resp.title)}\n")
    for section in resp.sections:
        body = "\n".join(line.rstrip() for line in section.body.strip("\n").split("\n")).strip()
        parts.append(f"\n## {_one_line(section.title)}\n\n{body or EMPTY_SECTION}\n")
    return "".join(parts)


def read_response_meta(text: str) -> dict[str, Any] | None:
    """Front matter of a response file written by nexusd; None if it is not one or unreadable."""
    try:
        split = split_front_matter(normalize_text(text))
    except ValueError:
        return None
    if split is None:
        return None
    try:
        data = load_yaml(split.yaml_text)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict) or not {"request_sha256", "revision", "status"} <= data.keys():
        return None
    return data


def meta_from_mapping(data: dict[str, Any]) -> ResponseMeta:
    """Rebuild a ResponseMeta from `read_response_meta`'s mapping (raises ProtocolError)."""
    try:
        error = data.get("error")
        return ResponseMeta(
            request_file=str(data["request_file"]),
            request_sha256=str(data["request_sha256"]),
            revision=int(data["revision"]),
            status="error" if data["status"] == "error" else "ok",
            planner=str(data["planner"]),
            created_at=str(data["created_at"]),
            protocol_version=int(data.get("protocol_version", PROTOCOL_VERSION)),
            cycle=None if data.get("cycle") is None else int(data["cycle"]),
            timings_ms=tuple((str(k), float(v)) for k, v in (data.get("timings_ms") or {}).items()),
            checkpoint=None if data.get("checkpoint") is None else str(data["checkpoint"]),
            checks=tuple((str(k), str(v)) for k, v in (data.get("checks") or {}).items()),
            warnings=tuple(str(w) for w in data.get("warnings") or ()),
            relevant_files=tuple(str(p) for p in data.get("relevant_files") or ()),
            model_usage=tuple(
                (str(k), v if isinstance(v, int | float) else str(v))
                for k, v in (data.get("model_usage") or {}).items()
            ),
            error=None
            if not isinstance(error, dict)
            else ErrorInfo(
                message=str(error.get("message", "")),
                fix=str(error.get("fix", "")),
                line=None if error.get("line") is None else int(error["line"]),
                field=None if error.get("field") is None else str(error["field"]),
                kind="setup" if error.get("kind") == "setup" else "request",
            ),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ProtocolError(
            f"response front matter is incomplete or malformed ({exc})",
            hint="delete the response file; nexusd writes a fresh one",
        ) from exc


def markdown_sections(body: str) -> tuple[str | None, tuple[Section, ...]]:
    """The `# title` and `## Section` blocks of a markdown body (any response, ours or not)."""
    title: str | None = None
    sections: list[Section] = []
    current: str | None = None
    lines: list[str] = []
    fenced = False
    for line in normalize_text(body).split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if not fenced and line.startswith("# ") and title is None and current is None:
            title = line[2:].strip()
            continue
        if not fenced and line.startswith("## "):
            if current is not None:
                sections.append(Section(current, "\n".join(lines).strip()))
            current, lines = line[3:].strip(), []
            continue
        if current is not None:
            lines.append(line)
    if current is not None:
        sections.append(Section(current, "\n".join(lines).strip()))
    return title, tuple(sections)


def parse_response(text: str) -> PlanResponse | None:
    """A response file written by nexusd back into a PlanResponse; None if it is not one."""
    data = read_response_meta(text)
    if data is None:
        return None
    try:
        meta = meta_from_mapping(data)
    except ProtocolError:
        return None
    split = split_front_matter(normalize_text(text))
    assert split is not None  # read_response_meta succeeded
    title, sections = markdown_sections(split.body)
    restored = tuple(Section(s.title, "" if s.body == EMPTY_SECTION else s.body) for s in sections)
    return PlanResponse(meta=meta, title=title or "", sections=restored)


def error_info(exc: ProtocolError) -> ErrorInfo:
    """The ErrorInfo an error response carries for a ProtocolError."""
    return ErrorInfo(
        message=exc.message,
        fix=exc.hint or "correct the request and save it again",
        line=exc.line,
        field=exc.field,
    )


def error_sections(error: ErrorInfo) -> tuple[Section, ...]:
    """Body sections of an error response: what is wrong, where, and how to fix it."""
    where = []
    # Not twice: a message may say where itself (`… on line 3`, `on lines 3 and 6`).
    if error.line is not None and not _says_line(error.message, error.line):
        where.append(f"line {error.line}")
    if error.field is not None:
        where.append(f"field {inline_code(error.field)}")
    wrong = error.message + (f" ({', '.join(where)})" if where else "")
    return (
        Section("What Is Wrong", wrong),
        Section("How to Fix It", error.fix + "\n\n" + _AGAIN[error.kind]),
    )


def _says_line(message: str, line: int) -> bool:
    """Whether `message` already names `line` as a line (`line 3`, `lines 3 and 6`)."""
    return re.search(rf"\blines? (?:\d+(?:, | and ))*{line}\b", message) is not None


_AGAIN = {
    "request": "Save the request again: nexusd answers it anew.",
    "setup": "The request itself is fine: once this is fixed, nexusd answers it again on"
    " its next start or configuration reload, or when the request is saved again"
    " (`nexusd plan --force FILE` answers it now).",
}


def _one_line(text: str) -> str:
    return " ".join(text.split())


__all__ = [
    "EMPTY_SECTION",
    "PROTOCOL_VERSION",
    "error_info",
    "error_sections",
    "markdown_sections",
    "meta_from_mapping",
    "parse_response",
    "read_response_meta",
    "render_request",
    "render_response",
    "response_front_matter",
]
