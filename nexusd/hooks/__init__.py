"""Git hook scripts and their installer; hooks only append to the inbox."""

from __future__ import annotations
