"""Go imports as files: an import path names a package, and a package is a folder.

`import "google.golang.org/grpc/internal/channelz"` names the folder `internal/channelz` of
the module `google.golang.org/grpc`. The module's path is in `go.mod`, which the index does
not read; it is found from the imports themselves instead: the repository's own packages
are imported by many files under one prefix, and an import is the repository's when it is
that prefix and a folder that holds Go files. A module's test files are in the package they
test (`server_test.go` beside `server.go`), so a test is linked to its own folder's files.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

# A prefix is the module's path when imports under it name at least this many of the
# repository's folders: one could be an external package that happens to end like one of
# them (`github.com/stretchr/testify/assert` and a folder `assert/`).
MIN_SUPPORT = 2


class GoPackages:
    """The repository's Go packages (folder → its files) and its modules' import paths."""

    def __init__(
        self, paths: Sequence[str], languages: Sequence[str], imports: Sequence[Sequence[str]]
    ) -> None:
        """Index the Go files among `paths`; `imports` are each file's import paths."""
        self.folders: dict[str, list[int]] = defaultdict(list)
        self.go = [language == "go" for language in languages]
        for i, path in enumerate(paths):
            if self.go[i]:
                self.folders[path.rpartition("/")[0]].append(i)
        self.tests = {
            i: path.rpartition("/")[0]
            for i, path in enumerate(paths)
            if self.go[i] and path.endswith("_test.go")
        }
        support: defaultdict[str, set[str]] = defaultdict(set)
        for i, names in enumerate(imports):
            if not self.go[i]:
                continue
            for name in names:
                parts = name.split("/")
                for cut in range(1, len(parts)):
                    folder = "/".join(parts[cut:])
                    if folder in self.folders:
                        support["/".join(parts[:cut])].add(folder)
        # Shortest first: of two readings, the one naming the deeper folder is the module's.
        self.modules = sorted(
            (prefix for prefix, folders in support.items() if len(folders) >= MIN_SUPPORT),
            key=len,
        )

    def files(self, own: int, name: str) -> list[int]:
        """The non-test files of the package `name` that file `own` imports (none when it is
        not one of this repository's)."""
        if not self.go[own]:
            return []
        for module in self.modules:
            if name == module:  # the module's root package (`import "google.golang.org/grpc"`)
                folder = ""
            elif name.startswith(module + "/"):
                folder = name[len(module) + 1 :]
            else:
                continue
            if folder in self.folders:
                return [i for i in self.folders[folder] if i not in self.tests and i != own]
        return []

    def tested(self, test: int) -> list[int]:
        """The package files a Go test file is part of (its own folder's, not tests)."""
        folder = self.tests.get(test)
        if folder is None:
            return []
        return [i for i in self.folders[folder] if i not in self.tests]
