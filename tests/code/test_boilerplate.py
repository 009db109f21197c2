"""What a report pastes about its environment is blanked before it is searched."""

from __future__ import annotations

import pytest

from nexusd.code.boilerplate import TITLE_READ_CHARS, search_title, strip, title

PIP_LIST = """Pip list gives
```
Package            Version  Location
------------------ -------- --------------------
apipkg             1.5
asn1crypto         0.24.0
pytest             4.6.2    /home/me/src/pytest
```
but `str(e)` differs."""

FREEZE = "nox > pip freeze\nattrs==19.3.0\npluggy==0.13.1\npy==1.8.1\nnox > pytest\n"

SHOW_VERSIONS = """Versions:
System:
    python: 3.7.3 (default, Mar 27 2019, 22:11:17)
Python deps:
       pip: 19.1.1
setuptools: 41.0.1
   sklearn: 0.21.2
     numpy: 1.16.4
"""

IPYTHON = """```
Python 3.6.0 |Continuum Analytics, Inc.| (default, Dec 23 2016, 12:22:00)
Type "copyright", "credits" or "license" for more information.

IPython 5.1.0 -- An enhanced Interactive Python.
?         -> Introduction and overview of IPython's features.
%quickref -> Quick reference.
help      -> Python's own help system.
object?   -> Details about 'object', use 'object??' for extra details.

In [1]: from sympy import apart
```"""

PYTHON = """>>> import sys
Python 3.6.9 (default, Jan 26 2021, 15:33:00)
[GCC 8.4.0] on linux
Type "help", "copyright", "credits" or "license" for more information.
>>> parse_latex("x")
"""

PYTEST_HEADER = """============================= test session starts ==============================
platform darwin -- Python 3.8.1, pytest-5.4.1, py-1.8.1, pluggy-0.13.1
cachedir: .pytest_cache
rootdir:
configfile: pytest.ini
plugins: asyncio-0.10.0, mock-3.0.0, benchmark-3.2.3
benchmark: 3.2.3 (defaults: timer=time.perf_counter disable_gc=False min_rounds=5)
hypothesis profile 'default' -> database=DirectoryBasedExampleDatabase('.hypothesis')
collected 1 item

test_foo.py F
"""


def lines_of(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def test_a_pip_list_goes_and_the_prose_around_it_stays() -> None:
    out = strip(PIP_LIST)
    assert lines_of(out) == ["Pip list gives", "```", "```", "but `str(e)` differs."]


def test_pip_freeze_and_show_versions_listings_go() -> None:
    assert lines_of(strip(FREEZE)) == ["nox > pip freeze", "nox > pytest"]
    assert "sklearn" not in strip(SHOW_VERSIONS)
    assert "python: 3.7.3" not in strip(SHOW_VERSIONS)  # under `System:`, the machine's
    alone = "It fails on python: 3.7.3 only.\n"
    assert strip(alone) == alone  # one version line alone is prose


@pytest.mark.parametrize("banner", [IPYTHON, PYTHON])
def test_interpreter_banners_go_and_the_session_stays(banner: str) -> None:
    out = strip(banner)
    assert "Continuum" not in out and "copyright" not in out and "GCC" not in out
    assert "IPython's features" not in out and "Quick reference" not in out
    assert ("from sympy import apart" in out) or ('parse_latex("x")' in out)


def test_an_issue_forms_empty_field_goes() -> None:
    form = "### Describe the bug\n\n_No response_\n\n### Steps\n\nfetch(url) hangs\n"
    assert lines_of(strip(form)) == ["### Describe the bug", "### Steps", "fetch(url) hangs"]
    assert title(form) == "fetch(url) hangs"
    said = "The server sent _No response_ at all\n"
    assert strip(said) == said and title(said) == said.strip()  # in a sentence it is prose


def test_a_test_session_header_goes_and_the_result_stays() -> None:
    assert lines_of(strip(PYTEST_HEADER)) == ["test_foo.py F"]


@pytest.mark.parametrize(
    "header",
    [
        # pytest 9 -v with hypothesis and pytest-randomly: lines of no `key: value` shape.
        "============================= test session starts ==============================\n"
        "platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0 -- /venv/bin/python\n"
        "cachedir: .pytest_cache\n"
        "Using --randomly-seed=1234567\n"
        "hypothesis profile 'default'\n"
        "rootdir: /src\n"
        "plugins: randomly-3.15.0, anyio-4.16.0, hypothesis-6.170.17\n"
        "collecting ... collected 1 item\n",
        # pytest-xdist -v: the workers' lines, then how the items were shared.
        "platform linux -- Python 3.11.7, pytest-7.4.0, pluggy-1.3.0\n"
        "rootdir: /src\n"
        "plugins: xdist-3.5.0\n"
        "created: 2/2 workers\n"
        "[gw0] linux Python 3.11.7 cwd: /src\n"
        "[gw0] Python 3.11.7 (main, Dec 19 2023, 20:33:49) -- [GCC 12.2.0]\n"
        "gw0 [4] / gw1 [4]\n",
        "Test session starts (platform: linux, Python 3.8.5, pytest 6.2.2, pytest-sugar 0.9.4)\n"
        "rootdir: /src\n"
        "plugins: sugar-0.9.4\n"
        "collecting ... \n",
    ],
)
def test_a_whole_session_header_goes_whatever_its_plugins_print(header: str) -> None:
    assert lines_of(strip(header + "\ntest_foo.py F\n")) == ["test_foo.py F"]


def test_what_follows_a_header_without_its_end_is_evidence() -> None:
    text = (
        "platform linux -- Python 3.9.6, pytest-6.2.5\nrootdir: /src\n"
        "E   KeyError: 'title' missing from Document.render_header\n"
        "database:\n  workers: 4\n"
    )
    assert lines_of(strip(text)) == [
        "E   KeyError: 'title' missing from Document.render_header",
        "database:",
        "  workers: 4",
    ]


def test_a_header_cut_short_ends_at_its_first_line_of_output() -> None:
    text = "platform linux -- Python 3.9.6, pytest-6.2.5\nrootdir: /src\nE   assert 1 == 2\n"
    assert lines_of(strip(text)) == ["E   assert 1 == 2"]


def test_header_keys_outside_a_header_are_prose() -> None:
    text = "plugins: loading them twice breaks `pytest_configure`\nrootdir: is not /src\n"
    assert strip(text) == text


def test_template_comments_go_and_line_numbers_are_kept() -> None:
    text = "title\n<!--\nThanks for submitting an issue!\n-->\nthe bug\n"
    out = strip(text)
    assert "Thanks" not in out
    assert out.split("\n")[4] == "the bug"
    assert len(strip(PIP_LIST).split("\n")) == len(PIP_LIST.split("\n"))


PANDAS = """INSTALLED VERSIONS
------------------
commit           : None
python           : 3.8.5.final.0
pandas           : 1.1.3
numpy            : 1.19.2
pandas_gbq       : None
pyarrow          : 1.0.1
sqlalchemy       : None
"""


def test_a_show_versions_block_with_unset_entries_goes_whole() -> None:
    assert lines_of(strip(PANDAS)) == []


@pytest.mark.parametrize(
    "report",
    [
        # xarray's show_versions(): the machine before the packages.
        "INSTALLED VERSIONS\n------------------\ncommit: None\n"
        "python: 3.7.3 (default, Mar 27 2019, 22:11:17)\n[GCC 7.3.0]\nmachine: x86_64\n"
        "processor: x86_64\nLC_ALL: None\nLOCALE: en_GB.UTF-8\nlibhdf5: 1.10.4\n",
        # scikit-learn's, its parts one blank line apart.
        "System:\n    python: 3.9.7 (default, Sep 16 2021)\nexecutable: /opt/bin/python\n"
        "   machine: Linux-5.11.0-x86_64\n\nBLAS:\n    vendor: mkl_rt\n   threads: 12\n",
        # pydicom's table.
        "module       | version\n------       | -------\nplatform     | macOS-10.15.7-x86_64\n"
        "Python       | 3.8.2 (v3.8.2, Feb 24 2020)\ngdcm         | _module not found_\n",
    ],
)
def test_an_environment_report_goes_whole(report: str) -> None:
    text = "The unstack fails.\n\n" + report + "\n\nIt worked in 0.14."
    assert lines_of(strip(text)) == ["The unstack fails.", "It worked in 0.14."]


@pytest.mark.parametrize(
    "prose",
    [
        # A line that only starts like a header is the report's own.
        "System: the parser drops the last row\nmachine: the one from the example\n",
        "The table has columns module | version and more.\n",
    ],
)
def test_header_words_in_prose_stay(prose: str) -> None:
    assert strip(prose) == prose


@pytest.mark.parametrize(
    "code",
    [
        "x = 1.5\ny = 2.5\nz = 3.5\n",  # assignments are code, not a listing
        "- 1.8\n- 1.6.2\n- 1.5\n",  # versions the bug was seen in, no package names
        "Out[5]: '1.1.1'\nOut[6]: '1.2.0'\nOut[7]: '1.3'\n",
        "assert r.mean == 1.5\nassert r.std >= 0.5\nassert r.median == 2.0\n",
        "learning_rate: 0.01\nweight_decay: 0.0005\nmomentum: 0.9\n",  # the report's data
        "Python 3.11 on Windows: `tmp_path` raises PermissionError in `rm_rf`\n",
        "Python 3.9 (and 3.10) both fail in `parse_latex`\n",
        'The sanitizer mishandles `<!--` in values:\n  File "s.py", line 3, in clean\n',
    ],
)
def test_code_and_output_that_look_like_versions_stay(code: str) -> None:
    assert strip(code) == code


def test_long_runs_of_spaces_are_read_in_linear_time() -> None:
    # A pasted table padded with spaces made the listing pattern backtrack quadratically
    # (minutes for one 20 KB line, the most a request is mined by): now a few milliseconds.
    line = "x" + " " * 19_000 + "y"
    assert strip(line) == line
    assert strip("\n".join(["col" + " " * 200 + "1.2.3"] * 40)).strip() == ""


def test_unclosed_comments_leave_the_text_as_it_is() -> None:
    # Each unclosed `<!--` once scanned the rest of the text (quadratic in their number).
    text = "-->\n" + "<!--\nword\n" * 2000
    assert strip(text) == text


def test_a_comment_inside_a_fenced_block_is_the_reporters_code() -> None:
    text = (
        "<!-- Describe the bug -->\nThe template renders twice:\n```html\n"
        "<!-- render_template_string keeps this -->\n<p>{{ x }}</p>\n```\n"
    )
    out = strip(text)
    assert "Describe the bug" not in out
    assert "render_template_string keeps this" in out
    assert out.count("\n") == text.count("\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Session.request raises KeyError\nbody", "Session.request raises KeyError"),
        ("\n\n  > quoted title\nbody", "quoted title"),
        ("\ufeffKeyError on retry\r\nbody", "KeyError on retry"),
        # A form's comments, headings, labels and checklists go; the report's line stays.
        (
            "<!-- Please describe the bug.\n  Search first. -->\nKeyError on retry",
            "KeyError on retry",
        ),
        ("### Describe the bug\n\nKeyError on retry\n### Steps\nrun", "KeyError on retry"),
        ("## What happened?\r\nKeyError on retry", "KeyError on retry"),
        ("**To Reproduce**:\nKeyError on retry", "KeyError on retry"),
        ("**Describe the bug:**\nKeyError on retry", "KeyError on retry"),
        ("- [x] I have searched the existing issues\nKeyError on retry", "KeyError on retry"),
        ("> [!NOTE]\n> KeyError on retry", "KeyError on retry"),
        ("#\n---\n***\n___\n\u200b\nKeyError on retry", "KeyError on retry"),
        # GitHub's default templates and issue forms, a form's labels copied from its rendered
        # page, a salutation.
        (
            "**Is your feature request related to a problem? Please describe.**\nKeyError on retry",
            "KeyError on retry",
        ),
        (
            "### Is there an existing issue for this?\n\n- [X] I have searched\n\n"
            "### Current Behavior\n\nKeyError on retry",
            "KeyError on retry",
        ),
        ("Describe the bug:\nSteps to reproduce:\nKeyError on retry", "KeyError on retry"),
        ("Hi all,\nKeyError on retry", "KeyError on retry"),
        ("Dear maintainers,\n\nKeyError on retry", "KeyError on retry"),
        # A report's own title in a form's words, or a name made of them, is a title.
        ("Log the traceback\nbody", "Log the traceback"),
        ("Request context\nbody", "Request context"),
        ("error_log\nbody", "error_log"),
        ("`__version__` is wrong", "`__version__` is wrong"),
        # A line that only says there is a report (a greeting, thanks, a plea, a bare `Bug
        # report`) is not its title: the next line is.
        ("Is this a bug?\nKeyError on retry", "KeyError on retry"),
        ("Bug report\n\nKeyError on retry", "KeyError on retry"),
        ("Hi team, can someone help?\nKeyError on retry", "KeyError on retry"),
        ("Please fix the following issue.\n\nKeyError on retry", "KeyError on retry"),
        ("Hi, I found a bug:\nKeyError on retry", "KeyError on retry"),
        (
            "Investigate the bug below and find where it happens.\nKeyError on retry",
            "KeyError on retry",
        ),
        ("Resolve the following GitHub issue:\n<issue>\nKeyError on retry", "KeyError on retry"),
        ("Summary\n\nKeyError on retry", "KeyError on retry"),
        ("https://github.com/org/net/issues/123\nKeyError on retry", "KeyError on retry"),
        ("Issue #123 (2.0)\n\nKeyError on retry", "KeyError on retry"),
        ("Fixes #123: KeyError on retry\nbody", "Fixes #123: KeyError on retry"),
        (
            "https://github.com/org/net/blob/main/net/client.py#L5\nbody",
            "https://github.com/org/net/blob/main/net/client.py#L5",
        ),
        ("## Question\nThanks in advance!\n", ""),
        ("Hi team, fetch retries forever\nbody", "Hi team, fetch retries forever"),
        # A heading in the report's own words is its title, markup off.
        ("# KeyError on retry\n\nbody", "KeyError on retry"),
        ("## Fix parse_expr on empty input ##\n\nIt raises", "Fix parse_expr on empty input"),
        ("**Fix parse_expr on empty input**\nIt raises", "**Fix parse_expr on empty input**"),
        # Not markup: an issue number, bold words in a sentence, a dunder name, a directive.
        ("#123 is still broken", "#123 is still broken"),
        ("**bold** words in a title", "**bold** words in a title"),
        ("__init__", "__init__"),
        ("50% of runs fail", "50% of runs fail"),
        ("#include <vector>\nint main", "#include <vector>"),
        # Code the reporter ran or pastes: no title.
        (">>> latex(x**2)\n'x^2'", ""),
        ("In [3]: f(1)", ""),
        ("$ pytest -x\nfails", ""),
        ("(venv) $ python -m pytest\nfails", ""),
        ("user@host:~/proj$ make\nfails", ""),
        ("PS C:\\Users\\me> python x.py", ""),
        ("C:\\> pip install foo", ""),
        ("PS /home/me> ./run.ps1\nfails", ""),
        ("PS> Get-Process\nfails", ""),
        ("PS HKLM:\\> dir\nfails", ""),
        ("~/py3% make\nfails", ""),
        ("$ for f in *.py; do lint $f; done\nfails", ""),
        ("$ as --version\nfails", ""),
        ("### Describe the bug\n\n```python\nimport x\n```", ""),
        # Prose that opens like a prompt: a percentage, a sentence on a sign, a postscript.
        ("~50% slower since 2.0\nbody", "~50% slower since 2.0"),
        ("% of rows dropped by merge\nbody", "% of rows dropped by merge"),
        ("$ in a path is not escaped\nbody", "$ in a path is not escaped"),
        ("PS: the check x > y is reversed\nbody", "PS: the check x > y is reversed"),
        ("$ sign not escaped in paths\nbody", "$ sign not escaped in paths"),
        ("$ 5 fee shown twice\nbody", "$ 5 fee shown twice"),
        # Banners and tracebacks are the miner's to blank, as on any title.
        ("Traceback (most recent call last):\n  File x.py", "Traceback (most recent call last):"),
        ("### Describe the bug\n\n", ""),
        ("", ""),
    ],
)
def test_the_title_is_the_first_line_past_a_forms_markup(text: str, expected: str) -> None:
    assert title(text) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # One line is what a person or an agent types into a search: all of it is the title,
        # markup and all, unless it was run at a prompt.
        ("Retry backoff ignores the timeout", "Retry backoff ignores the timeout"),
        ("\n  `fetch()` hangs\r\n", "`fetch()` hangs"),
        ("...and then fetch hangs", "...and then fetch hangs"),
        ("- [ ] fetch hangs after a retry", "- [ ] fetch hangs after a retry"),
        ("```fetch()``` hangs", "```fetch()``` hangs"),
        ("Bug report", "Bug report"),
        (">>> fetch(url)", ""),
        ("... fetch(url)", ""),
        ("In [3]: fetch(url)", ""),
        ("$ pytest -x tests/test_client.py", ""),
        ("% of rows dropped by merge", "% of rows dropped by merge"),
        ("~50% slower since 2.0", "~50% slower since 2.0"),
        ("   ", ""),
        # A paste: its title is found as a plan's is in its goal.
        ("fetch hangs\r\nretry backoff", "fetch hangs"),
        ("<!-- Please describe the bug\n  and search first -->\nfetch hangs", "fetch hangs"),
        ("### Describe the bug\nfetch hangs", "fetch hangs"),
        ("$ pytest -x\nfetch hangs", ""),
        ("```\nfetch(url)\n```\nfetch hangs", ""),
    ],
)
def test_a_search_is_its_own_title_on_one_line_and_a_reports_on_more(
    query: str, expected: str
) -> None:
    assert search_title(query) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("b:" * 500_000, "b:" * (TITLE_READ_CHARS // 2)),
        ("x@" * 400_000, "x@" * (TITLE_READ_CHARS // 2)),
        ("**" + "a" * 1_000_000, "**" + "a" * (TITLE_READ_CHARS - 2)),
        ("## " + " #" * 300_000, ""),
        ("![a" * 30_000, ("![a" * 30_000)[:TITLE_READ_CHARS]),
        ("<img a" * 20_000, ("<img a" * 20_000)[:TITLE_READ_CHARS]),
    ],
    ids=["colons", "ats", "open-bold", "hashes", "open-images", "open-img-tags"],
)
def test_a_title_is_read_once_and_within_its_reach(text: str, expected: str) -> None:
    # A prompt or heading pattern read again from each colon or `#` would take minutes here.
    assert title(text) == expected
