"""Classification and reflection on real recorded outputs (tests/sandbox/data/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexusd.sandbox.reflection import classify, reflect
from nexusd.sandbox.result import CheckResult

DATA = Path(__file__).parent / "data"


def _result(stdout: str = "", stderr: str = "", **kw: object) -> CheckResult:
    values: dict[str, object] = {
        "name": "unit",
        "backend": "docker",
        "exit_code": 1,
        "duration_ms": 10,
        "stdout_head": stdout,
        "stderr_head": stderr,
    }
    values.update(kw)
    return CheckResult(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fixture", "kind", "location", "error_type"),
    [
        ("pytest_failures.txt", "test_failures", "test_demo.py:9", "json.decoder.JSONDecodeError"),
        ("pytest_syntax.txt", "syntax_error", "/tmp/h5/pt/syn/test_syntax.py:1", "SyntaxError"),
        ("pytest_import.txt", "missing_dependency", "imp/test_imp.py:1", "ModuleNotFoundError"),
        ("python_keyerror.txt", "exception", "<string>:3", "KeyError"),
        ("python_assert.txt", "assertion", "<string>:1", "AssertionError"),
        ("python_syntax.txt", "syntax_error", "/tmp/h5/pt/bad.py:1", "SyntaxError"),
    ],
)
def test_classify_recorded_output(fixture: str, kind: str, location: str, error_type: str) -> None:
    failure = classify(_result(stdout=(DATA / fixture).read_text()))
    assert (failure.kind, failure.location, failure.error_type) == (kind, location, error_type)
    assert failure.cause and failure.next_step


def test_pytest_summary_names_every_failing_test() -> None:
    failure = classify(_result(stdout=(DATA / "pytest_failures.txt").read_text()))
    assert failure.tests == ("test_demo.py::test_add", "test_demo.py::test_parse")
    assert "pytest test_demo.py::test_add -x -vv" in failure.next_step


def test_only_assertions_is_an_assertion_failure() -> None:
    text = "FAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed in 0.1s\n"
    failure = classify(_result(stdout=text))
    assert (failure.kind, failure.error_type) == ("test_failures", "AssertionError")
    assert "assertion" in failure.cause


@pytest.mark.parametrize(
    ("kwargs", "kind"),
    [
        ({"timed_out": True, "exit_code": 137}, "timeout"),
        ({"oom_killed": True, "exit_code": 137, "stderr": "Killed\n"}, "oom"),
        ({"exit_code": 3}, "silent_exit"),
        ({"exit_code": 2, "stderr": "make: *** [all] Error 2\n"}, "nonzero_exit"),
        ({"exit_code": 127, "stderr": "sh: 1: pytest: not found\n"}, "missing_dependency"),
        ({"exit_code": 1, "stderr": "src/m.c:12:5: error: expected ';'\n"}, "syntax_error"),
        ({"exit_code": 0}, "passed"),
        ({"exit_code": None, "error": "the Docker Engine is not reachable"}, "sandbox_error"),
    ],
)
def test_classify_kinds(kwargs: dict[str, object], kind: str) -> None:
    stderr = str(kwargs.pop("stderr", ""))
    assert classify(_result(stderr=stderr, **kwargs)).kind == kind


def test_signature_is_stable_across_line_numbers_and_addresses() -> None:
    a = classify(_result(stderr="boom at 0x7f12 after 3 tries\n"))
    b = classify(_result(stderr="boom at 0x9a00 after 5 tries\n"))
    assert a.signature("unit") == b.signature("unit")
    assert a.signature("unit") != a.signature("lint")


def test_reflection_says_what_where_why_and_next() -> None:
    text = reflect(_result(stdout=(DATA / "pytest_failures.txt").read_text()))
    for part in (
        "**`unit` failed**",
        "**What failed:** 2 test(s) failed",
        "**Where:** `test_demo.py:9`",
        "**Likely cause:**",
        "**Next diagnostic step:**",
    ):
        assert part in text


def test_reflection_warns_when_not_isolated() -> None:
    text = reflect(_result(exit_code=0, isolated=False, backend="subprocess"))
    assert "passed" in text and "WITHOUT isolation" in text


def _traceback(workspace: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        f'  File "{workspace}/pkg/net.py", line 6, in fetch\n'
        "    socket.create_connection((host, 80))\n"
        '  File "/usr/lib/python3.11/socket.py", line 836, in create_connection\n'
        "    raise err\n"
        f"OSError: [Errno 101] Network is unreachable: '{workspace}/pkg/hosts'\n"
    )


def test_the_place_is_the_checks_own_code_and_the_same_on_every_backend() -> None:
    # The subprocess backend's workspace is a new temporary folder per run: its path made
    # every run's signature differ (no lesson ever recurred), and the innermost frame was
    # the standard library's, not the code to read.
    runs = [
        classify(_result(stderr=_traceback(ws)))
        for ws in ("/dev/shm/nexusd-run-ab12cd/workspace", "/tmp/nexusd-run-x9/workspace")
    ]
    docker = classify(_result(stderr=_traceback("/workspace")))
    assert {f.location for f in (*runs, docker)} == {"pkg/net.py:6"}
    assert len({f.signature("unit") for f in (*runs, docker)}) == 1
    assert "nexusd-run" not in runs[0].summary


def test_pytests_summary_outranks_a_logged_error_message() -> None:
    text = (
        "____ test_add ____\n"
        "    def test_add():\n"
        '        print("warning: ImportError: optional speedups missing")\n'
        ">       assert add(1, 2) == 3\n"
        "E       assert -1 == 3\n"
        "tests/test_a.py:5: AssertionError\n"
        "----- Captured stdout call -----\n"
        "warning: ImportError: optional speedups missing\n"
        "Traceback (most recent call last):\nSyntaxError: quoted in a log\n"
        "=== short test summary info ===\n"
        "FAILED tests/test_a.py::test_add - assert -1 == 3\n"
        "1 failed, 1 passed in 0.50s\n"
    )
    failure = classify(_result(stdout=text))
    assert (failure.kind, failure.tests) == ("test_failures", ("tests/test_a.py::test_add",))
    assert failure.location == "tests/test_a.py:5"


def test_a_command_named_by_its_path_that_is_not_there_is_a_missing_dependency() -> None:
    failure = classify(
        _result(exit_code=127, stderr="/bin/sh: 1: /opt/venv/bin/pytest: not found\n")
    )
    assert failure.kind == "missing_dependency"
    assert "/opt/venv/bin/pytest" in failure.summary


def test_a_check_name_and_a_place_with_backticks_stay_one_code_span_each() -> None:
    from markdown_it import MarkdownIt

    trace = (
        "Traceback (most recent call last):\n"
        '  File "pkg/we`ird.py", line 3, in load\n'
        "ValueError: bad\n"
    )
    text = reflect(_result(stderr=trace, name="unit `fast`"))
    spans = [
        child.content
        for token in MarkdownIt("commonmark").parse(text)
        for child in token.children or []
        if child.type == "code_inline"
    ]
    assert spans[:2] == ["unit `fast`", "pkg/we`ird.py:3"]
