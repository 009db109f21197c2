"""Rust `use` paths as files: `crate::`, `self::`, `super::` and the workspace's other crates.

A crate's modules are the files under its `src/` folder: `src/sync/watch.rs` (or
`src/sync/watch/mod.rs`) is `crate::sync::watch`, and `src/lib.rs` or `src/main.rs` is the
crate itself. Another crate of the workspace is named as its folder is, with `-` read as
`_` (`tracing-core/src/` is `tracing_core`); Cargo.toml can rename a library, which is not
read here. A path ends in items (`crate::field::Visit`): the longest module prefix that is
a file is the one meant. `std::`, `core::` and crates from outside resolve to nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

# The language's own crates: a workspace folder of that name (ripgrep's `crates/core/`) is
# not what `use core::fmt` means.
_BUILTIN = frozenset({"std", "core", "alloc", "proc_macro", "test"})
# The files that are a crate itself.
_CRATE_FILES = ("lib.rs", "main.rs")


class RustModules:
    """The Rust files of a repository by crate and module path."""

    def __init__(self, paths: Sequence[str], languages: Sequence[str]) -> None:
        """Index the `.rs` files among `paths` (with their `languages`)."""
        pairs = zip(paths, languages, strict=True)
        self.rust = [language == "rust" and path.endswith(".rs") for path, language in pairs]
        self.paths = paths
        self.index = {path: i for i, path in enumerate(paths) if self.rust[i]}
        # Crate name → its source folder; a crate's folder is the one above its `src/`.
        self.crates: dict[str, str] = {}
        for path in self.index:
            root = crate_root(path)
            if root is not None and root.endswith("/src"):
                name = root[: -len("/src")].rsplit("/", 1)[-1].replace("-", "_")
                if name not in _BUILTIN:
                    self.crates.setdefault(name, root)

    def module_of(self, f: int) -> tuple[str, list[str]] | None:
        """(crate source folder, module path) of file `f`; None outside a crate's `src/`."""
        path = self.paths[f]
        root = crate_root(path)
        if root is None:
            return None
        parts = path[len(root) + 1 :].removesuffix(".rs").split("/")
        if parts[-1] in ("lib", "main", "mod"):
            parts.pop()
        return root, parts

    def file(self, own: int, name: str) -> int | None:
        """The file `use name;` in file `own` means, None when it is not this repository's."""
        segments = [s for s in name.split("::") if s]
        if not self.rust[own] or not segments:
            return None
        head = segments[0]
        if head in self.crates:  # also from tests/ and benches/, which use the crate by name
            return self._longest(self.crates[head], segments[1:])
        where = self.module_of(own)
        if where is None:
            return None
        root, module = where
        if head == "crate":
            base, rest = [], segments[1:]
        elif head in ("self", "super"):
            base = list(module)
            rest = segments
            while rest and rest[0] in ("self", "super"):
                if rest.pop(0) == "super":
                    if not base:
                        return None
                    base.pop()
        else:
            return None
        return self._longest(root, base + rest)

    def _longest(self, root: str, segments: list[str]) -> int | None:
        """The file of the longest module prefix of `segments` under the crate at `root`."""
        for cut in range(len(segments), -1, -1):
            folder = "/".join([root, *segments[:cut]])
            candidates = (f"{folder}.rs", f"{folder}/mod.rs") if cut else _CRATE_FILES
            for candidate in (c if cut else f"{root}/{c}" for c in candidates):
                found = self.index.get(candidate)
                if found is not None:
                    return found
        return None


def crate_root(path: str) -> str | None:
    """The `src` folder a Rust file belongs to (`tokio/src`, `src`), or None."""
    parts = path.split("/")
    for k in range(len(parts) - 2, -1, -1):
        if parts[k] == "src":
            return "/".join(parts[: k + 1])
    return None
