"""`nexusd mcp`'s stdio transport against a hostile client (a real subprocess): every line it
cannot read is answered, and a client that leaves mid-call takes its checks with it."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from daemon.helpers import nexusd_env, wait_until
from mcp import ClientSession

from api.conftest import error_text, result_json, run_mcp
from nexusd.processes import pid_alive

pytestmark = pytest.mark.slow
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def _answer(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> dict[str, Any]:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no answer: the server dropped the message and the client would wait forever"
    line = proc.stdout.readline()
    assert line, "the server closed stdout"
    answer: dict[str, Any] = json.loads(line)
    return answer


def _raw_server(repo: Path) -> subprocess.Popen[bytes]:
    """`nexusd mcp` on `repo` with raw pipes: the SDK client cannot send what is tested."""
    return subprocess.Popen(
        [sys.executable, "-P", "-m", "nexusd", "mcp", "-C", str(repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=nexusd_env(),
        cwd=repo,
    )


def test_every_unreadable_line_gets_an_answer_and_serving_goes_on(memory_repo: Path) -> None:
    # What a JavaScript client writes for a string cut inside an emoji: "\ud83d" alone.
    lines = [
        r'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_save",'
        r'"arguments":{"text":"cut \ud83d"}}}',
        r'{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"open_file",'
        r'"arguments":{"path":"README.md\udc00"}}}',
        "{not json",
        '{"jsonrpc":"2.0","id":4}',
        '{"jsonrpc":"2.0","id":5,"method":7}',
        r'{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":"\ud800"}}',
        '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"status","arguments":{}}}',
    ]
    proc = _raw_server(memory_repo)
    assert proc.stdin is not None
    try:
        proc.stdin.write((json.dumps(INIT) + "\n").encode())
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.flush()
        assert _answer(proc)["id"] == 0
        proc.stdin.write("\n".join(lines).encode() + b"\n")
        proc.stdin.flush()
        answers = [_answer(proc) for _ in range(6)]  # the notification gets none
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert proc.stderr is not None
    stderr = proc.stderr.read().decode()
    by_id = {a["id"]: a for a in answers}
    assert set(by_id) == {1, "two", None, 4, 5, 6}, answers
    cut = by_id[1]["error"]["message"]
    assert "lone surrogate" in cut and "\\ud83d" in cut and "params.arguments.text" in cut
    assert "UTF-8" in cut
    assert "\\udc00 in params.arguments.path" in by_id["two"]["error"]["message"]
    assert "not JSON" in by_id[None]["error"]["message"]
    assert by_id[None]["error"]["code"] == -32700
    assert by_id[4]["error"]["code"] == by_id[5]["error"]["code"] == -32600
    assert not by_id[6]["result"]["isError"]  # still serving
    assert not (memory_repo / "MEMORY.md").exists()  # the cut entry was not saved
    assert stderr.count("unreadable message from the client") == 6
    assert "Traceback" not in stderr


def test_sigterm_ends_the_server_while_the_client_keeps_stdin_open(memory_repo: Path) -> None:
    proc = _raw_server(memory_repo)
    assert proc.stdin is not None
    try:
        proc.stdin.write((json.dumps(INIT) + "\n").encode())
        proc.stdin.flush()
        assert _answer(proc)["id"] == 0
        proc.terminate()
        # Before, it waited for the thread reading stdin: until the client closed the pipe.
        assert proc.wait(timeout=30) == 128 + 15
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()


def test_a_client_leaving_mid_call_takes_its_checks_with_it(memory_repo: Path) -> None:
    pid_file = memory_repo.parent / "check.pid"
    (memory_repo / ".nexus" / "config.yaml").write_text(
        "memory:\n  enabled: false\nsandbox:\n  backend: subprocess\n  timeout: 600\n"
        f"checks:\n  - name: slow\n    run: echo $$ > {pid_file}; sleep 300\n",
        encoding="utf-8",
    )

    async def body(session: ClientSession) -> float:
        with anyio.move_on_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.call_tool, "run_checks", {})
                await anyio.to_thread.run_sync(
                    lambda: wait_until(pid_file.exists, timeout=50, what="the check to start")
                )
                tg.cancel_scope.cancel()  # the client gives up and leaves
        return time.monotonic()

    left = run_mcp(memory_repo, body, "--role", "developer")
    pid = int(pid_file.read_text(encoding="utf-8").split()[0])
    wait_until(lambda: not pid_alive(pid), timeout=15, what=f"the check (pid {pid}) to end")
    assert time.monotonic() - left < 15


def test_paths_no_file_can_have_are_refused_with_their_reason(memory_repo: Path) -> None:
    (memory_repo / "loop.txt").symlink_to("loop.txt")
    paths = ["README.md\0", "loop.txt", "loop.txt/inside", "a" * 300]

    async def body(session: ClientSession) -> tuple[list[str], list[str]]:
        opened = [error_text(await session.call_tool("open_file", {"path": p})) for p in paths]
        other = [
            error_text(await session.call_tool("checkpoint_create", {"message": "a\0b"})),
            error_text(await session.call_tool("memory_get", {"id": "no-such-chunk"})),
        ]
        result_json(await session.call_tool("checkpoint_create", {"message": "tab\tand\r\nok"}))
        return opened, other

    opened, other = run_mcp(memory_repo, body, "--role", "developer")
    assert "NUL character" in opened[0] and "ValueError" not in opened[0]
    for text in opened[1:3]:
        assert "link loop" in text and "RuntimeError" not in text, text
    assert "refusing to open" in opened[3]
    assert "control character (U+0000)" in other[0] and "nothing was created" in other[0]
    assert other[1].startswith("Error executing tool memory_get: not found:"), other[1]
    git = subprocess.run(
        ["git", "for-each-ref", "refs/nexus/checkpoints"],
        cwd=memory_repo,
        capture_output=True,
        text=True,
        check=True,
    )
    assert len(git.stdout.splitlines()) == 1  # only the valid message made one


def test_an_empty_role_is_refused_not_taken_for_the_default(memory_repo: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "nexusd", "mcp", "-C", str(memory_repo), "--role", ""],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=nexusd_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode != 0 and "unknown role ''" in proc.stderr, proc.stderr
    assert "admin, analyst, developer, user" in proc.stderr
