"""Checkpoints of the working tree as git refs, restore, retention."""

from __future__ import annotations
