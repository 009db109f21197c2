"""How much each of the ranking's signals counts (`rank.combine`), and what it was measured at."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Weights:
    """How much each signal counts.

    Chosen on the 110 SWE-bench Lite reports of benchmarks/localization.py as round values
    that keep every signal on; weights tuned on one repository alone lost a third of their
    accuracy on the others, so no finer tuning is done.
    """

    lexical_file: float = 1.5
    lexical_unit: float = 1.0
    definition: float = 1.0
    path: float = 1.0
    path_words: float = 1.0
    named_line: float = 0.5  # a path the request names with a line number, on top of `path`
    frame: float = 2.0
    message: float = 2.0  # the code raising or logging a message the request quotes
    graph: float = 0.3  # spread from the 20 best files to what they import and what imports them
    # A test file's score is multiplied by this (0.1 to 0.3 alike: 23 reports of the four sets
    # up, none down; the test step takes `Ranking.tests`; benchmarks/README.md, 30th session).
    test_factor: float = 0.25
    test_spread: float = 0.3  # share of a test's score given to the code it tests
    # A class's score among its file's units: its text holds every member's words, so it
    # matches whatever they match, and the member is the more precise place. The unit the gold
    # patch changes is listed first in 110 of 239 reports at 0.5, 98 at 1 (benchmarks/README.md).
    class_unit: float = 0.5
    # A function or method the request's code did not enter, among the units of a file it
    # entered: the run shows which of a file's functions matter. With the 110's code run,
    # the changed unit is listed first in 39 of the 94 ranked fixed files (37 at 1) and
    # among the five listed in 80 (74) (benchmarks/README.md).
    unit_not_run: float = 0.2
    # Code under examples/, docs/, benchmarks/ (places.AUXILIARY_FOLDERS): below the library.
    # 0.3 to 0.7 alike: 4 of 268 reports up (the 106's Acc@5 +1), none down (benchmarks/README.md).
    auxiliary_factor: float = 0.5
    # Code in a language the repository hardly uses (`places.minority_languages`): 0.5 and
    # 0.7 alike, 6 of the 165 multilingual reports up, none down (benchmarks/README.md).
    minority_factor: float = 0.5
    prose: float = 2.5  # lexical score of prose files, scored among themselves
    text_factor: float = 0.3  # prose and configuration (docs, READMEs, YAML): below code
    # Signals computed outside the index, `rank(extra=...)`. Off: MiniLM embeddings of file
    # summaries moved Acc@1 by +0.01 at 0.5 (benchmarks/README.md).
    semantic: float = 0.0
    # Files the request's own code entered when run in the sandbox (sandbox/reproduce.py):
    # 9 of the 110 dev reports up, none down (benchmarks/README.md, twelfth session).
    executed: float = 0.75
    # Files whose functions a RecursionError's stack went round when the request's code ran:
    # the fix breaks the recursion somewhere along it (benchmarks/README.md, 26th session).
    recursion: float = 1.0
    # The first two files put in order by how much of the request's title each holds, at this
    # share of the best score (`title.order_by_title`): at 0.3 and 0.35, 10 first places up
    # on the four localization sets, 1 down (benchmarks/README.md, 29th session).
    title_order: float = 0.3
