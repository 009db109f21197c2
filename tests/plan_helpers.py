"""Builders shared by the planner tests: requests, bundles and small repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nexusd.config import Config, config_from_mapping
from nexusd.context.librarian import ContextBundle, gather
from nexusd.paths import RepoLayout, find_repo
from nexusd.protocol.documents import PlanRequest, Questions
from nexusd.protocol.naming import response_path_for
from tests.conftest import git

REQUEST_NAME = "2025-05-08T14_02_11_plan_request.md"

SHELVES = """import threading


class Shelf:
    def __init__(self):
        self.lock = threading.Lock()
        self.orders = []


class OverflowShelf(Shelf):
    def place(self, order):
        # no lock here: under contention the overflow shelf loses an order
        self.orders.append(order)


def place_order(shelf, order):
    with shelf.lock:
        shelf.orders.append(order)


async def drain(shelf):
    return list(shelf.orders)
"""


def kitchen_repo(root: Path) -> Path:
    """A repository like the Oppie fixture's: kitchen/, tests/, a tools file, two commits."""
    (root / "kitchen").mkdir()
    (root / "tests").mkdir()
    (root / ".cursor").mkdir()
    (root / "kitchen" / "shelves.py").write_text(SHELVES, encoding="utf-8")
    (root / "kitchen" / "courier.py").write_text("def deliver(order):\n    return order\n")
    (root / "tests" / "test_concurrency.py").write_text(
        "import pytest\n\n\ndef test_stress():\n    # the stress test hits the timeout after 60 s\n"
        "    assert True\n",
        encoding="utf-8",
    )
    (root / ".cursor" / "available_mcp_tools.md").write_text(
        "# Available MCP tools\n\n- `run_pytest`: run tests with a timeout\n"
        "- `git_log`: list commits\n- `read_file`: read a file\n",
        encoding="utf-8",
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "add kitchen shelves")
    (root / "kitchen" / "courier.py").write_text("def deliver(order):\n    return None\n")
    git(root, "commit", "-q", "-am", "courier returns nothing")
    return root


def request(**overrides: Any) -> PlanRequest:
    """A PlanRequest like the Oppie Template A fixture, with overrides."""
    values: dict[str, Any] = {
        "path": f".scratchpad_logs/{REQUEST_NAME}",
        "sha256": "0" * 64,
        "form": "frontmatter",
        "goal": "Find and fix the lost-order race on the overflow shelf",
        "cycle": 3,
        "previous_goal": "Make shelf placement thread-safe",
        "previous_outcome": "Added a per-shelf lock; the overflow shelf still loses an order",
        "blockers": (
            "Order lost on the overflow shelf under contention",
            "pytest-timeout kills the stress test on CI after 60 s",
        ),
        "artifacts": ("kitchen/shelves.py", "kitchen/courier.py", "tests/test_concurrency.py"),
        "tools_file": ".cursor/available_mcp_tools.md",
        "questions": Questions(analysis="Is a single global lock for the overflow shelf fine?"),
    }
    values.update(overrides)
    return PlanRequest(**values)


def config(**layer: Any) -> Config:
    """Defaults plus `layer`."""
    return config_from_mapping(layer)


def bundle_for(
    root: Path, req: PlanRequest, cfg: Config | None = None, name: str = REQUEST_NAME
) -> ContextBundle:
    """Gather a context bundle for `req` as if it were `.scratchpad_logs/<name>`."""
    folder = root / ".scratchpad_logs"
    folder.mkdir(exist_ok=True)
    request_path = folder / name
    return gather(req, request_path, root, cfg or config(), response_path_for(request_path))


def layout(root: Path) -> RepoLayout:
    """The RepoLayout of a test repository."""
    return find_repo(root)
