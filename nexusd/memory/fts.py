"""The full-text index's tokenizer: pinned settings, and how to tell an index built otherwise."""

from __future__ import annotations

from typing import Any

from nexusd.lance import import_lancedb

# The tokenizer of the full-text index, spelled out rather than left to `FTS()` defaults:
# LanceDB's defaults changed between releases (older ones, which lancedb>=0.20 still
# allows, did no stemming, stop-word removal or ASCII folding), and an index keeps the
# settings it was built with. English stemming lets "caching" match "cached".
FTS_TOKENIZER: dict[str, Any] = {
    "base_tokenizer": "simple",
    "language": "English",
    "max_token_length": 40,
    "lower_case": True,
    "stem": True,
    "remove_stop_words": True,
    "ascii_folding": True,
}
# Where an index does not report its settings, compare how it tokenizes this instead.
_FTS_PROBE = "The Cachés were running"


def fts_config() -> Any:
    """The full-text index configuration of `search_text`."""
    import_lancedb()
    from lancedb.index import FTS

    return FTS(**FTS_TOKENIZER)


def fts_mismatch(table: Any) -> list[str]:
    """Tokenizer settings in which the table's full-text index differs from FTS_TOKENIZER
    (["no index"] without one)."""
    lancedb = import_lancedb()

    for index in table.list_indices():
        if index.index_type != "FTS" or list(index.columns) != ["search_text"]:
            continue
        details = index.index_details
        if isinstance(details, dict):
            return [k for k, v in FTS_TOKENIZER.items() if details.get(k) != v]
        # Settings not reported (older index formats, remote tables): compare behaviour.
        have = [t.text for t in table.tokenize(_FTS_PROBE, column="search_text")]
        want = [t.text for t in lancedb.tokenize(_FTS_PROBE, **FTS_TOKENIZER)]
        return [] if have == want else ["tokens"]
    return ["no index"]
