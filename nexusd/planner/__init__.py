"""The planner: one request answered, from the librarian's bundle to the written response."""

from __future__ import annotations
