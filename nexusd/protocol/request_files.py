"""Creating request files: complete on first sight, never replacing another request."""

from __future__ import annotations

import contextlib
import os
import tempfile
from datetime import datetime
from pathlib import Path

from nexusd.protocol.naming import new_request_name

MAX_ATTEMPTS = 100


def create_request_file(folder: Path, text: str, now: datetime) -> Path:
    """Write `text` as a new `<ts>_plan_request.md` in `folder`, atomically and exclusively."""
    folder.mkdir(parents=True, exist_ok=True)
    # Dot-prefixed `.tmp` so watchers ignore it; hard-linking publishes the whole file at once
    # and fails (instead of overwriting) when another writer took the same name.
    fd, tmp = tempfile.mkstemp(prefix=".request.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).chmod(0o644)  # mkstemp makes 0600; requests are ordinary shared files
        for _ in range(MAX_ATTEMPTS):
            target = folder / new_request_name(now, folder)
            try:
                os.link(tmp, target)
            except FileExistsError:
                continue
            except OSError:
                # No hard links here (some FUSE / FAT mounts): a plain atomic rename instead.
                if target.exists():
                    continue
                Path(tmp).replace(target)
            return target
        raise FileExistsError(f"no free request name in {folder} for {now.isoformat()}")
    finally:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp).unlink()
