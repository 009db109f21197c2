"""In-process llama.cpp models with a wall-clock time box that holds.

A call's time box starts when the call starts and covers everything: waiting for the
model (another call may hold it), loading it, processing the prompt and generating.
The work runs in a worker thread; the caller waits at most the time box and then
raises ProviderTimeout, abandoning the worker. The abandoned worker stops at once:
llama.cpp checks an abort callback between the operations of every decode (prompt
processing included), so the model is free again within milliseconds, and no call
ever uses a model while another one still does (one lock per model). A load that
is abandoned finishes in the background, so the next call finds the model loaded.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from nexusd.models.base import ProviderError, ProviderTimeout

T = TypeVar("T")
ModelKey = tuple[str, int, int | None]
# How often a worker waiting for a busy model looks whether its caller gave up.
_POLL_S = 0.05


@dataclass
class Progress:
    """What a call got done so far: prompt tokens evaluated, tokens generated."""

    tokens_in: int = 0
    tokens_out: int = 0


@dataclass
class _Job(Generic[T]):
    """One call's work: the caller waits on `done`; `abort` tells the worker to stop."""

    abort: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    phase: str = "waiting for the model (another call is using it)"
    progress: Progress = field(default_factory=Progress)
    result: T | None = None
    error: BaseException | None = None


class ModelSlot:
    """One GGUF model of this process: loaded once, used by one call at a time."""

    def __init__(self, key: ModelKey, load: Callable[[], Any]) -> None:
        self.key = key
        self._load = load
        self._lock = threading.Lock()
        self._llm: Any = None
        self._running: threading.Event | None = None  # the abort flag of the job in the model
        self._callback: Any = None  # kept alive: llama.cpp holds a pointer to it
        self.abortable = False

    def run(self, name: str, timeout_s: float, work: Callable[[Any, Progress], T]) -> T:
        """`work(llm, progress)` in a worker thread; ProviderTimeout once `timeout_s` has
        passed, carrying the tokens `progress` counted by then."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        job: _Job[T] = _Job()
        worker = threading.Thread(
            target=self._work, args=(job, work), name=f"nexusd-llama-{name}", daemon=True
        )
        worker.start()
        if job.done.wait(max(0.0, deadline - time.monotonic())):
            if job.error is not None:
                raise job.error
            return job.result  # type: ignore[return-value]
        job.abort.set()
        error = ProviderTimeout(
            f"provider `{name}`: no answer within {timeout_s:.1f}s (stopped while {job.phase})"
        )
        error.tokens_in, error.tokens_out = job.progress.tokens_in, job.progress.tokens_out
        raise error

    def _work(self, job: _Job[T], work: Callable[[Any, Progress], T]) -> None:
        try:
            while not self._lock.acquire(timeout=_POLL_S):
                if job.abort.is_set():
                    return
            try:
                if job.abort.is_set():
                    return
                job.phase = "loading the model"
                llm = self._loaded()
                if job.abort.is_set():
                    return
                job.phase = "processing the prompt and generating"
                self._running = job.abort
                try:
                    job.result = work(llm, job.progress)
                except Exception:
                    if job.abort.is_set():
                        llm.reset()  # the aborted decode left a partial state behind
                        return
                    raise
                finally:
                    self._running = None
            finally:
                self._lock.release()
        except BaseException as exc:
            job.error = exc
        finally:
            job.done.set()

    def _loaded(self) -> Any:
        if self._llm is None:
            self._llm = self._load()
            self.abortable = self._install_abort(self._llm)
        return self._llm

    def _install_abort(self, llm: Any) -> bool:
        """Make llama.cpp stop a decode when the running job is aborted (False: cannot)."""
        try:
            llama_cpp = importlib.import_module("llama_cpp")

            def should_abort(_data: Any) -> bool:
                running = self._running
                return running is not None and running.is_set()

            self._callback = llama_cpp.ggml_abort_callback(should_abort)
            llama_cpp.llama_set_abort_callback(llm._ctx.ctx, self._callback, ctypes.c_void_p())
        except (AttributeError, TypeError, OSError):
            # Another llama-cpp-python: the worker is still abandoned at the deadline,
            # it only holds the model until its decode ends.
            return False
        return True

    def close(self, wait_s: float = 1.0) -> None:
        """Free the model once no call uses it (an abandoned one is stopped first)."""
        running = self._running
        if running is not None:
            running.set()
        if not self._lock.acquire(timeout=wait_s):
            # Still in use (a load cannot be interrupted): leaving it to the process's end is
            # safer than freeing it, and an exiting process does not wait for it.
            return
        try:
            if self._llm is not None:
                with contextlib.suppress(Exception):
                    self._llm.close()
                self._llm = None
        finally:
            self._lock.release()


_SLOTS: dict[ModelKey, ModelSlot] = {}
_SLOTS_LOCK = threading.Lock()


def model_slot(key: ModelKey, load: Callable[[], Any]) -> ModelSlot:
    """The process's slot for `key` (created on first use; the model loads on first call)."""
    with _SLOTS_LOCK:
        slot = _SLOTS.get(key)
        if slot is None:
            slot = _SLOTS[key] = ModelSlot(key, load)
        return slot


@atexit.register
def close_all() -> None:
    """Free every model while the interpreter can still run llama.cpp's destructors."""
    with _SLOTS_LOCK:
        slots = list(_SLOTS.values())
        _SLOTS.clear()
    for slot in slots:
        slot.close()


def import_llama_cpp() -> Any:
    """The llama_cpp module, or a ProviderError that says how to install it."""
    try:
        return importlib.import_module("llama_cpp")
    except ImportError as exc:
        raise ProviderError(
            "llama-cpp-python is not installed",
            hint="pip install 'nexusd[llamacpp]' (compiles llama.cpp; takes minutes)",
        ) from exc
