"""The listings of the tracked files a snapshot reads as they are on disk (`convert`).

Those changed since the index recorded them (`git add` reads them again) and those a
checkout writes converted by attribute: each a git process started before `git add`,
reading a hard link to the private index as it was then, so they run beside `ls-files -o`
and `add` instead of after them.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

from nexusd.checkpoint.convert import Plan
from nexusd.git import git_failure, split_z, start_git
from nexusd.paths import RepoLayout

# Tracked files whose stat no longer matches the index: those `git add` reads again, a
# CRLF-only edit included (which `add` leaves unreported, its cleaned blob being the same).
_CHANGED = ("diff-files", "-z", "--name-only", "--diff-filter=MT")
# Files a checkout writes converted, by attribute.
_SMUDGED = ("ls-files", "-z", "--", ":(attr:eol=crlf)", ":(attr:ident)")


class Listings:
    """The listings of the tracked files a snapshot reads as they are: those changed since
    the index recorded them, and those a checkout converts. They read a hard link to the
    private index as it was before `git add` (which replaces the file; the link keeps the
    one it had), so they run beside `ls-files -o` and `add` instead of after them."""

    def __init__(self, layout: RepoLayout, env: Mapping[str, str]) -> None:
        self.layout = layout
        self.index = Path(env["GIT_INDEX_FILE"])
        self.link = self.index.with_name(self.index.name + ".before-add")
        self.started: dict[tuple[str, ...], subprocess.Popen[bytes]] = {}

    def start(self, how: Plan) -> None:
        """Start the listings `how` needs that are not running yet (before `git add`)."""
        for args in _wanted(how):
            if args not in self.started:
                if not self.link.exists():
                    self._link()
                env = {"GIT_INDEX_FILE": str(self.link)}
                self.started[args] = start_git(self.layout.root, *args, env=env)

    def _link(self) -> None:
        try:
            os.link(self.index, self.link)
        except FileNotFoundError:
            pass  # no index yet: the link's missing file reads as an empty one, as it should
        except OSError:
            # A file system without hard links: a copy, its time kept for git's racy checks.
            self.link.write_bytes(self.index.read_bytes())
            st = self.index.stat()
            os.utime(self.link, ns=(st.st_atime_ns, st.st_mtime_ns))

    def paths(self, how: Plan) -> list[str]:
        """The paths the listings `how` needs found (started by `start`)."""
        found: list[str] = []
        for args in _wanted(how):
            proc = self.started[args]
            out, err = proc.communicate()
            if proc.returncode != 0:
                done = subprocess.CompletedProcess(args, proc.returncode, out, err)
                raise git_failure(self.layout.root, args, done)
            found += split_z(out)
        return found

    def close(self) -> None:
        """Wait for every listing started and remove the link."""
        for proc in self.started.values():
            proc.communicate()
        self.link.unlink(missing_ok=True)


def _wanted(how: Plan) -> list[tuple[str, ...]]:
    return [
        args for args, want in ((_CHANGED, how.clean), (_SMUDGED, how.smudge == "some")) if want
    ]


@contextlib.contextmanager
def listings_later(layout: RepoLayout, env: Mapping[str, str]) -> Iterator[Listings]:
    """Yield the Listings of the private index `env` names; all of them ended on exit."""
    listings = Listings(layout, env)
    try:
        yield listings
    finally:
        listings.close()
