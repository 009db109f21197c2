"""Writing a response file without losing a word that someone else wrote there.

A response can be at the path when an answer is written: the request was edited and is
answered again, `nexusd plan --force` was run, a setup error is answered once fixed. Only
nexusd's own text, unchanged, may be replaced: each response carries its seal
(`nexusd.protocol.seal`), and anything else at the path (a response a person changed, a
file nexusd did not write) is moved beside it as `<stem>_plan_response.edited-<ts>.md`
and named in the new response's warnings.

Race-safe: the file at the path is renamed aside first and checked after, so an edit saved
meanwhile is in what is checked; the new response is then linked into place, which
never replaces a file a person saved in the instant between (that one is set aside too).
A file that proves to be nexusd's own, unchanged, is deleted once it is aside.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from nexusd.atomic import link_into_place, staged_file
from nexusd.protocol.naming import kept_response_name
from nexusd.protocol.reading import read_regular_file
from nexusd.protocol.seal import SealState, seal_response, seal_state

# A response nexusd writes is far smaller; a bigger file is not read to be hashed, it is kept.
MAX_SEALED_BYTES = 16 * 1_048_576
# Files set aside in one write before giving up: something keeps putting files at the path.
MAX_SET_ASIDE = 16


@dataclass(frozen=True)
class KeptFile:
    """A file found at a response path that nexusd did not write as it is, kept beside it."""

    response: Path  # the response path it was at
    path: Path  # where it is now
    edited: bool  # True: a response nexusd wrote, changed since; False: not sealed by nexusd

    def note(self) -> str:
        """What the new response's warnings, the daemon log and the CLI say about it."""
        if self.edited:
            return (
                f"{self.response.name} had been changed since nexusd wrote it; that version"
                f" is kept as {self.path.name}"
            )
        return (
            f"{self.response.name} was not written by nexusd as it was (someone else wrote"
            f" or edited it, or an older nexusd that did not seal its responses did); it is"
            f" kept as {self.path.name} (delete it if it holds nothing of yours)"
        )


TextFor = Callable[[tuple[KeptFile, ...]], str]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _seal_of(path: Path) -> SealState | None:
    """The seal state of the file at `path`; None when nothing is there. A link, FIFO or
    folder is never read (nor is a file too big to be a response): `unsealed`."""
    try:
        data = read_regular_file(path, MAX_SEALED_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError:
        return "unsealed" if os.path.lexists(path) else None
    return seal_state(data) if len(data) <= MAX_SEALED_BYTES else "unsealed"


def _free_name(response: Path, now: Callable[[], datetime]) -> Path:
    """A kept name, reserved (created empty, O_EXCL): a rename onto it replaces only this
    placeholder, never a file another writer kept there in the same second."""
    moment = now()
    n = 1
    while True:
        target = response.with_name(kept_response_name(response, moment, n))
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            n += 1
            continue
        os.close(fd)
        return target


def _planned(response: Path, now: Callable[[], datetime]) -> KeptFile | None:
    """What setting aside the file now at `response` would keep (None: nothing to keep)."""
    state = _seal_of(response)
    if state is None or state == "intact":
        return None
    return KeptFile(response, _free_name(response, now), edited=state == "edited")


def _set_aside(response: Path, target: Path, old: list[Path]) -> KeptFile | None:
    """Move what is at `response` to the reserved `target`; None when nothing was there or
    it proved to be nexusd's own unchanged text (then listed in `old`: it is deleted only
    once the new response is in place, and put back if that fails)."""
    try:
        # Renamed first, checked after: an edit saved before the rename is in what is checked,
        # one saved after it makes a new file at `response`, which the link will not replace.
        response.rename(target)
    except FileNotFoundError:
        target.unlink(missing_ok=True)  # the placeholder
        return None
    state = _seal_of(target)
    if state is None:
        return None  # deleted the instant it was set aside
    if state == "intact":
        old.append(target)
        return None
    return KeptFile(response, target, edited=state == "edited")


def _put_back(path: Path, aside: Path) -> bool:
    """Give `aside` its old name back unless something is there now (never replaces)."""
    try:
        os.link(aside, path, follow_symlinks=False)
    except OSError:
        return False
    aside.unlink(missing_ok=True)
    return True


def write_response(
    path: Path, text_for: TextFor, *, mode: int, now: Callable[[], datetime] = _utc_now
) -> tuple[KeptFile, ...]:
    """Write the response `text_for(kept)` at `path`, sealed; return the files kept beside it.

    `text_for` is given the files set aside (their notes belong in the response's warnings)
    and may be asked again when a file appears at `path` while the response is written.
    Raises OSError when the response cannot be written (what was at `path` is kept then too).
    """
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            raise IsADirectoryError(errno.EISDIR, "a folder is at the response path", str(path))
    except FileNotFoundError:
        pass
    writer = _Writer(path, text_for, mode, now)
    kept, old = writer.kept, writer.old
    try:
        done = writer.write()
    except OSError as exc:
        # Nothing new is in place: what was set aside last goes back to its name, so a
        # failed write never leaves the request without its response.
        if old and not os.path.lexists(path):
            _put_back(path, old.pop())
        elif kept and not os.path.lexists(path) and _put_back(path, kept[-1].path):
            kept.pop()
        for aside in old:
            aside.unlink(missing_ok=True)
        if not kept:
            raise
        # The response could not be written, but what was there is safe: say where it went.
        names = ", ".join(k.path.name for k in kept)
        raise OSError(exc.errno, f"{exc.strerror or exc}; kept {names}", str(path)) from exc
    for aside in old:
        aside.unlink(missing_ok=True)  # nexusd's own unchanged text: the new one is in place
    return done


@dataclass
class _Writer:
    """One write_response: `kept` collects what is set aside (also when it raises), `old`
    nexusd's own unchanged responses set aside, deleted once the new one is in place."""

    path: Path
    text_for: TextFor
    mode: int
    now: Callable[[], datetime]
    kept: list[KeptFile] = field(default_factory=list)
    old: list[Path] = field(default_factory=list)

    def write(self) -> tuple[KeptFile, ...]:
        """Write the response; the files kept beside it."""
        # Predicted before the response is written, so that its warnings name the file kept.
        planned = _planned(self.path, self.now)
        try:
            return self._attempts(planned)
        finally:
            if planned is not None and not any(k.path == planned.path for k in self.kept):
                with contextlib.suppress(OSError):
                    if planned.path.lstat().st_size == 0:
                        planned.path.unlink()  # its placeholder, never used

    def _attempts(self, planned: KeptFile | None) -> tuple[KeptFile, ...]:
        path, kept = self.path, self.kept
        for _ in range(MAX_SET_ASIDE):
            promised = (*kept, planned) if planned is not None else tuple(kept)
            text = seal_response(self.text_for(promised)).encode("utf-8")
            staged = staged_file(path, text, mode=self.mode)
            try:
                for _ in range(MAX_SET_ASIDE):
                    if planned is None and link_into_place(staged, path):
                        return promised
                    target = planned.path if planned is not None else _free_name(path, self.now)
                    planned = None
                    moved = _set_aside(path, target, self.old)
                    if moved is not None:
                        kept.append(moved)
                    if tuple(kept) != promised:
                        break  # not what the staged response says: it is written again
            finally:
                staged.unlink(missing_ok=True)
        raise OSError(errno.EAGAIN, "files kept appearing at the response path", str(path))
