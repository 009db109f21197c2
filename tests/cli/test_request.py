"""`nexusd request new` inside a real git repository."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from daemon.helpers import (
    daemon,
    daemon_without_memory,
    front_matter,
    nexusd,
    served,
    sha256_of,
    start_daemon,
)

from nexusd.cli import cli
from nexusd.cli.request import _show
from nexusd.daemon.waiting import answered
from nexusd.errors import NexusError
from nexusd.protocol.naming import is_request_file, request_timestamp
from nexusd.protocol.parse import parse_request

__all__ = ["daemon", "daemon_without_memory", "served", "start_daemon"]  # fixtures


def response_for_request(response: Path) -> Path:
    """`X_plan_response.md` -> `X_plan_request.md`."""
    return response.with_name(response.name.replace("_plan_response.md", "_plan_request.md"))


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["request", "new", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_new_writes_a_canonical_request(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    code, out, _ = _run(
        "--goal", "Fix the flaky login test", "--cycle", "2",
        "--blocker", "times out on CI", "--blocker", "no logs",
        "--artifact", "tests/test_login.py", "--project", "demo",
    )  # fmt: skip
    assert code == 0
    path = repo / out.strip()
    assert path.parent == repo / ".scratchpad_logs"
    assert is_request_file(path)
    assert request_timestamp(path.name) is not None
    req = parse_request(path.read_bytes(), str(path))
    assert req.form == "frontmatter"
    assert req.goal == "Fix the flaky login test"
    assert req.cycle == 2
    assert req.project == "demo"
    assert req.blockers == ("times out on CI", "no logs")
    assert req.artifacts == ("tests/test_login.py",)


def test_second_request_in_the_same_second_gets_its_own_file(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    outs = [_run("--goal", f"goal {i}", "--json")[1] for i in range(3)]
    paths = [Path(json.loads(out)["request"]) for out in outs]
    assert len(set(paths)) == 3
    for path, out in zip(paths, outs, strict=True):
        assert json.loads(out)["response"] == str(path).replace(
            "_plan_request.md", "_plan_response.md"
        )
        assert path.is_file()


def test_json_and_watch_paths_from_config(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text("watch:\n  paths: [plans]\n", encoding="utf-8")
    monkeypatch.chdir(repo / ".nexus")  # anywhere inside the repository
    code, out, err = _run("--goal", "Ship it", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert Path(data["request"]).parent == (repo / "plans").resolve()
    assert data["response"].endswith("_plan_response.md")
    assert "nothing will answer" in err  # stdout is pure JSON; the note goes to stderr


def test_dir_outside_watch_paths_is_noted(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    code, out, err = _run("--goal", "Ship it", "--dir", "elsewhere")
    assert code == 0
    assert out.strip().startswith("elsewhere/")
    assert "not in watch.paths" in err


@pytest.mark.parametrize("args", [(), ("--goal", ""), ("--goal", "  \t ")])
def test_goal_or_edit_is_required(
    repo: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    monkeypatch.chdir(repo)
    code, _, err = _run(*args)
    assert code == 2
    assert "--goal" in err and "--edit" in err and "front matter" not in err
    assert not (repo / ".scratchpad_logs").exists()


def test_edit_uses_the_editor(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    editor = tmp_path / "fake-editor"
    editor.write_text(
        "#!/bin/sh\nsed -i 's/^goal:$/goal: Written in the editor/' \"$1\"\n", encoding="utf-8"
    )
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.setenv("VISUAL", str(editor))
    monkeypatch.chdir(repo)
    code, out, _ = _run("--edit", "--cycle", "4")
    assert code == 0
    req = parse_request((repo / out.strip()).read_bytes(), "edited")
    assert (req.goal, req.cycle) == ("Written in the editor", 4)


def test_edit_without_a_goal_writes_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = tmp_path / "fake-editor"
    editor.write_text("#!/bin/sh\necho '# changed' >> \"$1\"\n", encoding="utf-8")
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.setenv("VISUAL", str(editor))
    monkeypatch.chdir(repo)
    code, _, err = _run("--edit")
    assert code == 4  # ProtocolError
    assert "no goal" in err
    assert "fix:" in err
    assert not (repo / ".scratchpad_logs").exists()


def test_edit_quit_without_saving(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDITOR", "true")
    monkeypatch.setenv("VISUAL", "true")
    monkeypatch.chdir(repo)
    code, _, err = _run("--edit")
    assert code == 1
    assert "without saving" in err
    assert not (repo / ".scratchpad_logs").exists()


def test_outside_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = _run("--goal", "x")
    assert code == 5
    assert "error:" in err


def test_without_a_daemon_it_says_nothing_will_answer(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    code, out, err = _run("--goal", "Ship it")
    assert code == 0
    assert "nothing will answer this request" in err
    assert "nexusd start" in err and f"nexusd plan {out.strip()}" in err
    assert "--wait" in err


def test_wait_without_a_daemon_answers_in_this_process(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    code, out, err = _run("--goal", "Add a --verbose flag", "--wait")
    assert code == 0, err
    response = repo / out.strip()
    assert response.name.endswith("_plan_response.md")
    meta = front_matter(response)
    request = response_for_request(response)
    assert meta["status"] == "ok"
    assert meta["request_sha256"] == sha256_of(request)
    assert "answering the request in this process" in err
    assert "nothing will answer" not in err


def test_print_without_a_daemon_prints_the_response(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    code, out, _ = _run("--goal", "Add a --verbose flag", "--print", "--json")
    assert code == 0
    paths = json.loads(out)
    assert paths["status"] == "ok"
    code, out, _ = _run("--goal", "Add a --quiet flag", "--print")
    assert code == 0
    assert out.startswith("---\n") and "status: ok" in out and "Add a --quiet flag" in out
    written = sorted((repo / ".scratchpad_logs").glob("*_plan_response.md"))
    assert out in [p.read_text(encoding="utf-8") for p in written]


def test_wait_with_a_daemon_prints_the_daemons_response(daemon: Path, tmp_path: Path) -> None:
    proc = nexusd(daemon, "request", "new", "--goal", "Fix the login test", "--wait")
    response = daemon / proc.stdout.strip()
    meta = front_matter(response)
    assert meta["status"] == "ok"
    assert meta["request_sha256"] == sha256_of(response_for_request(response))
    assert "in this process" not in proc.stderr
    assert "nothing will answer" not in proc.stderr
    quiet = nexusd(daemon, "request", "new", "--goal", "Another goal")
    assert quiet.stderr == ""


def _planted(tmp_path: Path) -> tuple[Path, Path]:
    """A request, and outside its folder a response to it that a link could point at."""
    folder = tmp_path / "logs"
    folder.mkdir()
    request = folder / "2025-05-08T14_02_11_plan_request.md"
    request.write_text("---\ngoal: Ship it\n---\n", encoding="utf-8")
    sha = hashlib.sha256(request.read_bytes()).hexdigest()
    target = tmp_path / "elsewhere.md"
    target.write_text(
        f"---\nrequest_file: {request.name}\nrequest_sha256: {sha}\nrevision: 1\n"
        "status: ok\n---\n# secret-of-the-link-target\n",
        encoding="utf-8",
    )
    return request, target


def test_a_response_name_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    request, target = _planted(tmp_path)
    response = request.with_name("2025-05-08T14_02_11_plan_response.md")
    response.symlink_to(target)
    assert answered(request, response) is None
    with pytest.raises(NexusError, match="regular file"):
        _show(request, response, as_json=False, text=True)


@pytest.mark.timeout(60)
def test_a_response_name_that_is_a_fifo_does_not_block(tmp_path: Path) -> None:
    request, _ = _planted(tmp_path)
    response = request.with_name("2025-05-08T14_02_11_plan_response.md")
    os.mkfifo(response)
    assert answered(request, response) is None
    with pytest.raises(NexusError, match="regular file"):
        _show(request, response, as_json=False, text=True)


@pytest.mark.parametrize("stale_socket", [False, True], ids=["no-socket", "stale-socket"])
def test_wait_without_a_daemon_searches_memory_by_keyword_and_says_so(
    repo: Path, stale_socket: bool
) -> None:
    """Also when a daemon killed with -9 left its socket file behind: nothing listens there,
    and a plan that asked it went without memory, silently."""
    if stale_socket:
        import socket

        from nexusd.paths import find_repo

        path = find_repo(repo).socket_path
        path.parent.mkdir(parents=True, exist_ok=True)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
            dead.bind(str(path))  # closed without unlinking: the file stays, nobody listens
        assert path.exists()
    (repo / "MEMORY.md").write_text(
        "# Memory\n\n## Lessons\n\n- The quickstart must stay two commands: setup and tests.\n",
        encoding="utf-8",
    )
    (repo / ".nexus").mkdir(exist_ok=True)
    (repo / ".nexus" / "config.yaml").write_text("memory:\n  enabled: true\n", encoding="utf-8")
    proc = nexusd(repo, "request", "new", "--goal", "Explain the quickstart", "--wait")

    # No model load: the memory is searched by keyword, and both stderr and the response
    # say why.
    assert "loading the embedding model" not in proc.stderr
    assert "keyword search, embedding model not loaded" in proc.stderr
    response = repo / proc.stdout.strip()
    meta = front_matter(response)
    assert meta["status"] == "ok"
    assert any("keyword only" in w and "no daemon" in w for w in meta["warnings"])
    assert "`MEMORY.md:5`" in response.read_text(encoding="utf-8")


def test_a_goal_pasted_on_standard_input_is_kept_whole(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    issue = (
        "Mod(x**2, x) is not (always) 0\n\nWhen the base is not an integer:\n\n"
        "```python\n>>> Mod(x**2, x)\n0\n```\n"
    )
    result = CliRunner().invoke(cli, ["request", "new", "--goal", "-"], input=issue)
    assert result.exit_code == 0, result.stderr
    req = parse_request((repo / result.stdout.strip()).read_bytes(), "request")
    assert req.goal.strip() == issue.strip()


@pytest.mark.parametrize(
    ("data", "args", "message"),
    [
        (b"\n  \n", (), "standard input was empty"),
        (b"Fix caf\xe9 parse_expr\n", (), "not UTF-8 text (byte 7)"),
        (b"x" * 2_000, (), "over watch.max_request_bytes (1,024 bytes)"),
        (b"Fix it\n", ("--edit",), "--edit the terminal: use one"),
    ],
)
def test_standard_input_that_cannot_be_a_goal_is_a_usage_error(
    repo: Path, monkeypatch: pytest.MonkeyPatch, data: bytes, args: tuple[str, ...], message: str
) -> None:
    (repo / ".nexus").mkdir()
    (repo / ".nexus" / "config.yaml").write_text("watch:\n  max_request_bytes: 1024\n")
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(cli, ["request", "new", "--goal", "-", *args], input=data)
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert not (repo / ".scratchpad_logs").exists()


def test_crlf_on_standard_input_is_stored_with_newlines(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    issue = b"parse_expr crashes\r\n\r\n```\r\n>>> parse_expr('')\r\n```\r\n"
    result = CliRunner().invoke(cli, ["request", "new", "--goal", "-"], input=issue)
    assert result.exit_code == 0, result.stderr
    text = (repo / result.stdout.strip()).read_text(encoding="utf-8")
    assert "\r" not in text and "goal: |" in text
    assert parse_request(text.encode(), "r").goal.startswith("parse_expr crashes\n\n```\n")


def test_a_request_folder_linked_outside_the_repository_is_refused_before_writing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (repo / ".scratchpad_logs").symlink_to(out, target_is_directory=True)
    monkeypatch.chdir(repo)

    result = CliRunner().invoke(cli, ["request", "new", "--goal", "Ship it"])

    assert result.exit_code == NexusError.exit_code, result.output
    assert f"resolves to {out}, outside the repository" in result.stderr
    assert "nothing was written" in result.stderr
    assert list(out.iterdir()) == []


def test_a_file_in_place_of_the_request_folder_is_refused_with_the_fix(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # mkdir raised FileExistsError: a traceback and "a bug in nexusd" (exit 70).
    (repo / ".scratchpad_logs").write_text("notes\n", encoding="utf-8")
    monkeypatch.chdir(repo)

    result = CliRunner().invoke(cli, ["request", "new", "--goal", "Ship it"])

    assert result.exit_code == NexusError.exit_code, result.output
    assert "is a file, not a folder; nothing was written" in result.stderr
    assert "fix: move that file out of the way" in result.stderr
    assert "Traceback" not in result.output
    assert (repo / ".scratchpad_logs").read_text(encoding="utf-8") == "notes\n"
