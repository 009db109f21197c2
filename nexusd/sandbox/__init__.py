"""Sandboxed checks: docker, bubblewrap and subprocess backends, result classification."""

from __future__ import annotations
