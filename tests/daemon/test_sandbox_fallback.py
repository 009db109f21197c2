"""A daemon whose `backend: auto` left docker says so in the response and in `nexusd status`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from daemon.helpers import nexusd, request_text, response_for, wait_answered, write_config


def test_fallback_is_in_the_response_and_in_status(
    served: Path, start_daemon: Callable[..., Path]
) -> None:
    write_config(
        served,
        "sandbox:\n  backend: auto\n  image: nexusd-absent-image:never\n"
        "checks:\n  - name: unit\n    run: 'true'\n",
    )
    start_daemon(served)
    request = served / ".scratchpad_logs" / "2025-04-20T08_11_37_plan_request.md"
    request.write_text(request_text("Explain the README"), encoding="utf-8")
    meta = wait_answered(request, timeout=60)
    notes = [w for w in meta["warnings"] if "sandbox.backend is auto" in w]
    assert len(notes) == 1 and "not docker" in notes[0], meta["warnings"]
    assert notes[0] in response_for(request).read_text(encoding="utf-8")  # in the body too

    text = nexusd(served, "status").stdout
    assert "FALLBACK: sandbox.backend is auto" in text, text
    data = json.loads(nexusd(served, "status", "--json").stdout)
    assert data["sandbox"]["configured"] == "auto" and data["sandbox"]["fallback"] == notes[0]
