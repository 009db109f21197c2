"""A read-only answer: `nexusd plan --stdout` prints a response and writes nothing.

Inside `read_only()` the pipeline makes no checkpoint (so no check results are
attached to one), learns no lessons, and neither logs prompts nor records model
telemetry. A context variable carries the mode, so the phases that run in worker
threads see it when started with `contextvars.copy_context().run`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_READ_ONLY: ContextVar[bool] = ContextVar("nexusd_read_only", default=False)


@contextlib.contextmanager
def read_only() -> Iterator[None]:
    """Answer without writing anything inside the block."""
    token = _READ_ONLY.set(True)
    try:
        yield
    finally:
        _READ_ONLY.reset(token)


def is_read_only() -> bool:
    """True inside `read_only()`."""
    return _READ_ONLY.get()
