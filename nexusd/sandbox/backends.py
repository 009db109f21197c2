"""The sandbox backends behind one call shape, by name: what `sandbox.backend` can choose.

A new backend is a module with a `run(spec, tree_tar, …)` like the three here, wrapped
below to the `Backend` shape and added to `BACKENDS`; `probe.py` says when `auto` picks it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

from nexusd.sandbox import bwrap_backend, docker_backend, subprocess_backend
from nexusd.sandbox.pool import WarmPool
from nexusd.sandbox.probe import Choice
from nexusd.sandbox.result import CheckResult
from nexusd.sandbox.spec import CheckSpec


@dataclass(frozen=True)
class RunContext:
    """What a backend may use besides the check: the choice (its reason, docker's client),
    the warm pool, and the extra read-only binds."""

    choice: Choice
    pool: WarmPool | None = None
    ro_binds: Sequence[str] = ()


class Backend(Protocol):
    """Run one check on an exported tree; raise SandboxError when the sandbox itself fails."""

    def __call__(self, spec: CheckSpec, tree_tar: bytes, context: RunContext) -> CheckResult: ...


def _docker(spec: CheckSpec, tree_tar: bytes, context: RunContext) -> CheckResult:
    pool, choice = context.pool, context.choice
    if pool is not None and pool.accepts(spec):
        warm = pool.run(spec, tree_tar, reason=choice.reason)
        if warm is not None:
            return warm
    return docker_backend.run(spec, tree_tar, client=choice.client, reason=choice.reason)


def _bwrap(spec: CheckSpec, tree_tar: bytes, context: RunContext) -> CheckResult:
    reason = context.choice.reason
    return bwrap_backend.run(spec, tree_tar, ro_binds=context.ro_binds, reason=reason)


def _subprocess(spec: CheckSpec, tree_tar: bytes, context: RunContext) -> CheckResult:
    return subprocess_backend.run(spec, tree_tar, reason=context.choice.reason)


BACKENDS: Mapping[str, Backend] = MappingProxyType(
    {"docker": _docker, "bwrap": _bwrap, "subprocess": _subprocess}
)
