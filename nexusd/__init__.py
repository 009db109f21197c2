"""nexusd: a git-native, file-protocol daemon for software work done by people and AI agents."""

from __future__ import annotations

__version__ = "0.1.0"
PROTOCOL_VERSION = 1
