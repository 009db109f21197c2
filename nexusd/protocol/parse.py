"""Plan requests in any of the three forms -> one PlanRequest, or a ProtocolError with the fix."""

from __future__ import annotations

import hashlib

from nexusd.errors import ProtocolError
from nexusd.protocol.documents import PlanRequest
from nexusd.protocol.fields import Draft
from nexusd.protocol.freeform import parse_freeform
from nexusd.protocol.frontmatter_form import parse_front_matter
from nexusd.protocol.template_a import looks_like_template_a, parse_template_a
from nexusd.protocol.yamlio import normalize_text, split_front_matter

DEFAULT_MAX_BYTES = 1_048_576

_GOAL_HINTS = {
    "frontmatter": "add a `goal: <what this cycle must achieve>` line to the front matter",
    "template_a": "fill in the `[🎯 NEXT GOAL (Cycle n)]` line of the CYCLE CONTEXT section",
    "freeform": "write what the planner should plan for as plain text",
}


def parse_request(
    data: bytes | str, path: str, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> PlanRequest:
    """Parse a request file's content (any form); sha256 is over the raw bytes."""
    # `surrogatepass`: a str with lone surrogates becomes bytes that fail UTF-8 decoding below.
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    sha256 = hashlib.sha256(raw).hexdigest()
    text = decode_request(raw, max_bytes=max_bytes)
    draft = parse_text(text)
    if not draft.values.get("goal"):
        raise ProtocolError(
            "the request has no goal",
            hint=_GOAL_HINTS[draft.form],
            line=draft.lines.get("goal"),
            field="goal",
        )
    return draft.build(path, sha256)


def decode_request(raw: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """Check size and encoding; the text with BOM, CRLF and trailing spaces normalised."""
    if len(raw) > max_bytes:
        raise ProtocolError(
            f"the request is {_size(len(raw))}, over the {_size(max_bytes)} limit",
            hint=(
                "keep requests short: list large material as artifacts instead of pasting it,"
                " or raise `watch.max_request_bytes` in .nexus/config.yaml"
            ),
        )
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ProtocolError("the request is UTF-16 encoded", hint="save the file as UTF-8", line=1)
    if b"\x00" in raw:
        raise ProtocolError(
            "the request is binary (it contains NUL bytes), not markdown text",
            hint="write the request as UTF-8 markdown text; refer to binary files as artifacts",
            line=raw[: raw.index(b"\x00")].count(b"\n") + 1,
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(
            f"the request is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
            hint="save the file with UTF-8 encoding (most editors: 'Save with Encoding' -> UTF-8)",
            line=raw[: exc.start].count(b"\n") + 1,
        ) from exc
    text = "\n".join(line.rstrip() for line in normalize_text(text).split("\n"))
    if not text.strip():
        raise ProtocolError(
            "the request is empty",
            hint="write a goal in it, or run `nexusd request new --goal TEXT`",
        )
    return text


def detect_form(text: str) -> str:
    """`frontmatter`, `template_a` or `freeform` for normalised request text.

    A first line `---` opens front matter, unless the block it opens holds
    Template A labels (Template A copies often start with a `---` rule).
    """
    if text.split("\n", 1)[0] == "---":
        try:
            split = split_front_matter(text)
        except ValueError:
            split = None
        block = text if split is None else split.yaml_text
        return "template_a" if looks_like_template_a(block) else "frontmatter"
    return "template_a" if looks_like_template_a(text) else "freeform"


def parse_text(text: str) -> Draft:
    """Dispatch normalised text to its form's parser (no goal check)."""
    form = detect_form(text)
    if form == "frontmatter":
        try:
            split = split_front_matter(text)
        except ValueError as exc:
            raise ProtocolError(
                "the front matter opened with `---` on line 1 is never closed",
                hint="add a `---` line after the last field, or remove the first `---` line",
                line=1,
            ) from exc
        assert split is not None
        return parse_front_matter(split)
    if form == "template_a":
        return parse_template_a(text)
    return parse_freeform(text)


def _size(count: int) -> str:
    if count >= 1_048_576:
        return f"{count / 1_048_576:.1f} MiB"
    if count >= 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count} bytes"
