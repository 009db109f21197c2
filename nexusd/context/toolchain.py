"""The repository's own commands: how its tests run, fail fast, show a trace and profile.

A plan for a Rust crate says `cargo test`, not `pytest`. The language is the one most of the
tracked code is written in; the build files at the root pick the tool (Maven or Gradle,
CMake, autotools or make). Catalog texts name these commands as `{test}`, `{first_failure}`,
`{trace}` and `{profile}` (`fill`), so one practice reads right in every language.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from nexusd.code.parsers import suffix
from nexusd.errors import GitError
from nexusd.git import run_git

# Code files by extension: the language that has most of them is the repository's.
_LANGUAGES = {
    ".py": "python",
    ".rs": "rust",
    ".go": "go",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "javascript",
    ".tsx": "javascript",
    ".java": "java",
    ".kt": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "c",
    ".cpp": "c",
    ".cxx": "c",
    ".hpp": "c",
    ".rb": "ruby",
    ".rake": "ruby",
    ".php": "php",
}


@dataclass(frozen=True)
class Toolchain:
    """The commands a plan names for this repository."""

    language: str
    test: str  # the whole suite
    first_failure: str  # stop at the first failure while iterating
    trace: str  # see where a failure happens
    profile: str  # see where the time goes
    # The build tool that names them (pytest, cargo, go, npm, maven, gradle, cmake, autotools,
    # make, rspec, rake, composer): `nexusd init` picks the sandbox image and the checks'
    # example by it.
    tool: str = "pytest"


PYTHON = Toolchain(
    "python",
    "pytest -q",
    "pytest -x -q",
    "`pytest -x -q --tb=long`, or run with `PYTHONFAULTHANDLER=1`",
    "`python -m cProfile -s cumtime -m pytest -x -q` (or the script)",
    "pytest",
)
_GDB = (
    "run the failing test under `gdb -batch -ex run -ex bt`, or build it with "
    "`-fsanitize=address,undefined`"
)
_PERF = "`perf record -g <the slow program>` then `perf report`"
_CHAINS = {
    "rust": Toolchain(
        "rust",
        "cargo test",
        "cargo test <name> -- --nocapture",
        "`RUST_BACKTRACE=1 cargo test <name>`",
        "`cargo bench`, or `perf record -g` on the release binary then `perf report`",
        "cargo",
    ),
    "go": Toolchain(
        "go",
        "go test ./...",
        "go test -failfast ./...",
        "`go test -v -run <Name> ./<package>` (a panic prints every goroutine's stack)",
        "`go test -run '^$' -bench . -cpuprofile cpu.out ./<package>` then "
        "`go tool pprof -top cpu.out`",
        "go",
    ),
    "javascript": Toolchain(
        "javascript",
        "npm test",
        "npm test -- --bail",
        "`NODE_OPTIONS=--stack-trace-limit=100 npm test`",
        "`node --cpu-prof <script>` and open the `.cpuprofile` in Chrome DevTools",
        "npm",
    ),
    "maven": Toolchain(
        "java",
        "mvn -q test",
        "mvn -q test -Dtest=<TestClass> -Dsurefire.skipAfterFailureCount=1",
        "`mvn test -Dtest=<TestClass> -DtrimStackTrace=false`",
        "Java Flight Recorder (`-XX:StartFlightRecording`) or async-profiler on the slow test",
        "maven",
    ),
    "gradle": Toolchain(
        "java",
        "{gradle} test",
        "{gradle} test --fail-fast --tests <TestClass>",
        "`{gradle} test --tests <TestClass> --stacktrace -i`",
        "Java Flight Recorder (`-XX:StartFlightRecording`) or async-profiler on the slow test",
        "gradle",
    ),
    "cmake": Toolchain(
        "c",
        "ctest --test-dir build --output-on-failure",
        "ctest --test-dir build --output-on-failure --stop-on-failure",
        _GDB,
        _PERF,
        "cmake",
    ),
    # Ruby: RSpec where the repository has specs, else Minitest through rake's `test` task.
    "rspec": Toolchain(
        "ruby",
        "bundle exec rspec",
        "bundle exec rspec --fail-fast",
        "`bundle exec rspec <spec file> --backtrace`",
        "`bundle exec rspec --profile` for the slowest examples, or stackprof on the slow code",
        "rspec",
    ),
    "rake": Toolchain(
        "ruby",
        "bundle exec rake test",
        "bundle exec ruby -Itest <test file>",
        "`bundle exec ruby -Itest <test file> --verbose`",
        "`bundle exec ruby -Itest <test file> --verbose` for each test's time, or stackprof",
        "rake",
    ),
    "php": Toolchain(
        "php",
        "vendor/bin/phpunit",
        "vendor/bin/phpunit --stop-on-failure",
        "`vendor/bin/phpunit --filter <testName> --debug`",
        "`XDEBUG_MODE=profile vendor/bin/phpunit --filter <testName>`, then a cachegrind viewer",
        "composer",
    ),
    # Automake makes a `check` target in every generated Makefile.
    "autotools": Toolchain("c", "make check", "make check", _GDB, _PERF, "autotools"),
    "make": Toolchain("c", "{make}", "{make}", _GDB, _PERF, "make"),
}

# Autotools' sources at the root: the Makefile is generated (and untracked), so it cannot
# be read for a `check` target.
_AUTOTOOLS = frozenset({"configure.ac", "configure.in", "Makefile.am"})


def detect(root: Path) -> Toolchain:
    """The toolchain of the repository at `root` (Python's when nothing else is plain)."""
    try:
        listed = run_git(root, "ls-files", "-z").decode("utf-8", "surrogateescape")
    except (GitError, OSError):
        return PYTHON
    paths = [p for p in listed.split("\0") if p]
    counts = Counter(_LANGUAGES.get(suffix(p)) for p in paths)
    counts.pop(None, None)
    if not counts:
        return PYTHON
    language = counts.most_common(1)[0][0] or "python"
    top = {p for p in paths if "/" not in p}
    if language == "java":
        if "pom.xml" in top:
            return _CHAINS["maven"]
        gradle = "./gradlew" if "gradlew" in top else "gradle"
        chain = _CHAINS["gradle"]
        return _formatted(chain, gradle=gradle)
    if language == "c":
        if "CMakeLists.txt" in top:
            return _CHAINS["cmake"]
        if top & _AUTOTOOLS:
            return _CHAINS["autotools"]
        make = "make check" if _has_target(root / "Makefile", "check") else "make test"
        return _formatted(_CHAINS["make"], make=make)
    if language == "ruby":
        specs = ".rspec" in top or any(p.startswith("spec/") for p in paths)
        return _CHAINS["rspec" if specs else "rake"]
    return _CHAINS.get(language, PYTHON)


def fill(text: str, chain: Toolchain) -> str:
    """`text` with `{test}`, `{first_failure}`, `{trace}` and `{profile}` named for `chain`."""
    for key in ("test", "first_failure", "trace", "profile"):
        text = text.replace("{" + key + "}", getattr(chain, key))
    return text


def _formatted(chain: Toolchain, **names: str) -> Toolchain:
    def one(text: str) -> str:
        for key, value in names.items():
            text = text.replace("{" + key + "}", value)
        return text

    return Toolchain(
        chain.language,
        one(chain.test),
        one(chain.first_failure),
        one(chain.trace),
        one(chain.profile),
        chain.tool,
    )


def _has_target(makefile: Path, target: str) -> bool:
    if makefile.is_symlink() or not makefile.is_file():
        return False  # nothing outside the repository is read
    try:
        text = makefile.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(line.startswith(f"{target}:") for line in text.splitlines())
