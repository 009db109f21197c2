"""Which daemon handles a hook event: the one serving the worktree the event came from.

Hooks are shared by every worktree of a repository and queue into one inbox; each daemon
serves one working tree, so each takes only its own tree's events and leaves the rest for
their daemon. Events of a worktree that was removed are dropped by the main checkout's.
"""

from __future__ import annotations

from pathlib import Path

from nexusd.paths import RepoLayout


class EventOwner:
    """Decides, for one daemon's working tree, which events are its to handle."""

    def __init__(self, layout: RepoLayout) -> None:
        self.layout = layout
        self.root = layout.root.resolve()
        self._gone: dict[str, bool] = {}

    def is_own(self, worktree: str | None) -> bool:
        """True when an event from `worktree` came from this daemon's own working tree."""
        if not worktree:
            # Hooks older than per-worktree daemons wrote no worktree: the main checkout's.
            return not self.layout.is_linked_worktree
        return Path(worktree).resolve() == self.root

    def owns(self, worktree: str | None) -> bool:
        """True when this daemon handles (or, for a removed worktree, drops) such an event."""
        if self.is_own(worktree):
            return True
        return bool(worktree) and not self.layout.is_linked_worktree and self.gone(str(worktree))

    def gone(self, worktree: str) -> bool:
        """True when `worktree` is no longer a working tree of this repository."""
        if worktree not in self._gone:
            from nexusd.paths import find_repo

            try:
                other = find_repo(Path(worktree))
                alive = (
                    other.root.resolve() == Path(worktree).resolve()
                    and other.git_common_dir.resolve() == self.layout.git_common_dir.resolve()
                )
            except Exception:
                alive = False
            self._gone[worktree] = not alive
        return self._gone[worktree]
