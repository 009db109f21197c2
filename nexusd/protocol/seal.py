"""The seal on a response file: what nexusd wrote, so that text someone added is never lost.

A response file is written with one more front matter line, `response_sha256: <hex>`: the
SHA-256 of the file's text without that line (line endings read as LF). A file whose text
still matches its seal is nexusd's own, unchanged, and may be replaced by a new answer;
any other file at a response path (edited since, or never sealed) may hold a person's
text, and is kept (PROTOCOL.md, "Idempotency and revisions").

Pure functions on text; nothing here touches the file system.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal

from nexusd.protocol.yamlio import dump_yaml, normalize_text

SEAL_KEY = "response_sha256"
_SEAL_LINE = re.compile(rf"^{SEAL_KEY}: '?(?P<hex>[0-9a-f]{{64}})'?\n", re.MULTILINE)
_OPENING = "---\n"
_CLOSING = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)

SealState = Literal["intact", "edited", "unsealed"]


def _digest(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def _front_matter_end(text: str) -> int | None:
    """Where the closing line of the front matter starts (None: no front matter)."""
    if not text.startswith(_OPENING):
        return None
    closing = _CLOSING.search(text, len(_OPENING))
    return None if closing is None else closing.start()


def seal_response(text: str) -> str:
    """`text` (a rendered response) with its seal as the last line of its front matter."""
    end = _front_matter_end(text)
    if end is None:
        raise ValueError("a response opens with its front matter")
    # The digest is of the text without the line, so the check removes it and hashes again.
    # Dumped like the other keys (quoted only if 64 hex digits happen to read as a number).
    return f"{text[:end]}{dump_yaml({SEAL_KEY: _digest(text)})}{text[end:]}"


def seal_state(data: bytes) -> SealState:
    """`intact` when `data` is a sealed response exactly as nexusd wrote it; `edited` when it
    carries a seal its text no longer matches; `unsealed` when it carries none."""
    try:
        text = normalize_text(data.decode("utf-8"))
    except UnicodeDecodeError:
        return "unsealed" if SEAL_KEY.encode() not in data else "edited"
    end = _front_matter_end(text)
    seal = _SEAL_LINE.search(text, 0, end) if end is not None else None
    if seal is None:
        return "unsealed"
    rest = text[: seal.start()] + text[seal.end() :]
    return "intact" if _digest(rest) == seal.group("hex") else "edited"


__all__ = ["SEAL_KEY", "SealState", "seal_response", "seal_state"]
