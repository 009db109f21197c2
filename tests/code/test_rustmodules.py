"""Rust `use` paths resolve to the module files of this crate and of the workspace's others."""

from __future__ import annotations

import pytest

from nexusd.code.corpus import Corpus
from nexusd.code.lang_treesitter import parse_treesitter
from nexusd.code.rustmodules import crate_root

FILES = {
    "tracing-core/src/lib.rs": "pub mod field;\npub struct Event;\n",
    "tracing-core/src/field.rs": "pub trait Visit {}\npub struct Field;\n",
    "tracing-subscriber/src/lib.rs": "pub mod field;\npub mod fmt;\n",
    "tracing-subscriber/src/field/mod.rs": "pub trait MakeVisitor {}\n",
    "tracing-subscriber/src/field/debug.rs": (
        "use super::MakeVisitor;\nuse tracing_core::field::{Field, Visit};\n"
        "use core::fmt;\nuse serde::Serialize;\n"
    ),
    "tracing-subscriber/src/fmt/writer.rs": (
        "use crate::field::MakeVisitor;\nuse self::inner::X;\nuse tracing_core::Event;\n"
    ),
    "src/main.rs": "use crate::cli::run;\nfn main() {}\n",
    "src/cli.rs": "pub fn run() {}\n",
    "tracing-core/tests/visit.rs": "use tracing_core::field::Visit;\nuse super::x;\n",
    # A workspace crate in a folder named `core` is not the language's `core`.
    "crates/core/src/main.rs": "fn main() {}\n",
    "tracing-subscriber/src/fmt/mod.rs": "use core::fmt;\nuse std::io;\n",
}


def corpus() -> Corpus:
    return Corpus(parse_treesitter(path, text, "rust") for path, text in FILES.items())


def imported(c: Corpus, path: str) -> list[str]:
    return sorted(c.paths[i] for i in c.imports[c.index[path]])


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        # `super::` is the parent module, another crate is named as its folder is (`-` as
        # `_`), and `core::` and crates from outside are nobody's here.
        (
            "tracing-subscriber/src/field/debug.rs",
            ["tracing-core/src/field.rs", "tracing-subscriber/src/field/mod.rs"],
        ),
        # `crate::` is this crate's root; `self::inner` an inline module of the file itself;
        # an item of another crate's root is its lib.rs.
        (
            "tracing-subscriber/src/fmt/writer.rs",
            ["tracing-core/src/lib.rs", "tracing-subscriber/src/field/mod.rs"],
        ),
        ("src/main.rs", ["src/cli.rs"]),  # a crate at the repository's root
        ("tracing-core/tests/visit.rs", ["tracing-core/src/field.rs"]),  # outside `src/`
        ("tracing-subscriber/src/fmt/mod.rs", []),
    ],
)
def test_use_paths_resolve_to_module_files(path: str, expected: list[str]) -> None:
    assert imported(corpus(), path) == expected


@pytest.mark.parametrize(
    ("path", "root"),
    [
        ("tokio/src/sync/watch.rs", "tokio/src"),
        ("src/lib.rs", "src"),
        ("benches/bench.rs", None),
    ],
)
def test_crate_root(path: str, root: str | None) -> None:
    assert crate_root(path) == root
