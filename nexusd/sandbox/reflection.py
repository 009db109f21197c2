"""The critic's pure part: classify a check's failure and write a reflection about it.

No I/O: a CheckResult goes in, a Failure (kind, where, cause, next step, and a
stable signature for lessons) or markdown comes out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nexusd.protocol.inline import inline_code
from nexusd.sandbox.result import CheckResult

_PY_FRAME = re.compile(
    r'File "(?P<file>[^"]+)", line (?P<line>\d+)|^(?P<pfile>\S+\.py):(?P<pline>\d+): in '
)
_EXC_LINE = re.compile(
    r"^(?:E\s+)?(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))"
    r"(?::\s*(?P<msg>.*))?$"
)
_SYNTAX = re.compile(
    r"^(?:E\s+)?(?P<type>SyntaxError|IndentationError|TabError)(?::\s*(?P<msg>.*))?$"
)
_COMPILER = re.compile(
    r"^(?P<file>[^\s:]+):(?P<line>\d+):(?:\d+:)?\s*(?:fatal )?error:\s*(?P<msg>.*)$"
)
_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '(?P<mod>[^']+)'")
_IMPORT = re.compile(r"ImportError: (?P<msg>.+)")
_NOT_FOUND = re.compile(r"(?:^|\s)(?P<cmd>[\w./+-]+): (?:command )?not found")
_PYTEST_FAILED = re.compile(r"^(?P<kind>FAILED|ERROR) (?P<test>\S+)(?: - (?P<why>.*))?$")
_PYTEST_LOC = re.compile(r"^(?P<file>[\w./-]+\.py):(?P<line>\d+): (?P<type>\w+)$")
_NUMBERS = re.compile(r"\d+")
_HEX = re.compile(r"0x[0-9a-f]+", re.IGNORECASE)
# The subprocess backend's workspace is a fresh temporary folder per run
# (<tmp>/nexusd-run-XXXX/workspace); docker and bwrap mount it at /workspace.
_TEMP_WORKSPACE = re.compile(r"(?:/[^\s'\"/]+)*/nexusd-run-[^\s'\"/]+/workspace(?=/|\b)")
_IMPORT_OR_SYNTAX = frozenset(
    {"ModuleNotFoundError", "ImportError", "SyntaxError", "IndentationError", "TabError"}
)


@dataclass(frozen=True)
class Failure:
    """What kind of failure a result is, where it happened, and what to try next."""

    kind: str
    summary: str
    location: str = ""
    tests: tuple[str, ...] = ()
    error_type: str = ""
    cause: str = ""
    next_step: str = ""

    def signature(self, check: str) -> str:
        """A stable key for "the same failure again": kind, error type, place, tests."""
        place = self.location.split(":")[0]
        detail = ",".join(sorted(self.tests)) or _normalize(self.summary)
        return "|".join((check, self.kind, self.error_type, place, detail))


def _normalize(text: str) -> str:
    return _NUMBERS.sub("N", _HEX.sub("0x", text))[:120]


def _lines(result: CheckResult) -> list[str]:
    # One name for the workspace on every backend: a path that changes per run would make
    # every run's signature differ, and point at a folder that is gone.
    text = _TEMP_WORKSPACE.sub("/workspace", f"{result.stdout}\n{result.stderr}")
    return [line.rstrip() for line in text.splitlines()]


def _last_frame(lines: list[str], before: int | None = None) -> str:
    """The innermost frame in the check's own code (else the innermost frame at all)."""
    innermost = ""
    for line in reversed(lines[:before]):
        match = _PY_FRAME.search(line)
        if not match:
            continue
        path = (match["file"] or match["pfile"]).removeprefix("/workspace/")
        where = f"{path}:{match['line'] or match['pline']}"
        if not path.startswith(("/", "<frozen")):
            return where
        innermost = innermost or where
    return innermost


def classify(result: CheckResult) -> Failure:
    """Classify a result: passed, timeout, oom, syntax, import, tests, assertion, exception…"""
    if result.status == "passed":
        return Failure("passed", f"{result.name} passed")
    if result.error:
        # A NexusError's text: the message, then "  fix: …" (what the sandbox itself lacks).
        message, _, fix = result.error.partition("\n  fix: ")
        return Failure(
            "sandbox_error",
            message.splitlines()[0] if message else "the sandbox failed",
            cause="the sandbox failed, not the check",
            next_step=fix.strip() or "run `nexusd doctor` and apply the fix it prints",
        )
    if result.timed_out:
        return Failure(
            "timeout",
            f"killed after its timeout ({result.duration_ms} ms)",
            cause="an infinite loop, a deadlock, a wait on the network (which is "
            "off), or a check slower than its `timeout`",
            next_step="run the check locally with a profiler or `timeout`, or raise "
            "its `timeout` if it is just slow",
        )
    if result.oom_killed:
        return Failure(
            "oom",
            "killed for exceeding its memory limit",
            cause="the check needs more memory than its `memory` limit (or leaks)",
            next_step="measure peak memory (`/usr/bin/time -v`), stream data instead "
            "of loading it whole, or raise the check's `memory`",
        )
    lines = _lines(result)
    tests = _pytest(lines)
    if tests is not None and _trusted(tests):
        # pytest's own summary says what failed; an error message a test logged, or one
        # in the source lines pytest shows, is not the failure.
        return tests
    return (
        _syntax(lines)
        or _imports(lines)
        or tests
        or _traceback(lines)
        or _compiler(lines)
        or _fallback(result, lines)
    )


def _trusted(failure: Failure) -> bool:
    # Collection errors (`ERROR path.py`, no test id) and failures pytest itself reports as
    # import or syntax errors are read from the traceback, which names module and line.
    return any("::" in test for test in failure.tests) and (
        failure.error_type not in _IMPORT_OR_SYNTAX
    )


def _syntax(lines: list[str]) -> Failure | None:
    for i, line in enumerate(lines):
        match = _SYNTAX.match(line.strip())
        if match:
            where = _last_frame(lines, i)
            return Failure(
                "syntax_error",
                f"{match['type']}: {match['msg'] or ''}".strip(),
                location=where,
                error_type=match["type"],
                cause="the code does not parse",
                next_step=f"open {where or 'the file'}"
                " and fix the syntax; `python -m py_compile FILE` confirms the fix",
            )
    return None


def _imports(lines: list[str]) -> Failure | None:
    text = "\n".join(lines)
    if match := _NO_MODULE.search(text):
        module = match["mod"]
        return Failure(
            "missing_dependency",
            f"No module named '{module}'",
            location=_last_frame(lines),
            error_type="ModuleNotFoundError",
            cause=f"`{module}` is not installed where the check runs (the image; the host for "
            "bwrap), or the import path is wrong",
            next_step=f"add `{module.split('.')[0]}` to the image or "
            "the dependencies, or fix the import path",
        )
    if match := _IMPORT.search(text):
        return Failure(
            "import_error",
            f"ImportError: {match['msg']}",
            location=_last_frame(lines),
            error_type="ImportError",
            cause="a name moved, was renamed or a circular import",
            next_step="check the imported name exists in that module",
        )
    if match := _NOT_FOUND.search(text):
        return Failure(
            "missing_dependency",
            f"command not found: {match['cmd']}",
            error_type="CommandNotFound",
            cause=f"`{match['cmd']}` is not installed in the sandbox",
            next_step=f"install `{match['cmd']}` in the image or change the check's `run`",
        )
    return None


def _pytest(lines: list[str]) -> Failure | None:
    failed = [m for line in lines if (m := _PYTEST_FAILED.match(line))]
    if not failed:
        return None
    tests = tuple(dict.fromkeys(m["test"] for m in failed))
    reasons = [m["why"] or "" for m in failed]
    errors = [
        r.split(":")[0] for r in reasons if r and not r.startswith(("AssertionError", "assert"))
    ]
    etype = errors[0] if errors else "AssertionError"
    where = next(
        (f"{m['file']}:{m['line']}" for line in lines if (m := _PYTEST_LOC.match(line))),
        tests[0].split("::")[0],
    )
    names = ", ".join(tests[:5]) + (f" and {len(tests) - 5} more" if len(tests) > 5 else "")
    cause = (
        f"the code raised {etype} where the test expected it not to"
        if errors
        else "the code does not return what the test expects (assertion failed)"
    )
    return Failure(
        "test_failures",
        f"{len(tests)} test(s) failed: {names}",
        location=where,
        tests=tests,
        error_type=etype,
        cause=cause,
        next_step=f"run `pytest {tests[0]} -x -vv` and read the first failure",
    )


def _traceback(lines: list[str]) -> Failure | None:
    for i in range(len(lines) - 1, -1, -1):
        match = _EXC_LINE.match(lines[i].strip())
        if match and any("Traceback (most recent call last)" in x for x in lines[:i]):
            etype = match["type"]
            where = _last_frame(lines, i)
            kind = "assertion" if etype == "AssertionError" else "exception"
            return Failure(
                kind,
                f"{etype}: {match['msg'] or ''}".strip(),
                location=where,
                error_type=etype,
                cause=f"an uncaught {etype}",
                next_step=f"read the traceback at {where or 'its last frame'}",
            )
    return None


def _compiler(lines: list[str]) -> Failure | None:
    for line in lines:
        if match := _COMPILER.match(line.strip()):
            return Failure(
                "syntax_error",
                match["msg"],
                location=f"{match['file']}:{match['line']}",
                error_type="CompileError",
                cause="the code does not compile",
                next_step=f"fix the error at {match['file']}:{match['line']}",
            )
    return None


def _fallback(result: CheckResult, lines: list[str]) -> Failure:
    content = [line for line in lines if line.strip()]
    if not content:
        return Failure(
            "silent_exit",
            f"exit code {result.exit_code} with no output",
            cause="the command failed without saying why (a wrong path, a shell "
            "`set -e` step, a signal)",
            next_step="rerun it with `set -x` or verbose flags to see which step fails",
        )
    return Failure(
        "nonzero_exit",
        f"exit code {result.exit_code}: {content[-1].strip()[:200]}",
        cause="the command reported a failure",
        next_step="read the output's last lines",
    )


def reflect(result: CheckResult) -> str:
    """Markdown for the response: what failed, where, the likely cause, the next step."""
    failure = classify(result)
    head = (
        f"**{inline_code(result.name)} {result.status}** — {result.backend}, exit "
        f"{result.exit_code}, {result.duration_ms} ms"
    )
    lines = [head]
    if failure.kind != "passed":
        lines.append(f"- **What failed:** {failure.summary} ({failure.kind.replace('_', ' ')})")
        if failure.location:
            lines.append(f"- **Where:** {inline_code(failure.location)}")
        lines.append(f"- **Likely cause:** {failure.cause}")
        lines.append(f"- **Next diagnostic step:** {failure.next_step}")
    if not result.isolated:
        lines.append("- **Warning:** this check ran WITHOUT isolation (subprocess backend)")
    return "\n".join(lines)
