"""How to bind a name a request's code reads but never binds, from the repository itself.

Reports show REPL lines written in a session that had imported things off-screen: `x` from
a module of symbols, `Permutation` from a subpackage, `xr` for the package itself. The code
index knows which module defines each name at its top level, so the sandboxed run
(`nexusd.sandbox.tracer`) can try these imports when the name is missing. Pure: a corpus and
names in, import statements out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from nexusd.code.corpus import Corpus

# Top-level files that are programs, not modules: importing one runs it.
SCRIPTS = frozenset({"setup", "conftest", "noxfile", "tasks", "manage", "fabfile", "dodo"})
# An alias is short and lower case (`xr`, `sp`, `np`); longer names are the project's own,
# and a single letter is a variable (`r = requests.get(…)`), not a module.
MIN_ALIAS, MAX_ALIAS = 2, 4
# A module from outside the repository is an alias's candidate only when this share of its
# Python files import it: `np` is numpy where numpy is everywhere, but `df` is no `difflib`
# that one file imports.
MIN_IMPORT_SHARE = 0.05


def import_lines(
    corpus: Corpus, names: Sequence[str], per_name: int = 3
) -> dict[str, tuple[str, ...]]:
    """For each of `names` the repository can bind, the import statements to try, best first.

    A name a module defines at its top level comes from the modules that define more of
    `names` first (`x`, `y`, `theta` from one module of symbols), then shorter ones; a
    short lower-case name that nothing defines may be the alias of a top-level package
    (`xr` for `xarray`, `np` for the numpy its files import); a name that is a top-level
    module's own (`pytest` of `src/pytest.py`) is imported as it is."""
    modules = _modules(corpus)
    defined: dict[str, list[str]] = {}
    for module, defines in modules.items():
        for name in defines:
            defined.setdefault(name, []).append(module)
    wanted = {name: defined.get(name, []) for name in dict.fromkeys(names)}
    covers = Counter(module for found in wanted.values() for module in found)
    out: dict[str, tuple[str, ...]] = {}
    single = _single_modules(corpus)
    imported = _imported(corpus, modules)
    for name, found in wanted.items():
        if name in single:
            out[name] = (f"import {name}",)
        elif found:
            best = sorted(found, key=lambda m: (-covers[m], len(m), m))[:per_name]
            out[name] = tuple(f"from {module} import {name}" for module in best)
        elif MIN_ALIAS <= len(name) <= MAX_ALIAS and name.isalpha() and name.islower():
            aliased = _aliased(name, modules, imported)[:per_name]
            if aliased:
                out[name] = tuple(f"import {module} as {name}" for module in aliased)
    return out


def _modules(corpus: Corpus) -> dict[str, tuple[str, ...]]:
    """Every importable Python module that is not a test, with its top-level names."""
    out: dict[str, tuple[str, ...]] = {}
    for i, parsed in enumerate(corpus.files):
        if parsed.language != "python" or corpus.tests[i]:
            continue
        module = import_name(corpus, corpus.paths[i])
        if module:
            out.setdefault(module, parsed.file_unit.defines)
    return out


def _single_modules(corpus: Corpus) -> set[str]:
    """Modules that are one file at the root or in `src/` (`pytest.py`), scripts left out."""
    out: set[str] = set()
    for i, path in enumerate(corpus.paths):
        folder, _, name = path.rpartition("/")
        module, _, suffix = name.rpartition(".")
        top = folder in ("", "src") and suffix == "py" and not corpus.tests[i]
        if top and module.isidentifier() and module not in SCRIPTS:
            out.add(module)
    return out


def import_name(corpus: Corpus, path: str) -> str:
    """The dotted name that imports `path` from the root or `src/` (where the sandboxed run
    looks), or "" when it is no module of a package there: a script (`setup.py`,
    `docs/conf.py`, `pkg/__main__.py`) is never imported to bind a name."""
    parts = path.rsplit(".", 1)[0].split("/")
    root = ""
    if parts[0] == "src" and len(parts) > 2:
        root, parts = "src/", parts[1:]
    if len(parts) < 2 or f"{root}{parts[0]}/__init__.py" not in corpus.index:
        return ""
    if parts[-1] == "__main__":
        return ""  # importing it runs the program
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) if all(p.isidentifier() for p in parts) else ""


def _imported(corpus: Corpus, modules: dict[str, tuple[str, ...]]) -> list[str]:
    """Top-level modules from outside the repository that many of its Python files import
    (numpy, pandas), the most imported first."""
    counts: Counter[str] = Counter()
    python = 0
    for parsed in corpus.files:
        if parsed.language == "python":
            python += 1
            counts.update({name.split(".", 1)[0] for name in parsed.file_unit.imports})
    least = max(MIN_IMPORT_SHARE * python, 1.0)
    return [m for m, n in counts.most_common() if n >= least and m not in modules]


def _aliased(alias: str, modules: dict[str, tuple[str, ...]], imported: list[str]) -> list[str]:
    """The repository's top-level packages `alias` abbreviates (`xr`: xarray, `sp`: sympy),
    shorter first, then the modules from elsewhere that its files import most (`np`: numpy).
    Only top-level packages: the run imports them whole, where a submodule (`plt` →
    `pkg.plotting`) would run code the report never reached; and only a package the
    repository itself uses, since `sol` or `df` may be a reporter's variable."""
    own = [m for m in modules if "." not in m and _letters_in_order(alias, m)]
    others = [m for m in imported if _letters_in_order(alias, m)]
    return sorted(own, key=lambda m: (len(m), m)) + others


def _letters_in_order(alias: str, word: str) -> bool:
    """`alias` starts `word` and its other letters follow in order (`xr` in `xarray`)."""
    if not word.startswith(alias[0]):
        return False
    rest = iter(word[1:])
    return all(letter in rest for letter in alias[1:])
