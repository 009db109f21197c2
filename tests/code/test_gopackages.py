"""Go imports resolve to the files of the package folder they name, under the module's path."""

from __future__ import annotations

from nexusd.code.corpus import Corpus
from nexusd.code.lang_treesitter import parse_treesitter


def go(imports: list[str], body: str = "") -> str:
    listed = "".join(f'\t"{name}"\n' for name in imports)
    return f"package p\n\nimport (\n{listed})\n\n{body}\n"


FILES = {
    "server.go": go(
        [
            "context",
            "example.com/rpc/codes",
            "example.com/rpc/internal/transport",
            "github.com/stretchr/testify/assert",  # ends like this repository's `assert/`
        ],
        "func NewServer() {}",
    ),
    "server_test.go": go(["testing"], "func TestNewServer(t *testing.T) { NewServer() }"),
    "codes/codes.go": go([], "type Code uint32"),
    "codes/codes_test.go": go(["testing"]),
    "internal/transport/http2.go": go(["example.com/rpc/codes"], "func Dial() {}"),
    "internal/transport/handler.go": go([], "func Handle() {}"),
    "assert/assert.go": go([], "func Equal() {}"),
    "cmd/tool/main.go": go(["example.com/rpc", "example.com/rpc/codes"], "func main() {}"),
}


def corpus() -> Corpus:
    return Corpus(parse_treesitter(path, text, "go") for path, text in FILES.items())


def imported(c: Corpus, path: str) -> list[str]:
    return sorted(c.paths[i] for i in c.imports[c.index[path]])


def test_the_module_path_is_read_from_the_imports_themselves() -> None:
    assert corpus().go.modules == ["example.com/rpc"]


def test_an_import_is_every_non_test_file_of_its_package_folder() -> None:
    c = corpus()
    assert imported(c, "server.go") == [
        "codes/codes.go",
        "internal/transport/handler.go",
        "internal/transport/http2.go",
    ]  # not the external `assert` package that ends like a folder here
    assert imported(c, "cmd/tool/main.go") == ["codes/codes.go", "server.go"]  # the root
    assert "internal/transport/http2.go" in {
        c.paths[i] for i in c.importers[c.index["codes/codes.go"]]
    }


def test_a_go_test_is_tied_to_the_file_it_is_named_for() -> None:
    c = corpus()
    assert c.tested_by(c.index["server_test.go"]) == [(c.index["server.go"], 1.0)]
    assert c.tested_by(c.index["codes/codes_test.go"]) == [(c.index["codes/codes.go"], 1.0)]


def test_one_imported_folder_is_no_module() -> None:
    # A single import that ends like a folder here proves nothing about the module's path.
    files = {
        "main.go": go(["github.com/other/lib/assert"]),
        "assert/assert.go": go([]),
    }
    c = Corpus(parse_treesitter(path, text, "go") for path, text in files.items())
    assert c.go.modules == [] and imported(c, "main.go") == []


def test_impact_of_a_go_file_lists_the_files_whose_packages_import_it() -> None:
    from nexusd.code.impact import impact

    found = impact(corpus(), "codes/codes.go")
    assert {(e.path, e.kind) for e in found.used_by} == {
        ("server.go", "imported-by"),
        ("internal/transport/http2.go", "imported-by"),
        ("cmd/tool/main.go", "imported-by"),
    }
