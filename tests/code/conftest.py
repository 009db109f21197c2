"""A small real repository for code index tests: a package, tests, docs and bad inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git

# A client, the transport below it and an unrelated helper (the title's and the search title's
# tests: tests/code/test_title.py, test_ops.py).
NET = {
    "net/client.py": (
        "from net.transport import send\n\n\n"
        "class Client:\n"
        "    def fetch(self, url, timeout=None):\n"
        "        '''Fetch a URL; a dead host is retried by send.'''\n"
        "        return send(url, timeout)\n\n"
        "    def close(self):\n        return None\n"
    ),
    "net/transport.py": (
        "def send(url, timeout):\n"
        "    '''Send with retries: the backoff doubles after each retry up to the timeout.'''\n"
        "    backoff = 1\n"
        "    while backoff < timeout:\n"
        "        backoff *= 2\n"
        "    return url\n"
    ),
    "net/util.py": "def join(a, b):\n    return a + b\n",
}

CORE = '''"""The expression parser."""

from pkg.util import tokenize


class Parser:
    """Parses arithmetic expressions."""

    def parse_expr(self, text):
        """Parse one expression; raise ValueError on empty input."""
        if not text:
            raise ValueError("empty expression")
        return tokenize(text)
'''

UTIL = """def tokenize(text):
    return text.split()
"""

TEST = """from pkg.core import Parser


def test_parse_expr():
    assert Parser().parse_expr("1 + 2") == ["1", "+", "2"]
"""


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Write a file (making its folders)."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def code_repo(tmp_path: Path) -> Path:
    """A committed repository with Python, docs, a broken file, a binary and a symlink."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, "pkg/__init__.py", "")
    write(root, "pkg/core.py", CORE)
    write(root, "pkg/util.py", UTIL)
    write(root, "tests/test_core.py", TEST)
    write(root, "README.md", "# Demo\n\nA tiny expression parser.\n")
    write(root, "pkg/broken.py", "def oops(:\n    pass\n")
    write(root, "pkg/data.txt", b"\x00\x01binary\x00")
    write(root, "node_modules/lib/index.js", "function vendored() {}\n")
    (root / "outside").symlink_to("/etc/hostname")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root
