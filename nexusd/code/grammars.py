"""Tree-sitter grammars from their per-language wheels, loaded once, a parser per thread.

Imported lazily by the extractor: `nexusd --help` and git hooks never load tree-sitter.
"""

from __future__ import annotations

import importlib
import threading
from functools import cache
from typing import TYPE_CHECKING

from nexusd.code.lang_queries import GRAMMARS

if TYPE_CHECKING:
    from tree_sitter import Language, Parser, Query

_local = threading.local()  # a Parser keeps parse state: one per thread and language


@cache
def grammar(language: str) -> tuple[Language, Query] | None:
    """The loaded grammar and its query; None when the wheel is missing or unloadable."""
    spec = GRAMMARS.get(language)
    if spec is None:
        return None
    try:
        from tree_sitter import Language, Query

        module = importlib.import_module(spec.module)
        lang = Language(getattr(module, spec.entry)())
        return lang, Query(lang, spec.query)
    # ValueError: a grammar built for an ABI this binding cannot load; index as lines then.
    except (ImportError, AttributeError, ValueError):
        return None


def parser(language: str, lang: Language) -> Parser:
    """This thread's parser for `language`."""
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    if language not in parsers:
        from tree_sitter import Parser

        parsers[language] = Parser(lang)
    return parsers[language]
