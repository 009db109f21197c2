"""Form 1: YAML front matter with the Template A fields; questions as markdown sections."""

from __future__ import annotations

import re
from typing import Any

import yaml

from nexusd.errors import ProtocolError
from nexusd.protocol.comments import without_comments
from nexusd.protocol.fields import (
    ARTIFACT_SEPARATORS,
    BLOCKER_SEPARATORS,
    STRING_FIELDS,
    Draft,
    clean_value,
    question_key,
    shown,
    split_items,
    to_cycle,
    words,
)
from nexusd.protocol.freeform import parse_freeform
from nexusd.protocol.inline import inline_code
from nexusd.protocol.template_a import looks_like_template_a, parse_template_a
from nexusd.protocol.yamlio import FrontMatter, load_yaml
from nexusd.yamlload import MAX_DEPTH, DuplicateKey, NestingTooDeep, key_name, on_lines

# snake_cased front matter key -> PlanRequest field (camelCase keys are snake_cased first).
ALIASES: dict[str, str] = {
    "cycle": "cycle",
    "cycle_number": "cycle",
    "project": "project",
    "project_name": "project",
    "previous_goal": "previous_goal",
    "previous_outcome": "previous_outcome",
    "blockers": "blockers",
    "current_blockers": "blockers",
    "goal": "goal",
    "next_goal": "goal",
    "history_path": "history_path",
    "time_box": "time_box",
    "timebox": "time_box",
    "artifacts": "artifacts",
    "relevant_artifacts": "artifacts",
    "scratchpad_delta": "scratchpad_delta",
    "tools_file": "tools_file",
    "available_tools": "tools_file",
    "available_mcp_tools": "tools_file",
    "adr_link": "adr_link",
    "adr": "adr_link",
    "questions": "questions",
    "sections": "requested_sections",
    "requested_sections": "requested_sections",
}

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_TITLE = re.compile(r"^#\s")
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)")
_RULE = re.compile(r"^[ \t]*(?:-[ \t]*){3,}$|^[ \t]*(?:\*[ \t]*){3,}$|^[ \t]*(?:_[ \t]*){3,}$")


def snake_case(key: str) -> str:
    """`nextGoal`, `Next Goal`, `next-goal` -> `next_goal`."""
    key = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key.strip())
    return re.sub(r"[\s\-]+", "_", key).lower()


def parse_front_matter(fm: FrontMatter) -> Draft:
    """Fill a Draft from front matter fields and the question sections of the body."""
    draft = Draft(form="frontmatter")
    data = _load(fm)
    seen: dict[str, str] = {}
    key_lines = _key_lines(fm)
    for raw_key, value in data.items():
        key = str(raw_key)
        line = key_lines.get(key)
        target = ALIASES.get(snake_case(key))
        if target is None:
            draft.unknown(key, line)
            continue
        if target in seen:
            draft.warnings.append(
                f"`{shown(key)}` repeats `{shown(seen[target])}`; the later value is used"
            )
        seen[target] = key
        if line is not None:
            draft.lines[target] = line
        _assign(draft, target, key, value, line)
    _read_body(draft, fm)
    return draft


def _load(fm: FrontMatter) -> dict[Any, Any]:
    try:
        # Strict: YAML keeps the second of two equal keys without a word, so a request with
        # two `goal:` lines was planned for one of them, the writer never told.
        data = load_yaml(fm.yaml_text, strict=True)
    except DuplicateKey as exc:
        raise _duplicate(fm, exc) from exc
    except NestingTooDeep as exc:
        raise _too_deep(fm, exc) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + fm.yaml_first_line
        problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
        where = f" on line {line}" if line is not None else ""
        raise ProtocolError(
            f"the front matter is not valid YAML: {problem}",
            hint=(
                f"fix the YAML{where}: quote a value that contains `: ` or starts with a special"
                " character such as `[`, `{`, `*`, `&`, `@`; or remove the `---` lines to send"
                " the request as free-form markdown"
            ),
            line=line,
        ) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ProtocolError(
            f"the front matter must be `key: value` lines, not a {type(data).__name__}",
            hint="write fields such as `goal: Fix the login test` between the `---` lines",
            line=fm.yaml_first_line,
        )
    return data


_KEY = re.compile(r"""^(['"]?)([^'"\s#][^:'"]*?)\1\s*:(?:\s|$)""")


def _key_lines(fm: FrontMatter) -> dict[str, int]:
    """Line number of each top-level key, found in one pass over the YAML text."""
    lines: dict[str, int] = {}
    for offset, text in enumerate(fm.yaml_text.split("\n")):
        match = _KEY.match(text)
        if match:
            lines.setdefault(match.group(2).strip(), fm.yaml_first_line + offset)
    return lines


def _duplicate(fm: FrontMatter, exc: DuplicateKey) -> ProtocolError:
    """The error for a key given twice: which key, in which mapping, on which two lines.

    The place comes from the YAML's structure (`exc.path`), not from the text of a line: a
    quoted key with `: ` in it, an alias used as a key (`*k :`) and `~` / `null` are placed
    as YAML reads them, and named as written. What the loader could not place is said to be
    unknown, never guessed.
    """
    first, second = (
        None if n is None else n + fm.yaml_first_line - 1 for n in (exc.first, exc.second)
    )
    key = shown(key_name(exc.key))
    keep = f"one {inline_code(key + ':')}"
    if exc.path is None:
        under = ""
        unknown = " (nexusd could not tell in which mapping)"
        field = None
    else:
        steps = (f"[{s}]" if isinstance(s, int) else f".{s}" for s in exc.path)
        dotted = "".join(steps).removeprefix(".")
        under, unknown = (f" under {inline_code(shown(dotted))}" if dotted else ""), ""
        field = _top_field(exc.path) if exc.path else key
    forms = ""
    if exc.written is not None:
        text_1, text_2 = (shown(text) for text in exc.written)
        if text_1 != text_2:
            forms = f" (written {_as_written(text_1)} and {_as_written(text_2)})"
            keep = f"one of {_as_written(text_1, ':')} and {_as_written(text_2, ':')}"
        else:
            keep = (
                f"one {inline_code(text_1 + ':')}" if text_1 else "one of the two empty keys (`?`)"
            )
    where = on_lines(first, second)
    return ProtocolError(
        f"{inline_code(key)} is given twice{under} in the front matter{unknown}{forms}, {where}",
        hint=(
            f"keep {keep}{under} and delete the other (merge their values if both"
            " matter): nexusd does not guess which one you meant"
        ),
        line=second if second is not None else first,
        field=field,
    )


def _too_deep(fm: FrontMatter, exc: NestingTooDeep) -> ProtocolError:
    """The error for lists and mappings nested deeper than nexusd reads."""
    line = None if exc.line is None else exc.line + fm.yaml_first_line - 1
    where = f", on line {line}" if line is not None else ""
    return ProtocolError(
        f"in the front matter, {exc.problem}{where}",
        hint=(
            f"flatten it (nexusd reads at most {MAX_DEPTH} levels): a request needs only"
            " `key: value` lines, with text or a list of text as the values; put deeper"
            " structure in the body, or in a file listed as an artifact"
        ),
        line=line,
    )


def _top_field(path: tuple[str | int, ...]) -> str | None:
    """The top-level key a nested repeat sits in; None when the document is a list."""
    return shown(path[0]) if isinstance(path[0], str) else None


def _as_written(text: str, colon: str = "") -> str:
    return inline_code(text + colon) if text else "an empty key (`?`)"


def _scalar(value: Any, key: str, line: int | None) -> str | None:
    # Only scalars: nested lists or mappings (and YAML alias bombs) are refused, not stringified.
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        raise ProtocolError(
            f"`{shown(key)}` must be text (or a list of text), not a nested {type(value).__name__}",
            hint=f"write `{shown(key)}` as plain text, quoted if it contains `: `",
            line=line,
            field=shown(key),
        )
    return clean_value(str(value))


def _text(value: Any, key: str, line: int | None) -> str | None:
    if isinstance(value, list):
        parts = (_scalar(v, key, line) for v in value)
        return clean_value("\n".join(p for p in parts if p is not None))
    return _scalar(value, key, line)


def _items(value: Any, separators: str, key: str, line: int | None) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(t for t in (_scalar(v, key, line) for v in value) if t is not None)
    return split_items(_scalar(value, key, line), separators)


def _assign(draft: Draft, target: str, key: str, value: Any, line: int | None) -> None:
    if target == "cycle":
        draft.cycle = to_cycle(value, line=line)
    elif target == "blockers":
        draft.blockers = _items(value, BLOCKER_SEPARATORS, key, line)
    elif target == "artifacts":
        draft.artifacts = _items(value, ARTIFACT_SEPARATORS, key, line)
    elif target == "requested_sections":
        draft.requested_sections = list(_items(value, ARTIFACT_SEPARATORS, key, line))
    elif target == "questions":
        if not isinstance(value, dict):
            raise ProtocolError(
                f"`{shown(key)}` must be a mapping such as `plan: …`, got {type(value).__name__}",
                hint="write the questions as `## Plan` sections below the front matter",
                line=line,
                field=key,
            )
        for name, question in value.items():
            attr = question_key(str(name))
            if attr is None:
                draft.unknown(f"{key}.{name}", line)
            else:
                draft.questions[attr] = _text(question, f"{key}.{name}", line)
    elif target in STRING_FIELDS:
        draft.values[target] = _text(value, key, line)


def _read_body(draft: Draft, fm: FrontMatter) -> None:
    """Question sections (`## Plan` …), a `## Goal` section, and the rest of the body: the
    rest of the goal when the front matter (or a `## Goal` section) gives it, else the goal."""
    # (title, lines); the first entry, titled None, is the text before any `##` heading.
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    fenced = False  # a `## ` line in a pasted code block starts no section
    for line in fm.body.split("\n"):
        fenced ^= bool(_FENCE.match(line))
        match = None if fenced else _HEADING.match(line)
        if match and len(match.group(1)) >= 2:
            sections.append((match.group(2), [line]))
        else:
            sections[-1][1].append(line)
    free: list[str] = []  # body text that is neither a question nor the goal
    for title, lines in sections:
        if title is None:
            free.extend(lines)
            continue
        body = clean_value(without_comments("\n".join(lines[1:])))
        if re.fullmatch(r"(next )?goal|目标|下一目标", words(title)):
            if body is not None and not draft.values.get("goal"):
                draft.values["goal"] = body
            continue
        attr = question_key(title)
        if attr is None:
            if body is not None:
                free.extend(lines)
            continue
        if body is not None or attr not in draft.questions:
            draft.questions[attr] = body
    goal = draft.values.get("goal")
    if not goal or looks_like_template_a(fm.body):
        _fields_from_body(draft, fm, "\n".join(free))
    elif (rest := _rest_of_goal(free)) is not None:
        # What a person or an agent writes below a one-line goal is its detail: the report,
        # its traceback, its code (a plan that read only the goal line missed them).
        draft.values["goal"] = f"{goal}\n\n{rest}"


def _rest_of_goal(lines: list[str]) -> str | None:
    """The body text beside the goal without comments, rules and a leading `# title` (a
    template's), or None when nothing else is left; code blocks stay whole."""
    kept: list[str] = []
    fenced = False
    for line in without_comments("\n".join(lines)).split("\n"):
        fenced ^= bool(_FENCE.match(line))
        if fenced or _FENCE.match(line):
            kept.append(line)
        elif _RULE.match(line) or (_TITLE.match(line) and not any(k.strip() for k in kept)):
            continue
        else:
            kept.append(line)
    return clean_value("\n".join(kept))


def _fields_from_body(draft: Draft, fm: FrontMatter, free: str) -> None:
    """Read the body as Template A or free-form: its fields fill what the front matter left
    empty (notes apps add front matter; an agent may put a Template A body under a goal)."""
    if looks_like_template_a(fm.body):
        other = parse_template_a(fm.body, first_line=fm.body_first_line)
    else:
        text = without_comments(free)
        if not any(line.strip() and not _TITLE.match(line) for line in text.split("\n")):
            return  # only a `# title` and comments: there is no goal to find
        other = parse_freeform(text)
    for key, value in other.values.items():
        if value is not None and draft.values.get(key) is None:
            draft.values[key] = value
            if key in other.lines:
                draft.lines.setdefault(key, other.lines[key])
    draft.cycle = other.cycle if draft.cycle is None else draft.cycle
    draft.blockers = draft.blockers or other.blockers
    draft.artifacts = draft.artifacts or other.artifacts
    draft.artifact_notes.extend(other.artifact_notes)
    draft.requested_sections = draft.requested_sections or other.requested_sections
    for key, question in other.questions.items():
        if draft.questions.get(key) is None:
            draft.questions[key] = question
    draft.unknown_fields.extend(other.unknown_fields)
    draft.warnings.extend(other.warnings)


__all__ = ["ALIASES", "parse_front_matter", "snake_case"]
