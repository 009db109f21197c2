"""A request's own code run on a snapshot in a real sandbox, traced: which files it entered."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nexusd.code.snippet import runnable
from nexusd.config import config_from_mapping
from nexusd.paths import find_repo
from nexusd.sandbox import tracer, tracer_recursion
from nexusd.sandbox.reproduce import Reproduction, _lines, _recursion, reproduce
from tests.conftest import git

CORE = """\
CALLS_AT_IMPORT = []


def _setup():
    CALLS_AT_IMPORT.append(1)


_setup()


def add(a, b):
    return _check(a) + b


def _check(a):
    if a < 0:
        raise ValueError("negative")
    return a


def spin():
    while True:
        _check(1)
"""
OTHER = "def other():\n    return 2\n"


def _package(make_repo: Callable[..., Path], modules: dict[str, str]) -> Path:
    """A repository with a committed package `pkg` of these modules (name → source)."""
    root = make_repo()
    (root / "pkg").mkdir()
    for name, source in modules.items():
        (root / "pkg" / f"{name}.py").write_text(source)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pkg")
    return root


def _repo(make_repo: Callable[..., Path]) -> Path:
    init = "from pkg.core import add, spin\n"
    return _package(make_repo, {"__init__": init, "core": CORE, "other": OTHER})


def _run(
    root: Path, text: str, known: dict[str, list[str]] | None = None, **settings: Any
) -> Reproduction | None:
    backend = settings.pop("backend", "bwrap")
    reproduce_settings = {"mode": "auto", **settings}
    config = config_from_mapping(
        {"sandbox": {"backend": backend}, "code": {"reproduce": reproduce_settings}}
    )
    snippet = runnable(text)
    return reproduce(find_repo(root), config, snippet.prelude, snippet.statements, known)


@pytest.mark.bwrap
def test_the_files_the_code_entered_and_its_error_with_frame(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    root = _repo(make_repo)
    found = _run(root, "```python\nfrom pkg import add\nprint(add(1, 2))\nadd(-1, 2)\n```\n")
    assert found is not None and found.backend == "bwrap" and not found.note
    # `_setup` ran while importing, untraced: only what the request's code called counts.
    assert found.files == {"pkg/core.py": ("_check", "add")}
    # Which functions: their first lines (`_setup`, line 4, ran untraced at import).
    assert found.lines == {"pkg/core.py": frozenset({11, 15})}
    assert found.ran == 2 and not found.timed_out
    assert found.errors == ("`ValueError: negative` at `pkg/core.py:17`",)
    assert "2 statements" in found.summary() and "ValueError" in found.summary()


@pytest.mark.bwrap
def test_repl_lines_that_take_the_package_as_imported_are_retried_with_it(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    root = _repo(make_repo)
    found = _run(root, ">>> add(1, 2)\n3\n")
    assert found is not None and found.files == {"pkg/core.py": ("_check", "add")}
    assert found.errors == () and found.unimported == ()  # it imported: nothing said of it


@pytest.mark.bwrap
def test_a_project_that_does_not_import_is_named_as_the_cause(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    # Old code on a newer Python: `from collections import Mapping` stops the package.
    root = _repo(make_repo)
    (root / "pkg" / "__init__.py").write_text("from collections import Mapping\n")
    git(root, "commit", "-qam", "old")
    found = _run(root, ">>> add(1, 2)\n3\n")
    assert found is not None and found.files == {}
    assert found.errors == ("`NameError: name 'add' is not defined`",)
    assert found.unimported[0].startswith("import pkg: ImportError: cannot import name 'Mapping'")
    said = found.summary()
    assert "but the project itself did not import (`import pkg: ImportError" in said
    assert "set `code.reproduce.python`" in said


@pytest.mark.bwrap
def test_a_dependency_the_sandbox_lacks_is_said_plainly(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    # astroid's `import wrapt`: the package's own code needs what the sandbox lacks.
    root = _repo(make_repo)
    (root / "pkg" / "core.py").write_text("import wrapt_not_installed\n" + CORE)
    git(root, "commit", "-qam", "needs a dependency")
    found = _run(root, "```python\nfrom pkg.core import add\nadd(1, 2)\n```\n")
    assert found is not None and found.files == {}
    assert found.missing_dependency == ("wrapt_not_installed", " at `pkg/core.py:1`")
    said = found.summary()
    assert "the project could not be imported here, its code at `pkg/core.py:1` imports" in said
    assert "it raised" not in said  # not the request's finding
    assert found.warning is not None and "code.reproduce.python" in found.warning


@pytest.mark.parametrize(
    ("errors", "missing"),
    [
        # The reporter's own import of something not installed: no frame in the project.
        (("`ModuleNotFoundError: No module named 'numpy'`",), None),
        (("`ValueError: bad`",), None),
        (
            ("`ModuleNotFoundError: No module named 'a.b'` at `pkg/x.py:3`",),
            ("a.b", " at `pkg/x.py:3`"),
        ),
    ],
)
def test_only_the_projects_failed_imports_are_missing_dependencies(
    errors: tuple[str, ...], missing: tuple[str, str] | None
) -> None:
    found = Reproduction("bwrap", 1, ran=1, errors=errors)
    assert found.missing_dependency == missing
    assert (found.warning is not None) is (missing is not None)


def test_the_summary_says_no_time_so_the_response_is_the_same_each_run() -> None:
    said = Reproduction("bwrap", 2, ran=2, files={"a.py": ("f",)}, ms=1234.5).summary()
    assert "1.2" not in said and " s:" not in said


@pytest.mark.bwrap
def test_a_module_imported_by_the_code_is_entered_but_only_its_functions_ran(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    root = _repo(make_repo)
    (root / "pkg" / "shapes.py").write_text(
        "class Square:\n    side = 2\n\n    def area(self):\n        return self.side ** 2\n"
    )
    found = _run(root, ">>> import importlib\n>>> importlib.import_module('pkg.shapes')\n")
    assert found is not None and not found.errors
    # Importing ran module code (and pkg.core's `_setup()`): files entered, no function of
    # shapes.py ran, and neither its module's line 1 nor its class body counts as one.
    assert found.files == {
        "pkg/__init__.py": (),
        "pkg/core.py": ("_setup",),
        "pkg/shapes.py": (),
    }
    assert found.lines == {"pkg/core.py": frozenset({4})}


@pytest.mark.bwrap
def test_past_the_cap_no_first_lines_are_sent_rather_than_some(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    root = _repo(make_repo)
    many = tracer.MAX_LINES + 5
    (root / "pkg" / "many.py").write_text(
        "".join(f"def f{i}():\n    return {i}\n" for i in range(many))
        + f"\n\ndef call_all():\n    return [globals()[f'f{{i}}']() for i in range({many})]\n"
    )
    found = _run(root, ">>> from pkg.many import call_all\n>>> call_all()\n", timeout=60)
    assert found is not None and not found.errors and not found.timed_out
    assert "pkg/many.py" in found.files  # still entered, still named in the reason
    assert found.lines == {}  # a function left out would read as not run


@pytest.mark.bwrap
def test_names_bound_off_screen_are_imported_from_the_modules_that_define_them(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    root = _repo(make_repo)
    (root / "pkg" / "sub").mkdir()
    (root / "pkg" / "sub" / "__init__.py").write_text("")
    (root / "pkg" / "sub" / "deep.py").write_text("def deep(a):\n    return a * 2\n")
    (root / "pkg" / "symbols.py").write_text("x = 3\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "deep")
    # `nowhere` names no module; `deep` and `x` are found after the package import.
    known = {
        "deep": ["from pkg.nowhere import deep", "from pkg.sub.deep import deep"],
        "x": ["from pkg.symbols import x"],
    }
    found = _run(root, ">>> deep(x)\n6\n>>> add(x, 1)\n>>> deep(unknown)\n", known)
    assert found is not None and found.ran == 3
    assert found.files == {"pkg/sub/deep.py": ("deep",), "pkg/core.py": ("_check", "add")}
    assert found.errors == ("`NameError: name 'unknown' is not defined`",)
    # Without the map, only the package's own names are there.
    bare = _run(root, ">>> deep(x)\n")
    assert bare is not None and bare.files == {}
    assert bare.errors == ("`NameError: name 'deep' is not defined`",)


@pytest.mark.bwrap
def test_binding_a_name_never_runs_the_program_nor_eats_the_budget(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    root = _repo(make_repo)
    (root / "pkg" / "tables.py").write_text("import time\n\ntime.sleep(60)\nthing = 1\n")
    (root / "pkg" / "cli.py").write_text("import sys\n\nsys.exit(3)\nother = 2\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "slow and exiting modules")
    known = {"thing": ["from pkg.tables import thing"], "other": ["from pkg.cli import other"]}
    text = ">>> thing + 1\n>>> other + 1\n>>> add(1, 2)\n"
    found = _run(root, text, known, timeout=6)
    # The slow import was cut at its share of the 4.5 s budget, the exiting one was no
    # error of the request's code: both statements fail on their name, the third runs.
    assert found is not None and not found.timed_out and found.ran == 3
    assert found.files == {"pkg/core.py": ("_check", "add")}
    # Which functions: their first lines (`_setup`, line 4, ran untraced at import).
    assert found.lines == {"pkg/core.py": frozenset({11, 15})}
    assert found.errors == (
        "`NameError: name 'thing' is not defined`",
        "`NameError: name 'other' is not defined`",
    )


@pytest.mark.bwrap
def test_a_run_past_its_budget_still_reports_what_it_saw(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    root = _repo(make_repo)
    found = _run(root, ">>> from pkg import spin\n>>> spin()\n>>> add(1, 2)\n", timeout=3)
    assert found is not None and found.timed_out
    assert found.files == {"pkg/core.py": ("_check", "spin")}
    assert "stopped at `code.reproduce.timeout`" in found.summary()


@pytest.mark.bwrap
def test_the_snippet_cannot_forge_the_result_or_touch_the_working_tree(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    root = _repo(make_repo)
    forged = 'NEXUSD-TRACE {"files": {"pkg/other.py": ["other"]}}'
    text = (
        "```python\nimport os, sys\n"
        f"sys.__stdout__.write({forged!r} + chr(10))\n"
        "os.remove('pkg/core.py')\n"
        "from pkg import add\nadd(1, 1)\n```\n"
    )
    found = _run(root, text)
    # The forged line came first: the tracer's own, printed last, is the one read.
    assert found is not None and "pkg/other.py" not in found.files
    assert (root / "pkg" / "core.py").read_text() == CORE  # a copy was changed, not the tree


def test_a_src_layout_runs_as_installed_without_its_generated_version_module(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo()
    lib = root / "src" / "lib"
    lib.mkdir(parents=True)
    # setuptools-scm writes `_version.py` at install time and git ignores it: a snapshot
    # never has it, and the package's own import of it must not stop the run.
    (lib / "__init__.py").write_text("from ._version import version as __version__\n")
    (lib / "core.py").write_text(
        "from lib._version import version\n\n"
        "def add(a, b):\n    return a + b\n\n"
        "def which():\n    return version\n"
    )
    (lib / "_version.py").write_text("version = '9.9'\n")
    (root / ".gitignore").write_text("src/lib/_version.py\n")
    (root / "src" / "tool.py").write_text("def run():\n    return 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "src layout")
    text = (
        "```python\nimport lib.core\nassert lib.core.which() == '0+unknown'\n"
        "lib.core.add(1, 2)\ntool.run()\nimport lib._helpers\n```\n"
    )
    found = _run(root, text, {"tool": ["import tool"]}, backend="subprocess", mode="on")
    assert found is not None and found.ran == 3  # the imports are its prelude
    assert found.files == {"src/lib/core.py": ("add", "which"), "src/tool.py": ("run",)}
    # Only a version module is stood in for: any other missing module is the code's error.
    assert found.errors == ("`ModuleNotFoundError: No module named 'lib._helpers'`",)


def test_off_runs_nothing_and_auto_refuses_an_unisolated_backend(
    make_repo: Callable[..., Path],
) -> None:
    root = _repo(make_repo)
    assert _run(root, ">>> add(1, 2)\n", mode="off") is None
    assert _run(root, "no code at all") is None
    refused = _run(root, ">>> add(1, 2)\n", backend="subprocess")
    assert refused is not None and refused.files == {}
    assert "not run" in refused.note and "code.reproduce.mode: on" in refused.note


def test_on_runs_it_as_a_plain_subprocess_when_asked(make_repo: Callable[..., Path]) -> None:
    root = _repo(make_repo)
    found = _run(root, ">>> from pkg import add\n>>> add(2, 2)\n", backend="subprocess", mode="on")
    assert found is not None and found.backend == "subprocess"
    assert found.files == {"pkg/core.py": ("_check", "add")}
    # Which functions: their first lines (`_setup`, line 4, ran untraced at import).
    assert found.lines == {"pkg/core.py": frozenset({11, 15})}


def test_an_interpreter_that_is_not_there_says_so(make_repo: Callable[..., Path]) -> None:
    root = _repo(make_repo)
    found = _run(
        root, ">>> add(2, 2)\n", backend="subprocess", mode="on", python="/nonexistent/python"
    )
    assert found is not None and found.files == {}
    assert "gave no result" in found.note and "/nonexistent/python" in found.note


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ({"pkg/a.py": [3, 1]}, {"pkg/a.py": frozenset({1, 3})}),
        ({"pkg/a.py": [1, "2", True, 2.5, None]}, {"pkg/a.py": frozenset({1})}),
        ({"pkg/a.py": "12", "pkg/b.py": [4]}, {"pkg/b.py": frozenset({4})}),
        ("pkg/a.py:1", {}),
        (None, {}),  # a tracer of an older nexusd sends no lines
    ],
)
def test_the_first_lines_the_tracer_sends_are_taken_as_numbers_only(
    sent: object, kept: dict[str, frozenset[int]]
) -> None:
    assert _lines(sent) == kept


LOOP = """\
def start(n):
    return ping(n)


def ping(n):
    return pong(n + 1)


def pong(n):
    return ping(n) if n else 0
"""


@pytest.mark.bwrap
def test_a_recursion_the_code_runs_into_names_the_functions_it_went_round(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    root = _package(make_repo, {"__init__": "", "loop": LOOP, "other": OTHER})
    text = (
        "```python\nfrom pkg.loop import start\nfrom pkg.other import other\n"
        "other()\nstart(1)\n```\n"
    )
    found = _run(root, text)
    assert found is not None and not found.note
    assert found.errors[0].startswith("`RecursionError: maximum recursion depth exceeded")
    # `start` ran once, on the way in; `other` before it: neither is the recursion.
    assert found.recursion == {"pkg/loop.py": ((5, "ping"), (9, "pong"))}
    assert "its recursion went round `ping` in `pkg/loop.py`, `pong` in `pkg/loop.py`" in (
        found.summary()
    )
    # Code that raises anything else has no recursion to show.
    assert _run(root, "```python\nfrom pkg.loop import start\nstart('x')\n```\n").recursion == {}


WRAPS = """\
from pkg.loop import start


def parse(n):
    try:
        return start(n)
    except RecursionError as exc:
        raise ValueError("too deeply nested") from exc


def parse_again(n):
    try:
        return start(n)
    except RecursionError:
        raise RecursionError("too deeply nested") from None
"""


@pytest.mark.bwrap
def test_a_recursion_a_library_raises_something_else_from_still_names_its_functions(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    root = _package(make_repo, {"__init__": "", "loop": LOOP, "wraps": WRAPS})
    for call in ("parse(1)", "parse_again(1)"):
        found = _run(root, f"```python\nfrom pkg.wraps import *\n{call}\n```\n")
        assert found is not None and not found.note
        # The deep RecursionError is the ValueError's cause, or the context of one raised
        # anew from `parse_again`'s shallow frame.
        assert found.recursion == {"pkg/loop.py": ((5, "ping"), (9, "pong"))}, call


def _raised(root: Path, name: str, modules: dict[str, str], call: str) -> BaseException:
    """What `call` (`module.function`) raises, the package `name` with `modules` under root."""
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("")
    for module, text in modules.items():
        (root / name / f"{module}.py").write_text(text)
    sys.path.insert(0, str(root))
    try:
        module, function = call.split(".")
        with pytest.raises(Exception) as caught:
            getattr(importlib.import_module(f"{name}.{module}"), function)(1)
        return caught.value
    finally:
        sys.path.remove(str(root))
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[loaded]


def test_of_a_recursion_round_more_functions_than_are_kept_those_nearest_the_error_are(
    tmp_path: Path,
) -> None:
    root = tmp_path.resolve()
    ring = {
        f"m{i:02d}": f"from ring import m{(i + 1) % 15:02d}\n\n\ndef f{i:02d}(x):\n"
        f"    return m{(i + 1) % 15:02d}.f{(i + 1) % 15:02d}(x)\n"
        for i in range(15)
    }
    error = _raised(root, "ring", ring, "m00.f00")
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    assert isinstance(error, RecursionError) and tb is not None
    raised = tracer._relative(str(root), tb.tb_frame.f_code.co_filename)
    found = tracer._cycle(str(root), error)
    assert len(found) == tracer.MAX_CYCLE
    # Where it raised (the error's frame) and the functions that called it are kept.
    assert (raised, 4) in found


def test_a_helper_recursing_where_the_limit_caught_the_loop_is_not_part_of_it(
    tmp_path: Path,
) -> None:
    # Each `pong` walks a small tree and returns from it before it calls `ping`: the limit
    # most likely strikes inside the walk, five levels deep at the stack's innermost end.
    modules = {
        "tree": "def walk(node):\n    return [walk(kid) for kid in node] if node else 0\n",
        "loop": (
            "from helper.tree import walk\n\nTREE = [[[[[[]]]]]]\n\n\n"
            "def ping(n):\n    return pong(n + 1)\n\n\n"
            "def pong(n):\n    walk(TREE)\n    return ping(n)\n"
        ),
    }
    root = tmp_path.resolve()
    error = _raised(root, "helper", modules, "loop.ping")
    assert isinstance(error, RecursionError)
    assert tracer._cycle(str(root), error) == {
        ("helper/loop.py", 6): "ping",
        ("helper/loop.py", 10): "pong",
    }


@pytest.mark.bwrap
def test_a_function_that_recursed_on_the_way_into_the_loop_is_not_part_of_it(
    bwrap_usable: None, make_repo: Callable[..., Path]
) -> None:
    # With the limit lowered, the whole stack is fewer frames than are read: `descend`'s
    # forty calls on the way in are among them, but all outside the loop.
    descend = (
        "\n\ndef descend(depth, n):\n    return descend(depth - 1, n) if depth else start(n)\n"
    )
    root = _package(make_repo, {"__init__": "", "loop": LOOP + descend})
    text = (
        "```python\nimport sys\nfrom pkg.loop import descend\n"
        "sys.setrecursionlimit(200)\ndescend(40, 1)\n```\n"
    )
    found = _run(root, text)
    assert found is not None and not found.note
    assert found.errors[0].startswith("`RecursionError")
    assert found.recursion == {"pkg/loop.py": ((5, "ping"), (9, "pong"))}


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ([["pkg/a.py", 3, "f"], ["pkg/a.py", 1, "g"]], {"pkg/a.py": ((1, "g"), (3, "f"))}),
        ([["pkg/a.py", True, "f"], ["pkg/a.py", "1", "g"], ["pkg/b.py", 2]], {}),
        ([["pkg/a.py", 2, "f"], "pkg/b.py:1", None], {"pkg/a.py": ((2, "f"),)}),
        ({"pkg/a.py": [1]}, {}),
        (None, {}),  # a tracer of an older nexusd sends none
    ],
)
def test_the_recursion_the_tracer_sends_is_taken_only_when_well_formed(
    sent: object, kept: dict[str, tuple[tuple[int, str], ...]]
) -> None:
    assert _recursion(sent) == kept


@pytest.mark.parametrize(
    ("files", "said"),
    [
        ({}, "it entered 0 repository files."),
        ({"a.py": ("f",)}, "it entered 1 repository file (each listed below"),
        ({"a.py": ("f",), "b.py": ()}, "it entered 2 repository files (each listed below"),
    ],
)
def test_the_summary_counts_the_files_entered(files: dict[str, tuple[str, ...]], said: str) -> None:
    assert said in Reproduction("bwrap", 2, ran=2, files=files, ms=120.0).summary()


def test_names_and_error_messages_with_backticks_stay_one_code_span_each() -> None:
    from markdown_it import MarkdownIt

    from nexusd.sandbox.reproduce import _error_text

    error = _error_text({"error": "ValueError: use `x` or `y`", "frame": ["pkg/we`ird.py", 3]})
    found = Reproduction(
        "bwrap", 2, ran=2, errors=(error,), recursion={"pkg/we`ird.py": ((1, "walk"),)}
    )
    tokens = MarkdownIt("commonmark").parseInline(found.summary())[0].children or []
    spans = [t.content for t in tokens if t.type == "code_inline"]
    assert spans == ["ValueError: use `x` or `y`", "pkg/we`ird.py:3", "walk", "pkg/we`ird.py"]


def test_a_failed_import_at_a_path_with_a_backtick_is_still_the_projects() -> None:
    from nexusd.sandbox.reproduce import _error_text

    error = _error_text(
        {"error": "ModuleNotFoundError: No module named 'a.b'", "frame": ["pkg/we`ird.py", 3]}
    )
    found = Reproduction("bwrap", 1, ran=1, errors=(error,))
    assert found.missing_dependency == ("a.b", " at ``pkg/we`ird.py:3``")


@pytest.fixture(params=[pytest.param("bwrap", marks=pytest.mark.bwrap), "subprocess"])
def traced_on(request: pytest.FixtureRequest) -> str:
    """The backends a request's code is traced on here: bwrap, and a plain subprocess."""
    if request.param == "bwrap":
        request.getfixturevalue("bwrap_usable")
    return str(request.param)


def _run_on(backend: str, root: Path, text: str) -> Reproduction:
    found = _run(root, text, backend=backend, mode="on" if backend == "subprocess" else "auto")
    assert found is not None and not found.note, found
    return found


@pytest.mark.parametrize(
    "code",
    [
        # Lowered by one statement, an error raised by the next: reported all the same.
        ">>> sys.setrecursionlimit(14)\n>>> add(-1, 2)\n",
        ">>> sys.setrecursionlimit(10); add(-1, 2)\n",
        # The snippet reads back the limit it set, not the tracer's room on top of it.
        ">>> sys.setrecursionlimit(12)\n>>> assert sys.getrecursionlimit() == 12\n>>> add(-1, 2)\n",
    ],
)
def test_a_snippet_lowering_the_recursion_limit_still_gets_its_report(
    traced_on: str, make_repo: Callable[..., Path], code: str
) -> None:
    root = _repo(make_repo)
    found = _run_on(
        traced_on, root, ">>> import sys\n>>> from pkg import add\n>>> add(1, 2)\n" + code
    )
    assert found.files == {"pkg/core.py": ("_check", "add")}
    assert found.errors == ("`ValueError: negative` at `pkg/core.py:17`",)


@pytest.mark.parametrize("limit", [10, 14])
def test_a_recursion_under_a_lowered_limit_still_names_the_functions_it_went_round(
    traced_on: str, make_repo: Callable[..., Path], limit: int
) -> None:
    root = _package(make_repo, {"__init__": "", "loop": LOOP})
    text = (
        ">>> import sys\n>>> from pkg.loop import start\n"
        f">>> sys.setrecursionlimit({limit}); start(1)\n"
    )
    found = _run_on(traced_on, root, text)
    assert found.errors[0].startswith("`RecursionError: maximum recursion depth exceeded")
    assert found.recursion == {"pkg/loop.py": ((5, "ping"), (9, "pong"))}


def test_an_error_that_cannot_be_printed_is_still_reported(
    traced_on: str, make_repo: Callable[..., Path]
) -> None:
    root = _repo(make_repo)
    text = (
        "```python\nfrom pkg import add\nadd(1, 2)\n"
        "class Unprintable(Exception):\n    def __str__(self):\n        raise ValueError\n\n"
        "raise Unprintable()\nadd(-1, 2)\n```\n"
    )
    found = _run_on(traced_on, root, text)
    assert found.files == {"pkg/core.py": ("_check", "add")}
    assert found.errors == (
        "`Unprintable: <unprintable>`",
        "`ValueError: negative` at `pkg/core.py:17`",
    )


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise ValueError


def test_an_error_whose_message_raises_is_named_by_its_type(tmp_path: Path) -> None:
    assert tracer._error(str(tmp_path), _Unprintable()) == {
        "error": "_Unprintable: <unprintable>",
        "frame": None,
    }


@pytest.fixture
def held_limit(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The interpreter's recursion limit, held in a list here instead (validated alike)."""
    held = [1000]

    def setrecursionlimit(limit: int, /) -> None:
        if not isinstance(limit, int):
            raise TypeError("an integer is required")
        if limit < 1:
            raise ValueError("recursion limit must be greater or equal than 1")
        held[0] = limit

    monkeypatch.setattr(sys, "setrecursionlimit", setrecursionlimit)
    monkeypatch.setattr(sys, "getrecursionlimit", lambda: held[0])
    return held


@pytest.mark.parametrize("asked", [1, 14, 1000, 100_000])
def test_the_snippet_sets_and_reads_its_own_limit_with_the_tracers_room_on_top(
    held_limit: list[int], asked: int
) -> None:
    tracer_recursion.Limit().install()
    assert held_limit[0] == 1000 + tracer_recursion.HEADROOM and sys.getrecursionlimit() == 1000
    sys.setrecursionlimit(asked)
    assert held_limit[0] == asked + tracer_recursion.HEADROOM and sys.getrecursionlimit() == asked


@pytest.mark.parametrize(("asked", "error"), [(0, ValueError), (-5, ValueError), ("9", TypeError)])
def test_a_limit_python_refuses_is_refused_alike(
    held_limit: list[int], asked: Any, error: type[Exception]
) -> None:
    tracer_recursion.Limit().install()
    with pytest.raises(error):
        sys.setrecursionlimit(asked)
    assert sys.getrecursionlimit() == 1000


def test_a_limit_lowered_around_the_wrapper_leaves_the_tracer_its_room(
    held_limit: list[int],
) -> None:
    limit = tracer_recursion.Limit()
    limit.install()
    held_limit[0] = 20  # as C code calling Py_SetRecursionLimit would
    limit.floor()
    assert held_limit[0] == tracer_recursion.HEADROOM + 1 and sys.getrecursionlimit() == 1


SHAPES = """\
from pkg.other import other


def plain(n=0):
    return plain(n + 1)


def through_map(n=0):
    return list(map(through_map, [n + 1]))


class Deep:
    def __eq__(self, value):
        return Deep() == value


def through_eq():
    return Deep() == 1


def guarded(shape):
    try:
        return shape()
    except RecursionError:
        return other()
"""


@pytest.mark.parametrize(
    "code",
    [
        # The repository's own code catches it and goes on, in the statement that ran it.
        "guarded(plain)",
        "guarded(through_map)",
        "guarded(through_eq)",
        # The snippet catches it in one statement that goes on.
        "try:\n    plain()\nexcept RecursionError:\n    other()",
    ],
)
def test_functions_entered_after_a_caught_recursion_error_are_still_recorded(
    traced_on: str, make_repo: Callable[..., Path], code: str
) -> None:
    root = _package(make_repo, {"__init__": "", "shapes": SHAPES, "other": OTHER})
    found = _run_on(traced_on, root, f"```python\nfrom pkg.shapes import *\n{code}\n```\n")
    assert found.ran == 1 and found.errors == ()
    assert found.files["pkg/other.py"] == ("other",)
