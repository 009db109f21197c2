"""What the three request forms share: field names, empty values, lists, cycle numbers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nexusd.errors import ProtocolError
from nexusd.protocol.documents import PlanRequest, Questions, RequestForm
from nexusd.protocol.inline import inline_code

# Values that mean "nothing here" in every form (compared lower-cased, stripped).
NONE_WORDS = frozenset({"", "none", "n/a", "na", "-", "--", "—", "–", "null", "nil", "~", "无"})

STRING_FIELDS = (
    "project",
    "previous_goal",
    "previous_outcome",
    "goal",
    "history_path",
    "time_box",
    "scratchpad_delta",
    "tools_file",
    "adr_link",
)
# Blockers split on semicolons, artifacts on commas too (ASCII and full-width forms).
BLOCKER_SEPARATORS = ";；"
ARTIFACT_SEPARATORS = ",;，；、"
QUESTION_KEYS = ("analysis", "plan", "blocker_solutions", "best_practices", "tools")

# Which question a heading or label asks, by words; checked in this order.
_QUESTION_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"blocker|障碍|阻碍|阻塞"), "blocker_solutions"),
    (re.compile(r"practice|mental model|最佳实践|实践|心智模型"), "best_practices"),
    (re.compile(r"tool|\bmcp\b|工具"), "tools"),
    (re.compile(r"analy|justif|分析|论证"), "analysis"),
    (re.compile(r"\bplan\b|计划|规划"), "plan"),
)

# How much of a value (or key) a message echoes: an error response quotes what was wrong,
# not a 70 000-character value whole.
MAX_SHOWN = 80

_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_CYCLE = re.compile(r"(?:cycle|周期)?\s*[#№]?\s*(\d+)", re.IGNORECASE)


def words(label: str) -> str:
    """Lower-cased label words: parenthesised parts, `_`, `-` and punctuation removed."""
    previous = None
    while previous != label:
        previous = label
        label = re.sub(r"[(（][^()（）]*[)）]", " ", label)
    label = re.sub(r"\{[^{}]*\}", " ", label)  # `{n}` placeholders of an unfilled template
    label = re.sub(r"[_\-/&:：,.]+", " ", label.lower())
    return " ".join(label.split())


def question_key(label: str) -> str | None:
    """The Questions attribute a heading or label names (`## Blocker Solutions` -> ...)."""
    text = words(label)
    for pattern, key in _QUESTION_WORDS:
        if pattern.search(text):
            return key
    return None


def shown(text: str, limit: int = MAX_SHOWN) -> str:
    """`text` for a message: cut to `limit` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clean_value(value: str | None) -> str | None:
    """Stripped text, or None for empty and `none`-like values."""
    if value is None:
        return None
    text = value.strip()
    return None if text.lower() in NONE_WORDS else text


def split_items(value: str | None, separators: str) -> tuple[str, ...]:
    """Split on newlines and any of `separators`; bullets and backticks removed, empties dropped."""
    if clean_value(value) is None:
        return ()
    assert value is not None
    pieces = re.split("[\n" + re.escape(separators) + "]", value)
    items = []
    for piece in pieces:
        item = clean_value(_BULLET.sub("", piece).strip().strip("`").strip())
        if item is not None:
            items.append(item)
    return tuple(items)


def to_cycle(value: object, *, line: int | None = None) -> int | None:
    """A cycle number from `3`, `#3`, `Cycle 3`; ProtocolError for anything else."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str):
        if clean_value(value) is None:
            return None
        match = _CYCLE.fullmatch(value.strip())
        if match:
            return int(match.group(1))
    raise ProtocolError(
        f"the cycle must be a whole number, got {shown(repr(value))}",
        hint="write the cycle number in digits, e.g. `3`, or leave it empty",
        line=line,
        field="cycle",
    )


@dataclass
class Draft:
    """Mutable collector a form parser fills; `build` turns it into the frozen PlanRequest."""

    form: RequestForm
    values: dict[str, str | None] = field(default_factory=dict)
    cycle: int | None = None
    blockers: tuple[str, ...] = ()
    artifacts: tuple[str, ...] = ()
    questions: dict[str, str | None] = field(default_factory=dict)
    requested_sections: list[str] = field(default_factory=list)
    artifact_notes: list[tuple[str, str]] = field(default_factory=list)
    unknown_fields: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # 1-based line where each field was given, to point error responses at it.
    lines: dict[str, int] = field(default_factory=dict)

    def unknown(self, name: str, line: int | None) -> None:
        """Keep an unknown field's name and warn about it."""
        self.unknown_fields.append(name)
        where = f" (line {line})" if line is not None else ""
        self.warnings.append(
            f"unknown field {inline_code(shown(name))}{where} was kept but not used"
        )

    def build(self, path: str, sha256: str) -> PlanRequest:
        """The PlanRequest; the caller has checked that a goal is present."""
        goal = self.values.get("goal") or ""
        return PlanRequest(
            path=path,
            sha256=sha256,
            form=self.form,
            goal=goal,
            cycle=self.cycle,
            project=self.values.get("project"),
            previous_goal=self.values.get("previous_goal"),
            previous_outcome=self.values.get("previous_outcome"),
            blockers=self.blockers,
            history_path=self.values.get("history_path"),
            time_box=self.values.get("time_box"),
            artifacts=self.artifacts,
            scratchpad_delta=self.values.get("scratchpad_delta"),
            tools_file=self.values.get("tools_file"),
            adr_link=self.values.get("adr_link"),
            questions=Questions(**{k: self.questions.get(k) for k in QUESTION_KEYS}),
            requested_sections=tuple(dict.fromkeys(self.requested_sections)),
            artifact_notes=tuple(self.artifact_notes),
            unknown_fields=tuple(self.unknown_fields),
            warnings=_capped(self.warnings),
        )


MAX_WARNINGS = 20


def _capped(warnings: list[str]) -> tuple[str, ...]:
    # A request with thousands of unknown keys must not produce a response of warnings.
    if len(warnings) <= MAX_WARNINGS:
        return tuple(warnings)
    rest = len(warnings) - (MAX_WARNINGS - 1)
    return (*warnings[: MAX_WARNINGS - 1], f"… and {rest} more warnings like these")
