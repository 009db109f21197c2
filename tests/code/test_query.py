"""Mining a request for code: identifiers, dotted names, paths, frames, exceptions."""

from __future__ import annotations

import json

import pytest

from nexusd.code.query import W_CODE, W_PROSE, W_SNIPPET_ONLY, W_TITLE, Frame, mine, within_reach

PYTHON_TRACE = """Calling `block_collapse(b * b * b)` fails:

```
Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
  File "/home/jan/sympy/matrices/expressions/blockmatrix.py", line 393, in block_collapse
    result = rule(expr)
  File "/home/jan/site-packages/sympy/matrices/expressions/matexpr.py", line 85, in _blockmul
AttributeError: 'Zero' object has no attribute 'cols'
```
"""


def test_python_traceback_frames_in_order() -> None:
    q = mine(PYTHON_TRACE)
    assert q.frames == (
        Frame("<stdin>", 1, "<module>"),
        Frame(
            "/home/jan/sympy/matrices/expressions/blockmatrix.py",
            393,
            "block_collapse",
        ),
        Frame("/home/jan/site-packages/sympy/matrices/expressions/matexpr.py", 85, "_blockmul"),
    )
    assert q.exceptions == ("AttributeError",)
    assert q.messages == ("'Zero' object has no attribute 'cols'",)


def test_frame_functions_and_code_words_weigh_more_than_prose() -> None:
    q = mine(PYTHON_TRACE)
    idents = dict(q.identifiers)
    assert idents["_blockmul"] == 3.0  # a frame's function
    assert idents["block_collapse"] == 3.0
    assert idents["fails"] == 1.0  # prose
    terms = dict(q.terms)
    assert terms["blockmatrix"] == 3.0  # a word of a frame's path
    assert terms["fails"] == 1.0


@pytest.mark.parametrize(
    ("text", "frame"),
    [
        (
            "src/_pytest/python.py:123: in pytest_pycollect",
            Frame("src/_pytest/python.py", 123, "pytest_pycollect"),
        ),
        ("    at parse (src/lib/parser.js:10:5)", Frame("src/lib/parser.js", 10, "parse")),
        ("\tat com.acme.Cart.total(Cart.java:42)", Frame("Cart.java", 42, "total")),
        ("main.go:17 +0x1d", Frame("main.go", 17, "")),
    ],
)
def test_frames_of_other_runtimes(text: str, frame: Frame) -> None:
    assert mine(text).frames == (frame,)


def test_dotted_names_split_into_identifiers_and_kept_as_modules() -> None:
    q = mine("Calling flask.Config.from_file with a missing file raises")
    idents = dict(q.identifiers)
    assert idents["Config"] == 2.0
    assert idents["from_file"] == 2.0
    assert "flask.Config.from_file" in q.modules


def test_paths_with_line_numbers() -> None:
    q = mine("see sympy/printing/latex.py:120 and `docs/conf.py`")
    assert q.paths == ("sympy/printing/latex.py", "docs/conf.py")


def test_title_words_outweigh_the_body() -> None:
    q = mine("body mentions printer and parse_latex", title="latex printer breaks in parse_latex")
    terms = dict(q.terms)
    assert terms["latex"] == W_TITLE > terms["body"] == W_PROSE
    # A name the title uses is multiplied, on top of what being code-shaped gave it.
    assert dict(q.identifiers)["parse_latex"] == W_CODE * W_TITLE


def test_rubys_predicate_and_bang_names_are_identifiers_of_their_own() -> None:
    q = mine(
        "`record.save!` raises and `form.valid?` lies; `alpha!=beta`, `gamma !~ delta`",
        title="save! fails",
    )
    idents = dict(q.identifiers)
    assert idents["save!"] == idents["save"] == W_CODE * W_TITLE
    assert idents["valid?"] == idents["valid"] == W_CODE
    # `!=` and `!~` are operators, not a name's mark.
    assert {"alpha", "beta", "gamma"} <= idents.keys()
    assert not {"alpha!", "gamma!"} & idents.keys()


def test_an_empty_request_is_empty() -> None:
    assert mine("   ").is_empty()


def test_a_huge_request_is_mined_by_its_head_and_its_tail() -> None:
    filler = "word " * 200_000
    q = mine(f"parse_head fails\n{filler}middle_name\n{filler}\nValueError in parse_tail()")
    names = {name for name, _ in q.identifiers}
    assert {"parse_head", "parse_tail", "ValueError"} <= names
    assert "middle_name" not in names


def test_a_word_the_report_repeats_weighs_more_but_not_in_proportion() -> None:
    terms = dict(mine("the parser fails; parser output is wrong; parser again. lexer ok").terms)
    assert terms["lexer"] == W_PROSE
    assert W_PROSE < terms["parser"] < 3 * W_PROSE


def test_names_the_reporters_snippet_binds_are_not_searched_as_definitions() -> None:
    q = mine(
        "```\n>>> expr = Poly(x**2, x)\nIn [2]: a, b = symbols('a b')\n>>> expr.subs(a, b)\n"
        "FILE_UPLOAD_PERMISSIONS = 0o644\n```"
    )
    names = dict(q.identifiers)
    assert "expr" not in names and "symbols" in names and "subs" in names and "Poly" in names
    # A constant-style name is one of the project's settings, not a throwaway variable.
    assert "FILE_UPLOAD_PERMISSIONS" in names


def test_names_reached_only_through_the_standard_library_are_not_the_repositorys() -> None:
    q = mine(
        "```\nimport os, shutil\nold = os.getcwd()\nshutil.rmtree(out)\nos.path.join(a, b)\n"
        "path.join(c)\narray.reshape(2)\n```"
    )
    names = dict(q.identifiers)
    assert "getcwd" not in names and "rmtree" not in names
    assert "join" in names  # `path.join(c)` reaches it through something of the project's
    assert "reshape" in names  # `array` is not imported: a variable, not the module


@pytest.mark.parametrize(
    ("title", "text", "name"),
    [
        # What the title or prose says is the topic, however the snippet binds or reaches it.
        ("to_csv ignores `date_format`", "```\ndate_format = '%Y'\n```", "date_format"),
        (
            "entry_points() misses groups",
            "```\nimport importlib\nimportlib.entry_points()\n```",
            "entry_points",
        ),
    ],
)
def test_a_name_the_report_says_is_kept_wherever_else_it_appears(
    title: str, text: str, name: str
) -> None:
    assert name in dict(mine(text, title=title).identifiers)


def test_keyword_arguments_and_class_attributes_are_not_throwaway_variables() -> None:
    q = mine(
        "```\ndf.to_csv(\n    date_format='%Y',\n)\nclass Meta:\n    default_related_name = 'x'\n"
        ">>> tmp = 1\n    >>> other = 2\n```"
    )
    names = dict(q.identifiers)
    assert "date_format" in names and "default_related_name" in names
    assert "tmp" not in names and "other" not in names


def test_environment_listings_are_not_searched() -> None:
    q = mine(
        "str(e) differs\n```\nPackage Version\n------- -------\nasn1crypto 0.24.0\n"
        "boto3 1.9.51\nmoto 1.3.7\n```\n"
    )
    words = dict(q.terms)
    assert "asn1crypto" not in words and "moto" not in words
    assert "differs" in words


def test_a_name_only_the_snippet_uses_weighs_less_than_one_the_prose_says() -> None:
    q = mine(
        "Saving a `ModelForm` loses the default\n```\nclass Thing(models.Model):\n"
        "    plop = ArrayField(default=list)\n```\n>>> Thing.objects.create()\n"
    )
    names = dict(q.identifiers)
    assert names["ModelForm"] == W_CODE
    assert names["ArrayField"] == W_CODE * W_SNIPPET_ONLY
    assert names["objects"] == W_CODE * W_SNIPPET_ONLY


def test_the_missing_attribute_of_an_error_message_keeps_its_full_weight() -> None:
    q = mine(
        "Saving fails\n```\n>>> w.frobnicate_widgets()\n"
        "AttributeError: 'W' object has no attribute 'frobnicate_widgets'\n```"
    )
    names = dict(q.identifiers)
    assert names["frobnicate_widgets"] == W_CODE
    assert names["AttributeError"] == W_CODE


@pytest.mark.parametrize(
    ("text", "frames"),
    [
        (
            "File ~/code/seaborn/seaborn/_core/plot.py:804, in Plot.plot(self, pyplot)\n"
            "File ~/code/seaborn/seaborn/_stats/regression.py:30, in PolyFit._fit_predict(self)\n",
            [
                Frame("~/code/seaborn/seaborn/_core/plot.py", 804, "plot"),
                Frame("~/code/seaborn/seaborn/_stats/regression.py", 30, "_fit_predict"),
            ],
        ),
        (
            "/venv/site-packages/sympy/printing/mathml.py in doprint(self, expr)\n"
            "     36         Prints the expression as MathML.\n"
            "---> 38         mathML = Printer._print(self, expr)\n"
            "     39         unistr = mathML.toxml()\n\n"
            "/venv/site-packages/sympy/printing/printer.py in _print(self, expr)\n"
            "--> 257                     return getattr(self, printmethod)(expr)\n",
            [
                Frame("/venv/site-packages/sympy/printing/mathml.py", 38, "doprint"),
                Frame("/venv/site-packages/sympy/printing/printer.py", 257, "_print"),
            ],
        ),
    ],
)
def test_ipython_tracebacks_are_frames_in_order(text: str, frames: list[Frame]) -> None:
    assert list(mine(text).frames) == frames


def test_frames_of_mixed_formats_keep_the_order_the_report_prints_them() -> None:
    # A script's traceback and then the IPython one of the same call: the innermost frame is
    # the last printed, not the last of whichever format was read last.
    text = (
        'File "/src/pkg/api.py", line 10, in load\n'
        "File ~/src/pkg/io.py:20, in read(path)\n"
        '  File "/src/pkg/parse.py", line 30, in parse\n'
    )
    assert [f.function for f in mine(text).frames] == ["load", "read", "parse"]


@pytest.mark.parametrize(
    "trace",
    [
        "TypeError: x is undefined\n    at parse (src/lib/parser.js:10:5)\n"
        "    at load (src/lib/loader.js:20:3)\n",
        "java.lang.NullPointerException\n\tat com.acme.Cart.parse(Parser.java:10)\n"
        "\tat com.acme.Cart.load(Loader.java:20)\n",
        "panic: runtime error\n\nmain.parse()\n\t/src/parser.go:10 +0x1d\n"
        "main.load()\n\t/src/loader.go:20 +0x2f\n",
    ],
)
def test_innermost_first_traces_are_read_outermost_first_like_python(trace: str) -> None:
    # JavaScript, Java and Go print the failing call first; the frame signal weighs the last
    # frame most, as Python prints it.
    assert [f.line for f in mine(trace).frames] == [20, 10]


def test_a_request_of_blank_lines_is_mined_without_reading_frames_into_them() -> None:
    # Frame patterns once let `\s*` run across lines: 19,000 blank lines (what blanking a
    # pasted listing leaves, at the size a request is mined by) took seconds.
    assert mine("\n" * 19_000).is_empty()
    q = mine("\n" * 50 + "  src/pkg/a.py:3: in f\n\tmain.go:17 +0x1d\n")
    assert [(f.path, f.line) for f in q.frames] == [("src/pkg/a.py", 3), ("main.go", 17)]


def test_a_frames_environment_folders_are_not_searched() -> None:
    q = mine(
        'Traceback (most recent call last):\n  File "/home/me/venv/lib/python3.12/'
        'site-packages/flask/sansio/scaffold.py", line 20, in find_package\n    x()\n'
        "ValueError: no package\n"
    )
    terms = dict(q.terms)
    assert {"sansio", "scaffold", "flask", "find_package"} <= set(terms)
    assert terms["sansio"] > terms.get("venv", 0) and terms["sansio"] > terms.get("site", 0)
    assert q.frames[0].path.endswith("site-packages/flask/sansio/scaffold.py")  # kept whole


def test_a_traceback_header_is_no_evidence_even_as_the_title() -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/proj/t.py", line 5, in test_port\n'
        "    monkeypatch.setenv('PORT', 8080)\nTypeError: str expected, not int\n"
    )
    q = mine(trace, title="Traceback (most recent call last):")
    names = dict(q.identifiers)
    assert "Traceback" not in names and "recent" not in names
    assert not {"traceback", "recent", "last"} & set(dict(q.terms))
    assert names["test_port"] > names["monkeypatch"] > 0
    # The reporter's home folder is prose in the report, never a frame's (trace) words.
    assert dict(q.terms)["me"] == W_PROSE < dict(q.terms)["proj"]


@pytest.mark.parametrize(
    "prefix",
    ["> ", "> > ", "2024-01-01T00:00:00.1234567Z ", "\x1b[0;32m"],
    ids=["quoted", "quoted-twice", "ci-timestamp", "colour"],
)
def test_quoted_timestamped_or_coloured_lines_are_read_as_lines(prefix: str) -> None:
    report = "\n".join(
        prefix + line
        for line in [
            "src/pkg/util.py:22: in helper",
            "    x = parse(1)",
            "E   KeyError: 'missing'",
            "attrs==19.3.0",
            "pluggy==0.13.1",
            "py==1.8.1",
        ]
    )
    q = mine(report)
    assert q.frames == (Frame("src/pkg/util.py", 22, "helper"),)
    assert "pluggy" not in dict(q.terms)  # the listing is still recognised and blanked
    assert not any(t.startswith("t00") or t == "0m" for t in dict(q.terms))


def test_a_repl_prompt_is_not_a_quote_marker() -> None:
    q = mine(">>> x = 1\n>>> Mod(x, 2)\n")
    assert "Mod" in dict(q.identifiers) and "x" not in dict(q.identifiers)


def test_inline_triple_backticks_do_not_open_a_fence() -> None:
    q = mine(
        "I tried ```stream_with_context``` but nothing changed.\n"
        "```python\nbp = Blueprint('x', __name__)\nbp.add_url_rule('/')\n```\n"
        "the after_request hooks never run\n"
    )
    names = dict(q.identifiers)
    assert names["after_request"] == W_CODE  # prose around the block stays prose-weighted
    assert names["add_url_rule"] == W_CODE * W_SNIPPET_ONLY  # the block stays a snippet


def test_windows_paths_name_files_and_frames() -> None:
    q = mine(
        "The bug is in src\\flask\\sansio\\app.py, see\nC:\\proj\\src\\pkg\\util.py:22: in helper"
    )
    assert "src/flask/sansio/app.py" in q.paths
    assert Frame("C:/proj/src/pkg/util.py", 22, "helper") in q.frames


def test_standard_library_frames_name_no_repository_file_but_keep_their_words() -> None:
    q = mine(
        'Traceback (most recent call last):\n  File "/srv/app/src/flask/app.py", line 9, in run\n'
        '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads\n'
        '  File "C:\\Python39\\Lib\\reprlib.py", line 52, in repr1\nValueError: bad\n'
    )
    assert [f.path for f in q.frames] == ["/srv/app/src/flask/app.py"]
    assert {"loads", "repr1", "reprlib"} <= set(dict(q.terms))
    # A checkout's own `Lib/` (CPython's) is the repository's code.
    own = mine('  File "/home/me/cpython/Lib/json/decoder.py", line 3, in decode\n')
    assert [f.path for f in own.frames] == ["/home/me/cpython/Lib/json/decoder.py"]


def test_boilerplate_is_blanked_before_a_long_report_is_cut() -> None:
    log = "".join(f"info worker job {i} done\n" for i in range(700))
    freeze = "".join(f"package{i}=={i}.1.0\n" for i in range(400))
    report = (
        f"```\n{log}```\n"
        'Traceback (most recent call last):\n  File "src/pkg/tail.py", line 7, in deep\n'
        f"TypeError: unsupported operand\n\n## Environment\n{freeze}"
    )
    assert len(report) > 20_000
    q = mine(report)
    assert Frame("src/pkg/tail.py", 7, "deep") in q.frames
    assert "TypeError" in q.exceptions


@pytest.mark.parametrize(
    ("trace", "innermost"),
    [
        (
            "TypeError: x\n    at async loadAll (/app/src/loader.ts:40:3)\n"
            "    at new Router (/app/src/router.js:5:9)\n    at file:///app/index.mjs:3:1\n",
            Frame("/app/src/loader.ts", 40, "loadAll"),
        ),
        (
            "Error: boom\n    at render (webpack://app/./src/render.js?abc:12:5)\n"
            "    at go (C:\\app\\src\\go.js:1:2)\n",
            Frame("./src/render.js", 12, "render"),
        ),
        (
            "Error: x\n    at main (file:///C:/app/src/index.mjs:3:1)\n"
            "    at file:///C:/app/a.mjs:1:2\n",
            Frame("C:/app/src/index.mjs", 3, "main"),
        ),
        (  # the root cause, printed after `Caused by:`, is the innermost frame
            "java.lang.RuntimeException: wrap\n"
            "\tat com.acme.UserService.load(UserService.java:40)\n"
            "\tat com.acme.Main.main(Main.java:10)\nCaused by: java.sql.SQLException: pool\n"
            "\tat com.acme.Pool.acquire(Pool.java:88)\n"
            "\tat com.acme.UserService.load(UserService.java:38)\n\t... 1 more\n",
            Frame("Pool.java", 88, "acquire"),
        ),
        (
            "thread 'main' panicked at src/parser/lexer.rs:88:14:\nindex out of bounds\n"
            "stack backtrace:\n   0: rust_begin_unwind\n"
            "             at /rustc/abc/library/std/src/panicking.rs:584:5\n"
            "   1: app::main\n             at ./src/main.rs:5:3\n",
            Frame("src/parser/lexer.rs", 88, ""),
        ),
        (
            "panic: boom\n\ngoroutine 1 [running]:\nmain.(*DB).Get(0xc000010000)\n"
            "\t/app/store/db.go:42 +0x1d\nmain.main()\n\t/app/main.go:10 +0x2f\n",
            Frame("/app/store/db.go", 42, "Get"),
        ),
    ],
    ids=[
        "node-async-new-file",
        "webpack-windows",
        "node-windows-esm",
        "java-caused-by",
        "rust-panic",
        "go-function",
    ],
)
def test_other_runtimes_traces_end_at_the_fault(trace: str, innermost: Frame) -> None:
    frames = mine(trace).frames
    assert frames[-1] == innermost
    assert len(frames) >= 2


def test_a_fences_language_label_is_no_word_of_the_report() -> None:
    words = {word for word, _ in mine("It fails:\n```javascript\nres.send(1)\n```\n").terms}
    assert "send" in words and "javascript" not in words


def test_a_query_is_cut_to_what_the_ranking_reads_and_the_daemon_takes() -> None:
    short = "Shelf.place_order fails"
    assert within_reach(short) == (short, 0)
    long = "start Shelf.place_order\n" + "x" * 2_000_000 + "\nend KeyError"
    kept, cut = within_reach(long)
    assert kept.startswith("start Shelf.place_order") and kept.endswith("end KeyError")
    assert mine(kept) == mine(long)  # the miner reads no more than that anyway
    assert cut == len(long) - len(kept) + 1  # the line break that joins the two ends
    wide = "前" * 400_000  # six bytes a character in JSON: past the daemon's 1 MiB line
    kept, cut = within_reach(wide)
    assert len(json.dumps(kept)) <= 1_000_000 and cut > 0


@pytest.mark.parametrize("opening", ["Bug report", "Hi team, can someone help?\n", "Issue #12"])
def test_an_opening_that_only_says_there_is_a_report_is_not_searched(opening: str) -> None:
    report = "KeyError in Config.from_file\n\nThe file is missing."
    assert mine(f"{opening}\n\n{report}").terms == mine(report).terms


def test_a_query_that_is_all_chatter_is_still_searched() -> None:
    assert "report" in dict(mine("Bug report").terms)
