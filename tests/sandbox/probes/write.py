"""Try to create each path given; print WROTE or BLOCKED per path."""

import sys

for path in sys.argv[1:]:
    try:
        with open(path, "w") as handle:
            handle.write("pwned")
        print("WROTE", path)
    except OSError as exc:
        print("BLOCKED", path, exc.errno)
