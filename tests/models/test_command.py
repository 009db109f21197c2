"""The command provider against real scripts: answers, failures, hangs, garbage."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from nexusd.models.command import EX_TEMPFAIL
from nexusd.models.registry import (
    Message,
    ModelCall,
    ProviderError,
    ProviderSettings,
    ProviderTimeout,
    create_provider,
)


def script(tmp_path: Path, body: str, name: str = "model.py") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def provider(path: Path, *args: str, timeout_ms: int = 20_000):
    settings = ProviderSettings(
        name="cli",
        type="command",
        model="tiny",
        command=(sys.executable, str(path)),
        args=args,
        timeout_ms=timeout_ms,
    )
    return create_provider(settings)


CALL = ModelCall(
    messages=(Message("system", "Be brief."), Message("user", "Plan the login fix.")),
    format="json",
    timeout_s=20.0,
)

ECHO = """
import json, os, sys
prompt = sys.stdin.read() if len(sys.argv) < 2 else sys.argv[1]
print(json.dumps({"prompt": prompt, "model": os.environ["NEXUSD_MODEL"],
                  "format": os.environ["NEXUSD_FORMAT"], "argv": sys.argv[1:]}))
"""


def test_prompt_on_stdin_and_stdout_is_the_answer(tmp_path: Path) -> None:
    done = provider(script(tmp_path, ECHO)).complete(CALL)
    answer = json.loads(done.text)
    assert "Plan the login fix." in answer["prompt"]
    assert "Be brief." in answer["prompt"]
    assert answer["model"] == "tiny"
    assert answer["format"] == "json"
    assert answer["argv"] == []
    assert done.model == "tiny"


def test_prompt_as_an_argument_with_model_placeholder(tmp_path: Path) -> None:
    done = provider(script(tmp_path, ECHO), "{prompt}", "--model={model}").complete(CALL)
    answer = json.loads(done.text)
    assert "Plan the login fix." in answer["prompt"]
    assert answer["argv"][1] == "--model=tiny"


@pytest.mark.parametrize(
    ("code", "retryable"),
    [(1, False), (2, False), (EX_TEMPFAIL, True)],
)
def test_exit_codes(tmp_path: Path, code: int, retryable: bool) -> None:
    path = script(tmp_path, f"import sys\nsys.stderr.write('quota exceeded')\nsys.exit({code})\n")
    with pytest.raises(ProviderError) as info:
        provider(path).complete(CALL)
    assert info.value.retryable is retryable
    assert f"exited with {code}" in info.value.message
    assert "quota exceeded" in info.value.message


def test_a_hung_command_is_killed_with_its_children(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    path = script(
        tmp_path,
        "import subprocess, sys, time\n"
        "child = subprocess.Popen(['sleep', '60'])\n"
        f"open({str(marker)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n",
    )
    hung = provider(path)
    with pytest.raises(ProviderTimeout) as info:
        hung.complete(ModelCall(messages=CALL.messages, timeout_s=1.0))
    assert info.value.retryable
    child = int(marker.read_text())
    # The grandchild was in the killed process group: it is gone (or a zombie awaiting init).
    # SIGKILL lands asynchronously, so a loaded machine may show it running for a moment;
    # a child that was never signalled would sleep on for its whole minute.
    stat = Path(f"/proc/{child}/stat")

    def dead() -> bool:
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
        except FileNotFoundError:
            return True

    deadline = time.monotonic() + 20.0
    while not dead() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert dead()


def test_garbage_is_returned_as_text_for_the_schema_layer(tmp_path: Path) -> None:
    done = provider(script(tmp_path, "print('<<<not json at all>>>')\n")).complete(CALL)
    assert done.text.strip() == "<<<not json at all>>>"


def test_no_output_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="printed nothing"):
        provider(script(tmp_path, "import sys\nsys.stderr.write('thinking...')\n")).complete(CALL)


def test_missing_program(tmp_path: Path) -> None:
    settings = ProviderSettings(name="cli", type="command", command=(str(tmp_path / "nope"),))
    with pytest.raises(ProviderError, match="cannot run"):
        create_provider(settings).complete(CALL)


def test_no_command_configured() -> None:
    with pytest.raises(ProviderError, match="has no command"):
        create_provider(ProviderSettings(name="cli", type="command"))


def test_shell_script_provider(tmp_path: Path) -> None:
    path = tmp_path / "model.sh"
    path.write_text('#!/bin/sh\nread -r first\necho "{\\"first\\": \\"$first\\"}"\n')
    os.chmod(path, 0o755)
    settings = ProviderSettings(name="sh", type="command", command=(str(path),))
    done = create_provider(settings).complete(CALL)
    assert json.loads(done.text) == {"first": "### system"}
