"""Memory hub: markdown chunking, embeddings, the LanceDB store, hybrid search, sync."""

from __future__ import annotations
