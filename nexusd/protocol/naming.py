"""File names of the protocol: which files are requests, their responses, their timestamps.

Pure functions on names; nothing here touches the file system except
`new_request_name`, which may look at a folder to avoid a name that is taken.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from nexusd.errors import ProtocolError

REQUEST_SUFFIX = "plan_request.md"
RESPONSE_SUFFIX = "plan_response.md"
# The separator before the suffix: `<ts>_plan_request.md` (canonical) or `<ts>-plan_request.md`.
SEPARATORS = ("_", "-")
# The longest file name (in bytes) of the file systems nexusd writes to (ext4, xfs, btrfs…).
NAME_MAX = 255
# Between a response's name and the time it was set aside: `<stem>_plan_response.edited-<ts>.md`.
KEPT_MARK = ".edited-"
_KEPT_INFIX = f"{RESPONSE_SUFFIX.removesuffix('.md')}{KEPT_MARK}"  # `plan_response.edited-`

# Names editors and tools use for partial or backup files; never requests.
_TEMP_PATTERNS = re.compile(
    r"""^(?:\.|\#|~\$)            # hidden, emacs lock/autosave, office lock
    | (?:~|\.tmp|\.swp|\.swx|\.swo|\.bak|\.orig|\.part|\.crdownload|\#)$
    | ^\d+$                       # vim's `4913` write probe
    """,
    re.VERBOSE,
)

_ZONE = r"(?P<zone>Z|z|[+-]\d{2}(?::?\d{2})?)?"
_TIMESTAMP_PATTERNS: tuple[re.Pattern[str], ...] = (
    # 2025-04-20T08_11_37, 2025-04-20T08:11:37Z, 2025-04-20 08-11-37+02:00, ...
    re.compile(
        r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[T_ t]"
        r"(?P<h>\d{2})(?P<sep>[:_.-])(?P<mi>\d{2})(?P=sep)(?P<s>\d{2})"
        r"(?:[.,](?P<frac>\d{1,9}))?" + _ZONE + r"(?=$|[^\d])"
    ),
    # 20250420T081137, 20250420T081137Z, 20250420_081137
    re.compile(
        r"(?P<y>\d{4})(?P<mo>\d{2})(?P<d>\d{2})[Tt_-]?(?P<h>\d{2})(?P<mi>\d{2})(?P<s>\d{2})"
        r"(?:[.,](?P<frac>\d{1,9}))?" + _ZONE + r"(?=$|[^\d])"
    ),
)
_EPOCH = re.compile(r"(?P<int>\d{9,13})(?:\.(?P<frac>\d{1,9}))?(?=$|[^\d])")


def is_request_file(path: Path | str) -> bool:
    """True for `<stem>_plan_request.md` (or `<stem>-plan_request.md`), never a temp file."""
    name = Path(path).name
    if _TEMP_PATTERNS.search(name):
        return False
    return _split(name, REQUEST_SUFFIX) is not None


def is_response_file(path: Path | str) -> bool:
    """True when the name is `<stem>_plan_response.md` (or `-plan_response.md`), not hidden."""
    name = Path(path).name
    if _TEMP_PATTERNS.search(name):
        return False
    return _split(name, RESPONSE_SUFFIX) is not None


def response_path_for(request: Path) -> Path:
    """`<stem>_plan_request.md` -> `<stem>_plan_response.md` in the same folder."""
    parts = _split(request.name, REQUEST_SUFFIX)
    if parts is None:
        raise ValueError(f"{request.name} is not a plan request name (*_{REQUEST_SUFFIX})")
    stem, sep = parts
    return request.with_name(f"{stem}{sep}{RESPONSE_SUFFIX}")


def kept_response_name(response: Path, moment: datetime, n: int = 1) -> str:
    """`<stem>_plan_response.edited-<UTC timestamp>.md`: where a changed response is kept.

    A new answer takes the response's place; what someone changed in the old one is kept
    under this name (`…-<n>.md` for n > 1). It is never a request or a response name, so
    no watcher, librarian or client takes it for one. The stem is shortened (ending in
    `~`) when the name would not fit in NAME_MAX bytes.
    """
    parts = _split(response.name, RESPONSE_SUFFIX)
    if parts is None:
        raise ValueError(f"{response.name} is not a plan response name (*_{RESPONSE_SUFFIX})")
    stem, sep = parts
    tail = f"{sep}{_KEPT_INFIX}{format_timestamp(moment)}"
    tail += f"-{n}.md" if n > 1 else ".md"
    room = NAME_MAX - len(os.fsencode(tail))
    raw = stem.encode("utf-8", "surrogateescape")
    if len(raw) > room:
        # Cut on a whole UTF-8 character (a response's name is UTF-8: see unanswerable_name).
        return raw[: room - 1].decode("utf-8", "ignore") + "~" + tail
    return stem + tail


def is_kept_response(name: str) -> bool:
    """Whether `name` is a response kept aside (`kept_response_name`): a plan file, though
    neither a request nor a response."""
    return name.endswith(".md") and _KEPT_INFIX in name


def unanswerable_name(request: Path) -> ProtocolError | None:
    """Why no response can be written for the request named like `request` (None: one can).

    A name that is not UTF-8 could not be named faithfully in the response's `request_file`;
    a response name longer than NAME_MAX bytes cannot be created at all.
    """
    name = request.name
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return ProtocolError(
            f"{_escaped(shown)} is not a UTF-8 file name: its response could not name it",
            hint="rename the request to a UTF-8 name; nexusd answers it then",
        )
    response = response_path_for(request).name
    size = len(os.fsencode(response))
    if size <= NAME_MAX:
        return None
    longest = NAME_MAX - (size - len(os.fsencode(name)))
    return ProtocolError(
        f"{_escaped(name[:40])}… is too long a name to answer: its response's name would be {size}"
        f" bytes, and a file name holds at most {NAME_MAX}",
        hint=f"rename the request to a name of at most {longest} bytes (UTF-8), for example"
        " by shortening the text after its timestamp; nexusd answers it then",
    )


def _escaped(name: str) -> str:
    """`name` with control characters escaped (`\\n`, `\\x1b`): it goes to logs and status."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def request_path_for(response: Path) -> Path:
    """`<stem>_plan_response.md` -> `<stem>_plan_request.md` in the same folder."""
    parts = _split(response.name, RESPONSE_SUFFIX)
    if parts is None:
        raise ValueError(f"{response.name} is not a plan response name (*_{RESPONSE_SUFFIX})")
    stem, sep = parts
    return response.with_name(f"{stem}{sep}{REQUEST_SUFFIX}")


def request_timestamp(name: str) -> datetime | None:
    """The timestamp a request or response name starts with, timezone-aware (zone-less = UTC)."""
    stem = name.rsplit("/", 1)[-1]
    for suffix in (REQUEST_SUFFIX, RESPONSE_SUFFIX):
        parts = _split(stem, suffix)
        if parts is not None:
            stem = parts[0]
            break
    for pattern in _TIMESTAMP_PATTERNS:
        match = pattern.match(stem)
        if match:
            return _from_fields(match)
    match = _EPOCH.match(stem)
    if match:
        return _from_epoch(match)
    return None


def format_timestamp(moment: datetime) -> str:
    """The canonical file-name timestamp `YYYY-MM-DDTHH_MM_SS` (aware times in UTC)."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H_%M_%S")


def new_request_name(now: datetime, folder: Path | None = None) -> str:
    """Canonical `YYYY-MM-DDTHH_MM_SS_plan_request.md`; `_2`, `_3`… when `folder` has it."""
    base = format_timestamp(now)
    candidate = f"{base}_{REQUEST_SUFFIX}"
    if folder is None:
        return candidate
    n = 1
    while _taken(folder, candidate):
        n += 1
        candidate = f"{base}_{n}_{REQUEST_SUFFIX}"
    return candidate


def _taken(folder: Path, name: str) -> bool:
    request = folder / name
    return request.exists() or response_path_for(request).exists()


def _split(name: str, suffix: str) -> tuple[str, str] | None:
    """(stem, separator) of `<stem><sep><suffix>`, or None; the stem is never empty."""
    if not name.endswith(suffix) or name.startswith("."):
        return None
    head = name[: -len(suffix)]
    if len(head) < 2 or head[-1] not in SEPARATORS:
        return None
    return head[:-1], head[-1]


def _from_fields(match: re.Match[str]) -> datetime | None:
    frac = (match.group("frac") or "0")[:6].ljust(6, "0")
    try:
        moment = datetime(
            int(match.group("y")),
            int(match.group("mo")),
            int(match.group("d")),
            int(match.group("h")),
            int(match.group("mi")),
            int(match.group("s")),
            int(frac),
        )
    except ValueError:
        return None
    zone = _zone(match.group("zone"))
    if zone is None:
        return None
    moment = moment.replace(tzinfo=zone)
    try:
        # Year 1 east of UTC or year 9999 west of it is no instant a datetime can hold in
        # UTC: such a name has no usable timestamp, and must not break whoever orders by it.
        moment.astimezone(UTC)
    except OverflowError:
        return None
    return moment


def _zone(text: str | None) -> timezone | None:
    if not text or text in "Zz":
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    if hours > 23 or minutes > 59:
        return None
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def _from_epoch(match: re.Match[str]) -> datetime | None:
    whole = match.group("int")
    frac = match.group("frac") or ""
    seconds = float(f"{whole}.{frac}") if frac else float(whole)
    if len(whole) >= 12:  # milliseconds
        seconds /= 1000.0
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
