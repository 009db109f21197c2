"""Messages code raises or logs, in every language, and the requests that quote them."""

from __future__ import annotations

import pytest

from nexusd.code.messages import MessageIndex, messages, pieces

PYTHON = """
def locate(coords):
    if any(c.is_imaginary for c in coords):
        raise ValueError(
            "Imaginary coordinates are not permitted.")  # a comment, "not a message" here
    logger.warning(__("no number is assigned for %s: %s"), figtype, labelid,
                   location=node)
    warnings.warn(f"Dimension of {expr} is {dim}, but it should be {other}", stacklevel=2)
    label = "this assignment is not a message at all"
    raise TypeError("Expecting sequence of coordinates, not `{}`".format(type(coords)))
"""


def test_python_raises_warnings_and_logging_give_their_fixed_pieces() -> None:
    assert messages(PYTHON) == (
        "Imaginary coordinates are not permitted.",
        "no number is assigned for",
        ", but it should be",
        "Expecting sequence of coordinates, not `",
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "throw new TypeError(`cannot read the config file ${path} twice`);",
            "cannot read the config file",
        ),
        (
            'return fmt.Errorf("failed to open the index at %q: %w", path, err)',
            "failed to open the index at",
        ),
        (
            'return errors.New("parcel weight must be positive")',
            "parcel weight must be positive",
        ),
        (
            'panic!("the lock file is held by another process {}", pid);',
            "the lock file is held by another process",
        ),
        (
            'throw new IllegalStateException("the queue was closed before the task ran");',
            "the queue was closed before the task ran",
        ),
        (
            "console.error('unable to reach the daemon socket at', sock)",
            "unable to reach the daemon socket at",
        ),
    ],
)
def test_other_languages(source: str, expected: str) -> None:
    assert messages(source) == (expected,)


def test_short_pieces_plain_strings_and_unclosed_calls_give_nothing() -> None:
    assert messages('raise KeyError("no such key")') == ()  # three words: a stock phrase
    assert messages('x = "a plain string that nobody raises"') == ()
    assert messages("raise ValueError(") == ()
    assert messages("") == ()


def test_pieces_split_on_every_kind_of_placeholder_and_escape() -> None:
    found = pieces("cannot parse %(name)r: expected one of {choices} or\\nthen try again later")
    assert found == ["then try again later"]  # `: expected one of` has three words
    assert pieces("x" * 400) == []


def test_a_labelled_piece_is_also_kept_without_its_label() -> None:
    source = 'return fmt.Errorf("error: type mismatch for field %s", name)'
    assert messages(source) == ("error: type mismatch for field", "type mismatch for field")
    assert pieces("usage: nexusd plan") == []  # three words after the label: no piece
    assert pieces("error: not found here") == ["error: not found here"]
    index = MessageIndex([(0, pieces("error: type mismatch for field %s"))])
    assert index.quoted("报错 type mismatch for field uid") == {"type mismatch for field": [0]}


def test_the_index_finds_quoted_pieces_whatever_filled_the_placeholders() -> None:
    index = MessageIndex(
        [(0, ("no number is assigned for",)), (1, ("Imaginary coordinates are not permitted.",)),
         (2, ("no number is assigned for",))]
    )  # fmt: skip
    report = "Since 3.3:\n\n    WARNING: no number  is assigned\nfor table: and also\nValueError"
    assert index.quoted(report) == {"no number is assigned for": [0, 2]}
    assert index.quoted("Imaginary coordinates are permitted.") == {}
    assert len(index) == 2


def test_nested_and_unclosed_calls_cost_a_pass_not_a_pass_per_trigger() -> None:
    import time

    # Each trigger used to scan MAX_SCAN characters again: 400 KB of these took ~10 s.
    nested = ("error(" * 16 + "\n") * 4_000
    per_line = "error(\n" * 30_000 + "raise X('\n" * 20_000
    started = time.perf_counter()
    assert messages(nested) == ()
    assert messages(per_line) == ()
    assert time.perf_counter() - started < 4.0
    # A call read inside another is still read (with it), and a stray quote before a raise
    # (an unclosed call) does not hide the raise on the next line.
    assert messages('log.error(fail("the disk is full again today"))') == (
        "the disk is full again today",
    )
    stray = "Raises: ValueError (if it isn't)\nraise ValueError('bad value for the knob here')"
    assert messages(stray) == ("bad value for the knob here",)


@pytest.mark.parametrize(
    "source",
    [
        'if error: print("this is just a normal status line")',
        'for warning in items: render("the quick brown fox jumps")',
        'raise_count = 2; log_line("a line that is not an error at all")',
    ],
)
def test_a_trigger_word_used_as_a_name_does_not_claim_the_next_call(source: str) -> None:
    assert messages(source) == ()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # Python's implicit concatenation, over a line break and with f-string prefixes.
        (
            'raise MergeError("conflicting values on objects to be "\n'
            '    "combined. You can skip this check.")',
            (
                "conflicting values on objects to be combined. You can skip this check.",
                # Each part too: a traceback's source lines quote them apart.
                "conflicting values on objects to be",
                "combined. You can skip this check.",
            ),
        ),
        (
            'raise ValueError(f"the value {x} is not " f"allowed at this place")',
            ("is not allowed at this place", "allowed at this place"),
        ),
        # Java's and JavaScript's `+` between literals.
        (
            'throw new Error("could not find the thing " + "you asked for here");',
            (
                "could not find the thing you asked for here",
                "could not find the thing",
                "you asked for here",
            ),
        ),
        # Separate arguments stay separate messages.
        (
            'raise ValueError("one two three four", "five six seven eight")',
            ("one two three four", "five six seven eight"),
        ),
        # A literal, a variable, a literal: not one message.
        (
            'raise ValueError("cannot read the file " + name + " in this mode at all")',
            ("cannot read the file", "in this mode at all"),
        ),
    ],
)
def test_adjacent_literals_are_one_message(source: str, expected: tuple[str, ...]) -> None:
    assert messages(source) == expected


def test_quoted_pieces_come_in_the_order_the_text_gives_them() -> None:
    index = MessageIndex([(0, ["no number is assigned for"]), (1, ["is assigned for table"])])
    text = "WARNING: no number is assigned for table: x"
    assert list(index.quoted(text)) == ["no number is assigned for", "is assigned for table"]
