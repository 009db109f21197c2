"""Running generated code for `nexusd solve`: in the configured sandbox, one file per try.

`sandbox_runner(config)` puts the code into a one-file tree and runs it through
nexusd.sandbox (docker, bubblewrap or a plain process, whichever the sandbox
settings choose); `subprocess_runner` is the plain fallback when that package
is unavailable. Both return a RunResult; swap in any callable of that shape.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nexusd.config import Config
from nexusd.errors import ConfigError
from nexusd.processes import kill_group

# language -> (file name, command run in the tree's root)
LANGUAGES: dict[str, tuple[str, str]] = {
    "python": ("main.py", "python3 main.py"),
    "sh": ("main.sh", "sh main.sh"),
    "bash": ("main.sh", "bash main.sh"),
}


@dataclass(frozen=True)
class RunResult:
    """How one run of generated code ended."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    backend: str = "subprocess"
    error: str = ""

    @property
    def passed(self) -> bool:
        """Exit code 0, in time, with no sandbox failure."""
        return self.exit_code == 0 and not self.timed_out and not self.error


Runner = Callable[[str, str, float], RunResult]


def language_file(language: str) -> tuple[str, str]:
    """The file name and command for `language`, or a ConfigError naming the choices."""
    if language not in LANGUAGES:
        raise ConfigError(
            f"`{language}` is not a language nexusd solve can run",
            hint="use one of: " + ", ".join(sorted(LANGUAGES)),
        )
    return LANGUAGES[language]


def _tree_tar(name: str, code: str) -> bytes:
    data = code.encode("utf-8")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mode = 0o644
        info.mtime = int(time.time())
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def sandbox_runner(config: Config) -> Runner:
    """A runner on nexusd.sandbox with the `sandbox.*` limits; subprocess if it is missing."""
    try:
        from nexusd.sandbox.probe import choose
        from nexusd.sandbox.runner import run_one
        from nexusd.sandbox.spec import CheckSpec, memory_limit
    except ImportError:
        return subprocess_runner

    def run(code: str, language: str, timeout_s: float) -> RunResult:
        name, command = language_file(language)
        spec = CheckSpec(
            name="solve",
            run=command,
            image=config.sandbox.image,
            timeout=timeout_s,
            memory_bytes=memory_limit(config.sandbox.memory, "sandbox.memory"),
            cpus=float(config.sandbox.cpus),
            pids=config.sandbox.pids,
            output_limit=config.sandbox.output_limit_bytes,
        )
        choice = choose(config, [spec.image])
        result = run_one(spec, _tree_tar(name, code), choice)
        return RunResult(
            exit_code=result.exit_code,
            stdout=result.stdout,
            stderr=result.stderr,
            timed_out=result.timed_out,
            backend=result.backend,
            error=result.error,
        )

    return run


def subprocess_runner(code: str, language: str, timeout_s: float) -> RunResult:
    """Run the code as a plain child process in a temporary folder (not isolated)."""
    name, command = language_file(language)
    argv = command.split()
    if argv[0] == "python3":
        argv[0] = sys.executable
    with tempfile.TemporaryDirectory(prefix="nexusd-solve-") as tmp:
        Path(tmp, name).write_text(code, encoding="utf-8")
        proc = subprocess.Popen(
            argv,
            cwd=tmp,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            out, err = proc.communicate()
            timed_out = True
    return RunResult(
        exit_code=None if timed_out else proc.returncode,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        timed_out=timed_out,
    )
