"""Folders and files made under the git directory follow `core.sharedRepository`, as git's do.

In a repository shared by a group (`git init --shared`), git makes every folder it adds
group-writable and set-group-id, and every file group-readable (and writable when the
owner may write it). The checkpoint code's own (`<git-dir>/nexus/`, its `tmp/` folder, the
restore lock) made with the umask alone would let no other member of the group take a
checkpoint or restore one after the first user did. The rules are git's `adjust_shared_perm`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from nexusd.checkpoint.convert import parse_settings
from nexusd.git import try_git
from nexusd.paths import RepoLayout

PERM_GROUP = 0o660
PERM_EVERYBODY = 0o664
_NAMES = {
    "umask": 0,
    "group": PERM_GROUP,
    "all": PERM_EVERYBODY,
    "world": PERM_EVERYBODY,
    "everybody": PERM_EVERYBODY,
}


def parse_shared(value: str | None) -> int:
    """git's `git_config_perm`: 0 for the umask, PERM_GROUP / PERM_EVERYBODY for the bits to
    add, or minus the exact mode (`0640` → -0o640) that files are given."""
    if value is None:
        return PERM_GROUP  # a key with no value is `true`
    value = value.strip()
    if value.lower() in _NAMES:
        return _NAMES[value.lower()]
    try:
        number = int(value, 8)
    except ValueError:
        truthy = value.lower() in ("true", "yes", "on")
        return PERM_GROUP if truthy else 0
    if number in (0, 1, 2):
        return (0, PERM_GROUP, PERM_EVERYBODY)[number]
    if number & 0o600 != 0o600:
        return 0  # git refuses such a repository; leave the umask's modes
    return -(number & 0o666)


def shared_perm(layout: RepoLayout) -> int:
    """The repository's `core.sharedRepository`, parsed (0 when not shared)."""
    try:
        text = (layout.git_common_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    # Most repositories are not shared: reading the file spares them a git process (the
    # same test as the fast paths' in `objects`).
    if "sharedrepository" not in text.lower():
        return 0
    out = try_git(layout.root, "config", "-z", "--get-regexp", r"^core\.sharedrepository$")
    settings = parse_settings(out or b"")  # the last setting wins
    if "core.sharedrepository" not in settings:
        return 0
    return parse_shared(settings["core.sharedrepository"])


def shared_mode(mode: int, perm: int, *, is_dir: bool) -> int:
    """The mode git's `adjust_shared_perm` gives a file or folder of `mode` (0o7777 bits)."""
    if not perm:
        return mode
    tweak = -perm if perm < 0 else perm
    if not mode & stat.S_IWUSR:
        tweak &= ~0o222
    if mode & stat.S_IXUSR:
        tweak |= (tweak & 0o444) >> 2  # a folder (or an executable) is searchable where readable
    new = (mode & ~0o777) | tweak if perm < 0 else mode | tweak
    if is_dir:
        # Set-group-id: what is made inside belongs to the repository's group, not the maker's.
        new |= (new & 0o444) >> 2 | stat.S_ISGID
    return new


def adjust(path: Path, perm: int) -> None:
    """Give `path` the shared mode; one made by another user is theirs to change (skipped)."""
    if not perm:
        return
    st = path.lstat()
    old = stat.S_IMODE(st.st_mode)
    new = shared_mode(old, perm, is_dir=stat.S_ISDIR(st.st_mode))
    if new != old:
        with contextlib.suppress(PermissionError):
            path.chmod(new)


def make_dir(layout: RepoLayout, path: Path) -> None:
    """`mkdir -p path` under the git directory, each folder with the shared mode."""
    path.mkdir(parents=True, exist_ok=True)
    perm = shared_perm(layout)
    if not perm:
        return
    # Folders made before (by an older nexusd, or by another part of it with the umask
    # alone) are put right too, as long as they are ours: git adjusts each it makes.
    for each in (path, *path.parents):
        if layout.git_dir not in each.parents:
            break
        adjust(each, perm)


def scratch_dir(layout: RepoLayout) -> Path:
    """`<git-dir>/nexus/tmp`, made with the shared mode: private indexes and scratch folders."""
    path = layout.nexus_dir / "tmp"
    make_dir(layout, path)
    return path


def open_shared(layout: RepoLayout, path: Path, flags: int) -> int:
    """`os.open(path, flags | O_CREAT, 0o600)`, the file then given the shared mode."""
    perm = shared_perm(layout)
    fd = os.open(path, flags | os.O_CREAT, 0o600)
    if perm:
        try:
            old = stat.S_IMODE(os.fstat(fd).st_mode)
            new = shared_mode(old, perm, is_dir=False)
            if new != old:
                with contextlib.suppress(PermissionError):
                    os.fchmod(fd, new)
        except BaseException:
            os.close(fd)
            raise
    return fd
