"""LanceDB, imported without running the REST namespace client that nexusd never uses.

`import lancedb` imports `lance_namespace`, which re-exports request and response models
from `lance_namespace_urllib3_client`; importing that package's `models` runs the package's
`__init__`, which imports every REST API module, and those build pydantic validators for
about 370 methods at import time: 1.5–2 s of every process that opens an index (`nexusd plan`
or `nexusd code search` without a daemon, `nexusd mcp`, the daemon's start).

`import_lancedb()` registers that package un-executed, so its models import as usual, and
runs its `__init__` the first time anything asks the package itself for a name (a module
`__getattr__`) or imports another of its submodules (a finder on `sys.meta_path`): code that
does use the REST client still gets all of it.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.abc
import importlib.util
import os
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nexusd.config import Config
    from nexusd.paths import RepoLayout

# The package whose `__init__` is deferred.
REST_CLIENT = "lance_namespace_urllib3_client"

_lock = threading.Lock()


class _Deferred(importlib.abc.MetaPathFinder):
    """A package registered without running its `__init__`, and the hooks that run it:
    the first name asked of the package, or the first import of a submodule other than
    `keep` (its models), which may rely on what the `__init__` sets up."""

    def __init__(self, module: ModuleType, loader: importlib.abc.Loader, keep: str) -> None:
        self.module = module
        self.loader = loader
        self.prefix = module.__name__ + "."
        self.keep = keep
        self.lock = threading.RLock()
        self.pending = True

    def complete(self, *, wait: bool = True) -> None:
        """Run the package's `__init__` now, once (re-entrant: it imports its submodules)."""
        if not self.lock.acquire(blocking=wait):
            return  # another thread is running it; an import must not wait on us
        try:
            if self.pending:
                self.pending = False
                self.module.__dict__.pop("__getattr__", None)
                if self in sys.meta_path:
                    sys.meta_path.remove(self)
                self.loader.exec_module(self.module)
        finally:
            self.lock.release()

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        """Complete the package before a submodule that is not its models is imported (and
        find nothing: the usual finders import the submodule itself)."""
        if fullname.startswith(self.prefix) and not fullname.startswith(self.keep):
            self.complete(wait=False)

    def attribute(self, attr: str) -> Any:
        """The module `__getattr__`: complete the package, then look again."""
        self.complete()
        if attr in self.module.__dict__:
            return self.module.__dict__[attr]
        raise AttributeError(f"module {self.module.__name__!r} has no attribute {attr!r}")


def _defer_init(name: str, keep: str) -> None:
    """Register package `name` without running its `__init__` (see `_Deferred`)."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # absent, or not a package: nothing to defer
    module = importlib.util.module_from_spec(spec)
    deferred = _Deferred(module, spec.loader, f"{name}.{keep}")
    module.__dict__["__getattr__"] = deferred.attribute
    sys.meta_path.insert(0, deferred)
    sys.modules[name] = module


def import_lancedb() -> ModuleType:
    """The `lancedb` module, imported with the REST client's package `__init__` deferred."""
    with _lock:
        if "lancedb" not in sys.modules:
            _defer_init(REST_CLIENT, keep="models")
    import lancedb

    return lancedb


def is_local(uri: str) -> bool:
    """True for a filesystem path (not s3://, gs://, db:// …)."""
    return "://" not in uri or uri.startswith("file://")


def local_folder(uri: str) -> Path | None:
    """The folder a local index `uri` names (`file://` or a plain path); None for object
    storage, where there is no folder to lock, check or delete."""
    return Path(uri.removeprefix("file://")) if is_local(uri) else None


def index_uri(layout: RepoLayout, config: Config) -> str:
    """Where the memory and code tables live: `memory.index_uri` as LanceDB and nexusd's own
    lock files both read it (`~` expanded, a relative path taken from the repository root,
    not from wherever a process runs), else this tree's `<git-dir>/nexus/index`."""
    uri = config.memory.index_uri
    if not uri:
        return str(layout.index_dir)
    if "://" in str(uri):
        return str(uri)  # object storage or `file://…`: as given
    path = Path(str(uri)).expanduser()
    return str(path if path.is_absolute() else layout.root / path)


@contextlib.contextmanager
def folder_lock(
    folder: Path, name: str, on_wait: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold the exclusive `flock` on `folder/name` across processes; `on_wait` is called once
    if another process holds it. A lock file that opens only for reading (a read-only mount,
    another user's file) is locked all the same; one that cannot be opened at all is skipped:
    nothing can be written there either, and a write fails as it would anyway."""
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
    fd = None
    for flags in (os.O_RDWR | os.O_CREAT, os.O_RDONLY):
        with contextlib.suppress(OSError):
            fd = os.open(folder / name, flags, 0o644)
            break
    if fd is None:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the flock


class WriteGuard:
    """One index's write lock across processes, and the generation file that tells a process
    another one wrote: LanceDB never re-reads a table another process changed (a handle stays
    at the version it last read, and a table dropped and created again starts its versions
    anew), so each writer bumps the generation and a reader that sees it change reopens.
    Re-entrant within a thread; another thread of this process waits for the lock as another
    process does (flock is per open file, and each holder opens its own)."""

    def __init__(self, uri: str, lock: str, generation: str) -> None:
        self.folder = local_folder(uri)
        self.lock, self.file = lock, generation
        self._held = threading.local()  # this thread's depth of `holding`
        self._seen: str | None = None  # the generation this process last read or wrote

    def generation(self) -> str:
        """The generation on disk ("" before the first write, or for object storage)."""
        if self.folder is None:
            return ""
        try:
            return (self.folder / self.file).read_text(encoding="utf-8")
        except OSError:
            return ""

    def observe(self) -> None:
        """Note the generation before reading the table (a write in between is seen later)."""
        self._seen = self.generation()

    def changed(self) -> bool:
        """True when another process wrote since this one last observed or wrote."""
        return self._seen is not None and self.generation() != self._seen

    @contextlib.contextmanager
    def holding(self, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
        """Hold the write lock (`on_wait` is called once if another process holds it)."""
        depth = getattr(self._held, "depth", 0)
        # Object storage has no file to lock: one writer is assumed.
        lock = (
            folder_lock(self.folder, self.lock, on_wait)
            if self.folder is not None and not depth
            else contextlib.nullcontext()
        )
        with lock:
            self._held.depth = depth + 1
            try:
                yield
            finally:
                self._held.depth = depth

    def wrote(self) -> None:
        """Tell other processes that the table changed (called with the lock held)."""
        self._seen = uuid.uuid4().hex
        if self.folder is not None:
            with contextlib.suppress(OSError):
                (self.folder / self.file).write_text(self._seen, encoding="utf-8")
