"""Allocate (and touch) 2 GB."""

block = "x" * (2 * 1024**3)
print("ALLOCATED", len(block))
