"""Print 100 MB to stdout."""

import sys

chunk = "y" * 1_000_000
for _ in range(100):
    sys.stdout.write(chunk)
sys.stdout.flush()
