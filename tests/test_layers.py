"""The package's rooms and their floors: imports point down, and no two rooms need each other.

ARCHITECTURE.md draws the same floors. An import that points up (a room using one above it) or a
cycle between rooms is how a layout stops being one a newcomer can hold in their head, so both
fail here, with the modules that made the arrow.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "nexusd"

# Floor of each room, bottom first; a room is a subpackage or a top-level module of nexusd.
FLOORS: dict[str, int] = {
    "errors": 0,
    "atomic": 0,
    "readonly": 0,
    "yamlload": 0,
    "nexusd": 0,  # the package itself: its version
    "git": 1,
    "paths": 1,
    "processes": 1,
    "lance": 1,
    "config": 1,
    "protocol": 1,
    "templates": 1,
    "memory": 2,
    "checkpoint": 2,
    "models": 2,
    "code": 2,
    "hooks": 3,
    "sandbox": 3,
    "context": 4,
    "planner": 5,
    "solve": 6,
    "api": 6,
    "daemon": 7,
    "cli": 8,
    "__main__": 9,
}


def _room(module: str) -> str:
    parts = module.removesuffix(".__init__").split(".")
    if len(parts) == 1:
        return "nexusd"
    # The configuration's modules are one room whether they sit in a package or beside it.
    return "config" if parts[1].startswith("config") else parts[1]


def _imported(tree: ast.AST) -> list[str]:
    """Every nexusd module a file imports: at the top, in functions, or by `import_module`."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.append(str(node.args[0].value))
    return [name for name in names if name == "nexusd" or name.startswith("nexusd.")]


def _arrows() -> dict[tuple[str, str], list[str]]:
    """Room → room arrows, each with the modules that draw it."""
    arrows: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        source = _room(module)
        for name in _imported(ast.parse(path.read_text(encoding="utf-8"))):
            target = _room(name)
            if target != source:
                arrows[(source, target)].append(module)
    return arrows


def test_every_room_has_a_floor() -> None:
    rooms = {
        _room(".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts))
        for p in PACKAGE.rglob("*.py")
    }
    assert rooms - FLOORS.keys() == set(), "give the new room a floor here and in ARCHITECTURE.md"


def test_every_import_points_down_or_sideways() -> None:
    up = {
        f"{a} (floor {FLOORS[a]}) -> {b} (floor {FLOORS[b]})": sorted(set(mods))
        for (a, b), mods in _arrows().items()
        if FLOORS.get(b, 0) > FLOORS.get(a, 0)
    }
    assert up == {}, "move the code to the lower room, or pass it in from above"


def test_no_two_rooms_need_each_other() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in _arrows():
        graph[a].add(b)
    cycles = []
    for a, targets in graph.items():
        for b in targets:
            if _reaches(graph, b, a):
                cycles.append((a, b))
    assert cycles == [], (
        "rooms that import each other are one room, or one of them holds the other's part"
    )


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        room = todo.pop()
        if room == goal:
            return True
        for nxt in graph.get(room, ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


@pytest.mark.parametrize(
    ("source", "imports", "room"),
    [
        ("import nexusd.planner.pipeline", "nexusd.planner.pipeline", "planner"),
        ("from nexusd.config.cache import x", "nexusd.config.cache", "config"),
        (
            "def f():\n    importlib.import_module('nexusd.daemon.inbox')",
            "nexusd.daemon.inbox",
            "daemon",
        ),
        ("from nexusd import __version__", "nexusd", "nexusd"),
    ],
)
def test_imports_are_found_wherever_they_are_written(source: str, imports: str, room: str) -> None:
    assert _imported(ast.parse(source)) == [imports]
    assert _room(imports) == room
