"""LanceDB, imported without running the REST namespace client that nexusd never uses.

`import lancedb` imports `lance_namespace`, which re-exports request and response models
from `lance_namespace_urllib3_client`; importing that package's `models` runs the package's
`__init__`, which imports every REST API module, and those build pydantic validators for
about 370 methods at import time: 1.5–2 s of every process that opens an index (`nexusd plan`
or `nexusd code search` without a daemon, `nexusd mcp`, the daemon's start).

`import_lancedb()` registers that package un-executed, so its submodules (the models) import
as usual, and runs its `__init__` the first time anything asks the package itself for a name
(a module `__getattr__`): code that does use the REST client still gets all of it.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

# The package whose `__init__` is deferred.
REST_CLIENT = "lance_namespace_urllib3_client"

_lock = threading.Lock()


def _defer_init(name: str) -> None:
    """Register package `name` without running its `__init__` until a name is asked of it."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # absent, or not a package: nothing to defer
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader
    done = threading.Lock()

    def complete(attr: str) -> Any:
        with done:
            if "__getattr__" in module.__dict__:
                del module.__dict__["__getattr__"]
                loader.exec_module(module)
        return module.__dict__[attr] if attr in module.__dict__ else _missing(name, attr)

    module.__dict__["__getattr__"] = complete
    sys.modules[name] = module


def _missing(name: str, attr: str) -> Any:
    raise AttributeError(f"module {name!r} has no attribute {attr!r}")


def import_lancedb() -> ModuleType:
    """The `lancedb` module, imported with the REST client's package `__init__` deferred."""
    with _lock:
        if "lancedb" not in sys.modules:
            _defer_init(REST_CLIENT)
    import lancedb

    return lancedb
