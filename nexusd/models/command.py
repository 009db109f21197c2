"""Any command-line model or agent (`claude -p`, `codex exec`, `llm`, a script) as a provider.

The prompt goes on standard input, or into the argument that contains
`{prompt}`; `{model}` in an argument is replaced by the model name. Standard
output is the answer. Exit code 0 is success, 75 (EX_TEMPFAIL) a failure worth
retrying, anything else a failure. The whole process group is killed when the
timeout passes, so a hung CLI never blocks the queue.
"""

from __future__ import annotations

import os
import subprocess

from nexusd.models.base import (
    Completion,
    ModelCall,
    ProviderError,
    ProviderSettings,
    ProviderTimeout,
)
from nexusd.processes import kill_group

EX_TEMPFAIL = 75
_STDERR_TAIL = 400


class CommandProvider:
    """Run a command per call; its stdout is the completion."""

    def __init__(self, settings: ProviderSettings) -> None:
        if not settings.command:
            raise ProviderError(
                f"provider `{settings.name}` (type command) has no command",
                hint=f"set providers.{settings.name}.command, e.g. `command: [claude, -p]`",
            )
        self.settings = settings

    def argv(self, call: ModelCall) -> tuple[list[str], str | None]:
        """The command line for `call` and the text for stdin (None: prompt is an argument)."""
        prompt = call.as_text()
        model = call.model or self.settings.model or ""
        argv: list[str] = []
        on_stdin = True
        for part in (*self.settings.command, *self.settings.args):
            if "{prompt}" in part:
                on_stdin = False
            argv.append(part.replace("{model}", model).replace("{prompt}", prompt))
        return argv, (prompt if on_stdin else None)

    def complete(self, call: ModelCall) -> Completion:
        """Run the command with the prompt; return stdout or raise ProviderError."""
        argv, stdin_text = self.argv(call)
        env = dict(os.environ)
        env.update(
            {
                "NEXUSD_MODEL": call.model or self.settings.model or "",
                "NEXUSD_FORMAT": call.format,
                "NEXUSD_TEMPERATURE": str(call.temperature),
                "NEXUSD_MAX_TOKENS": str(call.max_tokens),
            }
        )
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise ProviderError(
                f"provider `{self.settings.name}`: cannot run {argv[0]!r}: {exc}",
                hint="install the command or fix providers.<name>.command",
            ) from exc
        try:
            out, err = proc.communicate(
                input=(stdin_text or "").encode("utf-8"), timeout=call.timeout_s
            )
        except subprocess.TimeoutExpired as exc:
            kill_group(proc.pid)
            proc.communicate()
            raise ProviderTimeout(
                f"provider `{self.settings.name}`: {argv[0]} gave no answer within "
                f"{call.timeout_s:.1f}s (killed)"
            ) from exc
        stderr = err.decode("utf-8", errors="replace").strip()[-_STDERR_TAIL:]
        if proc.returncode != 0:
            raise ProviderError(
                f"provider `{self.settings.name}`: {argv[0]} exited with {proc.returncode}"
                + (f": {stderr}" if stderr else ""),
                retryable=proc.returncode == EX_TEMPFAIL,
                hint="run the command by hand with the saved prompt to see why",
            )
        text = out.decode("utf-8", errors="replace")
        if not text.strip():
            raise ProviderError(
                f"provider `{self.settings.name}`: {argv[0]} printed nothing"
                + (f" (stderr: {stderr})" if stderr else "")
            )
        return Completion(text=text, model=call.model or self.settings.model or argv[0])
