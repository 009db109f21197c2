"""`nexusd plan FILE`: one request answered in the foreground."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexusd.cli import cli
from nexusd.errors import NexusError
from nexusd.protocol.render import read_response_meta
from nexusd.yamlload import MAX_DEPTH
from tests.yaml_nesting import deep_field

NAME = "2025-05-08T14_02_11_plan_request.md"
RESPONSE = "2025-05-08T14_02_11_plan_response.md"
GOOD = "---\ncycle: 1\ngoal: Make the README explain the quickstart\nartifacts: [README.md]\n---\n"


def _plan(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["plan", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _request(repo: Path, text: str, name: str = NAME) -> Path:
    folder = repo / ".scratchpad_logs"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_plan_writes_the_response_and_prints_its_path(repo: Path) -> None:
    request = _request(repo, GOOD)
    code, out, _ = _plan(str(request))
    assert code == 0
    assert out.strip() == str(request.with_name(RESPONSE))
    meta = read_response_meta(request.with_name(RESPONSE).read_text())
    assert meta is not None and meta["status"] == "ok" and meta["revision"] == 1


def test_plan_again_is_skipped_unless_forced(repo: Path) -> None:
    request = _request(repo, GOOD)
    assert _plan(str(request))[0] == 0
    code, out, _ = _plan(str(request), "--json")
    assert code == 0
    data = json.loads(out)
    assert (data["status"], data["revision"]) == ("skipped", 1)
    code, out, _ = _plan(str(request), "--force", "--json")
    assert (code, json.loads(out)["revision"]) == (0, 2)


def test_plan_stdout_writes_nothing(repo: Path) -> None:
    request = _request(repo, GOOD)
    code, out, _ = _plan(str(request), "--stdout")
    assert code == 0
    assert out.startswith("---\nprotocol_version: 1\n")
    assert "# Plan for cycle 1: Make the README explain the quickstart" in out
    assert "## Executor Follow-up Checklist" in out
    assert not request.with_name(RESPONSE).exists()


@pytest.mark.parametrize("stdout", [False, True])
def test_error_response_exits_4(repo: Path, stdout: bool) -> None:
    request = _request(repo, "---\nproject: demo\n---\n")
    args = [str(request), "--stdout"] if stdout else [str(request)]
    code, out, err = _plan(*args)
    assert code == 4
    if stdout:
        assert "status: error" in out
        assert not request.with_name(RESPONSE).exists()
    else:
        assert "no goal" in err
        assert "status: error" in request.with_name(RESPONSE).read_text()


@pytest.mark.parametrize(("shape", "levels"), [("flow_map", 200), ("flow_list", 5000)])
@pytest.mark.parametrize("stdout", [False, True])
def test_front_matter_nested_too_deep_exits_4_with_an_error_response(
    repo: Path, shape: str, levels: int, stdout: bool
) -> None:
    # 200 levels of mappings: a RecursionError, exit 70 with "a bug in nexusd" and a
    # traceback; 5000 a "not valid YAML" error whose fix said to quote a value.
    request = _request(repo, f"---\ngoal: x\n{deep_field(shape, levels)}---\n")
    code, out, err = _plan(str(request), *(["--stdout"] if stdout else []))
    assert code == 4
    needle = f"lists and mappings nest deeper than {MAX_DEPTH} levels, on line 3"
    response = out if stdout else request.with_name(RESPONSE).read_text()
    assert "status: error" in response and needle in response and "flatten it" in response
    if not stdout:  # else the error response, on stdout, says it
        assert needle in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("name", "create", "code", "needle"),
    [
        ("notes.md", True, 4, "not named like a plan request"),
        (NAME, False, NexusError.exit_code, "does not exist"),
    ],
)
def test_bad_arguments(repo: Path, name: str, create: bool, code: int, needle: str) -> None:
    path = repo / name
    if create:
        path.write_text(GOOD)
    result_code, _, err = _plan(str(path))
    assert result_code == code
    assert needle in err and "fix:" in err


@pytest.mark.parametrize(
    ("name", "needle", "fix"),
    [
        ("x" * 239 + "_plan_request.md", "too long a name", "at most 254 bytes"),
        ("x" * 239 + "-plan_request.md", "too long a name", "at most 254 bytes"),
        (os.fsdecode(b"caf\xe9_plan_request.md"), "not a UTF-8 file name", "UTF-8 name"),
    ],
    ids=["255-bytes", "255-bytes-dash", "latin-1"],
)
def test_a_name_no_response_can_have_exits_4_and_says_to_rename(
    repo: Path, name: str, needle: str, fix: str
) -> None:
    # Too long: the response's name (one byte more) could not be created, and `plan` died
    # with a traceback (exit 70). Not UTF-8: it said "make the request's folder writable".
    request = _request(repo, GOOD, name)
    for args in ([str(request)], [str(request), "--stdout"]):
        code, out, err = _plan(*args)
        assert (code, out) == (4, "")
        assert needle in err and "fix: rename the request to a" in err
        assert fix in err and "Traceback" not in err
    assert os.listdir(request.parent) == [request.name]


def test_unwritable_response_is_an_error(repo: Path) -> None:
    request = _request(repo, GOOD)
    request.with_name(RESPONSE).mkdir()  # the response path is taken by a folder
    code, _, err = _plan(str(request), "--force")
    assert code == NexusError.exit_code  # refused: nothing nexusd can write there
    assert "cannot write" in err


def test_python_dash_m_nexusd_plan(repo: Path) -> None:
    request = _request(repo, GOOD)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [sys.executable, "-m", "nexusd", "plan", str(request), "--json"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "ok"
    assert Path(data["response"]) == request.with_name(RESPONSE)
    assert data["timings_ms"]["total"] > 0


@pytest.mark.parametrize("memory", [True, False])
def test_plan_without_a_daemon_cites_memory_found_by_keyword(repo: Path, memory: bool) -> None:
    (repo / "MEMORY.md").write_text(
        "# Memory\n\n## Lessons\n\n- The quickstart must stay two commands: setup and tests.\n",
        encoding="utf-8",
    )
    request = _request(repo, GOOD)
    code, _, err = _plan(str(request), *([] if memory else ["--no-memory"]))
    assert code == 0
    text = request.with_name(RESPONSE).read_text(encoding="utf-8")
    if memory:
        # It searched the memory itself, by keyword: no model load for one plan.
        assert "no daemon running: keyword search, embedding model not loaded" in err
        assert "## Evidence from Memory" in text
        assert "`MEMORY.md:5`" in text
        warnings = read_response_meta(text)["warnings"]
        assert any("keyword only" in w for w in warnings)
    else:
        assert "no daemon running" not in err
        assert "Evidence from Memory" not in text


def test_plan_on_a_fifo_says_it_is_not_a_regular_file(repo: Path) -> None:
    folder = repo / ".scratchpad_logs"
    folder.mkdir()
    fifo = folder / NAME
    os.mkfifo(fifo)
    result = CliRunner().invoke(cli, ["plan", str(fifo)])
    assert result.exit_code == NexusError.exit_code == 10
    assert "is not a regular file" in result.output


def test_a_first_code_index_built_by_plan_shows_progress_once(repo: Path) -> None:
    from tests.conftest import git

    (repo / "pkg").mkdir()
    for n in range(60):
        (repo / "pkg" / f"mod{n}.py").write_text(f"def handler_{n}(event):\n    return event\n")
    (repo / ".nexus").mkdir(exist_ok=True)
    (repo / ".nexus" / "config.yaml").write_text("code:\n  workers: 1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "sixty modules")
    code, _, err = _plan(str(_request(repo, "# Fix handler_42\n\nhandler_42 drops the event\n")))
    assert code == 0 and "no daemon running: indexing the code" in err
    meta = read_response_meta((repo / ".scratchpad_logs" / RESPONSE).read_text(encoding="utf-8"))
    assert meta is not None and meta["relevant_files"][0] == "pkg/mod42.py"  # type: ignore[index]
    other = "2025-05-08T15_00_00_plan_request.md"
    code, _, err = _plan(str(_request(repo, "# Fix handler_7\n\nhandler_7 too\n", other)))
    assert code == 0 and "indexing the code" not in err  # up to date: nothing to show


def test_plan_counts_its_time_box_from_the_start_of_the_command(repo: Path) -> None:
    # A real `nexusd plan` process with a 1 ms budget: start-up alone spends it, so the
    # provider (a real server that would answer) is never asked, and the response says why.
    from tests.models.loopback import Loopback, Reply, chat_payload

    request = _request(repo, GOOD)
    with Loopback([Reply(body=chat_payload("lorem ipsum"))]) as server:
        (repo / ".nexus").mkdir()
        (repo / ".nexus" / "config.yaml").write_text(
            "planner: {provider: server, timeout_ms: 1}\n"
            f"providers:\n  server: {{type: openai, base_url: '{server.url}/v1', model: m}}\n"
            "memory: {enabled: false}\ncheckpoint: {on_request: false}\n",
            encoding="utf-8",
        )
        proc = _real_plan(repo, str(request), "--json", timeout=120)
        asked = list(server.requests)
    assert proc.returncode == 0, proc.stderr
    assert asked == []
    meta = read_response_meta(request.with_name(RESPONSE).read_text(encoding="utf-8"))
    assert meta is not None
    assert meta["planner"] == "offline"
    (note,) = [w for w in meta["warnings"] if "planner.timeout_ms" in w]
    assert "was spent before the model could be asked" in note
    assert "since the command started" in note


def _real_plan(repo: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    """`nexusd plan ARGS` as a process of its own, run in `repo`."""
    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, "-P", "-m", "nexusd", "plan", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=timeout,
    )


def test_plan_keeps_a_response_the_user_edited_and_says_where(repo: Path) -> None:
    request = _request(repo, GOOD)
    assert _real_plan(repo, "--no-memory", str(request)).returncode == 0
    response = request.with_name(RESPONSE)
    note = "\n## My Notes\n\nThe quickstart step is done: see PR 12.\n"
    response.write_text(response.read_text(encoding="utf-8") + note, encoding="utf-8")
    _request(repo, GOOD.replace("quickstart", "quickstart and the licence"))
    proc = _real_plan(repo, "--no-memory", str(request))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(response)
    [kept] = request.parent.glob("*_plan_response.edited-*.md")
    assert kept.read_text(encoding="utf-8").endswith(note)
    assert f"kept: {RESPONSE} had been changed since nexusd wrote it" in proc.stderr
    assert kept.name in proc.stderr
    meta = read_response_meta(response.read_text(encoding="utf-8"))
    assert meta is not None and meta["revision"] == 2
    assert any(kept.name in w for w in meta["warnings"])
    # --force on the new (unchanged) response keeps nothing more; on an edited one it does.
    data = json.loads(_real_plan(repo, "--no-memory", str(request), "--force", "--json").stdout)
    assert (data["revision"], data["kept"]) == (3, [])
    response.write_text(response.read_text(encoding="utf-8") + note, encoding="utf-8")
    data = json.loads(_real_plan(repo, "--no-memory", str(request), "--force", "--json").stdout)
    assert data["revision"] == 4 and len(data["kept"]) == 1
    assert Path(data["kept"][0]).read_text(encoding="utf-8").endswith(note)
