"""What a file's place in the repository says it is: a test, or an example or docs.

The ranking reads these to put the library a fix goes in above what shows or tests it, and
the planner to tell the tests it runs from the code it changes; nothing here reads a file.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

# Top-level folders of code that shows or measures the library rather than being it. The
# fix for a report was never in one among 268 SWE-bench reports of 17 repositories, yet
# examples that call the API a report names filled top-five places (benchmarks/README.md).
AUXILIARY_FOLDERS = frozenset({
    "examples", "example", "galleries", "gallery", "tutorials", "tutorial", "demo", "demos",
    "docs", "doc", "benchmarks", "benchmark", "bench", "asv_bench",
    # Contributed extras beside the product (zstd's `contrib/linux-kernel/` copy of its API).
    "contrib",
})  # fmt: skip


def is_test_path(path: str) -> bool:
    """Whether a repository path looks like a test file or lies in a test folder."""
    name = path.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0]
    return (
        stem.startswith("test_")
        or stem.endswith(("_test", "_tests", ".test", ".spec", "_spec"))
        or stem in {"conftest", "tests", "test"}
        or any(
            part in {"tests", "test", "testing", "__tests__", "spec"}
            for part in path.split("/")[:-1]
        )
    )


# What a test folder holds beside its tests: fixtures, helpers, shared setup (`conftest.py`
# is named on its own: its name says `test`).
_HELPER = re.compile(r"fixture|helper|util|mock|fake|stub|common|support|setup", re.I)
_TESTISH = re.compile(r"test|spec", re.I)


def is_test_module(path: str) -> bool:
    """Whether a test path holds tests to run or extend, not a test folder's helpers
    (`conftest.py`, `tests/helpers.py`, `tests/common/mod.rs`, a package's `__init__.py`)."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    if not is_test_path(path) or stem in {"conftest", "__init__", "mod"}:
        return False
    return _TESTISH.search(stem) is not None or _HELPER.search(stem) is None


# A language family with fewer of a repository's code files than this share is a minority
# there: a Homebrew formula in a Rust repository, a build script in a C one. 5% and 10% alike
# on the 165 multilingual reports: 6 up, none down; 2%: 2 up (benchmarks/README.md, 33rd
# session).
MINORITY_SHARE = 0.05
_FAMILIES = {"typescript": "javascript", "tsx": "javascript", "cpp": "c"}


def language_family(language: str) -> str:
    """Languages that call each other's names directly count as one (C and C++, JS and TS)."""
    return _FAMILIES.get(language, language)


def minority_languages(code_languages: Sequence[str]) -> frozenset[str]:
    """The languages, among those of a repository's code files, whose family holds fewer than
    MINORITY_SHARE of the files (none when there is a single family)."""
    families = Counter(language_family(language) for language in code_languages)
    if len(families) < 2:
        return frozenset()
    floor = MINORITY_SHARE * len(code_languages)
    rare = {family for family, n in families.items() if n < floor}
    return frozenset(lang for lang in code_languages if language_family(lang) in rare)


def is_auxiliary_path(path: str) -> bool:
    """Whether a repository path lies under a top-level examples, docs or benchmarks folder."""
    top, sep, _rest = path.partition("/")
    return bool(sep) and top.lower() in AUXILIARY_FOLDERS
