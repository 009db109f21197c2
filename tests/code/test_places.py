"""Places: what a path says a file is (a test, an example or docs)."""

from __future__ import annotations

import pytest

from nexusd.code.places import is_auxiliary_path, is_test_module, is_test_path, minority_languages


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_x.py", True),
        ("src/pkg/x_test.go", True),
        ("web/app.spec.ts", True),
        ("pkg/testing/util.py", True),
        ("conftest.py", True),
        ("src/_pytest/python.py", False),
        ("sympy/utilities/pytest.py", False),
        ("latest.py", False),
    ],
)
def test_is_test_path(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test


@pytest.mark.parametrize(
    ("path", "auxiliary"),
    [
        ("examples/widgets/slider_demo.py", True),
        ("docs/examples/plot_model.py", True),
        ("doc/conf.py", True),
        ("Benchmarks/bench_sort.py", True),
        ("asv_bench/benchmarks/io.py", True),
        ("contrib/linux-kernel/include/linux/zstd.h", True),
        ("django/contrib/admin/options.py", False),  # a package's own contrib
        ("lib/matplotlib/widgets.py", False),
        ("src/examples/loader.py", False),  # a package's own module named so
        ("examples.py", False),
        ("docs", False),
    ],
)
def test_is_auxiliary_path(path: str, auxiliary: bool) -> None:
    assert is_auxiliary_path(path) is auxiliary


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("tests/test_cart.py", True),
        ("pkg/cart_test.go", True),
        ("src/cart.spec.ts", True),
        ("src/test/java/CartTest.java", True),
        ("tests/cart.rs", True),  # Rust's integration tests take any name
        ("tests/test_utils.py", True),  # the tests of a utils module
        ("tests/conftest.py", False),
        ("tests/__init__.py", False),
        ("tests/helpers.py", False),
        ("tests/common/mod.rs", False),
        ("testing/fixtures.py", False),
        ("src/cart.py", False),
    ],
)
def test_is_test_module(path: str, module: bool) -> None:
    assert is_test_module(path) is module


@pytest.mark.parametrize(
    ("languages", "minority"),
    [
        (["rust"] * 40 + ["ruby"], {"ruby"}),  # a Homebrew formula in a Rust repository
        (["c"] * 30 + ["cpp"] * 10 + ["sh"], {"sh"}),  # C and C++ are one family
        (["typescript"] * 50 + ["tsx"] + ["javascript"], set()),  # so are JS and TS
        (["python"] * 19 + ["sh"], set()),  # one file in twenty is a share of its own
        (["go"] * 100, set()),
        ([], set()),
    ],
)
def test_minority_languages(languages: list[str], minority: set[str]) -> None:
    assert minority_languages(languages) == minority
